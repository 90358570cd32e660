package engine

import (
	"github.com/psdlearn/psdlearn/internal/f64"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// The block Gram–Schmidt of KrylovSchur multiplies a tall basis V (n×m,
// n ≫ m) with a thin block W (n×b, b ≤ 16) twice per expansion: C = VᵀW
// and W −= V·C, b flops per 8 bytes of V. OpenBLAS runs these shapes at
// 5–9 GB/s on the reference machine (it packs the tall operand as for a
// large GEMM); streaming V once, row by row, does better: V's row i
// touches only row i of W and the small matrix C, which stay in cache.
// The kernels below stream the rows in parallel (partial sums over fixed
// blocks of rows, added in block order, so results do not depend on
// GOMAXPROCS), four columns of W at a time (internal/f64's Axpy4 and
// Dot4, AVX2 on amd64).

// projectRows returns Cᵀ = (VᵀW)ᵀ as a b×m row-major slice for V (n×m)
// and W (n×b).
func projectRows(v, w *mat.Dense) []float64 {
	rv, rw := v.RawMatrix(), w.RawMatrix()
	n, m, b := rv.Rows, rv.Cols, rw.Cols
	return streamParts(n, m*b, func(ct []float64, lo, hi int) {
		if m <= smallCols {
			// Inline loops: for short rows the calls would cost more
			// than the arithmetic (the same operations and bits).
			for i := lo; i < hi; i++ {
				vr := rv.Data[i*rv.Stride : i*rv.Stride+m]
				for l, a := range rw.Data[i*rw.Stride : i*rw.Stride+b] {
					row := ct[l*m : l*m+m]
					for j, x := range vr {
						row[j] += a * x
					}
				}
			}
			return
		}
		for i := lo; i < hi; i++ {
			addOuterRow(ct, m, rv.Data[i*rv.Stride:i*rv.Stride+m], rw.Data[i*rw.Stride:i*rw.Stride+b])
		}
	})
}

// smallCols is the basis width up to which the kernels run inline loops
// (KrylovSchur's local pass against two blocks, CholQR's Gram matrix).
const smallCols = 16

// subtractRows overwrites W with W − V·C for ct = Cᵀ (b×m row-major).
func subtractRows(w, v *mat.Dense, ct []float64) {
	rv, rw := v.RawMatrix(), w.RawMatrix()
	n, m, b := rv.Rows, rv.Cols, rw.Cols
	sparse.ParallelRows(n, n*m*b, func(lo, hi int) {
		if m <= smallCols {
			for i := lo; i < hi; i++ {
				vr := rv.Data[i*rv.Stride : i*rv.Stride+m]
				wr := rw.Data[i*rw.Stride : i*rw.Stride+b]
				for l := range wr {
					wr[l] -= f64.Dot(vr, ct[l*m:l*m+m])
				}
			}
			return
		}
		for i := lo; i < hi; i++ {
			subDotsRow(rw.Data[i*rw.Stride:i*rw.Stride+b], rv.Data[i*rv.Stride:i*rv.Stride+m], ct, m)
		}
	})
}

// addOuterRow adds wr[l]·vr to row l of ct (rows of length ldc).
func addOuterRow(ct []float64, ldc int, vr, wr []float64) {
	l := 0
	for ; l+4 <= len(wr); l += 4 {
		f64.Axpy4((*[4]float64)(wr[l:l+4]), vr, ct[l*ldc:], ldc)
	}
	for ; l < len(wr); l++ {
		a, row := wr[l], ct[l*ldc:l*ldc+len(vr)]
		for j, x := range vr {
			row[j] += a * x
		}
	}
}

// subDotsRow subtracts from wr[l] the dot product of vr with row l of ct
// (rows of length ldc).
func subDotsRow(wr, vr, ct []float64, ldc int) {
	l := 0
	for ; l+4 <= len(wr); l += 4 {
		d := f64.Dot4(vr, ct[l*ldc:], ldc)
		for t := range d {
			wr[l+t] -= d[t]
		}
	}
	for ; l < len(wr); l++ {
		wr[l] -= f64.Dot(vr, ct[l*ldc:l*ldc+len(vr)])
	}
}

// streamBlock is the number of rows per partial sum of streamParts.
const streamBlock = 2048

// streamParts runs f over blocks of streamBlock rows, in parallel, each
// block accumulating into its own zeroed slice of length size, and returns
// the sum of the blocks' slices in block order. The blocks do not depend on
// GOMAXPROCS, so neither do the sums.
func streamParts(n, size int, f func(acc []float64, lo, hi int)) []float64 {
	nb := max(1, (n+streamBlock-1)/streamBlock)
	acc := make([]float64, nb*size)
	sparse.ParallelRows(nb, n*size, func(blo, bhi int) {
		for blk := blo; blk < bhi; blk++ {
			f(acc[blk*size:(blk+1)*size], blk*streamBlock, min(n, (blk+1)*streamBlock))
		}
	})
	out := acc[:size]
	for blk := 1; blk < nb; blk++ {
		for j, x := range acc[blk*size : (blk+1)*size] {
			out[j] += x
		}
	}
	return out
}

// solveUpperRows overwrites W (n×b) with W·U⁻¹ for the b×b upper
// triangular U, row by row in parallel (each row a forward substitution).
func solveUpperRows(w *mat.Dense, u *mat.TriDense) {
	rw, ru := w.RawMatrix(), u.RawTriangular()
	n, b := rw.Rows, rw.Cols
	sparse.ParallelRows(n, n*b*b, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x := rw.Data[i*rw.Stride : i*rw.Stride+b]
			for j := range x {
				v := x[j]
				for l := 0; l < j; l++ {
					v -= x[l] * ru.Data[l*ru.Stride+j]
				}
				x[j] = v / ru.Data[j*ru.Stride+j]
			}
		}
	})
}

// blas64General wraps a row-major r×c slice.
func blas64General(r, c int, data []float64) blas64.General {
	return blas64.General{Rows: r, Cols: c, Stride: c, Data: data}
}
