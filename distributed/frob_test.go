package distributed_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn/algos/frob"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/distributed"
	"github.com/psdlearn/psdlearn/mpi"
	"gonum.org/v1/gonum/mat"
)

// distFrob runs distributed.FrobMetric on p fake ranks and returns every rank's
// result.
func distFrob(t *testing.T, x *mat.Dense, y []int, k int, bounds []int, opt frob.MetricOptions) []*frob.MetricResult {
	t.Helper()
	p := len(bounds) - 1
	sh := shards(t, x, y, k, bounds)
	out := make([]*frob.MetricResult, p)
	errs := runRanks(p, func(c mpi.Comm) error {
		r := c.Rank()
		res, err := distributed.FrobMetric(context.Background(), c, rowsOf(x, bounds[r], bounds[r+1]), sh[r], opt)
		out[r] = res
		return err
	})
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	return out
}

// checkFrob compares a distributed result with the one-process one:
// certified to the tolerance, the same data scale and multipliers, and in
// agreement as checkAgrees asserts.
func checkFrob(t *testing.T, r int, got, want *frob.MetricResult, gapTol float64) {
	t.Helper()
	if !got.Certified || !(got.RelGap <= gapTol) {
		t.Errorf("rank %d: certified %v, rel.gap %.3g (tolerance %.3g)", r, got.Certified, got.RelGap, gapTol)
	}
	if e := math.Abs(got.DataScale-want.DataScale) / want.DataScale; e > 1e-12 {
		t.Errorf("rank %d: data scale %v, want %v", r, got.DataScale, want.DataScale)
	}
	if len(got.U) != len(want.U) {
		t.Errorf("rank %d: %d multipliers, want %d", r, len(got.U), len(want.U))
	}
	checkAgrees(t, got, want, nil)
}

// ulpPerturbed returns x with a fifth of its entries (a pattern chosen by
// k) moved up by one ulp: the problem changed by rounding only, as summing
// in another order changes it (a uniform scaling would not do: Learn
// divides it out).
func ulpPerturbed(x *mat.Dense, k int) *mat.Dense {
	out := mat.DenseCopyOf(x)
	raw := out.RawMatrix()
	for i := 0; i < raw.Rows; i++ {
		for j := 0; j < raw.Cols; j++ {
			if (7*i+3*j+k)%5 == 0 {
				v := &raw.Data[i*raw.Stride+j]
				*v = math.Nextafter(*v, math.Inf(1))
			}
		}
	}
	return out
}

// certBound returns the bound the certificates give on the relative
// difference of two certified metrics: the primal is 1-strongly convex in
// ‖·‖_F, so a solution with duality gap g lies within √(2g) of the optimum
// (in the normalised units of the solve, M·s²).
func certBound(a, b *frob.MetricResult) float64 {
	s2 := b.DataScale * b.DataScale
	return (math.Sqrt(2*math.Max(a.Gap, 0)) + math.Sqrt(2*math.Max(b.Gap, 0))) / (mat.Norm(b.M, 2) * s2)
}

