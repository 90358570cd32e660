package perturbed

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// TestNudge: the perturbation is within Rel, a function of the value only,
// leaves zeros, infinities and NaN alone, and moves most values.
func TestNudge(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	moved := 0
	const n = 10000
	for range n {
		x := rng.NormFloat64() * math.Exp2(float64(rng.IntN(200)-100))
		y := Nudge(x)
		if y != Nudge(x) {
			t.Fatalf("Nudge(%v) is not deterministic", x)
		}
		if d := math.Abs(y-x) / math.Abs(x); d > Rel+0x1p-52 { // Rel, and the product's rounding
			t.Fatalf("Nudge(%v) = %v: relative change %g > %g", x, y, d, Rel)
		}
		if y != x {
			moved++
		}
		if z := Nudge(0x1p-7 * x); z != 0x1p-7*y {
			t.Fatalf("Nudge(2⁻⁷·%v) = %v, want 2⁻⁷·Nudge(x) = %v", x, z, 0x1p-7*y)
		}
	}
	if moved < n/2 {
		t.Errorf("only %d of %d values moved", moved, n)
	}
	for _, x := range []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1)} {
		if y := Nudge(x); y != x || math.Signbit(y) != math.Signbit(x) {
			t.Errorf("Nudge(%v) = %v", x, y)
		}
	}
	if !math.IsNaN(Nudge(math.NaN())) {
		t.Error("Nudge(NaN) is not NaN")
	}
}

// TestBlas: the split products agree with the plain ones to rounding
// (‖A‖·‖B‖·k·ε), for every transpose combination, and the result does not
// depend on the blocking of C's rows.
func TestBlas(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	rnd := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		return v
	}
	base := gonum.Implementation{}
	p := Blas{base}
	const m, n, k = 7, 5, 9
	for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
		for _, tB := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			a, b := rnd(m*k), rnd(k*n)
			lda, ldb := k, n
			if tA == blas.Trans {
				lda = m
			}
			if tB == blas.Trans {
				ldb = k
			}
			c0, c1 := rnd(m*n), make([]float64, m*n)
			copy(c1, c0)
			// Elementwise error bound (k+2)·2ε·(|α|·|op(A)|·|op(B)| + |β|·|C|),
			// twice the textbook bound: two roundings, then the nudge.
			bound := make([]float64, m*n)
			for i, v := range c0 {
				bound[i] = 0.5 * math.Abs(v)
			}
			base.Dgemm(tA, tB, m, n, k, 1.5, abs(a), lda, abs(b), ldb, 1, bound, n)
			base.Dgemm(tA, tB, m, n, k, 1.5, a, lda, b, ldb, 0.5, c0, n)
			p.Dgemm(tA, tB, m, n, k, 1.5, a, lda, b, ldb, 0.5, c1, n)
			for i := range c0 {
				if d := math.Abs(c0[i] - c1[i]); d > (k+2)*2*0x1p-53*bound[i] {
					t.Errorf("Dgemm %v %v: entry %d differs by %g (bound %g)", tA, tB, i, d, (k+2)*2*0x1p-53*bound[i])
				}
			}
			if tA == blas.NoTrans {
				// Row 3 alone gives the bits of row 3 in the block.
				c2 := make([]float64, n)
				cIn := rnd(m * n)
				copy(c2, cIn[3*n:4*n])
				full := append([]float64(nil), cIn...)
				p.Dgemm(tA, tB, m, n, k, 1.5, a, lda, b, ldb, 0.5, full, n)
				p.Dgemm(tA, tB, 1, n, k, 1.5, a[3*k:], lda, b, ldb, 0.5, c2, n)
				for j := range c2 {
					if c2[j] != full[3*n+j] {
						t.Errorf("Dgemm %v %v: row 3 alone differs from row 3 in the block at column %d", tA, tB, j)
					}
				}
			}
		}
	}
	x, y := rnd(101), rnd(101)
	if d := math.Abs(p.Ddot(101, x, 1, y, 1) - base.Ddot(101, x, 1, y, 1)); d > 103*2*0x1p-53*base.Ddot(101, abs(x), 1, abs(y), 1) {
		t.Errorf("Ddot differs by %g", d)
	}
}

func abs(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Abs(x)
	}
	return out
}
