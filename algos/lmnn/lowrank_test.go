package lmnn

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/engine/enginetest"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/progress"
	"gonum.org/v1/gonum/mat"

	"github.com/psdlearn/psdlearn/constraints"
)

// TestFactorGradientFiniteDifference checks the low-rank gradient
// ∇_L f = 2·G·L (G = Xᵀ L_W X) against central differences of the objective
// in every entry of L, at a random D×r factor, on every backend. With the
// candidate set complete (Candidates = n) and fixed, f is piecewise
// quadratic in L; a step of 1e-6 crosses no hinge kink at a random point,
// so the central difference is exact up to rounding (~1e-9 here).
func TestFactorGradientFiniteDifference(t *testing.T) {
	for _, b := range enginetest.Backends(t) {
		for _, tc := range []struct {
			name         string
			n, d, cls, r int
			mu           float64
			seed         uint64
		}{
			{"n12 d3 r1 mu0.5", 12, 3, 3, 1, 0.5, 1},
			{"n15 d4 r2 mu0.2", 15, 4, 2, 2, 0.2, 2},
			{"n20 d5 r5 mu0.9", 20, 5, 4, 5, 0.9, 3},
		} {
			t.Run(b.Name()+"/"+tc.name, func(t *testing.T) {
				x, y := tiny(tc.n, tc.d, tc.cls, tc.seed)
				ts, err := constraints.Triplets(x, y, 2)
				if err != nil {
					t.Fatal(err)
				}
				s := newSolver(b, x, y, ts, Options{Mu: tc.mu, Candidates: tc.n, Rank: tc.r, Backend: b}.withDefaults())
				if err := s.init(); err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(tc.seed, 4))
				for i := 0; i < tc.d; i++ {
					for j := 0; j < tc.r; j++ {
						s.l.Set(i, j, rng.NormFloat64())
					}
				}
				s.m.SymOuterK(1, s.l)
				if err := s.refresh(); err != nil {
					t.Fatal(err)
				}
				if s.active == 0 {
					t.Fatal("no active triplet: the test exercises only the pull term")
				}
				w := make([]float64, len(s.w))
				f := func(l *mat.Dense) float64 {
					obj, _, err := s.evaluate(l, w)
					if err != nil {
						t.Fatal(err)
					}
					return obj
				}
				const h = 1e-6
				fd := mat.NewDense(tc.d, tc.r, nil)
				lp := mat.NewDense(tc.d, tc.r, nil)
				for i := 0; i < tc.d; i++ {
					for j := 0; j < tc.r; j++ {
						lp.Copy(s.l)
						lp.Set(i, j, s.l.At(i, j)+h)
						fp := f(lp)
						lp.Set(i, j, s.l.At(i, j)-h)
						fd.Set(i, j, (fp-f(lp))/(2*h))
					}
				}
				var diff mat.Dense
				diff.Sub(fd, s.gl)
				if e := mat.Norm(&diff, 2) / mat.Norm(s.gl, 2); !(e < 1e-6) {
					t.Errorf("‖FD − 2GL‖/‖2GL‖ = %.3g\nFD   %v\n2GL  %v", e, mat.Formatted(fd), mat.Formatted(s.gl))
				}
			})
		}
	}
}

// TestRankDMatchesFullRank: with Rank = D the factor covers every PSD M,
// and on iris (standardised) the low-rank descent from the principal axes
// (M₀ = I up to rounding) reaches the full-rank descent's objective to 1%
// on both backends (measured: 191.05 against 190.63, 0.22%; both stop on
// the relative-decrease rule of a nonsmooth objective, not on an
// optimality certificate, so they do not agree to the tolerance). Both
// converge, and the 3-NN test errors agree.
func TestRankDMatchesFullRank(t *testing.T) {
	tr, te := splitStd(t, loadSet(t, "iris"))
	_, d := tr.X.Dims()
	for _, b := range enginetest.Backends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			full, err := Learn(context.Background(), tr.X, tr.Y, nil, Options{Backend: b})
			if err != nil {
				t.Fatal(err)
			}
			low, err := Learn(context.Background(), tr.X, tr.Y, nil, Options{Backend: b, Rank: d})
			if err != nil {
				t.Fatal(err)
			}
			if !full.Converged || !low.Converged {
				t.Errorf("converged: full rank %v (%s), rank D %v (%s)", full.Converged, full.Reason, low.Converged, low.Reason)
			}
			if r, c := low.L.Dims(); r != d || c != d {
				t.Errorf("factor %d×%d, want %d×%d", r, c, d, d)
			}
			rel := math.Abs(low.Objective-full.Objective) / full.Objective
			t.Logf("objective: full rank %.8g (%d iterations), rank %d %.8g (%d iterations), relative difference %.3g",
				full.Objective, full.Iterations, d, low.Objective, low.Iterations, rel)
			if !(rel <= 1e-2) {
				t.Errorf("relative objective difference %.3g above 1%%", rel)
			}
			ef, err := eval.FactorKNNError(b, full.L, tr.X, tr.Y, te.X, te.Y, 3)
			if err != nil {
				t.Fatal(err)
			}
			el, err := eval.FactorKNNError(b, low.L, tr.X, tr.Y, te.X, te.Y, 3)
			if err != nil {
				t.Fatal(err)
			}
			if ef != el {
				t.Errorf("3-NN test error: full rank %.4f, rank D %.4f", ef, el)
			}
		})
	}
}

