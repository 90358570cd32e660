// Package sparse holds the sparse structures of psdlearn: compressed sparse row
// (CSR) matrices, signed pair graphs and their Laplacians, k-nearest-neighbour
// graphs, and symmetric linear operators for the eigensolvers.
//
// The design asked for github.com/james-bowman/sparse; the Go module proxy
// serves no version of it, so CSR is implemented here directly on slices.
package sparse

import (
	"fmt"
	"runtime"
	"sync"
)

// CSR is an m×n sparse matrix in compressed sparse row form: the entries of
// row i are Data[Indptr[i]:Indptr[i+1]] in columns Ind[Indptr[i]:Indptr[i+1]],
// with column indices ascending and unique within a row.
type CSR struct {
	Rows, Cols int
	Indptr     []int
	Ind        []int
	Data       []float64
}

// Dims returns the dimensions of the matrix.
func (a *CSR) Dims() (int, int) { return a.Rows, a.Cols }

// NNZ returns the number of stored entries.
func (a *CSR) NNZ() int { return len(a.Data) }

// At returns the entry (i, j), zero when it is not stored.
func (a *CSR) At(i, j int) float64 {
	lo, hi := a.Indptr[i], a.Indptr[i+1]
	for lo < hi {
		mid := (lo + hi) / 2
		switch c := a.Ind[mid]; {
		case c == j:
			return a.Data[mid]
		case c < j:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return 0
}

// MulVec overwrites dst with A·x. Rows are split across goroutines when the
// matrix is large enough for it to pay.
func (a *CSR) MulVec(dst, x []float64) {
	if len(dst) != a.Rows || len(x) != a.Cols {
		panic(fmt.Sprintf("sparse: MulVec dimension mismatch: %d×%d matrix, len(dst)=%d, len(x)=%d", a.Rows, a.Cols, len(dst), len(x)))
	}
	ParallelRows(a.Rows, len(a.Data), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			var s float64
			for p := a.Indptr[i]; p < a.Indptr[i+1]; p++ {
				s += a.Data[p] * x[a.Ind[p]]
			}
			dst[i] = s
		}
	})
}

// parallelThreshold is the amount of work (in flops) below which ParallelRows stays serial.
const parallelThreshold = 1 << 15

// ParallelRows calls f on contiguous row blocks covering [0, n), on up to
// GOMAXPROCS goroutines when work (an estimate of the flops) is large. Blocks
// are fixed by n and GOMAXPROCS, so results that depend only on per-row
// computations are deterministic.
func ParallelRows(n, work int, f func(lo, hi int)) {
	p := runtime.GOMAXPROCS(0)
	if p > n {
		p = n
	}
	if p <= 1 || work < parallelThreshold {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	chunk := (n + p - 1) / p
	lo := 0
	for ; lo+chunk < n; lo += chunk {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			f(lo, hi)
		}(lo, lo+chunk)
	}
	// The last chunk on this goroutine: one goroutine fewer to start and
	// wake per call (KrylovSchur makes ~10 such calls per block).
	f(lo, n)
	wg.Wait()
}
