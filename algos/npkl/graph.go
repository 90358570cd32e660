package npkl

import (
	"fmt"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// Laplacian returns the normalised graph Laplacian L = I − D^{-1/2} S D^{-1/2}
// of the k-nearest-neighbour similarity S of the rows of x (exact Euclidean
// neighbours), as an n×n CSR matrix with its diagonal stored. g chooses how
// the kNN relation is symmetrised and weighted; its zero value is the
// paper's 0/1 weights (§4.1) on the union graph (i ~ j when either is among
// the other's k nearest neighbours), so every degree is at least k. An
// isolated point of a mutual graph gets the identity row. The distance GEMMs
// use the BLAS of b (nil means engine.Default()). Memory is O(n·k); no n×n
// matrix is formed.
func Laplacian(x *mat.Dense, k int, g sparse.GraphOptions, b engine.Backend) (*sparse.CSR, error) {
	if x == nil {
		return nil, fmt.Errorf("npkl: Laplacian: nil data")
	}
	n, _ := x.Dims()
	if n < 2 {
		return nil, fmt.Errorf("npkl: Laplacian: %d points, need at least 2", n)
	}
	if k < 1 || k >= n {
		return nil, fmt.Errorf("npkl: Laplacian: k = %d outside [1, %d]", k, n-1)
	}
	s, err := sparse.KNNGraphBLAS(engine.Or(b).BLAS(), x, k, g)
	if err != nil {
		return nil, fmt.Errorf("npkl: Laplacian: %w", err)
	}
	l, err := sparse.NormalizedLaplacian(s)
	if err != nil {
		return nil, fmt.Errorf("npkl: Laplacian: %w", err)
	}
	return l, nil
}