// letterSubset is the first 2,000 letters rows: 1,400 to train on, 600 to
// test, standardised on the first part.
func letterSubset(t testing.TB) (tr, te *data.Dataset) {
	t.Helper()
	parts, err := data.SplitRows(loadSet(t, "letters"), []int{1400, 600})
	if err != nil {
		t.Fatal(err)
	}
	st, err := data.Standardize(parts[0], parts[1])
	if err != nil {
		t.Fatal(err)
	}
	return st[0], st[1]
}

// TestRankAccuracy: a factor of rank r < D learns a metric whose 3-NN test
// error is no worse than the Euclidean one, on wine (D = 13, 3 classes) and
// on a letters subset (D = 16, 26 classes). The factor has r columns, and
// M = L Lᵀ. (Not every rank does: on this letters subset rank 4 gives
// 31.3% against Euclidean 21.2% — 26 classes do not fit in 4 dimensions;
// rank 8 gives 16.2%.)
func TestRankAccuracy(t *testing.T) {
	b := engine.Default()
	wineTr, wineTe := splitStd(t, loadSet(t, "wine"))
	letTr, letTe := letterSubset(t)
	for _, tc := range []struct {
		name   string
		tr, te *data.Dataset
		rank   int
	}{
		{"wine r=2", wineTr, wineTe, 2},
		{"wine r=5", wineTr, wineTe, 5},
		{"letters 1400 r=8", letTr, letTe, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Learn(context.Background(), tc.tr.X, tc.tr.Y, nil, Options{Backend: b, Rank: tc.rank})
			if err != nil {
				t.Fatal(err)
			}
			d, r := res.L.Dims()
			if r != tc.rank {
				t.Fatalf("factor %d×%d, want %d columns", d, r, tc.rank)
			}
			var llt mat.SymDense
			llt.SymOuterK(1, res.L)
			if e := relDiff(&llt, res.M); e > 1e-12 {
				t.Errorf("‖L Lᵀ − M‖/‖M‖ = %.3g", e)
			}
			got, err := eval.FactorKNNError(b, res.L, tc.tr.X, tc.tr.Y, tc.te.X, tc.te.Y, 3)
			if err != nil {
				t.Fatal(err)
			}
			euc, err := eval.KNNError(b, tc.tr.X, tc.tr.Y, tc.te.X, tc.te.Y, 3)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: 3-NN test error %.4f (Euclidean %.4f), %d iterations, converged %v: %s", tc.name, got, euc, res.Iterations, res.Converged, res.Reason)
			if got > euc {
				t.Errorf("rank-%d LMNN error %.4f above Euclidean %.4f", tc.rank, got, euc)
			}
		})
	}
}

