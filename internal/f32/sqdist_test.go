package f32

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestSqDist checks SqDist against its portable loop bit for bit, and
// against the sum of the same float32 differences squared and added
// exactly, within the float64 rounding of n terms (n·ε times the sum:
// every term is non-negative), for every length around the vector width.
func TestSqDist(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 0; n <= 40; n++ {
		a, b := make([]float32, n), make([]float32, n+2)
		for i := range a {
			a[i] = float32(rng.NormFloat64() * math.Exp(4*rng.NormFloat64()))
		}
		for i := range b {
			b[i] = float32(rng.NormFloat64())
		}
		exact := new(big.Float).SetPrec(2000)
		for i := range a {
			d := new(big.Float).SetFloat64(float64(a[i] - b[i]))
			exact.Add(exact, new(big.Float).SetPrec(2000).Mul(d, d))
		}
		want, _ := exact.Float64()
		got := SqDist(a, b)
		if g := sqDistGeneric(a, b); got != g {
			t.Errorf("n=%d: SqDist %v, portable loop %v", n, got, g)
		}
		if tol := float64(n+1) * 0x1p-52 * want; math.Abs(got-want) > tol {
			t.Errorf("n=%d: SqDist %v, exact %v (|error| %.3g > %.3g)", n, got, want, math.Abs(got-want), tol)
		}
	}
}

func BenchmarkSqDist(b *testing.B) {
	x, y := make([]float32, 164), make([]float32, 164)
	for i := range x {
		x[i], y[i] = float32(i%7)-3, float32(i%5)-2
	}
	var s float64
	for i := 0; i < b.N; i++ {
		s += SqDist(x, y)
	}
	if s < 0 {
		b.Fatal(s)
	}
}
