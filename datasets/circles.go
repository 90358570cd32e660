package datasets

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// CirclesClasses is the number of classes of ConcentricCircles; class c
// lies on the circle of radius c + 1.
const CirclesClasses = 4

// CirclesNoise is the default standard deviation of ConcentricCircles'
// noise dimensions: 2, a variance of 4 per noise dimension against 3.75 per
// circle dimension (the mean of r²/2 over the radii 1, 2, 3, 4), so that
// the leading principal axes of the data are noise, not the circles.
const CirclesNoise = 2.0

// ConcentricCircles samples n points in dim ≥ 2 dimensions, seeded, in
// CirclesClasses classes of (nearly) equal size: point i has class
// c = i mod 4, its first two coordinates lie exactly on the circle of radius
// c + 1 about the origin at an angle uniform on [0, 2π), and its other
// dim − 2 coordinates are independent Gaussian noise of standard deviation
// noise. This is the toy set of the BoostMetric paper's Figures 1 and 2
// (four concentric circles in the first two dimensions, Gaussian noise in
// the others; the paper does not give the radii or the noise scale). The
// classes are not Gaussian and share their mean, so neither PCA nor LDA
// finds the two informative dimensions once the noise is large, while a
// metric that keeps only those two separates the classes by radius.
//
// It returns an error for n < 1, dim < 2, a negative or non-finite noise,
// or more than 2^28 entries.
func ConcentricCircles(n, dim int, noise float64, seed uint64) (*mat.Dense, []int, error) {
	switch {
	case n < 1 || dim < 2:
		return nil, nil, fmt.Errorf("datasets: concentric circles: %d points in %d dimensions, want n ≥ 1 and dim ≥ 2", n, dim)
	case math.IsNaN(noise) || math.IsInf(noise, 0) || noise < 0:
		return nil, nil, fmt.Errorf("datasets: concentric circles: noise %v, want a finite value ≥ 0", noise)
	case n > (1<<28)/dim:
		return nil, nil, fmt.Errorf("datasets: concentric circles: %d×%d points, want at most 2^28 entries", n, dim)
	}
	rng := rand.New(rand.NewPCG(seed, 0xc1c1e5))
	x := mat.NewDense(n, dim, nil)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		c := i % CirclesClasses
		r, t := float64(c+1), 2*math.Pi*rng.Float64()
		row := x.RawRowView(i)
		row[0], row[1] = r*math.Cos(t), r*math.Sin(t)
		for j := 2; j < dim; j++ {
			row[j] = noise * rng.NormFloat64()
		}
		y[i] = c
	}
	return x, y, nil
}
