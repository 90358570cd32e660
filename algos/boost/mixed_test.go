package boost

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/limits"
	"gonum.org/v1/gonum/mat"
)

// TestMixedPrecision runs BoostMetric with single-precision pricing forced
// (Options.Precision) on 3,000 letters points, on both backends: the run
// converges on the same double-precision stopping rule, keeps
// single-precision directions for most iterations, is reproducible bit for
// bit, and learns a metric as good as double precision's (objective within
// 1%, 3-NN test error within one point and below Euclidean).
func TestMixedPrecision(t *testing.T) {
	x, y := standardized(t, "letters")
	xtr, ytr := x.Slice(0, 3000, 0, 16).(*mat.Dense), y[:3000]
	xte, yte := x.Slice(15000, 17000, 0, 16).(*mat.Dense), y[15000:17000]
	for _, b := range []engine.Backend{engine.Default(), goBackend(t)} {
		t.Run(b.Name(), func(t *testing.T) {
			ts, err := makeTriplets(b, xtr, ytr, 3)
			if err != nil {
				t.Fatal(err)
			}
			run := func(p Precision) *Result {
				res, err := BoostMetric(context.Background(), xtr, ts, Options{Backend: b, Precision: p})
				if err != nil {
					t.Fatal(err)
				}
				if res.Stop != StopConverged {
					t.Fatalf("precision %d: stopped on %v after %d iterations", p, res.Stop, res.Iterations)
				}
				return res
			}
			dbl, mix := run(PrecisionDouble), run(PrecisionMixed)
			if dbl.SingleIterations != 0 {
				t.Errorf("double precision priced %d iterations in single", dbl.SingleIterations)
			}
			if mix.SingleIterations < mix.Iterations/2 {
				t.Errorf("mixed precision kept single-precision directions in %d of %d iterations", mix.SingleIterations, mix.Iterations)
			}
			if again := run(PrecisionMixed); !slices.Equal(again.W, mix.W) || !mat.Equal(again.V, mix.V) {
				t.Error("mixed precision is not reproducible")
			}
			if rel := math.Abs(mix.Objective-dbl.Objective) / math.Abs(dbl.Objective); rel > 0.01 {
				t.Errorf("objective %v, double precision %v (%.2g relative)", mix.Objective, dbl.Objective, rel)
			}
			eu := testError(t, b, nil, xtr, ytr, xte, yte)
			ed, em := testError(t, b, dbl, xtr, ytr, xte, yte), testError(t, b, mix, xtr, ytr, xte, yte)
			t.Logf("%d iterations (%d single) against %d; 3-NN test error %.4f against %.4f, Euclidean %.4f", mix.Iterations, mix.SingleIterations, dbl.Iterations, em, ed, eu)
			if em > ed+0.01 || em > eu {
				t.Errorf("mixed precision test error %.4f: double %.4f, Euclidean %.4f", em, ed, eu)
			}
			// The auto rule keeps a problem this small in double.
			if auto := run(PrecisionAuto); auto.SingleIterations != 0 {
				t.Errorf("PrecisionAuto priced %d iterations in single on 3,000 × 16", auto.SingleIterations)
			}
		})
	}
	ts, err := makeTriplets(engine.Default(), xtr, ytr, 3)
	if err != nil {
		t.Fatal(err)
	}
	// An offset common to every row (1e4 against unit spread) drops out of
	// the centred single-precision copy: the directions stay single and the
	// objective double's.
	off := mat.DenseCopyOf(xtr)
	off.Apply(func(_, _ int, v float64) float64 { return v + 1e4 }, off)
	var objs [2]float64
	for i, p := range []Precision{PrecisionDouble, PrecisionMixed} {
		res, err := BoostMetric(context.Background(), off, ts, Options{Precision: p})
		if err != nil || res.Stop != StopConverged {
			t.Fatalf("offset data, precision %d: %v, stop %v", p, err, res.Stop)
		}
		if p == PrecisionMixed && res.SingleIterations < res.Iterations/2 {
			t.Errorf("offset data: %d of %d iterations single", res.SingleIterations, res.Iterations)
		}
		objs[i] = res.Objective
	}
	if rel := math.Abs(objs[1]-objs[0]) / math.Abs(objs[0]); rel > 0.01 {
		t.Errorf("offset data: objective %v, double precision %v", objs[1], objs[0])
	}
	// A memory limit that admits the run but not the single-precision
	// copies (N·D words more): double precision, no error.
	need := Memory(3000, 16, ts.Len(), 0, true) // the check BoostMetric makes first
	prev := limits.SetMaxMemory(int64(need + limits.Words(1, 3000, 16)/2))
	res, err := BoostMetric(context.Background(), xtr, ts, Options{Precision: PrecisionMixed})
	limits.SetMaxMemory(prev)
	if err != nil {
		t.Fatalf("memory for the run but not the copies: %v", err)
	}
	if res.SingleIterations != 0 {
		t.Errorf("memory for the run but not the copies: %d single iterations", res.SingleIterations)
	}
	if _, err := BoostMetric(context.Background(), xtr, ts, Options{Precision: 7}); err == nil || !strings.Contains(err.Error(), "precision") {
		t.Errorf("unknown precision: error %v", err)
	}
}
