package itml

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/progress"
	"gonum.org/v1/gonum/mat"
)

// One constraint in 2-D from the prior I: a single Bregman projection has
// the closed form of the paper's update, A = I + β v vᵀ with
// α = γ'(1/p − 1/u) (similar) or γ'(1/l − 1/p) (dissimilar), p = ‖v‖²,
// γ' = γ/(γ+1), and leaves d_A(v) equal to the updated slack ξ; a second
// cycle moves nothing and certifies convergence.
func TestProjectionClosedForm(t *testing.T) {
	x := mat.NewDense(2, 2, []float64{0, 0, 3, 4}) // v = (−3, −4), p = 25
	const p = 25.0
	for _, tc := range []struct {
		name  string
		same  bool
		bound float64 // u for a similar pair, l for a dissimilar one
		gamma float64 // m = 1, so the paper's γ is Gamma
	}{
		{"similar hard", true, 4, math.Inf(1)},
		{"similar gamma 1", true, 4, 1},
		{"similar gamma 0.1", true, 9, 0.1},
		{"dissimilar hard", false, 100, math.Inf(1)},
		{"dissimilar gamma 2", false, 64, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps, err := constraints.NewPairs(2, []constraints.LabelledPair{{A: 0, B: 1, Same: tc.same}})
			if err != nil {
				t.Fatal(err)
			}
			gp := 1.0
			if !math.IsInf(tc.gamma, 1) {
				gp = tc.gamma / (tc.gamma + 1)
			}
			var alpha, beta, xi float64
			if tc.same {
				alpha = gp * (1/p - 1/tc.bound)
				beta = alpha / (1 - alpha*p)
				xi = 1 / (1/tc.bound + alpha/tc.gamma)
			} else {
				alpha = gp * (1/tc.bound - 1/p)
				beta = -alpha / (1 + alpha*p)
				xi = 1 / (1/tc.bound - alpha/tc.gamma)
			}
			want := mat.NewSymDense(2, []float64{1 + beta*9, beta * 12, beta * 12, 1 + beta*16})
			opt := Options{Gamma: tc.gamma, U: tc.bound, L: tc.bound, Prior: eye(2), MaxIter: 1}
			res, err := Learn(context.Background(), x, ps, opt)
			if err != nil {
				t.Fatal(err)
			}
			if !mat.EqualApprox(res.M, want, 1e-12) {
				t.Errorf("A = %v, want %v", mat.Formatted(res.M), mat.Formatted(want))
			}
			if got := pairDist(res.M, x, 0, 1); math.Abs(got-xi) > 1e-12*xi {
				t.Errorf("d_A = %v, want ξ = %v", got, xi)
			}
			if math.Abs(res.Xi[0]-xi) > 1e-12*xi || math.Abs(res.Lambda[0]+alpha) > 1e-15 {
				t.Errorf("ξ = %v, λ = %v; want %v, %v", res.Xi[0], res.Lambda[0], xi, -alpha)
			}
			if res.Converged || !strings.Contains(res.Reason, "cycle limit") {
				t.Errorf("one cycle with λ moving: converged %v (%s), want the cap", res.Converged, res.Reason)
			}
			opt.MaxIter = 5
			res2, err := Learn(context.Background(), x, ps, opt)
			if err != nil {
				t.Fatal(err)
			}
			if !res2.Converged || res2.Iterations != 2 || !mat.EqualApprox(res2.M, want, 1e-12) {
				t.Errorf("second cycle: converged %v after %d cycles, A = %v", res2.Converged, res2.Iterations, mat.Formatted(res2.M))
			}
		})
	}
}

// A constraint that the prior satisfies leaves the prior alone.
func TestSatisfiedByPrior(t *testing.T) {
	x := mat.NewDense(2, 2, []float64{0, 0, 3, 4})
	ps, _ := constraints.NewPairs(2, []constraints.LabelledPair{{A: 0, B: 1, Same: true}})
	res, err := Learn(context.Background(), x, ps, Options{U: 30, L: 30, Prior: eye(2)})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Converged || res.Iterations != 1 || !mat.Equal(res.M, eye(2)) {
		t.Errorf("converged %v after %d cycles (%s), A = %v", res.Converged, res.Iterations, res.Reason, mat.Formatted(res.M))
	}
}

