package npkl

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine/enginetest"
	"github.com/psdlearn/psdlearn/lapack"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// blobs returns n points in d dimensions drawn around c well-separated centres.
func blobs(n, d, c int, spread float64, seed uint64) (*mat.Dense, []int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	cent := make([]float64, c*d)
	for i := range cent {
		cent[i] = 10 * rng.NormFloat64()
	}
	x := mat.NewDense(n, d, nil)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		y[i] = i % c
		for j := 0; j < d; j++ {
			x.Set(i, j, cent[y[i]*d+j]+spread*rng.NormFloat64())
		}
	}
	return x, y
}

// denseKernel forms V diag(λ) Vᵀ (tests only).
func denseKernel(r *Result) *mat.SymDense {
	n := r.N()
	k := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			k.SetSym(i, j, r.At(i, j))
		}
	}
	return k
}

// problem builds a small SimpleNPKL problem: a kNN Laplacian on blobs and
// constraints from the paper's sampler.
func problem(t *testing.T, n int, seed uint64) (*sparse.CSR, *constraints.Pairs, []int) {
	t.Helper()
	x, y := blobs(n, 3, 3, 4, seed)
	lap, err := Laplacian(x, 5, sparse.GraphOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := constraints.XingPairs(y, 0.7, seed)
	if err != nil {
		t.Fatal(err)
	}
	return lap, cons, y
}

func TestPatakiRank(t *testing.T) {
	for _, tc := range []struct{ m, r int }{
		{0, 1}, {1, 1}, {2, 1}, {3, 2}, {5, 2}, {6, 3}, {9, 3}, {10, 4}, {45, 9}, {54, 9}, {55, 10}, {156511, 558},
	} {
		if got := PatakiRank(tc.m); got != tc.r {
			t.Errorf("PatakiRank(%d) = %d, want %d", tc.m, got, tc.r)
		}
		if tc.m > 0 && (tc.r*(tc.r+1)/2 > tc.m || (tc.r+1)*(tc.r+2)/2 <= tc.m) {
			t.Errorf("table entry (%d, %d) is not the largest r with r(r+1)/2 ≤ m", tc.m, tc.r)
		}
	}
}

// TestOperator checks A·x against the dense A = C Σ T_ij (e_i e_jᵀ + e_j e_iᵀ)/2 − L.
func TestOperator(t *testing.T) {
	lap, cons, _ := problem(t, 40, 3)
	n := lap.Rows
	w := make([]float64, cons.Len())
	rng := rand.New(rand.NewPCG(7, 7))
	for c := range w {
		w[c] = rng.Float64()
	}
	op, err := NewOperator(lap, cons, w)
	if err != nil {
		t.Fatal(err)
	}
	want := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			want.Set(i, j, -lap.At(i, j))
		}
	}
	for c, p := range cons.List {
		h := 0.5 * w[c] * p.T()
		want.Set(p.A, p.B, want.At(p.A, p.B)+h)
		want.Set(p.B, p.A, want.At(p.B, p.A)+h)
	}
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	got := make([]float64, n)
	op.Apply(got, x)
	ref := mat.NewVecDense(n, nil)
	ref.MulVec(want, mat.NewVecDense(n, x))
	for i := range got {
		if math.Abs(got[i]-ref.AtVec(i)) > 1e-12 {
			t.Fatalf("A·x[%d] = %v, want %v", i, got[i], ref.AtVec(i))
		}
	}
	if !mat.EqualApprox(want, want.T(), 0) {
		t.Fatal("reference A is not symmetric")
	}
}

