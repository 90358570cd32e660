package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestBasisKernels checks the streaming Gram–Schmidt kernels against
// plain loops, for widths that are and are not multiples of the AVX2
// kernels' four columns and lanes, above and below the inline-loop width,
// on a strided basis (a view of a wider matrix, as KrylovSchur passes it).
// internal/f64's TestAxpy4Dot4 checks the assembly against the Go loops.
func TestBasisKernels(t *testing.T) {
	for _, tc := range []struct{ n, m, b int }{
		{1, 1, 1}, {7, 3, 1}, {50, 4, 4}, {300, 13, 3}, {5000, 37, 4}, {4100, 64, 8}, {2049, 9, 6}, {100, 200, 9},
	} {
		rng := rand.New(rand.NewPCG(uint64(tc.n), uint64(tc.m*100+tc.b)))
		wide := mat.NewDense(tc.n, tc.m+5, nil)
		for i := range wide.RawMatrix().Data {
			wide.RawMatrix().Data[i] = rng.NormFloat64()
		}
		v := wide.Slice(0, tc.n, 2, 2+tc.m).(*mat.Dense)
		w := mat.NewDense(tc.n, tc.b, nil)
		for i := range w.RawMatrix().Data {
			w.RawMatrix().Data[i] = rng.NormFloat64()
		}
		// C = VᵀW by plain loops.
		want := make([]float64, tc.b*tc.m)
		for l := 0; l < tc.b; l++ {
			for j := 0; j < tc.m; j++ {
				var s float64
				for i := 0; i < tc.n; i++ {
					s += v.At(i, j) * w.At(i, l)
				}
				want[l*tc.m+j] = s
			}
		}
		// W − V·C by plain loops, for ct = want.
		sub := mat.DenseCopyOf(w)
		for i := 0; i < tc.n; i++ {
			for l := 0; l < tc.b; l++ {
				var s float64
				for j := 0; j < tc.m; j++ {
					s += v.At(i, j) * want[l*tc.m+j]
				}
				sub.Set(i, l, sub.At(i, l)-s)
			}
		}
		tol := 1e-13 * math.Sqrt(float64(tc.n*tc.m))
		run := func() ([]float64, *mat.Dense) {
			got := projectRows(v, w)
			gw := mat.DenseCopyOf(w)
			subtractRows(gw, v, want)
			return got, gw
		}
		got, gw := run()
		for j := range want {
			if d := math.Abs(got[j] - want[j]); d > tol*(1+math.Abs(want[j])) {
				t.Fatalf("%+v: projectRows entry %d = %v, want %v", tc, j, got[j], want[j])
			}
		}
		if !mat.EqualApprox(gw, sub, tol*10) {
			t.Fatalf("%+v: subtractRows differs from the plain loops", tc)
		}
	}
}

// TestSolveUpperRows checks W·U⁻¹ row by row against U's product.
func TestSolveUpperRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, b := range []int{1, 2, 5} {
		u := mat.NewTriDense(b, mat.Upper, nil)
		for i := 0; i < b; i++ {
			for j := i; j < b; j++ {
				u.SetTri(i, j, rng.NormFloat64())
			}
			u.SetTri(i, i, 2+rng.Float64())
		}
		x := mat.NewDense(3000, b, nil)
		for i := range x.RawMatrix().Data {
			x.RawMatrix().Data[i] = rng.NormFloat64()
		}
		var w mat.Dense
		w.Mul(x, u)
		solveUpperRows(&w, u)
		if !mat.EqualApprox(&w, x, 1e-12) {
			t.Fatalf("b = %d: W·U⁻¹ does not recover X", b)
		}
	}
}

// TestLocalPass checks the fused local pass of KrylovSchur against
// projectRows and subtractRows run one after another: the same
// coefficients, and the same block (equal values for b = 4, where both
// pair the sums alike; to rounding otherwise), with and without prev.
func TestLocalPass(t *testing.T) {
	for _, tc := range []struct {
		n, b int
		prev bool
	}{{1, 1, true}, {50, 4, false}, {5000, 4, true}, {4100, 3, true}, {2049, 6, true}} {
		rng := rand.New(rand.NewPCG(uint64(tc.n), uint64(tc.b)))
		mk := func() *mat.Dense {
			m := mat.NewDense(tc.n, tc.b, nil)
			for i := range m.RawMatrix().Data {
				m.RawMatrix().Data[i] = rng.NormFloat64()
			}
			return m
		}
		w, last := mk(), mk()
		var prev *mat.Dense
		if tc.prev {
			prev = mk()
		}
		want := mat.DenseCopyOf(w)
		wantLast := projectRows(last, want)
		var wantPrev []float64
		if prev != nil {
			wantPrev = projectRows(prev, want)
			subtractRows(want, prev, wantPrev)
		}
		subtractRows(want, last, wantLast)
		got := mat.DenseCopyOf(w)
		ctPrev, ctLast := localPass(got, prev, last)
		if !slices.Equal(ctLast, wantLast) || !slices.Equal(ctPrev, wantPrev) {
			t.Errorf("%+v: coefficients differ from projectRows's", tc)
		}
		for i, g := range got.RawMatrix().Data {
			x := want.RawMatrix().Data[i]
			if tc.b == 4 && g != x || math.Abs(g-x) > 1e-13*(1+math.Abs(x)) {
				t.Fatalf("%+v: entry %d = %v, projectRows and subtractRows give %v", tc, i, g, x)
			}
		}
	}
}
