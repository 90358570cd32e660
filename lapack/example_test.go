package lapack_test

import (
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/lapack"
	"gonum.org/v1/gonum/mat"
)

// Example computes the negative part of a symmetric matrix, the operation at
// the heart of FrobMetric's dual.
func Example() {
	a := mat.NewSymDense(3, []float64{
		2, 0, 0,
		0, -1, 0,
		0, 0, 3,
	})
	e, err := lapack.Go.SymEig(a, lapack.NegativePart(0), true)
	if err != nil {
		panic(err)
	}
	fmt.Printf("negative eigenvalues: %v\n", e.Values)
	// Eigenvectors are determined up to sign.
	fmt.Printf("|eigenvector|: [%.0f %.0f %.0f]\n", math.Abs(e.Vectors.At(0, 0)), math.Abs(e.Vectors.At(1, 0)), math.Abs(e.Vectors.At(2, 0)))
	// Output:
	// negative eigenvalues: [-1]
	// |eigenvector|: [0 1 0]
}
