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
