package npkl

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/engine/enginetest"
	"gonum.org/v1/gonum/mat"
)

// TestChebOp: p(A)·x against the polynomial applied to A's dense
// eigendecomposition, p(A) = V·T_d((Λ − c)/e)·Vᵀ, for degrees 1 to 6 and
// blocks of 1, 4 and 5 columns; and ApplyBlock's columns are Apply's, bit
// for bit (the Lanczos and Krylov–Schur filters apply the same p).
func TestChebOp(t *testing.T) {
	lap, cons, _ := problem(t, 120, 2)
	rng := rand.New(rand.NewPCG(5, 6))
	w := make([]float64, cons.Len())
	for c := range w {
		w[c] = rng.Float64()
	}
	op, err := NewOperator(lap, cons, w)
	if err != nil {
		t.Fatal(err)
	}
	n := op.Dim()
	var eig mat.EigenSym
	if !eig.Factorize(materialise(op), true) {
		t.Fatal("dense eigendecomposition failed")
	}
	lam := eig.Values(nil)
	var v mat.Dense
	eig.VectorsTo(&v)
	lo := op.lowerBound()
	if lo > lam[0] {
		t.Fatalf("Gershgorin bound %v above λ_min %v", lo, lam[0])
	}
	cut := 0.5 * lam[n-3]
	for d := 1; d <= 6; d++ {
		f := &chebOp{op: op, c: (cut + lo) / 2, e: (cut - lo) / 2, d: d, n: n}
		// The dense p(A).
		pl := make([]float64, n)
		for i, l := range lam {
			pl[i] = chebT(d, (l-f.c)/f.e)
		}
		var vp, pa mat.Dense
		vp.Apply(func(_, j int, x float64) float64 { return x * pl[j] }, &v)
		pa.Mul(&vp, v.T())
		pnorm := math.Max(math.Abs(pl[0]), math.Abs(pl[n-1]))
		for _, c := range []int{1, 4, 5} {
			x := mat.NewDense(n, c, nil)
			for i := range x.RawMatrix().Data {
				x.RawMatrix().Data[i] = rng.NormFloat64()
			}
			got, want := mat.NewDense(n, c, nil), mat.NewDense(n, c, nil)
			f.ApplyBlock(got, x)
			want.Mul(&pa, x)
			var diff mat.Dense
			diff.Sub(got, want)
			if r := mat.Norm(&diff, 2) / (pnorm * mat.Norm(x, 2)); r > 1e-12*float64(d) {
				t.Errorf("degree %d, %d columns: ‖p(A)x − dense‖/(‖p(A)‖‖x‖) = %.2g", d, c, r)
			}
			col, out := make([]float64, n), make([]float64, n)
			for l := 0; l < c; l++ {
				mat.Col(col, l, x)
				f.Apply(out, col)
				for i := range out {
					if out[i] != got.At(i, l) {
						t.Fatalf("degree %d, %d columns: column %d row %d: Apply %v, ApplyBlock %v", d, c, l, i, out[i], got.At(i, l))
					}
				}
			}
		}
	}
}

// chebT is the Chebyshev polynomial T_d(x) by its recurrence.
func chebT(d int, x float64) float64 {
	t0, t1 := 1.0, x
	for j := 2; j <= d; j++ {
		t0, t1 = t1, 2*x*t1-t0
	}
	if d == 0 {
		return t0
	}
	return t1
}

// TestRitzBounds: after a solve, change the weights as a squared-hinge step
// would (and by much more); the bounds from the old eigenvectors must stay
// at or below the new λ_k and λ_1 (Cauchy's interlacing), on both backends.
func TestRitzBounds(t *testing.T) {
	lap, cons, _ := problem(t, 150, 4)
	m := cons.Len()
	for _, b := range enginetest.Backends(t) {
		for _, scale := range []float64{0.01, 1, 20} {
			rng := rand.New(rand.NewPCG(7, uint64(scale*100)))
			w := make([]float64, m)
			for c := range w {
				w[c] = 1
			}
			op, err := NewOperator(lap, cons, w)
			if err != nil {
				t.Fatal(err)
			}
			const k = 8
			s := &solver{ctx: context.Background(), b: b, op: op, n: op.Dim(), tol: 1e-10}
			r, err := engine.KrylovSchur(s.ctx, b, op, k, engine.LargestAlgebraic, engine.KrylovSchurOptions{Tol: 1e-12})
			if err != nil {
				t.Fatal(err)
			}
			s.sub = r.Vectors
			for c := range w {
				w[c] = max(0, w[c]+scale*rng.NormFloat64())
			}
			if err := op.SetWeights(w); err != nil {
				t.Fatal(err)
			}
			var eig mat.EigenSym
			if !eig.Factorize(materialise(op), false) {
				t.Fatal("dense eigendecomposition failed")
			}
			lam := eig.Values(nil)
			n := len(lam)
			for _, kk := range []int{k, k / 2, 1} {
				thetaK, theta1, products, err := s.ritzBounds(kk)
				if err != nil {
					t.Fatal(err)
				}
				slack := 1e-12 * math.Max(math.Abs(lam[0]), math.Abs(lam[n-1]))
				if thetaK > lam[n-kk]+slack || theta1 > lam[n-1]+slack || thetaK > theta1 || products != k {
					t.Errorf("%s, change ×%g, k = %d: θ_k %v (λ_k %v), θ_1 %v (λ_1 %v), %d products",
						b.Name(), scale, kk, thetaK, lam[n-kk], theta1, lam[n-1], products)
				}
				if scale == 0.01 && lam[n-kk]-thetaK > 1e-2*lam[n-kk] {
					t.Errorf("%s, small change, k = %d: θ_k %v far below λ_k %v", b.Name(), kk, thetaK, lam[n-kk])
				}
			}
		}
	}
}
