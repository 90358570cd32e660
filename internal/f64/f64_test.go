package f64

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 3, 4, 5, 7, 8, 11, 16, 17, 20, 31, 35, 164} {
		a, b, c, d := make([]float64, n), make([]float64, n+2), make([]float64, n), make([]float64, n)
		for i := 0; i < n; i++ {
			a[i], b[i], c[i], d[i] = rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
		}
		var sq, dd, scale float64
		y := append([]float64(nil), c...)
		for i := 0; i < n; i++ {
			sq += (a[i] - b[i]) * (a[i] - b[i])
			dd += (a[i] - b[i]) * (c[i] - d[i])
			scale += math.Abs(a[i]-b[i]) * (math.Abs(a[i]-b[i]) + math.Abs(c[i]-d[i]))
		}
		// Summation order differs from the naive loop: compare to n·ε·Σ|terms|.
		tol := float64(n+1) * 0x1p-52 * scale
		if got := SqDist(a, b); math.Abs(got-sq) > tol {
			t.Errorf("n=%d SqDist = %v, want %v", n, got, sq)
		}
		var dot, dscale float64
		for i := 0; i < n; i++ {
			dot += a[i] * c[i]
			dscale += math.Abs(a[i] * c[i])
		}
		if got := Dot(a, c); math.Abs(got-dot) > float64(n+1)*0x1p-52*dscale {
			t.Errorf("n=%d Dot = %v, want %v", n, got, dot)
		}
		if got := DiffDot(a, b, c, d); math.Abs(got-dd) > tol {
			t.Errorf("n=%d DiffDot = %v, want %v", n, got, dd)
		}
		Axpy(-0.5, a, y)
		for i := range y {
			if y[i] != c[i]-0.5*a[i] {
				t.Fatalf("n=%d Axpy[%d] = %v, want %v", n, i, y[i], c[i]-0.5*a[i])
			}
		}
	}
}

func BenchmarkSqDist164(b *testing.B) {
	x, y := make([]float64, 164), make([]float64, 164)
	for i := range x {
		x[i], y[i] = float64(i), float64(2*i)
	}
	var s float64
	for i := 0; i < b.N; i++ {
		s += SqDist(x, y)
	}
	_ = s
}

// TestAxpy4Dot4: Axpy4 is four Axpy calls and Dot4 four Dot calls, bit for
// bit, for lengths around the multiples of four (the assembly's block) and
// strided rows; and the assembly loops (where they run) give the generic
// loops' bits.
func TestAxpy4Dot4(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 3, 4, 5, 8, 13, 64, 201} {
		ldc := n + 3
		v := make([]float64, n)
		c := make([]float64, 3*ldc+n)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		for i := range c {
			c[i] = rng.NormFloat64()
		}
		w := [4]float64{rng.NormFloat64(), -1.5, 0, 3e-7}
		d := Dot4(v, c, ldc)
		for l := range d {
			if want := Dot(v, c[l*ldc:]); d[l] != want {
				t.Errorf("n=%d: Dot4 row %d = %v, Dot %v", n, l, d[l], want)
			}
		}
		got := append([]float64(nil), c...)
		Axpy4(&w, v, got, ldc)
		want := append([]float64(nil), c...)
		for l, a := range w {
			Axpy(a, v, want[l*ldc:])
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("n=%d: Axpy4 entry %d = %v, four Axpy %v", n, i, got[i], want[i])
			}
		}
		if n4 := n &^ 3; useAVX2 && n4 > 0 {
			var a1, a2 [16]float64
			dot4AVX2(n4, &v[0], &c[0], ldc, &a1)
			dot4Generic(v[:n4], c, ldc, &a2)
			if a1 != a2 {
				t.Errorf("n=%d: dot4AVX2 %v, generic %v", n, a1, a2)
			}
			g1, g2 := append([]float64(nil), c...), append([]float64(nil), c...)
			axpy4AVX2(n4, &v[0], &w, &g1[0], ldc)
			for l, a := range w {
				axpyGeneric(a, v[:n4], g2[l*ldc:])
			}
			for i := range g1 {
				if g1[i] != g2[i] {
					t.Fatalf("n=%d: axpy4AVX2 entry %d = %v, generic %v", n, i, g1[i], g2[i])
				}
			}
		}
	}
}

// TestSpDot4 checks SpDot4 against a sum written out term by term in its
// documented order, and (with AVX2) the assembly against the Go loop bit
// for bit, on rows of several lengths (odd and even) with repeated columns.
func TestSpDot4(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const n = 37
	x := make([]float64, 4*n)
	for i := range x {
		x[i] = rng.NormFloat64() * math.Exp(6*rng.Float64())
	}
	for _, m := range []int{0, 1, 2, 3, 7, 64, 65, 300} {
		val, ind := make([]float64, m), make([]int32, m)
		for p := range val {
			val[p] = rng.NormFloat64()
			ind[p] = int32(rng.IntN(n))
		}
		got := SpDot4(val, ind, x)
		for k := 0; k < 4; k++ {
			var even, odd float64
			for p := range val {
				term := val[p] * x[4*int(ind[p])+k]
				if p%2 == 0 {
					even += term
				} else {
					odd += term
				}
			}
			if want := even + odd; got[k] != want {
				t.Errorf("m=%d: SpDot4[%d] = %v, want %v", m, k, got[k], want)
			}
		}
		if g := spDot4Go(val, ind, x); m > 0 && g != got {
			t.Errorf("m=%d: SpDot4 %v, Go loop %v", m, got, g)
		}
	}
}
