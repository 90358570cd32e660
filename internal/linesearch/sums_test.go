package linesearch

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestExpSums checks the one-pass shifted sums against direct sums of
// exp(−ρ − w·h) (exponents kept small so those do not overflow), their
// merge across a split, and the moments behind Deriv.
func TestExpSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const m = 1000
	rho, h := make([]float64, m), make([]float64, m)
	for r := range rho {
		rho[r], h[r] = 3*rng.NormFloat64(), rng.NormFloat64()
	}
	const w, nu = 0.7, 0.01
	var s, s1, s2, s3 float64
	for r := range rho {
		e := math.Exp(-rho[r] - w*h[r])
		s, s1, s2, s3 = s+e, s1+e*h[r], s2+e*h[r]*h[r], s3+e*h[r]*h[r]*h[r]
	}
	close := func(name string, got, want float64) {
		if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %.17g, want %.17g", name, got, want)
		}
	}
	for name, sums := range map[string]Sums{
		"one pass": ExpSums(rho, h, w),
		"split":    Combine([]Sums{ExpSums(rho[:317], h[:317], w), ExpSums(rho[317:], h[317:], w)}),
	} {
		e := math.Exp(sums.Shift)
		close(name+" S", sums.S*e, s)
		close(name+" S1", sums.S1*e, s1)
		close(name+" S2", sums.S2*e, s2)
		close(name+" S3", sums.S3*e, s3)
		close(name+" LogSum", sums.LogSum(), math.Log(s))
		m1 := s1 / s
		f, f1, f2 := sums.Deriv(nu)
		close(name+" f", f, nu-m1)
		close(name+" f′", f1, s2/s-m1*m1)
		close(name+" f″", f2, -(s3/s - 3*m1*s2/s + 2*m1*m1*m1))
	}
	// w = 0 without h: the log-sum-exp of −ρ, also for exponents that
	// would overflow unshifted.
	big := []float64{-800, -801, -799}
	if got, want := ExpSums(big, nil, 0).LogSum(), 801+math.Log(math.Exp(-1)+1+math.Exp(-2)); math.Abs(got-want) > 1e-12*want {
		t.Errorf("LogSum = %v, want %v", got, want)
	}
}