// TestFrobMetric: distributed FrobMetric on P = 1, 2, 3 uneven shards
// against the one-process model (frob.Learn on the whole data, the whole
// set solved at once, the same options). Every rank returns the same bits
// (they run the same arithmetic on the same reduced sums), certified to the
// tolerance. The ranks compute their Gram sums in blocks of their own
// rows and add them in another order than Learn, which is a rounding-level
// change of the problem (even for P = 1, where Learn's blocking and the
// BLAS's own decide whether the bits happen to agree): a line
// search can take another branch on a difference of 1e-15 in the
// objective, and a relative gap of 1e-7 pins the metric down only to
// √(2·gap) (five one-ulp perturbations of the data, two on letters, show how
// far rounding moves the one-process solve; they are logged). The runs are
// therefore compared by their certificates (checkAgrees), never by their
// iteration counts.
func TestFrobMetric(t *testing.T) {
	for _, tc := range []struct {
		name     string
		c        float64
		handover float64 // MetricOptions.HandoverGap: > 0 runs the Newton polish
	}{
		{"iris", 1, 0},
		{"iris", 100, 0},
		{"wine", 10, 0},
		{"letters2000", 10, 0},
		{"iris", 10, 1e-3},
		{"wine", 10, 1e-3},
		{"letters2000", 10, 1e-3},
	} {
		x, y := load(t, tc.name)
		n, _ := x.Dims()
		ts, err := constraints.Triplets(x, y, 3)
		if err != nil {
			t.Fatal(err)
		}
		opt := frob.MetricOptions{C: tc.c, WorkingSet: frob.WorkingSetOff, HandoverGap: tc.handover}
		start := time.Now()
		want, err := frob.Learn(context.Background(), x, ts, opt)
		if err != nil {
			t.Fatal(err)
		}
		sec := time.Since(start).Seconds()
		if !want.Certified {
			t.Fatalf("the one-process solve is not certified")
		}
		// The one-process solve's sensitivity to rounding: five (letters:
		// two) one-ulp perturbations of the data.
		var sens []float64
		var perts []*frob.MetricResult
		np := 5
		if tc.name == "letters2000" {
			np = 2 // 0.35–0.8 s each; its sensitivity is plain with two
		}
		for k := range np {
			pert, err := frob.Learn(context.Background(), ulpPerturbed(x, k), ts, opt)
			if err != nil {
				t.Fatal(err)
			}
			perts = append(perts, pert)
			sens = append(sens, relDiff(pert.M, want.M))
		}
		t.Logf("%s C=%g handover %g: one process: %d triplets, %d iterations, %d evaluations, rel.gap %.3g (%s), %.2f s; one ulp on the data moves its metric by %.2g (the certificates allow %.2g)",
			tc.name, tc.c, tc.handover, ts.Len(), want.Iterations, want.Evaluations, want.RelGap, want.Reason, sec, sens, certBound(perts[0], want))
		for _, p := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("%s/C=%g/handover=%g/P=%d", tc.name, tc.c, tc.handover, p), func(t *testing.T) {
				got := distFrob(t, x, y, 3, split(n, p), opt)
				for r, g := range got {
					if r > 0 && (!slices.Equal(g.M.RawSymmetric().Data, got[0].M.RawSymmetric().Data) || !slices.Equal(g.U, got[0].U) ||
						g.Primal != got[0].Primal || g.Iterations != got[0].Iterations) {
						t.Errorf("rank %d: result differs from rank 0's", r)
					}
				}
				g := got[0]
				e := relDiff(g.M, want.M)
				t.Logf("%d iterations, %d evaluations, rel.gap %.3g (%s); metric differs by %.2g relative (certificates allow %.2g)", g.Iterations, g.Evaluations, g.RelGap, g.Reason, e, certBound(g, want))
				if !g.Certified || !(g.RelGap <= frob.DefaultGapTol) {
					t.Errorf("certified %v, rel.gap %.3g", g.Certified, g.RelGap)
				}
				if math.Abs(g.DataScale-want.DataScale) > 1e-12*want.DataScale || len(g.U) != len(want.U) {
					t.Errorf("data scale %v, %d multipliers; want %v, %d", g.DataScale, len(g.U), want.DataScale, len(want.U))
				}
				checkAgrees(t, g, want, perts)
			})
		}
	}
}

// TestFrobMetricEmptyRank: a rank without rows (and so without triplets)
// takes part in every collective and gets the model too.
func TestFrobMetricEmptyRank(t *testing.T) {
	x, y := load(t, "iris")
	ts, err := constraints.Triplets(x, y, 3)
	if err != nil {
		t.Fatal(err)
	}
	opt := frob.MetricOptions{C: 10}
	want, err := frob.Learn(context.Background(), x, ts, opt)
	if err != nil {
		t.Fatal(err)
	}
	for r, got := range distFrob(t, x, y, 3, []int{0, 0, 50, 150}, opt) {
		checkFrob(t, r, got, want, frob.DefaultGapTol)
	}
}

// TestFrobMetricCancel: a context cancelled on one rank stops every rank at
// the same evaluation, with the best point so far and its certificate.
func TestFrobMetricCancel(t *testing.T) {
	x, y := load(t, "iris")
	n, _ := x.Dims()
	bounds := split(n, 3)
	sh := shards(t, x, y, 3, bounds)
	res := make([]*frob.MetricResult, 3)
	errs := runRanks(3, func(c mpi.Comm) error {
		r := c.Rank()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		opt := frob.MetricOptions{C: 100}
		if r == 1 {
			c = &cancelAfter{Comm: c, n: 20, cancel: cancel}
		}
		var err error
		res[r], err = distributed.FrobMetric(ctx, c, rowsOf(x, bounds[r], bounds[r+1]), sh[r], opt)
		return err
	})
	for r, err := range errs {
		if !errors.Is(err, context.Canceled) || (r != 1) != errors.Is(err, distributed.ErrRemote) {
			t.Errorf("rank %d: error %v", r, err)
		}
		if res[r] == nil || res[r].Certified || res[r].Evaluations > 25 || res[r].M == nil || res[r].Evaluations != res[0].Evaluations || res[r].Primal != res[0].Primal {
			t.Errorf("rank %d: result %+v", r, res[r])
		}
	}
}

