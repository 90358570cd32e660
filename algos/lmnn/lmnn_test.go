package lmnn

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine"
	_ "github.com/psdlearn/psdlearn/engine/backends"
	"github.com/psdlearn/psdlearn/engine/enginetest"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/progress"
	"gonum.org/v1/gonum/mat"
)

func loadSet(t testing.TB, name string) *data.Dataset {
	t.Helper()
	d, err := datasets.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// splitStd splits d 70/30 (seeded) and standardises both parts on the first.
func splitStd(t testing.TB, d *data.Dataset) (tr, te *data.Dataset) {
	t.Helper()
	parts, err := data.Split(d, []float64{0.7, 0.3}, 7)
	if err != nil {
		t.Fatal(err)
	}
	st, err := data.Standardize(parts[0], parts[1])
	if err != nil {
		t.Fatal(err)
	}
	return st[0], st[1]
}

// tiny returns n random points in d dimensions with labels 0..classes−1.
func tiny(n, d, classes int, seed uint64) (*mat.Dense, []int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := mat.NewDense(n, d, nil)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		y[i] = i % classes
		for j := 0; j < d; j++ {
			x.Set(i, j, rng.NormFloat64()+0.7*float64(y[i]*(j+1)%3))
		}
	}
	return x, y
}

func outer(x *mat.Dense, a, b int, w float64, g *mat.SymDense) {
	_, d := x.Dims()
	for p := 0; p < d; p++ {
		for q := p; q < d; q++ {
			dp, dq := x.At(a, p)-x.At(b, p), x.At(a, q)-x.At(b, q)
			g.SetSym(p, q, g.At(p, q)+w*dp*dq)
		}
	}
}

func quad(x *mat.Dense, m *mat.SymDense, a, b int) float64 {
	_, d := x.Dims()
	v := mat.NewVecDense(d, nil)
	for p := 0; p < d; p++ {
		v.SetVec(p, x.At(a, p)-x.At(b, p))
	}
	return mat.Inner(v, m, v)
}

// TestGradientBruteForce checks the objective and the subgradient
// Xᵀ L_W X of the solver against their definitions summed triplet by
// triplet — (1−μ) Σ C_ij + μ Σ_active (C_ij − C_il) over every target pair
// and every differently-labelled l — at a random PSD M, on every backend.
// With Candidates = n − 1 the impostor search is complete.
func TestGradientBruteForce(t *testing.T) {
	for _, b := range enginetest.Backends(t) {
		for _, tc := range []struct {
			name        string
			n, d, cls   int
			mu          float64
			seed        uint64
			lowRankMAdd bool
		}{
			{"n12 d3 mu0.5", 12, 3, 3, 0.5, 1, false},
			{"n15 d4 mu0.2", 15, 4, 2, 0.2, 2, false},
			{"n20 d5 mu0.9 rank2", 20, 5, 4, 0.9, 3, true},
		} {
			t.Run(b.Name()+"/"+tc.name, func(t *testing.T) {
				x, y := tiny(tc.n, tc.d, tc.cls, tc.seed)
				ts, err := constraints.Triplets(x, y, 2)
				if err != nil {
					t.Fatal(err)
				}
				opt := Options{Mu: tc.mu, Candidates: tc.n, Backend: b}.withDefaults()
				s := newSolver(b, x, y, ts, opt)
				if err := s.init(); err != nil {
					t.Fatal(err)
				}
				// A random PSD iterate (rank 2 in the last case).
				rng := rand.New(rand.NewPCG(tc.seed, 9))
				r := tc.d
				if tc.lowRankMAdd {
					r = 2
				}
				l := mat.NewDense(tc.d, r, nil)
				for i := 0; i < tc.d; i++ {
					for j := 0; j < r; j++ {
						l.Set(i, j, rng.NormFloat64())
					}
				}
				s.l = l
				s.m.SymOuterK(1, l)
				if err := s.refresh(); err != nil {
					t.Fatal(err)
				}
				// Brute force on the normalised rows.
				want := mat.NewSymDense(tc.d, nil)
				var obj float64
				active := 0
				tPtr, tIdx := Targets(ts)
				for i := 0; i < tc.n; i++ {
					for p := tPtr[i]; p < tPtr[i+1]; p++ {
						j := tIdx[p]
						dij := quad(s.x, s.m, i, j)
						obj += (1 - tc.mu) * dij
						outer(s.x, i, j, 1-tc.mu, want)
						for l := 0; l < tc.n; l++ {
							if y[l] == y[i] {
								continue
							}
							if h := 1 + dij - quad(s.x, s.m, i, l); h > 0 {
								active++
								obj += tc.mu * h
								outer(s.x, i, j, tc.mu, want)
								outer(s.x, i, l, -tc.mu, want)
							}
						}
					}
				}
				if active == 0 {
					t.Fatal("test set has no active triplet")
				}
				if s.active != active {
					t.Errorf("active triplets %d, brute force %d", s.active, active)
				}
				if math.Abs(s.obj-obj) > 1e-10*math.Abs(obj) {
					t.Errorf("objective %.15g, brute force %.15g", s.obj, obj)
				}
				if e := relDiff(s.grad, want); e > 1e-12 {
					t.Errorf("gradient relative error %.3g\ngot  %v\nwant %v", e, mat.Formatted(s.grad), mat.Formatted(want))
				}
			})
		}
	}
}

