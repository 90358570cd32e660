package lapack

import (
	"context"

	"github.com/psdlearn/psdlearn/engine"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"
)

// The pure-Go solver's partial path: a few eigenpairs at one end of the
// spectrum by the engine's block Krylov–Schur method on the dense matrix,
// instead of the whole decomposition.
//
// gonum has no partial symmetric eigensolver (no dstebz/dstein or
// dstemr), and its tridiagonal reduction alone (dsytrd, whose level-2
// half runs on an unvectorised dsymv) takes two thirds of the whole
// dsyev: at n = 1,000 about 0.8 s of 1.2 s, against 0.08 s for the top
// eigenpair by Krylov–Schur on gonum's dgemv (about 150–200 products).
// Bisection and inverse iteration on the tridiagonal form would therefore
// save at most a third.
//
// The block size is the number of wanted eigenpairs: a block Krylov space
// started from b random vectors meets an eigenspace of multiplicity m in
// min(b, m) dimensions, so with b = k no copy of a repeated eigenvalue
// among the k wanted can be missed (a single-vector Lanczos would find one
// copy only). If the iteration does not converge the full decomposition is
// computed instead.

const (
	// partialMinN is the smallest order the partial path is used for:
	// below it the whole decomposition takes under a millisecond.
	partialMinN = 100
	// partialMaxK is the most eigenpairs the partial path computes: the
	// block size equals k, and the products and orthogonalisations grow
	// with k² while the full decomposition does not depend on k.
	partialMaxK = 8
	// partialMinBasis is the smallest Krylov basis (KrylovSchur's default
	// for k = 1 is 11 columns, which restarts too often on dense matrices
	// with clustered ends).
	partialMinBasis = 40
	// partialSeed fixes the random starting block: the same matrix gives
	// the same eigenvectors.
	partialSeed = 0x5eed
)

// partialWhich returns the end of the spectrum the index range r asks for
// and whether the partial path applies to it.
func partialWhich(n int, r Range) (engine.Which, bool) {
	if r.Kind != Indices || n < partialMinN {
		return 0, false
	}
	k := r.IU - r.IL + 1
	if k > partialMaxK || 32*k > n {
		return 0, false
	}
	switch {
	case r.IL == 0:
		return engine.SmallestAlgebraic, true
	case r.IU == n-1:
		return engine.LargestAlgebraic, true
	}
	return 0, false
}

// partialSymEig computes the eigenpairs of the index range r at one end of
// the spectrum of the n×n symmetric matrix whose upper triangle is the
// row-major up, by block Krylov–Schur. ok is false if it did not converge.
func partialSymEig(up []float64, n int, r Range, which engine.Which) (e Eigen, ok bool) {
	// The full matrix, so that a product is one dgemv (gonum's dsymv is
	// four times slower).
	full := up
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			full[j*n+i] = full[i*n+j]
		}
	}
	k := r.IU - r.IL + 1
	keep := k + max(2*k, k/5)
	maxBasis := max(keep+8*k, partialMinBasis)
	opt := engine.KrylovSchurOptions{
		Block:    k,
		Keep:     keep,
		MaxBasis: maxBasis,
		// About 2n products at most (a restart adds maxBasis − keep), which
		// gonum's dgemv does in less time than dsyev takes for the whole
		// decomposition: a problem the iteration cannot solve costs at
		// most about twice the full path it then falls back to.
		MaxRestarts: max(10, 2*n/(maxBasis-keep)),
		Seed:        partialSeed,
	}
	res, err := engine.KrylovSchur(context.Background(), goKernels{}, denseOp{n: n, a: full}, k, which, opt)
	if err != nil || len(res.Values) != k {
		return Eigen{}, false
	}
	return Eigen{Values: res.Values, Vectors: res.Vectors}, true
}

// denseOp is the operator of a full row-major n×n symmetric matrix.
type denseOp struct {
	n int
	a []float64
}

func (d denseOp) Dim() int { return d.n }

func (d denseOp) Apply(dst, x []float64) {
	gonum.Implementation{}.Dgemv(blas.NoTrans, d.n, d.n, 1, d.a, d.n, x, 1, 0, dst, 1)
}

// goKernels are the dense kernels KrylovSchur runs on in the pure-Go
// solver: gonum's BLAS and the whole decomposition.
type goKernels struct{}

func (goKernels) BLAS() blas.Float64 { return GoBLAS }

func (goKernels) SymEig(a mat.Symmetric, r Range, vectors bool) (Eigen, error) {
	n, err := validate(a, r)
	if err != nil {
		return Eigen{}, err
	}
	return fullSymEig(upperCopy(a, n), n, r, vectors)
}
