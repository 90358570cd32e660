package sparse

import (
	"fmt"
	"math"
	"sync"

	"github.com/psdlearn/psdlearn/errs"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"
)

// Operator is a symmetric linear operator A of dimension Dim(): Apply
// overwrites dst with A·x (len(dst) == len(x) == Dim(), no aliasing). It has
// the method set of arpack.Operator and engine.Operator, so every operator of
// this package feeds the sparse eigensolvers directly. The operators here are
// safe for concurrent use.
type Operator interface {
	Dim() int
	Apply(dst, x []float64)
}

// ErrNotSymmetric is wrapped by errors about a matrix that should be symmetric and is not.
var ErrNotSymmetric = errs.New("sparse: matrix is not symmetric", errs.ErrInvalid)

// DenseSym is the operator of a dense symmetric matrix (level-2 BLAS dsymv).
type DenseSym struct {
	a    *mat.SymDense
	impl blas.Float64
}

// NewDenseSym returns the operator x ↦ A·x of a, computed with impl (nil
// selects gonum's BLAS). The operator reads a at every Apply: a must not
// change during a solve.
func NewDenseSym(a *mat.SymDense, impl blas.Float64) *DenseSym {
	if impl == nil {
		impl = gonum.Implementation{}
	}
	return &DenseSym{a: a, impl: impl}
}

// Dim returns the order of the matrix.
func (d *DenseSym) Dim() int { return d.a.SymmetricDim() }

// Apply overwrites dst with A·x.
func (d *DenseSym) Apply(dst, x []float64) {
	raw := d.a.RawSymmetric()
	checkLen("DenseSym", raw.N, dst, x)
	d.impl.Dsymv(raw.Uplo, raw.N, 1, raw.Data, raw.Stride, x, 1, 0, dst, 1)
}

// SymCSR is the operator of a symmetric sparse matrix stored with both
// triangles in CSR form. Apply splits the rows across goroutines for large
// matrices (see ParallelRows); each row is a sequential sum, so the result does
// not depend on the number of threads.
type SymCSR struct {
	a *CSR
}

// NewSymCSR checks that a is a well-formed, square, exactly symmetric CSR
// matrix with finite entries and returns its operator. The operator shares a.
func NewSymCSR(a *CSR) (*SymCSR, error) {
	if err := validateCSR(a); err != nil {
		return nil, err
	}
	if a.Rows != a.Cols {
		return nil, fmt.Errorf("%w: %d×%d matrix is not square", ErrNotSymmetric, a.Rows, a.Cols)
	}
	if i, j, ok := isSymmetric(a); !ok {
		return nil, fmt.Errorf("%w: entry (%d,%d) = %g but (%d,%d) = %g", ErrNotSymmetric, i, j, a.At(i, j), j, i, a.At(j, i))
	}
	return &SymCSR{a: a}, nil
}

// Dim returns the order of the matrix.
func (s *SymCSR) Dim() int { return s.a.Rows }

// Apply overwrites dst with A·x.
func (s *SymCSR) Apply(dst, x []float64) { s.a.MulVec(dst, x) }

// Matrix returns the underlying matrix (shared).
func (s *SymCSR) Matrix() *CSR { return s.a }

// GramOperator is the matrix-free form of the D×D matrix Xᵀ L_W X for the
// n×D data X and a signed pair graph W: v ↦ Xᵀ(L_W(X·v)), at O(n·D + nnz)
// per product instead of O(n·D²) to form the matrix. It reads the graph's
// current weights at every Apply. Scratch vectors come from a pool, so one
// GramOperator may serve concurrent solves.
type GramOperator struct {
	x    *mat.Dense
	g    *PairGraph
	impl blas.Float64
	pool sync.Pool
}

// NewGramOperator returns v ↦ Xᵀ(L_W(X·v)) for the rows of x (n×D) and g (on
// n points), with the two dense products computed by impl (nil selects gonum's BLAS).
func NewGramOperator(x *mat.Dense, g *PairGraph, impl blas.Float64) (*GramOperator, error) {
	if x == nil || g == nil {
		return nil, fmt.Errorf("sparse: NewGramOperator: nil argument")
	}
	if r, _ := x.Dims(); r != g.N() {
		return nil, fmt.Errorf("sparse: NewGramOperator: x has %d rows, graph has %d points", r, g.N())
	}
	if impl == nil {
		impl = gonum.Implementation{}
	}
	op := &GramOperator{x: x, g: g, impl: impl}
	n := g.N()
	op.pool.New = func() any { b := make([]float64, 2*n); return &b }
	return op, nil
}

