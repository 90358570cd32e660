package datasets

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/limits"
	"gonum.org/v1/gonum/mat"
)

// Importing the package also registers the "subspace" scheme: the data spec
// subspace:N:D[:SEED] opens N points of Subspace in D dimensions (seed 1 by
// default).
func init() { data.RegisterScheme("subspace", openSubspace) }

// The shape of Subspace's data.
const (
	// SubspaceClasses is the number of classes; point i is in class
	// i mod SubspaceClasses.
	SubspaceClasses = 10
	// SubspaceRank is the dimension of the subspace that holds the class
	// structure; Subspace needs at least this many dimensions.
	SubspaceRank = 16
	// SubspaceMaxDim and SubspaceMaxEntries bound Subspace's dimension and
	// its number of entries N·D (2^28 entries are 2 GiB).
	SubspaceMaxDim     = 1 << 16
	SubspaceMaxEntries = 1 << 28
)

// Subspace samples n points in dim dimensions, seeded, in SubspaceClasses
// classes whose structure lies in a random subspace of SubspaceRank
// dimensions, buried in isotropic noise: a stand-in for deep-network
// features, where a few directions carry the classes and many carry none.
//
// The construction, in the order the random numbers are drawn from a PCG
// generator seeded with seed:
//
//  1. U, a dim×16 orthonormal basis of a random subspace: a dim×16 matrix
//     of standard Gaussian entries (drawn row by row) whose columns are
//     orthonormalised by modified Gram–Schmidt, applied twice.
//  2. The class means μ_c = a·m_c, c = 0, …, 9, with m_c ~ N(0, I₁₆) and
//     a = (2·dim)^(1/4)/4 (a = 2 at dim = 2,048).
//  3. For i = 0, …, n−1 in turn: class c = i mod 10, within-class spread
//     g_i ~ N(0, I₁₆), noise e_i ~ N(0, I_dim), and the point
//     x_i = U(μ_c + g_i) + e_i.
//
// The scale a makes the squared distance between two class means,
// 2·16·a² on average, equal to the standard deviation of the squared
// noise distance between two points, 2·√(2·dim). The noise dominates the
// Euclidean distances (its mean 2·dim against 2·16·(a² + 1) from the
// subspace) and their spread is as large as the gap between the classes,
// at every dim: Euclidean 3-NN classifies poorly, while a metric that
// keeps only the subspace removes all but 16 dimensions of the noise and
// separates the classes (at dim = 2,048, seed 1, 20,000 training and
// 5,000 test points: 25% test error against 1.2% after the projection
// onto U). Below a few hundred dimensions the noise inside the subspace
// is as large as the class structure, and no metric separates the classes
// well.
//
// The points are a prefix of a longer sample: with the same dim and seed,
// the first n rows of Subspace(n+m, …) are Subspace(n, …), so one call
// gives training, validation and test rows to split by rows.
//
// It returns an error for n < SubspaceClasses, dim < SubspaceRank or
// dim > SubspaceMaxDim, more than SubspaceMaxEntries entries, or data over
// the memory limit (package limits), before allocating anything.
func Subspace(n, dim int, seed uint64) (*mat.Dense, []int, error) {
	if err := checkSubspace(n, dim); err != nil {
		return nil, nil, fmt.Errorf("datasets: %w", err)
	}
	if err := limits.Check(fmt.Sprintf("the subspace data set of %d points × %d dimensions", n, dim), limits.Words(n, dim)); err != nil {
		return nil, nil, fmt.Errorf("datasets: %w", err)
	}
	const r = SubspaceRank
	rng := subspaceRNG(seed)
	u, means := subspaceModel(rng, dim)
	x := mat.NewDense(n, dim, nil)
	y := make([]int, n)
	z := make([]float64, r)
	for i := 0; i < n; i++ {
		c := i % SubspaceClasses
		y[i] = c
		for k := range z {
			z[k] = means[c*r+k] + rng.NormFloat64()
		}
		row := x.RawRowView(i)
		for j := range row {
			v := rng.NormFloat64()
			for k, uk := range u[j*r : (j+1)*r] {
				v += uk * z[k]
			}
			row[j] = v
		}
	}
	return x, y, nil
}