// TestFrobMetricRefused: an unknown working-set mode is refused on every
// rank.
func TestFrobMetricRefused(t *testing.T) {
	errs := runRanks(2, func(c mpi.Comm) error {
		_, err := distributed.FrobMetric(context.Background(), c, nil, &distributed.Shard{}, frob.MetricOptions{C: 1, WorkingSet: frob.WorkingSetMode(9)})
		return err
	})
	for r, err := range errs {
		if !errors.Is(err, distributed.ErrInvalid) {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

// TestFrobMetricWorkingSet: distributed FrobMetric with the working set
// (evaluations over all triplets distributed, each round's restricted dual
// gathered and solved on rank 0) on P = 1, 2, 3 uneven shards, against
// frob.Learn's working set on the whole data. Every rank returns the same
// bits; the runs take working-set rounds (the design is exercised); each is
// certified; and the metrics agree to 1e-9 relative, or, where the
// one-process solve itself moves by more under one-ulp perturbations of
// the data, within the certificates' strong-convexity bound.
func TestFrobMetricWorkingSet(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    float64
	}{{"wine", 10}, {"letters2000", 10}} {
		x, y := load(t, tc.name)
		n, _ := x.Dims()
		ts, err := constraints.Triplets(x, y, 3)
		if err != nil {
			t.Fatal(err)
		}
		opt := frob.MetricOptions{C: tc.c, WorkingSet: frob.WorkingSetOn}
		want, err := frob.Learn(context.Background(), x, ts, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !want.Certified || want.Rounds == 0 {
			t.Fatalf("%s: one process: certified %v after %d working-set rounds", tc.name, want.Certified, want.Rounds)
		}
		var sens float64
		for k := range 2 {
			pert, err := frob.Learn(context.Background(), ulpPerturbed(x, k), ts, opt)
			if err != nil {
				t.Fatal(err)
			}
			sens = math.Max(sens, relDiff(pert.M, want.M))
		}
		t.Logf("%s C=%g: one process: %d triplets, %d rounds, %d iterations, %d evaluations (%d over all triplets), rel.gap %.3g (%s); one ulp moves it by %.2g",
			tc.name, tc.c, ts.Len(), want.Rounds, want.Iterations, want.Evaluations, want.FullEvaluations, want.RelGap, want.Reason, sens)
		for _, p := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("%s/P=%d", tc.name, p), func(t *testing.T) {
				got := distFrob(t, x, y, 3, split(n, p), opt)
				for r, g := range got {
					if r > 0 && (!slices.Equal(g.M.RawSymmetric().Data, got[0].M.RawSymmetric().Data) || !slices.Equal(g.U, got[0].U) ||
						g.Primal != got[0].Primal || g.Iterations != got[0].Iterations || g.Rounds != got[0].Rounds) {
						t.Errorf("rank %d: result differs from rank 0's", r)
					}
				}
				g := got[0]
				e := relDiff(g.M, want.M)
				t.Logf("%d rounds, %d iterations, %d evaluations (%d over all triplets), rel.gap %.3g (%s); metric differs by %.2g relative (certificates allow %.2g)",
					g.Rounds, g.Iterations, g.Evaluations, g.FullEvaluations, g.RelGap, g.Reason, e, certBound(g, want))
				if !g.Certified || !(g.RelGap <= frob.DefaultGapTol) || g.Rounds == 0 {
					t.Errorf("certified %v, rel.gap %.3g, %d rounds", g.Certified, g.RelGap, g.Rounds)
				}
				if math.Abs(g.DataScale-want.DataScale) > 1e-12*want.DataScale || len(g.U) != len(want.U) {
					t.Errorf("data scale %v, %d multipliers; want %v, %d", g.DataScale, len(g.U), want.DataScale, len(want.U))
				}
				checkAgrees(t, g, want, nil)
			})
		}
	}
}

// cancelAfter cancels its context at its n-th AllreduceSum.
type cancelAfter struct {
	mpi.Comm
	n      int
	cancel func()
}

func (c *cancelAfter) AllreduceSum(buf []float64) error {
	if c.n--; c.n == 0 {
		c.cancel()
	}
	return c.Comm.AllreduceSum(buf)
}

// checkAgrees asserts what a run g of the same problem summed in another
// order promises against the one-process run want: each one's dual is
// below the other's primal (to roundTol: the objectives are sums of some
// 10⁴ terms, each rounded); the metrics differ by less than the
// strong-convexity bound √(2g₁) + √(2g₂) of their certificates (at least
// 1e-9 for rounding at gaps of 1e-15); and the iterations stay within
// twice the most any one-process run took (want and its rounding
// perturbations perts) plus 10: another reduction order may change the
// path, not its length's order.
func checkAgrees(t *testing.T, g, want *frob.MetricResult, perts []*frob.MetricResult) {
	t.Helper()
	slack := roundTol * math.Max(1, math.Abs(want.Primal))
	if g.Dual > want.Primal+slack || want.Dual > g.Primal+slack {
		t.Errorf("certificates disagree: dual %.12g primal %.12g, one process %.12g %.12g", g.Dual, g.Primal, want.Dual, want.Primal)
	}
	e := relDiff(g.M, want.M)
	if b := math.Max(certBound(g, want), 1e-9); !(e <= b) {
		t.Errorf("metric differs by %.3g, beyond the certificates' %.3g", e, b)
	}
	most := want.Iterations
	for _, p := range perts {
		most = max(most, p.Iterations)
	}
	if g.Iterations > 2*most+10 {
		t.Errorf("%d iterations, one process at most %d", g.Iterations, most)
	}
}

// roundTol bounds the rounding of an objective relative to max(1, |value|).
const roundTol = 1e-10
