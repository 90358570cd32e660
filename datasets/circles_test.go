package datasets

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestConcentricCircles checks the definition: every point's first two
// coordinates on the circle of its class's radius (to rounding), balanced
// classes, noise dimensions of mean 0 and standard deviation noise (within
// five standard errors of each estimate), no noise at all when noise = 0,
// the angles spread round the circle, and the seed fixing the sample.
func TestConcentricCircles(t *testing.T) {
	for _, c := range []struct {
		n, dim int
		noise  float64
		seed   uint64
	}{
		{400, 2, CirclesNoise, 1},
		{400, 10, CirclesNoise, 2},
		{101, 50, 0.5, 3},
		{64, 300, 3, 4},
		{40, 5, 0, 5},
	} {
		x, y, err := ConcentricCircles(c.n, c.dim, c.noise, c.seed)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if r, d := x.Dims(); r != c.n || d != c.dim || len(y) != c.n {
			t.Fatalf("%+v: %d×%d data, %d labels", c, r, d, len(y))
		}
		counts := make([]int, CirclesClasses)
		var sum, sumSq, cosSum, sinSum float64
		for i := 0; i < c.n; i++ {
			row := x.RawRowView(i)
			radius := float64(y[i] + 1)
			if got := math.Hypot(row[0], row[1]); math.Abs(got-radius) > 4*radius*0x1p-52 {
				t.Fatalf("%+v: point %d of class %d at radius %v", c, i, y[i], got)
			}
			counts[y[i]]++
			cosSum += row[0] / radius
			sinSum += row[1] / radius
			for _, v := range row[2:] {
				sum += v
				sumSq += v * v
			}
		}
		for k, n := range counts {
			if n < c.n/CirclesClasses || n > c.n/CirclesClasses+1 {
				t.Errorf("%+v: class %d has %d points", c, k, n)
			}
		}
		// The mean of cos θ and sin θ for θ uniform is 0 with standard
		// deviation 1/√(2n).
		if lim := 5 / math.Sqrt(2*float64(c.n)); math.Abs(cosSum/float64(c.n)) > lim || math.Abs(sinSum/float64(c.n)) > lim {
			t.Errorf("%+v: angles not spread: mean cos %v, mean sin %v", c, cosSum/float64(c.n), sinSum/float64(c.n))
		}
		m := float64(c.n * (c.dim - 2))
		if m == 0 {
			continue
		}
		if c.noise == 0 {
			if sumSq != 0 {
				t.Errorf("%+v: noise dimensions not zero", c)
			}
			continue
		}
		mean, variance := sum/m, sumSq/m
		s2 := c.noise * c.noise
		if math.Abs(mean) > 5*c.noise/math.Sqrt(m) || math.Abs(variance-s2) > 5*s2*math.Sqrt(2/m) {
			t.Errorf("%+v: noise mean %v, second moment %v (want 0 and %v)", c, mean, variance, s2)
		}
	}
	a, _, _ := ConcentricCircles(50, 20, 1, 7)
	b, _, _ := ConcentricCircles(50, 20, 1, 7)
	d, _, _ := ConcentricCircles(50, 20, 1, 8)
	if !mat.Equal(a, b) || mat.Equal(a, d) {
		t.Error("the seed does not fix the sample")
	}
}

// TestConcentricCirclesInvalid: bad sizes and noise are errors.
func TestConcentricCirclesInvalid(t *testing.T) {
	for _, c := range []struct {
		n, dim int
		noise  float64
	}{{0, 10, 1}, {10, 1, 1}, {10, 10, -1}, {10, 10, math.NaN()}, {10, 10, math.Inf(1)}, {1 << 20, 1 << 10, 1}} {
		if _, _, err := ConcentricCircles(c.n, c.dim, c.noise, 1); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}
