package frob

import (
	"context"
	"errors"
	"testing"

	"github.com/psdlearn/psdlearn/engine/enginetest"
	"github.com/psdlearn/psdlearn/internal/locality"
	"gonum.org/v1/gonum/mat"
)

// TestLearnRenumbered checks that training on the points renumbered for
// locality (what Learn does for large data) solves the same problem: the
// certificate recomputed on the original numbering holds, and the metric,
// unique since the primal is strictly convex, agrees with the one learned
// in the original order to within what the duality gap allows.
func TestLearnRenumbered(t *testing.T) {
	for _, set := range []string{"iris", "wine"} {
		d, ts := smallSet(t, set)
		for _, b := range enginetest.Backends(t) {
			t.Run(set+"/"+b.Name(), func(t *testing.T) {
				opt := MetricOptions{C: 100, Backend: b, GapTol: 1e-12}
				plain, err := Learn(context.Background(), d.X, ts, opt)
				if err != nil {
					t.Fatal(err)
				}
				old := locality.MinBytes
				locality.MinBytes = 0
				defer func() { locality.MinBytes = old }()
				res, err := Learn(context.Background(), d.X, ts, opt)
				if err != nil {
					t.Fatal(err)
				}
				if !res.Certified {
					t.Fatalf("renumbered run not certified: %s, gap %.3g", res.Reason, res.RelGap)
				}
				if g := checkCertificate(t, d.X, ts, res, opt.C); !(g <= 1e-10) {
					t.Errorf("explicit relative gap %.3g on the original numbering, want ≤ 1e-10", g)
				}
				var diff mat.Dense
				diff.Sub(plain.M, res.M)
				if rel := mat.Norm(&diff, 2) / mat.Norm(plain.M, 2); rel > 1e-5 {
					t.Errorf("metrics learned in the two orders differ by %.3g (relative)", rel)
				}
			})
		}
	}
}

// TestProblemMatchesLearn checks that solves on a prepared Problem, one
// after another with different C and a warm start, are Learn's: the same
// arithmetic on the same renumbered data, so the same bits, and that the
// Problem checks each solve's options.
func TestProblemMatchesLearn(t *testing.T) {
	old := locality.MinBytes
	locality.MinBytes = 0 // renumber even this small set
	defer func() { locality.MinBytes = old }()
	d, ts := smallSet(t, "wine")
	for _, b := range enginetest.Backends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			p, err := NewProblem(d.X, ts)
			if err != nil {
				t.Fatal(err)
			}
			var u0 []float64
			for _, c := range []float64{1, 10, 100} {
				opt := MetricOptions{C: c, Backend: b, U0: u0}
				want, err := Learn(context.Background(), d.X, ts, opt)
				if err != nil {
					t.Fatal(err)
				}
				got, err := p.Learn(context.Background(), opt)
				if err != nil {
					t.Fatal(err)
				}
				if !mat.Equal(got.M, want.M) || got.Primal != want.Primal || got.Dual != want.Dual || got.Iterations != want.Iterations || got.DataScale != want.DataScale {
					t.Fatalf("C = %g: prepared solve differs from Learn (primal %v/%v, iterations %d/%d)", c, got.Primal, want.Primal, got.Iterations, want.Iterations)
				}
				u0 = want.U
			}
			if _, err := p.Learn(context.Background(), MetricOptions{C: 1, U0: make([]float64, 3)}); !errors.Is(err, ErrInput) {
				t.Fatalf("U0 of the wrong length: %v", err)
			}
			if _, err := p.Learn(context.Background(), MetricOptions{C: -1}); !errors.Is(err, ErrInput) {
				t.Fatalf("C = −1: %v", err)
			}
		})
	}
	if _, err := NewProblem(d.X, nil); !errors.Is(err, ErrInput) {
		t.Fatalf("nil triplets: %v", err)
	}
}