// checkSubspace validates Subspace's sizes against its bounds.
func checkSubspace(n, dim int) error {
	switch {
	case n < SubspaceClasses:
		return fmt.Errorf("subspace: %d points, want at least %d (one per class)", n, SubspaceClasses)
	case dim < SubspaceRank || dim > SubspaceMaxDim:
		return fmt.Errorf("subspace: %d dimensions, want %d to %d", dim, SubspaceRank, SubspaceMaxDim)
	case n > SubspaceMaxEntries/dim:
		return fmt.Errorf("subspace: %d points × %d dimensions, want at most 2^28 entries", n, dim)
	}
	return nil
}

// subspaceRNG is the random stream of Subspace with this seed.
func subspaceRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5b5ace)) }

// subspaceScale is Subspace's scale a of the class means in dim
// dimensions: (2·dim)^(1/4)/4.
func subspaceScale(dim int) float64 { return math.Pow(2*float64(dim), 0.25) / 4 }

// subspaceModel draws steps 1 and 2 of Subspace from rng: the dim×16
// basis U (row-major) and the 10×16 class means (row-major).
func subspaceModel(rng *rand.Rand, dim int) (u, means []float64) {
	u = subspaceBasis(rng, dim)
	a := subspaceScale(dim)
	means = make([]float64, SubspaceClasses*SubspaceRank)
	for i := range means {
		means[i] = a * rng.NormFloat64()
	}
	return u, means
}

// subspaceBasis draws a dim×SubspaceRank standard Gaussian matrix from rng,
// row by row, and returns it with orthonormal columns (row-major): modified
// Gram–Schmidt, twice, so that the columns are orthonormal to rounding.
func subspaceBasis(rng *rand.Rand, dim int) []float64 {
	const r = SubspaceRank
	u := make([]float64, dim*r)
	for i := range u {
		u[i] = rng.NormFloat64()
	}
	for pass := 0; pass < 2; pass++ {
		for k := 0; k < r; k++ {
			for l := 0; l < k; l++ {
				dot := 0.0
				for j := 0; j < dim; j++ {
					dot += u[j*r+k] * u[j*r+l]
				}
				for j := 0; j < dim; j++ {
					u[j*r+k] -= dot * u[j*r+l]
				}
			}
			norm := 0.0
			for j := 0; j < dim; j++ {
				norm += u[j*r+k] * u[j*r+k]
			}
			norm = math.Sqrt(norm)
			for j := 0; j < dim; j++ {
				u[j*r+k] /= norm
			}
		}
	}
	return u
}

// openSubspace opens "subspace:N:D[:SEED]": N points of Subspace in D
// dimensions, classes named 0 to 9.
func openSubspace(name string, _ data.LoadOptions) (*data.Dataset, error) {
	parts := strings.Split(name, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return nil, fmt.Errorf("%w: want subspace:N:D or subspace:N:D:SEED", data.ErrFormat)
	}
	n, err := strconv.Atoi(parts[0])
	if err != nil {
		return nil, fmt.Errorf("%w: subspace: %q is not a number of points", data.ErrFormat, parts[0])
	}
	dim, err := strconv.Atoi(parts[1])
	if err != nil {
		return nil, fmt.Errorf("%w: subspace: %q is not a number of dimensions", data.ErrFormat, parts[1])
	}
	seed := uint64(1)
	if len(parts) == 3 {
		if seed, err = strconv.ParseUint(parts[2], 10, 64); err != nil {
			return nil, fmt.Errorf("%w: subspace: bad seed %q", data.ErrFormat, parts[2])
		}
	}
	if err := checkSubspace(n, dim); err != nil {
		return nil, fmt.Errorf("%w: %v", data.ErrFormat, err)
	}
	x, y, err := Subspace(n, dim, seed)
	if err != nil {
		return nil, err
	}
	d := &data.Dataset{Name: "subspace", X: x, Y: y}
	for c := 0; c < SubspaceClasses; c++ {
		d.Classes = append(d.Classes, strconv.Itoa(c))
	}
	return d, nil
}