// After convergence every constraint holds within its slack — similar
// pairs d_A ≤ ξ, dissimilar d_A ≥ ξ — the dual variables are non-negative
// and complementary: λ > 0 only on constraints at their slack bound.
func TestKKTAfterConvergence(t *testing.T) {
	for _, tc := range []struct {
		data  string
		gamma float64
	}{
		{"iris", 10}, {"iris", 200}, {"wine", 30},
	} {
		t.Run(tc.data, func(t *testing.T) {
			d := standardized(t, tc.data)
			ps, err := LabelPairs(d.Y, 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Learn(context.Background(), d.X, ps, Options{Gamma: tc.gamma, Tol: 1e-10, MaxIter: 100000})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Converged {
				t.Fatalf("not converged: %s", res.Reason)
			}
			const tol = 1e-6
			active := 0
			for r, p := range ps.List {
				dr, xi, lam := pairDist(res.M, d.X, p.A, p.B), res.Xi[r], res.Lambda[r]
				if lam < 0 {
					t.Errorf("pair %d: λ = %g < 0", r, lam)
				}
				if p.Same && dr > xi*(1+tol) || !p.Same && dr < xi*(1-tol) {
					t.Errorf("pair %d (same %v): d_A = %.10g violates ξ = %.10g", r, p.Same, dr, xi)
				}
				if lam > 0 {
					active++
					if math.Abs(dr-xi) > tol*xi {
						t.Errorf("pair %d: λ = %g > 0 but d_A = %.10g ≠ ξ = %.10g", r, lam, dr, xi)
					}
				}
			}
			if active == 0 {
				t.Error("no active constraint: the test exercises nothing")
			}
		})
	}
}

// Multiplying the data by s divides the learned matrix by s² and leaves
// every k-NN decision alone.
func TestScaleFree(t *testing.T) {
	d := standardized(t, "iris")
	tr, test := alternate(d)
	trPairs, err := LabelPairs(tr.Y, 0, 7)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := Learn(context.Background(), tr.X, trPairs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	refErr := knnError(t, ref.M, tr, test, 3)
	for _, s := range []float64{1e-6, 1e-3, 0.1, 7, 1e3, 1e6} {
		sx, stx := mat.DenseCopyOf(tr.X), mat.DenseCopyOf(test.X)
		sx.Scale(s, sx)
		stx.Scale(s, stx)
		res, err := Learn(context.Background(), sx, trPairs, Options{})
		if err != nil {
			t.Fatalf("s = %g: %v", s, err)
		}
		var back mat.SymDense
		back.ScaleSym(s*s, res.M)
		var diff mat.Dense
		diff.Sub(&back, ref.M)
		if rel := mat.Norm(&diff, 2) / mat.Norm(ref.M, 2); rel > 1e-6 {
			t.Errorf("s = %g: ‖A·s² − A‖/‖A‖ = %.3g", s, rel)
		}
		// Scaling is exact only by powers of two: the cycles are bounded,
		// not equated (a stopping test within rounding of its threshold may
		// fire one cycle apart).
		if res.Iterations < ref.Iterations-1 || res.Iterations > ref.Iterations+1 || math.Abs(res.U-ref.U) > 1e-9*ref.U || math.Abs(res.L-ref.L) > 1e-9*ref.L {
			t.Errorf("s = %g: %d cycles, u %g, l %g; unscaled %d, %g, %g", s, res.Iterations, res.U, res.L, ref.Iterations, ref.U, ref.L)
		}
		str := tr.Subset(nil)
		str.X, str.Y = sx, tr.Y
		ste := test.Subset(nil)
		ste.X, ste.Y = stx, test.Y
		if e := knnError(t, res.M, str, ste, 3); e != refErr {
			t.Errorf("s = %g: 3-NN error %g, unscaled %g", s, e, refErr)
		}
	}
}

// On held-out rows the learned metric does at least as well as the
// Euclidean one.
func TestAccuracyAtLeastEuclidean(t *testing.T) {
	for _, name := range []string{"iris", "wine"} {
		t.Run(name, func(t *testing.T) {
			d := standardized(t, name)
			tr, test := alternate(d)
			ps, err := LabelPairs(tr.Y, 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Learn(context.Background(), tr.X, ps, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Converged {
				t.Errorf("not converged: %s", res.Reason)
			}
			_, dim := d.X.Dims()
			learned, euclid := knnError(t, res.M, tr, test, 3), knnError(t, eye(dim), tr, test, 3)
			t.Logf("%s: 3-NN error %.4f, Euclidean %.4f, %d cycles", name, learned, euclid, res.Iterations)
			if learned > euclid {
				t.Errorf("3-NN error %.4f above the Euclidean %.4f", learned, euclid)
			}
		})
	}
}

func TestLabelPairs(t *testing.T) {
	d := standardized(t, "iris")
	ps, err := LabelPairs(d.Y, 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	if same, diff := ps.Counts(); same != 180 || diff != 180 {
		t.Errorf("%d similar and %d dissimilar pairs, want 20·3² = 180 each", same, diff)
	}
	again, _ := LabelPairs(d.Y, 0, 3)
	for r := range ps.List {
		if ps.List[r] != again.List[r] {
			t.Fatalf("pair %d differs between two draws with one seed", r)
		}
	}
	small, err := LabelPairs([]int{0, 0, 1}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if same, diff := small.Counts(); same != 1 || diff != 2 {
		t.Errorf("three points: %d similar, %d dissimilar, want the 1 and 2 there are", same, diff)
	}
	for _, y := range [][]int{nil, {0}, {0, 0, 0}, {0, -1}} {
		if _, err := LabelPairs(y, 0, 1); !errors.Is(err, errs.ErrInvalid) {
			t.Errorf("labels %v: error %v, want ErrInvalid", y, err)
		}
	}
	if _, err := LabelPairs(d.Y, -1, 1); !errors.Is(err, errs.ErrInvalid) {
		t.Errorf("negative count: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	x := mat.NewDense(3, 2, []float64{0, 0, 1, 0, 0, 1})
	ps, _ := constraints.NewPairs(3, []constraints.LabelledPair{{A: 0, B: 1, Same: true}, {A: 0, B: 2}})
	nan := mat.NewDense(3, 2, []float64{0, 0, math.NaN(), 0, 0, 1})
	dup := mat.NewDense(3, 2, []float64{1, 1, 1, 1, 1, 1})
	other, _ := constraints.NewPairs(4, []constraints.LabelledPair{{A: 0, B: 3, Same: true}})
	empty := &constraints.Pairs{N: 3}
	bad := &constraints.Pairs{N: 3, List: []constraints.LabelledPair{{A: 1, B: 1}}}
	for _, tc := range []struct {
		name string
		x    *mat.Dense
		ps   *constraints.Pairs
		opt  Options
	}{
		{"nil data", nil, ps, Options{}},
		{"nil pairs", x, nil, Options{}},
		{"no pairs", x, empty, Options{}},
		{"pairs on other points", x, other, Options{}},
		{"pair of one point", x, bad, Options{}},
		{"NaN", nan, ps, Options{}},
		{"negative gamma", x, ps, Options{Gamma: -1}},
		{"NaN gamma", x, ps, Options{Gamma: math.NaN()}},
		{"negative MaxIter", x, ps, Options{MaxIter: -1}},
		{"negative Tol", x, ps, Options{Tol: -1}},
		{"U without L", x, ps, Options{U: 1}},
		{"negative bounds", x, ps, Options{U: -1, L: -1}},
		{"prior of other size", x, ps, Options{Prior: eye(3)}},
		{"prior not PD", x, ps, Options{Prior: mat.NewSymDense(2, []float64{1, 2, 2, 1})}},
		{"no spread", dup, ps, Options{}},
		{"identical points only", dup, ps, Options{Prior: eye(2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Learn(context.Background(), tc.x, tc.ps, tc.opt)
			if !errors.Is(err, errs.ErrInvalid) || !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v, want ErrInvalid", err)
			}
			if res != nil {
				t.Error("a result next to an input error")
			}
		})
	}
}

// Cancelled before the start: no result. Cancelled between cycles: the
// current iterate, PSD and not converged, with the context's error.
func TestCancel(t *testing.T) {
	d := standardized(t, "wine")
	ps, err := LabelPairs(d.Y, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res, err := Learn(ctx, d.X, ps, Options{}); !errors.Is(err, context.Canceled) || res != nil {
		t.Errorf("cancelled before: %v, %v", res, err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	opt := Options{Gamma: 1e6, Tol: 1e-12, Progress: func(e progress.Event) {
		if e.Iteration == 3 {
			cancel()
		}
	}}
	res, err := Learn(ctx, d.X, ps, opt)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if res == nil || res.M == nil || res.Converged || res.Iterations != 3 {
		t.Fatalf("result %+v, want the iterate of cycle 3, not converged", res)
	}
	var ch mat.Cholesky
	if !ch.Factorize(res.M) {
		t.Error("the returned iterate is not positive definite")
	}
}

func eye(d int) *mat.SymDense {
	m := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		m.SetSym(i, i, 1)
	}
	return m
}
