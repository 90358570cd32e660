package distributed_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/distributed"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/progress"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// wineSplit returns wine cut 70/15/15 (seed 1): train, validation, test.
func wineSplit(t *testing.T) (tr, val, test *data.Dataset) { return cut(t, "wine") }

// cut returns the bundled data set name cut 70/15/15 (seed 1): train,
// validation, test.
func cut(t *testing.T, name string) (tr, val, test *data.Dataset) {
	t.Helper()
	ds, err := datasets.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := data.Split(ds, []float64{0.7, 0.15, 0.15}, 1)
	if err != nil {
		t.Fatal(err)
	}
	return parts[0], parts[1], parts[2]
}

// runDist runs psdlearn.Run of the learner newL builds (with the settings
// c and the Executor of each rank) on p fake ranks.
func runDist(t *testing.T, p int, newL func(psdlearn.Common) psdlearn.Learner, c psdlearn.Common, d psdlearn.Data) ([]*psdlearn.Result, []error) {
	t.Helper()
	out := make([]*psdlearn.Result, p)
	errs := runRanks(p, func(comm mpi.Comm) error {
		ex, ctx, err := distributed.NewExecutor(context.Background(), comm)
		if err != nil {
			return err
		}
		cc := c
		cc.Executor = ex
		res, err := psdlearn.Run(ctx, newL(cc), d)
		out[comm.Rank()] = res
		return err
	})
	return out, errs
}

// TestExecutorRun runs the whole pipeline (preprocessing, triplets, a
// choice of C on validation rows, test error) with the MPI Executor on 1,
// 2 and 3 ranks and compares it with one process: every rank the same
// result; the same chosen C and test error as one process; the objective
// within the certificates (FrobMetric), to 1e-9 relative when the
// iteration counts agree (BoostMetric and LMNN, whose sums are split by
// rank), or exactly (PSDBoost, solved on rank 0 alone). BoostMetric runs on iris, where it converges:
// on wine it reaches its iteration limit along a path on which rounding
// grows (one ulp at iteration 5, 1e-11 at 50, a few per cent at 100, with
// summation in another order), so that only the iteration count compares.
func TestExecutorRun(t *testing.T) {
	cases := []struct {
		name, data string
		newL       func(psdlearn.Common) psdlearn.Learner
	}{
		{"frobmetric", "wine", func(c psdlearn.Common) psdlearn.Learner { return psdlearn.FrobMetric{Common: c} }},
		{"boostmetric", "iris", func(c psdlearn.Common) psdlearn.Learner { return psdlearn.BoostMetric{Common: c} }},
		{"boostmetric-corrective", "wine", func(c psdlearn.Common) psdlearn.Learner {
			return psdlearn.BoostMetric{Common: c, Mode: boost.Corrective, Iters: 20}
		}},
		{"lmnn", "wine", func(c psdlearn.Common) psdlearn.Learner { return psdlearn.LMNN{Common: c, Iters: 50} }},
		{"lmnn-rank", "iris", func(c psdlearn.Common) psdlearn.Learner { return psdlearn.LMNN{Common: c, Rank: 2} }},
		{"psdboost", "iris", func(c psdlearn.Common) psdlearn.Learner { return psdlearn.PSDBoost{Common: c, C: []float64{10, 100}} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr, val, test := cut(t, tc.data)
			d := psdlearn.Data{X: tr.X, Y: tr.Y, Test: test}
			c := psdlearn.Common{Standardize: true, Validation: val, Seed: 1}
			want, werr := psdlearn.Run(context.Background(), tc.newL(c), d)
			if werr != nil && !errors.Is(werr, errs.ErrNotConverged) {
				t.Fatal(werr)
			}
			for _, p := range []int{1, 2, 3} {
				got, gerrs := runDist(t, p, tc.newL, c, d)
				for r := 0; r < p; r++ {
					if (gerrs[r] == nil) != (werr == nil) {
						t.Fatalf("P=%d rank %d: error %v, one process %v", p, r, gerrs[r], werr)
					}
					g := got[r]
					if r > 0 && (!same(g.ChosenC, got[0].ChosenC) || !same(g.Eval.TestError, got[0].Eval.TestError) || !same(g.Objective, got[0].Objective)) {
						t.Errorf("P=%d: rank %d's result (C %v, test %v, objective %v) differs from rank 0's (%v, %v, %v)",
							p, r, g.ChosenC, g.Eval.TestError, g.Objective, got[0].ChosenC, got[0].Eval.TestError, got[0].Objective)
					}
				}
				checkSameRun(t, fmt.Sprintf("P=%d", p), tc.name, got[0], want)
			}
		})
	}
}