// TestLinearClosedForm compares the low-rank solution with the dense closed
// form of Proposition 1 and checks its optimality conditions.
func TestLinearClosedForm(t *testing.T) {
	lap, cons, _ := problem(t, 90, 11)
	for _, b := range enginetest.Backends(t) {
		for _, tc := range []struct{ B, C float64 }{{1, 1}, {90, 0.5}} {
			opt := Options{B: tc.B, C: tc.C, Backend: b, Seed: 1}
			res, err := Learn(context.Background(), lap, cons, opt)
			if err != nil {
				t.Fatalf("%s: %v", b.Name(), err)
			}
			if !res.Covered {
				t.Fatalf("%s: positive spectrum not covered", b.Name())
			}
			// Dense reference: A_+ √(B / tr(A_+²)) from the full eigendecomposition.
			w := make([]float64, cons.Len())
			for c := range w {
				w[c] = tc.C
			}
			op, _ := NewOperator(lap, cons, w)
			a := materialise(op)
			e, err := b.SymEig(a, lapack.PositivePart(posTol), true)
			if err != nil {
				t.Fatal(err)
			}
			if len(e.Values) != res.Rank() {
				t.Fatalf("%s B=%v C=%v: rank %d, dense positive part has %d eigenvalues", b.Name(), tc.B, tc.C, res.Rank(), len(e.Values))
			}
			var ss float64
			for _, v := range e.Values {
				ss += v * v
			}
			s := math.Sqrt(tc.B / ss)
			n := lap.Rows
			kd := mat.NewDense(n, n, nil)
			for l, v := range e.Values {
				col := e.Vectors.ColView(l)
				kd.RankOne(kd, s*v, col, col)
			}
			kl := denseKernel(res)
			var diff, trK2, trAK float64
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					diff = math.Max(diff, math.Abs(kl.At(i, j)-kd.At(i, j)))
					trK2 += kl.At(i, j) * kl.At(i, j)
					trAK += a.At(i, j) * kl.At(i, j)
				}
			}
			scale := tc.B / float64(n)
			if diff > 1e-9*math.Max(1, scale) {
				t.Errorf("%s B=%v C=%v: max |K − K_dense| = %g", b.Name(), tc.B, tc.C, diff)
			}
			// The capacity constraint is active: tr(K²) = B.
			if math.Abs(trK2-tc.B) > 1e-9*tc.B {
				t.Errorf("%s: tr(K²) = %v, want B = %v", b.Name(), trK2, tc.B)
			}
			// tr(AK) attains the Cauchy–Schwarz bound √(B Σσ₊²) and the objective of (6) is −tr(AK).
			if bound := math.Sqrt(tc.B * ss); math.Abs(trAK-bound) > 1e-9*bound || math.Abs(res.History[0].Objective+bound) > 1e-9*bound {
				t.Errorf("%s: tr(AK) = %v, objective %v, bound %v", b.Name(), trAK, res.History[0].Objective, bound)
			}
			// K ⪰ 0 and its eigenvalues are positive and descending.
			for l, v := range res.Lambda {
				if !(v > 0) || (l > 0 && v > res.Lambda[l-1]) {
					t.Fatalf("%s: eigenvalues of K not positive and descending: %v", b.Name(), res.Lambda)
				}
			}
			// Any other feasible K' does no better: tr(A K') ≤ tr(A K*).
			rng := rand.New(rand.NewPCG(5, 5))
			for trial := 0; trial < 5; trial++ {
				g := mat.NewDense(n, 3, nil)
				for i := 0; i < n; i++ {
					for j := 0; j < 3; j++ {
						g.Set(i, j, rng.NormFloat64())
					}
				}
				var kp mat.SymDense
				kp.SymOuterK(1, g)
				var fro, tr float64
				for i := 0; i < n; i++ {
					for j := 0; j < n; j++ {
						fro += kp.At(i, j) * kp.At(i, j)
						tr += a.At(i, j) * kp.At(i, j)
					}
				}
				if tr*math.Sqrt(tc.B/fro) > trAK*(1+1e-12) {
					t.Errorf("%s: a random feasible K' beats K*: %v > %v", b.Name(), tr*math.Sqrt(tc.B/fro), trAK)
				}
			}
		}
	}
}

