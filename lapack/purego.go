package lapack

import (
	"sort"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	lapackapi "gonum.org/v1/gonum/lapack"
	gonumlapack "gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/mat"
)

// Go is the pure-Go eigensolver, built on gonum's LAPACK (dsyev). For up to
// 8 eigenpairs at either end of the spectrum of a matrix of order 100 or
// more (an index range such as TopK or BottomK) it computes only those, by
// block Krylov–Schur on the dense matrix; for any other range it computes
// the whole spectrum and selects.
var Go Eigensolver = goSolver{}

// GoBLAS is gonum's pure-Go BLAS implementation.
var GoBLAS BLAS = gonum.Implementation{}

type goSolver struct{}

func (goSolver) SymEig(a mat.Symmetric, r Range, vectors bool) (Eigen, error) {
	n, err := validate(a, r)
	if err != nil {
		return Eigen{}, err
	}
	data := upperCopy(a, n)
	if which, ok := partialWhich(n, r); ok {
		// partialSymEig fills the lower triangle of data, which dsyev
		// does not read.
		if e, ok := partialSymEig(data, n, r, which); ok {
			if !vectors {
				e.Vectors = nil
			}
			return e, nil
		}
	}
	return fullSymEig(data, n, r, vectors)
}

// fullSymEig computes the whole decomposition of the n×n symmetric matrix
// whose upper triangle is the row-major data (overwritten) by gonum's
// dsyev and selects the range r.
func fullSymEig(data []float64, n int, r Range, vectors bool) (Eigen, error) {
	w := make([]float64, n)
	job := lapackNoVec
	if vectors {
		job = lapackVec
	}
	impl := gonumlapack.Implementation{}
	work := make([]float64, 1)
	impl.Dsyev(job, upperUplo, n, data, n, w, work, -1)
	work = make([]float64, int(work[0]))
	if ok := impl.Dsyev(job, upperUplo, n, data, n, w, work, len(work)); !ok {
		return Eigen{}, &ConvergenceError{Routine: "dsyev", Info: 1}
	}
	lo, hi := selectRange(w, r)
	out := Eigen{Values: append([]float64(nil), w[lo:hi]...)}
	if vectors && hi > lo {
		// Dsyev leaves the eigenvectors in the columns of the row-major data.
		v := mat.NewDense(n, hi-lo, nil)
		for i := 0; i < n; i++ {
			copy(v.RawRowView(i), data[i*n+lo:i*n+hi])
		}
		out.Vectors = v
	}
	return out, nil
}

// selectRange returns the half-open index interval of the ascending values w that r selects.
func selectRange(w []float64, r Range) (lo, hi int) {
	switch r.Kind {
	case Values:
		lo = sort.Search(len(w), func(i int) bool { return w[i] > r.VL })
		hi = sort.Search(len(w), func(i int) bool { return w[i] > r.VU })
		return lo, hi
	case Indices:
		return r.IL, r.IU + 1
	}
	return 0, len(w)
}

const (
	lapackNoVec = lapackapi.EVNone
	lapackVec   = lapackapi.EVCompute
	upperUplo   = blasUpper
)
const blasUpper = blas.Upper