// same reports a == b, NaN equal to NaN.
func same(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

// checkSameRun compares a distributed run's result with one process's.
func checkSameRun(t *testing.T, what, name string, got, want *psdlearn.Result) {
	t.Helper()
	if !same(got.ChosenC, want.ChosenC) {
		t.Errorf("%s: chose C = %v, one process %v (searched %v and %v)", what, got.ChosenC, want.ChosenC, got.Searched, want.Searched)
	}
	if !same(got.Eval.TestError, want.Eval.TestError) || !same(got.Eval.ValError, want.Eval.ValError) {
		t.Errorf("%s: test error %v, validation %v; one process %v, %v", what, got.Eval.TestError, got.Eval.ValError, want.Eval.TestError, want.Eval.ValError)
	}
	scale := math.Max(1, math.Abs(want.Objective))
	diff := math.Abs(got.Objective - want.Objective)
	switch name {
	case "frobmetric":
		// Both objectives are within their gaps of the same optimum.
		if bound := (math.Max(got.DualityGap, 0) + math.Max(want.DualityGap, 0)) * scale; !(diff <= bound) || !got.Certificate.Converged {
			t.Errorf("%s: objective %v, one process %v: |difference| %.3g above the certificates' %.3g (converged %v)", what, got.Objective, want.Objective, diff, bound, got.Certificate.Converged)
		}
	case "lmnn", "lmnn-rank":
		// The same iterations; each sum over the ranks is rounded in
		// another order.
		if got.Iterations != want.Iterations || !(diff <= 1e-9*scale) {
			t.Errorf("%s: objective %v after %d iterations, one process %v after %d", what, got.Objective, got.Iterations, want.Objective, want.Iterations)
		}
	case "psdboost":
		if got.Objective != want.Objective || got.Iterations != want.Iterations {
			t.Errorf("%s: objective %v after %d iterations, one process %v after %d (solved on rank 0: the same arithmetic)", what, got.Objective, got.Iterations, want.Objective, want.Iterations)
		}
	default:
		if got.Iterations == want.Iterations && !(diff <= 1e-9*scale) {
			t.Errorf("%s: objective %v, one process %v after %d iterations", what, got.Objective, want.Objective, got.Iterations)
		}
		if math.Abs(float64(got.Iterations-want.Iterations)) > 1 {
			t.Errorf("%s: %d iterations, one process %d", what, got.Iterations, want.Iterations)
		}
	}
}

// TestExecutorGivenTriplets learns from given triplets in an order that is
// not the order of their anchors (the shards sort them and put the
// multipliers back): C chosen on held-out triplets as one process does.
func TestExecutorGivenTriplets(t *testing.T) {
	tr, _, _ := wineSplit(t)
	ts, err := constraints.Triplets(tr.X, tr.Y, 2)
	if err != nil {
		t.Fatal(err)
	}
	rev := make([]constraints.Triplet, len(ts.Triplets))
	for i, tt := range ts.Triplets {
		rev[len(rev)-1-i] = tt
	}
	given, err := constraints.NewTripletSet(ts.N, rev)
	if err != nil {
		t.Fatal(err)
	}
	d := psdlearn.Data{X: tr.X, Triplets: given, HoldOut: 0.2}
	c := psdlearn.Common{Standardize: true, HoldOut: 0.2, Seed: 3}
	newL := func(c psdlearn.Common) psdlearn.Learner {
		return psdlearn.FrobMetric{Common: c, C: []float64{0.1, 1, 10}}
	}
	want, err := psdlearn.Run(context.Background(), newL(c), d)
	if err != nil {
		t.Fatal(err)
	}
	got, errs := runDist(t, 2, newL, c, d)
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	if got[0].Eval.Satisfaction != want.Eval.Satisfaction {
		t.Errorf("held-out satisfaction %v; one process %v", got[0].Eval.Satisfaction, want.Eval.Satisfaction)
	}
	checkSameRun(t, "given triplets", "frobmetric", got[0], want)
}

// TestExecutorCancel cancels one rank's context during a run, a multi-C
// FrobMetric run and an LMNN run: every rank returns the same best model
// so far, marked interrupted, with an error matching errs.ErrNotConverged
// and context.Canceled.
func TestExecutorCancel(t *testing.T) {
	tr, val, _ := wineSplit(t)
	d := psdlearn.Data{X: tr.X, Y: tr.Y}
	for _, tc := range []struct {
		name string
		newL func(psdlearn.Common) psdlearn.Learner
	}{
		{"frobmetric", func(c psdlearn.Common) psdlearn.Learner { return psdlearn.FrobMetric{Common: c} }},
		{"lmnn", func(c psdlearn.Common) psdlearn.Learner { return psdlearn.LMNN{Common: c} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := make([]*psdlearn.Result, 2)
			errsOut := runRanks(2, func(comm mpi.Comm) error {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				ex, rctx, err := distributed.NewExecutor(ctx, comm)
				if err != nil {
					return err
				}
				c := psdlearn.Common{Standardize: true, Validation: val, Executor: ex}
				if comm.Rank() == 1 {
					c.Progress = func(e progress.Event) {
						if e.Iteration >= 3 {
							cancel()
						}
					}
				}
				res, err := psdlearn.Run(rctx, tc.newL(c), d)
				out[comm.Rank()] = res
				return err
			})
			for r, err := range errsOut {
				if !errors.Is(err, errs.ErrNotConverged) || !errors.Is(err, context.Canceled) {
					t.Errorf("rank %d: error %v, want one matching ErrNotConverged and context.Canceled", r, err)
				}
				if out[r] == nil || out[r].Model == nil || !out[r].Interrupted {
					t.Fatalf("rank %d: result %+v, want the best model so far, interrupted", r, out[r])
				}
			}
			if !same(out[0].ChosenC, out[1].ChosenC) || !same(out[0].Objective, out[1].Objective) {
				t.Errorf("ranks returned different models: C %v and %v, objective %v and %v", out[0].ChosenC, out[1].ChosenC, out[0].Objective, out[1].Objective)
			}
		})
	}
}

// TestExecutorCluster runs the clustering protocol (three runs, C chosen
// per run from two values, the k-means baseline) with the kernels learned
// by the Executor on 2 and 3 ranks: with the Go eigensolver the kernels
// are one process's (Lanczos on the go backend) bit for bit, so every
// run's accuracy, C and rank are the same.
func TestExecutorCluster(t *testing.T) {
	ds, err := datasets.Open("iris")
	if err != nil {
		t.Fatal(err)
	}
	o := psdlearn.ClusterOptions{Runs: 3, CGrid: []float64{0.5, 2}, Baseline: true, Seed: 4,
		Learn: npkl.Options{Eigensolver: npkl.Lanczos, Backend: goBackend(t)}}
	want, err := psdlearn.Cluster(context.Background(), ds.X, ds.Y, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{2, 3} {
		got := make([]*psdlearn.ClusterReport, p)
		errs := runRanks(p, func(comm mpi.Comm) error {
			ex, ctx, err := distributed.NewExecutor(context.Background(), comm)
			if err != nil {
				return err
			}
			oo := o
			oo.Dist = ex
			got[comm.Rank()], err = psdlearn.Cluster(ctx, ds.X, ds.Y, oo)
			return err
		})
		for r, err := range errs {
			if err != nil {
				t.Fatalf("P=%d rank %d: %v", p, r, err)
			}
			g := got[r]
			if g.AccuracyMean != want.AccuracyMean || g.KMeansMean != want.KMeansMean || len(g.Runs) != len(want.Runs) {
				t.Fatalf("P=%d rank %d: accuracy %v (k-means %v) over %d runs, one process %v (%v) over %d", p, r, g.AccuracyMean, g.KMeansMean, len(g.Runs), want.AccuracyMean, want.KMeansMean, len(want.Runs))
			}
			for i, run := range g.Runs {
				if w := want.Runs[i]; run.C != w.C || run.Rank != w.Rank || run.Accuracy != w.Accuracy {
					t.Errorf("P=%d rank %d run %d: C %v, rank %d, accuracy %v; one process %v, %d, %v", p, r, run.Run, run.C, run.Rank, run.Accuracy, w.C, w.Rank, w.Accuracy)
				}
			}
		}
	}
}

// TestExecutorPCA: PCA fitted with the covariance's chunks spread over 1, 2
// and 3 ranks (RunChunks) is FitPCA's to the bit, on 5,000 rows (8
// chunks) and on 100 (one chunk).
func TestExecutorPCA(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{5000, 100} {
		x := mat.NewDense(n, 12, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < 12; j++ {
				x.Set(i, j, rng.NormFloat64()*float64(j+1))
			}
		}
		want, err := data.FitPipeline(nil, x, true, 4)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []int{1, 2, 3} {
			got := make([]*data.Pipeline, p)
			errs := runRanks(p, func(comm mpi.Comm) error {
				ex, _, err := distributed.NewExecutor(context.Background(), comm)
				if err != nil {
					return err
				}
				got[comm.Rank()], err = data.FitPipelineWith(nil, x, true, 4, ex.RunChunks)
				return err
			})
			for r, err := range errs {
				if err != nil {
					t.Fatalf("n=%d P=%d rank %d: %v", n, p, r, err)
				}
				if !slices.Equal(got[r].PCA.Components.RawMatrix().Data, want.PCA.Components.RawMatrix().Data) || !slices.Equal(got[r].PCA.Variances, want.PCA.Variances) {
					t.Errorf("n=%d P=%d rank %d: the components differ from FitPCA's", n, p, r)
				}
			}
		}
	}
}

// TestExecutorLaplacian: the Executor's kNN Laplacian is npkl.Laplacian's
// bit for bit on 1, 2 and 3 ranks, for the union and mutual graphs.
func TestExecutorLaplacian(t *testing.T) {
	for _, name := range []string{"iris", "wine"} {
		ds, err := datasets.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range []sparse.GraphOptions{{}, {Symmetrize: sparse.Mutual}, {Symmetrize: sparse.Average, Weight: sparse.Heat}} {
			want, err := npkl.Laplacian(ds.X, 5, g, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []int{1, 2, 3} {
				got := make([]*sparse.CSR, p)
				errs := runRanks(p, func(comm mpi.Comm) error {
					ex, _, err := distributed.NewExecutor(context.Background(), comm)
					if err != nil {
						return err
					}
					got[comm.Rank()], err = ex.Laplacian(ds.X, 5, g, nil)
					return err
				})
				for r, err := range errs {
					if err != nil {
						t.Fatalf("%s P=%d rank %d: %v", name, p, r, err)
					}
					l := got[r]
					if l.Rows != want.Rows || l.Cols != want.Cols || !slices.Equal(l.Indptr, want.Indptr) || !slices.Equal(l.Ind, want.Ind) || !slices.Equal(l.Data, want.Data) {
						t.Errorf("%s %+v P=%d rank %d: the Laplacian differs from npkl.Laplacian's", name, g, p, r)
					}
				}
			}
		}
	}
}