// TestRankGrowthAndCap: starting from one eigenpair the solver grows until the
// positive spectrum is covered and agrees with the default start; with a cap
// below the positive rank it returns the top MaxRank part, flagged uncovered.
func TestRankGrowthAndCap(t *testing.T) {
	lap, cons, _ := problem(t, 90, 13)
	ref, err := Learn(context.Background(), lap, cons, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if ref.Rank() < 4 {
		t.Fatalf("test problem too easy: rank %d", ref.Rank())
	}
	grown, err := Learn(context.Background(), lap, cons, Options{Seed: 1, Rank: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !grown.Covered || grown.Rank() != ref.Rank() {
		t.Fatalf("grown from rank 1: covered %v rank %d, want covered rank %d", grown.Covered, grown.Rank(), ref.Rank())
	}
	for l := range ref.Lambda {
		if math.Abs(grown.Lambda[l]-ref.Lambda[l]) > 1e-10 {
			t.Fatalf("eigenvalue %d: %v vs %v", l, grown.Lambda[l], ref.Lambda[l])
		}
	}
	capRank := ref.Rank() / 2
	capped, err := Learn(context.Background(), lap, cons, Options{Seed: 1, MaxRank: capRank})
	if err != nil {
		t.Fatal(err)
	}
	if capped.Covered || capped.Rank() != capRank {
		t.Fatalf("capped at %d: covered %v rank %d", capRank, capped.Covered, capped.Rank())
	}
	// Same eigenvectors of A, rescaled for the truncated spectrum: λ ∝ σ.
	ratio := capped.Lambda[0] / ref.Lambda[0]
	for l := 0; l < capRank; l++ {
		if math.Abs(capped.Lambda[l]/ref.Lambda[l]-ratio) > 1e-9 {
			t.Fatalf("capped spectrum is not the truncated one at %d", l)
		}
	}
}

// TestSquaredHinge checks the iterative algorithm: its first iterate is the
// linear-loss solution with C = α⁰ = 1, weak duality J(K_t, α_{t−1}) ≤ primal(K_t)
// holds at every step, α stays non-negative, and with enough iterations α
// approaches the best response C·max(0, 1 − T_ij K_ij) and the duality gap closes.
func TestSquaredHinge(t *testing.T) {
	lap, cons, _ := problem(t, 90, 17)
	const B, C = 90.0, 0.5
	lin, err := Learn(context.Background(), lap, cons, Options{Loss: Linear, B: B, C: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	one, err := Learn(context.Background(), lap, cons, Options{Loss: SquaredHinge, B: B, C: C, Iters: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for l := range lin.Lambda {
		if math.Abs(lin.Lambda[l]-one.Lambda[l]) > 1e-10 {
			t.Fatalf("first squared-hinge iterate differs from the linear solution with C = 1 at eigenvalue %d", l)
		}
	}
	res, err := Learn(context.Background(), lap, cons, Options{Loss: SquaredHinge, B: B, C: C, Iters: 300, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range res.History {
		if !it.Covered {
			t.Fatalf("iteration %d: spectrum not covered", it.T)
		}
		if it.Objective > it.Primal+1e-9*math.Abs(it.Primal) {
			t.Fatalf("iteration %d: J = %v above the primal %v", it.T, it.Objective, it.Primal)
		}
	}
	for c, a := range res.Alpha {
		if a < 0 {
			t.Fatalf("α[%d] = %v < 0", c, a)
		}
	}
	first, last := res.History[0], res.History[len(res.History)-1]
	gap0 := first.Primal - first.Objective
	gap := last.Primal - last.Objective
	if !(gap < 0.05*gap0) {
		t.Errorf("duality gap %v after %d iterations, %v after the first", gap, len(res.History), gap0)
	}
	kij := make([]float64, cons.Len())
	res.Entries(kij, cons)
	var worst float64
	for c, p := range cons.List {
		worst = math.Max(worst, math.Abs(res.Alpha[c]-C*math.Max(0, 1-p.T()*kij[c])))
	}
	if worst > 0.05*C {
		t.Errorf("α far from the best response: max deviation %v (C = %v)", worst, C)
	}
	t.Logf("gap %.3g → %.3g over %d iterations; max |α − α*| = %.3g", gap0, gap, len(res.History), worst)
}

func TestLearnErrors(t *testing.T) {
	lap, cons, _ := problem(t, 30, 19)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		cons *constraints.Pairs
		opt  Options
		want error
	}{
		{"no constraints", nil, Options{}, ErrInvalidConstraint},
		{"empty", &constraints.Pairs{N: 30}, Options{}, ErrInvalidConstraint},
		{"wrong N", &constraints.Pairs{N: 31, List: []constraints.LabelledPair{{A: 0, B: 1}}}, Options{}, ErrInvalidConstraint},
		{"out of range", &constraints.Pairs{N: 30, List: []constraints.LabelledPair{{A: 0, B: 30}}}, Options{}, ErrInvalidConstraint},
		{"negative index", &constraints.Pairs{N: 30, List: []constraints.LabelledPair{{A: -1, B: 3}}}, Options{}, ErrInvalidConstraint},
		{"self pair", &constraints.Pairs{N: 30, List: []constraints.LabelledPair{{A: 2, B: 2, Same: true}}}, Options{}, ErrInvalidConstraint},
		{"negative C", cons, Options{C: -1}, nil},
		{"NaN B", cons, Options{B: math.NaN()}, nil},
		{"bad loss", cons, Options{Loss: 7}, nil},
		{"negative iters", cons, Options{Loss: SquaredHinge, Iters: -1}, nil},
		{"tiny C", cons, Options{C: 1e-13}, ErrNoPositiveSpectrum},
	} {
		_, err := Learn(ctx, lap, tc.cons, tc.opt)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := Learn(ctx, nil, cons, Options{}); err == nil {
		t.Error("nil Laplacian: no error")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Learn(cctx, lap, cons, Options{Loss: SquaredHinge}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

// TestEigensolverAuto: Auto resolves by the number of points, and Learn
// reports the eigensolver that ran.
func TestEigensolverAuto(t *testing.T) {
	for _, tc := range []struct {
		n    int
		in   Eigensolver
		want Eigensolver
	}{
		{100, Auto, Lanczos},
		{AutoKrylovSchurDim - 1, Auto, Lanczos},
		{AutoKrylovSchurDim, Auto, KrylovSchur},
		{AutoKrylovSchurDim, Lanczos, Lanczos},
		{100, KrylovSchur, KrylovSchur},
	} {
		o, err := Options{Eigensolver: tc.in}.WithDefaults(tc.n, 50)
		if err != nil {
			t.Fatal(err)
		}
		if o.Eigensolver != tc.want {
			t.Errorf("n = %d, %v: resolved to %v, want %v", tc.n, tc.in, o.Eigensolver, tc.want)
		}
	}
	if _, err := (Options{Eigensolver: Eigensolver(99)}).WithDefaults(100, 50); err == nil {
		t.Error("unknown eigensolver: no error")
	}
}
