package f64

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDotWide checks, for every length around the vector widths, that the
// vectorised and portable loops give the same bits, and that the result
// is the exact dot product (summed in big precision) within the bound of
// recursive summation, n·ε·Σ|a_i b_i|.
func TestDotWide(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 0; n <= 100; n++ {
		a, b := make([]float64, n), make([]float64, n+2)
		for i := range a {
			a[i] = rng.NormFloat64() * math.Ldexp(1, rng.IntN(20)-10)
		}
		for i := range b {
			b[i] = rng.NormFloat64()
		}
		got := DotWide(a, b)
		var c [4]float64
		n4 := n &^ 3
		dotWideGeneric(a[:n4], b, &c)
		s := c[0]
		for i := n4; i < n; i++ {
			s += float64(a[i] * b[i])
		}
		if portable := (s + c[1]) + (c[2] + c[3]); got != portable && !(math.IsNaN(got) && math.IsNaN(portable)) {
			t.Fatalf("n=%d: DotWide %v, portable loop %v", n, got, portable)
		}
		var abs float64
		for i := range a {
			abs += math.Abs(a[i] * b[i])
		}
		exact := exactDot(a, b)
		if err := math.Abs(got - exact); err > float64(n+1)*0x1p-53*abs {
			t.Fatalf("n=%d: DotWide %v, exact %v: error %g above n·ε·Σ|ab| = %g", n, got, exact, err, float64(n+1)*0x1p-53*abs)
		}
	}
}

// exactDot is the dot product with error-free products and compensated
// (Neumaier) summation: exact to a few ulps for these sizes.
func exactDot(a, b []float64) float64 {
	var s, comp float64
	add := func(x float64) {
		t := s + x
		if math.Abs(s) >= math.Abs(x) {
			comp += (s - t) + x
		} else {
			comp += (x - t) + s
		}
		s = t
	}
	for i := range a {
		p := a[i] * b[i]
		add(p)
		add(math.FMA(a[i], b[i], -p))
	}
	return s + comp
}