// Dim returns D, the number of columns of X.
func (o *GramOperator) Dim() int { _, c := o.x.Dims(); return c }

// Apply overwrites dst with Xᵀ(L_W(X·v)).
func (o *GramOperator) Apply(dst, v []float64) {
	raw := o.x.RawMatrix()
	checkLen("GramOperator", raw.Cols, dst, v)
	bp := o.pool.Get().(*[]float64)
	defer o.pool.Put(bp)
	n := raw.Rows
	xv, lxv := (*bp)[:n], (*bp)[n:]
	o.impl.Dgemv(blas.NoTrans, n, raw.Cols, 1, raw.Data, raw.Stride, v, 1, 0, xv, 1)
	o.g.Laplacian().MulVec(lxv, xv)
	o.impl.Dgemv(blas.Trans, n, raw.Cols, 1, raw.Data, raw.Stride, lxv, 1, 0, dst, 1)
}

// Shifted is the operator σI − A. Its spectrum is that of A reflected about
// σ/2 with the eigenvectors unchanged: with σ ≥ λ_max(A) (for instance
// NormInf of a CSR matrix) it is positive semidefinite and the smallest
// eigenvalues of A become its largest, which Lanczos finds much faster than
// the smallest of A when they are clustered near zero (graph Laplacians).
type Shifted struct {
	Sigma float64
	A     Operator
}

// Dim returns the dimension of A.
func (s Shifted) Dim() int { return s.A.Dim() }

// Apply overwrites dst with σx − A·x.
func (s Shifted) Apply(dst, x []float64) {
	s.A.Apply(dst, x)
	for i, v := range x {
		dst[i] = s.Sigma*v - dst[i]
	}
}

// NormInf returns the largest absolute row sum of a, an upper bound on the
// spectral radius of a symmetric matrix.
func NormInf(a *CSR) float64 {
	var m float64
	for i := 0; i < a.Rows; i++ {
		var s float64
		for _, v := range a.Data[a.Indptr[i]:a.Indptr[i+1]] {
			s += math.Abs(v)
		}
		m = math.Max(m, s)
	}
	return m
}

func checkLen(name string, n int, dst, x []float64) {
	if len(dst) != n || len(x) != n {
		panic(fmt.Sprintf("sparse: %s.Apply: len(dst) = %d, len(x) = %d, dimension %d", name, len(dst), len(x), n))
	}
}

// validateCSR checks the structure of a: consistent lengths, ascending unique
// in-range column indices and finite values.
func validateCSR(a *CSR) error {
	if a == nil {
		return fmt.Errorf("sparse: nil CSR matrix")
	}
	if a.Rows < 0 || a.Cols < 0 || len(a.Indptr) != a.Rows+1 || a.Indptr[0] != 0 {
		return fmt.Errorf("sparse: malformed CSR: %d×%d with %d row pointers", a.Rows, a.Cols, len(a.Indptr))
	}
	nnz := a.Indptr[a.Rows]
	if len(a.Ind) != nnz || len(a.Data) != nnz {
		return fmt.Errorf("sparse: malformed CSR: %d entries, %d indices, %d values", nnz, len(a.Ind), len(a.Data))
	}
	for i := 0; i < a.Rows; i++ {
		lo, hi := a.Indptr[i], a.Indptr[i+1]
		if hi < lo {
			return fmt.Errorf("sparse: malformed CSR: row pointers decrease at row %d", i)
		}
		for p := lo; p < hi; p++ {
			c := a.Ind[p]
			if c < 0 || c >= a.Cols || (p > lo && c <= a.Ind[p-1]) {
				return fmt.Errorf("sparse: malformed CSR: row %d has column indices out of range or not ascending", i)
			}
			if v := a.Data[p]; math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("sparse: CSR entry (%d,%d) is %v", i, c, v)
			}
		}
	}
	return nil
}

// isSymmetric reports whether the square, well-formed a equals its transpose
// exactly (stored zeros count as absent); if not, it returns an offending entry.
func isSymmetric(a *CSR) (int, int, bool) {
	for i := 0; i < a.Rows; i++ {
		for p := a.Indptr[i]; p < a.Indptr[i+1]; p++ {
			j := a.Ind[p]
			if j != i && a.At(j, i) != a.Data[p] {
				return i, j, false
			}
		}
	}
	return 0, 0, true
}