// TestObjectiveDecreases: the descent lowers the objective from M = I, the
// returned M is PSD, and the reported objective is that of M.
func TestObjectiveDecreases(t *testing.T) {
	for _, name := range []string{"iris", "wine"} {
		t.Run(name, func(t *testing.T) {
			tr, _ := splitStd(t, loadSet(t, name))
			res, err := Learn(context.Background(), tr.X, tr.Y, nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Curve) < 2 || !(res.Curve[len(res.Curve)-1] < res.Curve[0]) {
				t.Fatalf("curve %v does not decrease", res.Curve)
			}
			if !(res.Objective < res.Curve[0]) {
				t.Errorf("objective %g not below the start %g", res.Objective, res.Curve[0])
			}
			e, err := engine.Default().SymEig(res.M, engine.AllRange(), false)
			if err != nil {
				t.Fatal(err)
			}
			if e.Values[0] < -1e-12*e.Values[len(e.Values)-1] {
				t.Errorf("M not PSD: eigenvalues %v", e.Values)
			}
			if !res.Converged {
				t.Errorf("not converged: %s", res.Reason)
			}
			t.Logf("%s: %d iterations, objective %.6g → %.6g, %d active, %s", name, res.Iterations, res.Curve[0], res.Objective, res.Active, res.Reason)
		})
	}
}

// TestAccuracy: on iris and wine the learned metric's 3-NN test error is no
// worse than the Euclidean one.
func TestAccuracy(t *testing.T) {
	b := engine.Default()
	for _, name := range []string{"iris", "wine"} {
		t.Run(name, func(t *testing.T) {
			tr, te := splitStd(t, loadSet(t, name))
			res, err := Learn(context.Background(), tr.X, tr.Y, nil, Options{Backend: b})
			if err != nil {
				t.Fatal(err)
			}
			got, err := eval.FactorKNNError(b, res.L, tr.X, tr.Y, te.X, te.Y, 3)
			if err != nil {
				t.Fatal(err)
			}
			euc, err := eval.KNNError(b, tr.X, tr.Y, te.X, te.Y, 3)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: 3-NN test error %.4f (Euclidean %.4f)", name, got, euc)
			if got > euc {
				t.Errorf("LMNN error %.4f above Euclidean %.4f", got, euc)
			}
		})
	}
}

// TestBadInput: invalid data and options are rejected with errors wrapping
// errs.ErrInvalid.
func TestBadInput(t *testing.T) {
	x, y := tiny(12, 3, 3, 1)
	nan := mat.DenseCopyOf(x)
	nan.Set(3, 1, math.NaN())
	same := mat.NewDense(4, 2, nil)
	for _, tc := range []struct {
		name string
		x    *mat.Dense
		y    []int
		opt  Options
	}{
		{"nil data", nil, y, Options{}},
		{"label count", x, y[:5], Options{}},
		{"NaN", nan, y, Options{}},
		{"one class", x, make([]int, 12), Options{}},
		{"negative label", x, append([]int{-1}, y[1:]...), Options{}},
		{"one row", mat.NewDense(1, 3, nil), []int{0}, Options{}},
		{"mu > 1", x, y, Options{Mu: 1.5}},
		{"mu < 0", x, y, Options{Mu: -0.1}},
		{"mu NaN", x, y, Options{Mu: math.NaN()}},
		{"negative iterations", x, y, Options{MaxIter: -1}},
		{"negative tolerance", x, y, Options{Tol: -1}},
		{"infinite tolerance", x, y, Options{Tol: math.Inf(1)}},
		{"negative K", x, y, Options{K: -2}},
		{"negative refresh", x, y, Options{RefreshEvery: -1}},
		{"negative candidates", x, y, Options{Candidates: -1}},
		{"rank -1", x, y, Options{Rank: -1}},
		{"rank D+1", x, y, Options{Rank: 4}},
		{"coincident points", same, []int{0, 0, 1, 1}, Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Learn(context.Background(), tc.x, tc.y, nil, tc.opt)
			if err == nil || !errors.Is(err, errs.ErrInvalid) {
				t.Fatalf("err = %v, want one wrapping errs.ErrInvalid", err)
			}
			if res != nil {
				t.Errorf("result %v with the error", res)
			}
		})
	}
}