// TestRankScaleInvariance: the low-rank path keeps the normalisation exact.
// Multiplying the data by a power of two c gives the same iterates bit for
// bit: c²·M(c) = M(1), c·L(c) = L(1), the same objective, curve and
// iteration count. Other factors perturb the rows by rounding; the 3-NN
// test error is then unchanged.
func TestRankScaleInvariance(t *testing.T) {
	b := engine.Default()
	for _, tc := range []struct {
		set  string
		rank int
	}{
		{"iris", 2},
		{"wine", 3},
	} {
		tr, te := splitStd(t, loadSet(t, tc.set))
		ref, err := Learn(context.Background(), tr.X, tr.Y, nil, Options{Backend: b, Rank: tc.rank})
		if err != nil {
			t.Fatal(err)
		}
		refErr, err := eval.FactorKNNError(b, ref.L, tr.X, tr.Y, te.X, te.Y, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []float64{0x1p-20, 0x1p-7, 0x1p20, 1e-3, 7, 1e6} {
			t.Run(tc.set+"/"+fmtG(c), func(t *testing.T) {
				var xs, ts mat.Dense
				xs.Scale(c, tr.X)
				ts.Scale(c, te.X)
				res, err := Learn(context.Background(), &xs, tr.Y, nil, Options{Backend: b, Rank: tc.rank})
				if err != nil {
					t.Fatal(err)
				}
				if frac, _ := math.Frexp(c); frac == 0.5 {
					var ms mat.SymDense
					ms.ScaleSym(c*c, res.M)
					var ls mat.Dense
					ls.Scale(c, res.L)
					if !mat.Equal(&ms, ref.M) || !mat.Equal(&ls, ref.L) {
						t.Errorf("c²M(c) = M(1): %v, c·L(c) = L(1): %v; want both bit for bit (‖c²M(c) − M(1)‖/‖M(1)‖ = %.3g)",
							mat.Equal(&ms, ref.M), mat.Equal(&ls, ref.L), relDiff(&ms, ref.M))
					}
					if res.Objective != ref.Objective || res.Iterations != ref.Iterations || len(res.Curve) != len(ref.Curve) {
						t.Errorf("objective %v after %d iterations, unscaled %v after %d", res.Objective, res.Iterations, ref.Objective, ref.Iterations)
					}
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
}

// TestRankBadInput: a rank below 0 or above D is an error wrapping
// errs.ErrInvalid that names the rank, with no result; D itself and 1 are
// accepted.
func TestRankBadInput(t *testing.T) {
	x, y := tiny(12, 3, 3, 1)
	for _, tc := range []struct {
		rank int
		ok   bool
	}{
		{-1, false},
		{4, false}, // D + 1
		{1 << 40, false},
		{1, true},
		{3, true},
	} {
		t.Run(strconvG(float64(tc.rank)), func(t *testing.T) {
			res, err := Learn(context.Background(), x, y, nil, Options{Rank: tc.rank, MaxIter: 5})
			if tc.ok {
				if err != nil || res == nil {
					t.Fatalf("rank %d: %v", tc.rank, err)
				}
				return
			}
			if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "rank") {
				t.Fatalf("rank %d: err = %v, want an ErrInput naming the rank", tc.rank, err)
			}
			if res != nil {
				t.Errorf("result %v with the error", res)
			}
		})
	}
}

// TestRankCancel: a cancellation keeps the iterate the descent holds — the
// last accepted factor, never a trial point — with M = L Lᵀ, the objective
// the progress event reported for it, Converged false and an error
// wrapping context.Canceled. Cancelling from an accepted step's event
// returns that step's factor; from a rejected step's event, the factor the
// rejected trial started from. Cancelling before the start returns the
// initial factor (the principal axes). Rejected steps are rare (the step
// grows by only 1.01): iris at rank 3 has one, at iteration 49.
func TestRankCancel(t *testing.T) {
	wine, _ := splitStd(t, loadSet(t, "wine"))
	iris, _ := splitStd(t, loadSet(t, "iris"))
	const rank = 3
	for _, tc := range []struct {
		name  string
		tr    *data.Dataset
		on    string // cancel at the first event whose message contains this
		after int    // and whose iteration is at least this
	}{
		{"before", wine, "", 0},
		{"after an accepted step", wine, "step accepted", 5},
		{"after a rejected step", iris, "step rejected", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := tc.tr
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.on == "" {
				cancel()
			}
			var at progress.Event
			res, err := Learn(ctx, tr.X, tr.Y, nil, Options{Rank: rank, Progress: func(e progress.Event) {
				if tc.on != "" && ctx.Err() == nil && e.Iteration >= tc.after && strings.Contains(e.Message, tc.on) {
					at = e
					cancel()
				}
			}})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if res == nil || res.M == nil || res.L == nil || res.Converged {
				t.Fatalf("result %+v, want an unconverged iterate", res)
			}
			if _, c := res.L.Dims(); c != rank {
				t.Errorf("factor with %d columns, want %d", c, rank)
			}
			var llt mat.SymDense
			llt.SymOuterK(1, res.L)
			if e := relDiff(&llt, res.M); e > 1e-12 {
				t.Errorf("‖L Lᵀ − M‖/‖M‖ = %.3g", e)
			}
			if tc.on == "" {
				if res.Iterations != 0 {
					t.Errorf("%d iterations before the start", res.Iterations)
				}
				return
			}
			if at.Iteration == 0 {
				t.Fatalf("no %q event: the run ended (%s) before the cancellation", tc.on, res.Reason)
			}
			if res.Reason != "cancelled" || res.Iterations != at.Iteration {
				t.Errorf("reason %q after %d iterations, want \"cancelled\" after %d", res.Reason, res.Iterations, at.Iteration)
			}
			if res.Objective != at.Objective {
				t.Errorf("objective %v, the event at the cancellation reported %v", res.Objective, at.Objective)
			}
			if last := res.Curve[len(res.Curve)-1]; res.Objective != last || !(res.Objective < res.Curve[0]) {
				t.Errorf("objective %v: want the last accepted value %v, below the start %v", res.Objective, last, res.Curve[0])
			}
		})
	}
}
