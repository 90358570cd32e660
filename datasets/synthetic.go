package datasets

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/psdlearn/psdlearn/data"
	"gonum.org/v1/gonum/mat"
)

// Importing the package also registers the "chessboard" and "doublespiral"
// schemes: the data specs chessboard:N[:SEED] and doublespiral:N[:SEED]
// open N points of Chessboard and DoubleSpiral (the SimpleNPKL paper's two
// synthetic sets have 100 points each).
func init() {
	data.RegisterScheme("chessboard", func(name string, _ data.LoadOptions) (*data.Dataset, error) {
		return openSynthetic("chessboard", name, Chessboard)
	})
	data.RegisterScheme("doublespiral", func(name string, _ data.LoadOptions) (*data.Dataset, error) {
		return openSynthetic("doublespiral", name, DoubleSpiral)
	})
}

// Chessboard samples n points uniformly on the square [0, 4)², seeded, the
// label being the colour of the unit square of a 4×4 chessboard the point
// falls in: (⌊x⌋ + ⌊y⌋) mod 2. Two classes, two dimensions; neither class
// is linearly or convexly separable, but neighbours mostly share a square.
func Chessboard(n int, seed uint64) (*mat.Dense, []int) {
	rng := rand.New(rand.NewPCG(seed, 0xc4e55))
	x := mat.NewDense(n, 2, nil)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		a, b := 4*rng.Float64(), 4*rng.Float64()
		x.SetRow(i, []float64{a, b})
		y[i] = (int(a) + int(b)) % 2
	}
	return x, y
}

// DoubleSpiral samples n points, seeded, on two interleaved conical spirals
// in three dimensions, half of them on each: class c ∈ {0, 1} is
// (t cos(t + cπ), t sin(t + cπ), t/2) with t uniform on [π/2, 3π], plus
// Gaussian noise of standard deviation 0.1 in every coordinate. The classes
// are close in the plane but each spiral is a connected one-dimensional
// curve, which a neighbourhood graph follows.
func DoubleSpiral(n int, seed uint64) (*mat.Dense, []int) {
	rng := rand.New(rand.NewPCG(seed, 0xd5b1))
	x := mat.NewDense(n, 3, nil)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		c := i % 2
		t := math.Pi/2 + 2.5*math.Pi*rng.Float64()
		ph := t + float64(c)*math.Pi
		x.SetRow(i, []float64{t*math.Cos(ph) + 0.1*rng.NormFloat64(), t*math.Sin(ph) + 0.1*rng.NormFloat64(), t/2 + 0.1*rng.NormFloat64()})
		y[i] = c
	}
	return x, y
}

// openSynthetic parses "N[:SEED]" for a two-class generator.
func openSynthetic(scheme, name string, gen func(int, uint64) (*mat.Dense, []int)) (*data.Dataset, error) {
	parts := strings.Split(name, ":")
	if len(parts) > 2 {
		return nil, fmt.Errorf("%w: want %s:N or %s:N:SEED", data.ErrFormat, scheme, scheme)
	}
	n, err := strconv.Atoi(parts[0])
	if err != nil || n < 4 || n > 1<<20 {
		return nil, fmt.Errorf("%w: %s: %q is not a number of points in [4, 2^20]", data.ErrFormat, scheme, parts[0])
	}
	seed := uint64(1)
	if len(parts) == 2 {
		if seed, err = strconv.ParseUint(parts[1], 10, 64); err != nil {
			return nil, fmt.Errorf("%w: %s: bad seed %q", data.ErrFormat, scheme, parts[1])
		}
	}
	x, y := gen(n, seed)
	return &data.Dataset{Name: scheme, X: x, Y: y, Classes: []string{"0", "1"}}, nil
}