// TestCancel: a cancelled context stops the descent; Learn returns the
// current (PSD) iterate with an error wrapping ctx.Err().
func TestCancel(t *testing.T) {
	tr, _ := splitStd(t, loadSet(t, "wine"))
	t.Run("before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		res, err := Learn(ctx, tr.X, tr.Y, nil, Options{})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if res == nil || res.M == nil || res.Converged {
			t.Fatalf("result %+v, want the unconverged start", res)
		}
	})
	t.Run("during", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		refreshes := 0
		res, err := Learn(ctx, tr.X, tr.Y, nil, Options{Progress: func(progress.Event) {
			if refreshes++; refreshes == 2 {
				cancel()
			}
		}})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if res == nil || res.M == nil || res.Converged || res.Iterations == 0 {
			t.Fatalf("result %+v, want an unconverged iterate", res)
		}
		if res.Reason != "cancelled" {
			t.Errorf("reason %q", res.Reason)
		}
	})
}

// TestScaleInvariance: multiplying the data by s divides the learned M by
// s² (to 1e-6 relative) and leaves the 3-NN errors unchanged.
func TestScaleInvariance(t *testing.T) {
	b := engine.Default()
	tr, te := splitStd(t, loadSet(t, "iris"))
	ref, err := Learn(context.Background(), tr.X, tr.Y, nil, Options{Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	refErr, err := eval.FactorKNNError(b, ref.L, tr.X, tr.Y, te.X, te.Y, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []float64{1e-6, 1e-3, 0.1, 7, 1e3, 1e6} {
		t.Run(fmtG(s), func(t *testing.T) {
			var xs, ts mat.Dense
			xs.Scale(s, tr.X)
			ts.Scale(s, te.X)
			res, err := Learn(context.Background(), &xs, tr.Y, nil, Options{Backend: b})
			if err != nil {
				t.Fatal(err)
			}
			var ms mat.SymDense
			ms.ScaleSym(s*s, res.M)
			if e := relDiff(&ms, ref.M); e > 1e-6 {
				t.Errorf("‖M·s² − M₁‖/‖M₁‖ = %.3g (iterations %d vs %d)", e, res.Iterations, ref.Iterations)
			}
			got, err := eval.FactorKNNError(b, res.L, &xs, tr.Y, &ts, te.Y, 3)
			if err != nil {
				t.Fatal(err)
			}
			if got != refErr {
				t.Errorf("3-NN error %.4f, unscaled %.4f", got, refErr)
			}
		})
	}
}

func fmtG(v float64) string { return "s=" + strconvG(v) }

// TestBackendsAgree: the native and the pure-Go backends learn the same
// metric (1e-6 relative) on wine.
func TestBackendsAgree(t *testing.T) {
	bs := enginetest.Backends(t)
	if len(bs) < 2 {
		t.Skip("only one backend in this build")
	}
	tr, _ := splitStd(t, loadSet(t, "wine"))
	var ref *Result
	for _, b := range bs {
		res, err := Learn(context.Background(), tr.X, tr.Y, nil, Options{Backend: b})
		if err != nil {
			t.Fatalf("%s: %v", b.Name(), err)
		}
		if ref == nil {
			ref = res
			continue
		}
		if e := relDiff(res.M, ref.M); e > 1e-6 {
			t.Errorf("%s vs %s: relative difference %.3g (iterations %d vs %d)", b.Name(), bs[0].Name(), e, res.Iterations, ref.Iterations)
		}
	}
}

func strconvG(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// relDiff is ‖a − b‖_F / ‖b‖_F.
func relDiff(a, b mat.Symmetric) float64 {
	var d mat.Dense
	d.Sub(a, b)
	return mat.Norm(&d, 2) / mat.Norm(b, 2)
}

// TestCheapRefreshMatchesFull: a refresh that reuses the last full search
// (proved complete by the bound M ⪰ c·M₀) finds the same impostor
// candidates as a new full search in the same metric.
func TestCheapRefreshMatchesFull(t *testing.T) {
	tr, _ := splitStd(t, loadSet(t, "wine"))
	b := engine.Default()
	ts, err := constraints.Triplets(tr.X, tr.Y, 3)
	if err != nil {
		t.Fatal(err)
	}
	s := newSolver(b, tr.X, tr.Y, ts, Options{Candidates: 80, Backend: b}.withDefaults())
	if err := s.init(); err != nil {
		t.Fatal(err)
	}
	if err := s.refresh(); err != nil {
		t.Fatal(err)
	}
	// A nearby metric: M = 0.9·I + a small PSD term.
	rng := rand.New(rand.NewPCG(5, 5))
	l := mat.NewDense(s.d, s.d, nil)
	for i := 0; i < s.d; i++ {
		for j := 0; j < s.d; j++ {
			v := 0.05 * rng.NormFloat64()
			if i == j {
				v += math.Sqrt(0.9)
			}
			l.Set(i, j, v)
		}
	}
	s.l = l
	s.m.SymOuterK(1, l)
	full := s.fullSearches
	if err := s.refresh(); err != nil {
		t.Fatal(err)
	}
	if s.fullSearches != full {
		t.Fatalf("the refresh was a full search (%d stale points)", s.lastStale)
	}
	cheap := candidateSets(s)
	cheapObj, stale := s.obj, s.lastStale
	if stale == 0 {
		t.Log("no stale point: the re-search path was not exercised")
	}
	s.search.valid = false
	if err := s.refresh(); err != nil {
		t.Fatal(err)
	}
	want := candidateSets(s)
	for i := range want {
		if len(cheap[i]) != len(want[i]) {
			t.Fatalf("point %d: candidates %v, full search %v", i, cheap[i], want[i])
		}
		for q := range want[i] {
			if cheap[i][q] != want[i][q] {
				t.Fatalf("point %d: candidates %v, full search %v", i, cheap[i], want[i])
			}
		}
	}
	// The same candidates give the same objective up to the rounding of
	// its distances and of its sum: each term carries O(d·ε) relative error
	// and the sum adds one ε per term, all terms nonnegative.
	terms := s.d + len(s.tIdx) + len(s.cIdx)
	if tol := float64(terms) * 0x1p-52 * math.Abs(s.obj); math.Abs(cheapObj-s.obj) > tol {
		t.Errorf("objective %v, after a full search %v (differ by %.3g > %.3g)", cheapObj, s.obj, math.Abs(cheapObj-s.obj), tol)
	}
	t.Logf("%d stale points re-searched, %d candidates", stale, len(s.cIdx))
}

func candidateSets(s *solver) [][]int {
	out := make([][]int, s.n)
	for i := range out {
		out[i] = append([]int(nil), s.cIdx[s.cPtr[i]:s.cPtr[i+1]]...)
		slices.Sort(out[i])
	}
	return out
}

// TestSingularSearchKeepsCandidates: a full search in a nonsingular metric
// stores storeFactor·Candidates neighbours for the next cheap refresh; in a
// singular one, which gives the next refresh no bound, only Candidates.
func TestSingularSearchKeepsCandidates(t *testing.T) {
	tr, _ := splitStd(t, loadSet(t, "wine"))
	b := engine.Default()
	ts, err := constraints.Triplets(tr.X, tr.Y, 3)
	if err != nil {
		t.Fatal(err)
	}
	const k = 20
	s := newSolver(b, tr.X, tr.Y, ts, Options{Candidates: k, Backend: b}.withDefaults())
	if err := s.init(); err != nil {
		t.Fatal(err)
	}
	if err := s.refresh(); err != nil {
		t.Fatal(err)
	}
	if s.search.k != storeFactor*k {
		t.Fatalf("nonsingular metric: the search stored %d neighbours, want %d", s.search.k, storeFactor*k)
	}
	// M = L Lᵀ with L's first column zero: singular.
	l := mat.NewDense(s.d, s.d, nil)
	for i := 1; i < s.d; i++ {
		l.Set(i, i, 1)
	}
	s.l = l
	s.m.SymOuterK(1, l)
	if err := s.refresh(); err != nil {
		t.Fatal(err)
	}
	if s.search.k != k || s.search.whiten != nil {
		t.Fatalf("singular metric: the search stored %d neighbours (whitening %v), want %d and none", s.search.k, s.search.whiten != nil, k)
	}
}
