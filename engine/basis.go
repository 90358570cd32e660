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

// localPass orthogonalises w (n×b) against the contiguous blocks prev
// (n×b, or nil) and last (n×b) by one classical Gram–Schmidt pass, reading
// each once for the projection and once for the subtraction, and returns
// the coefficients as projectRows would (Cᵀ, b×b row-major; ctPrev nil
// when prev is): w −= prev·C_prev, then w −= last·C_last.
func localPass(w, prev, last *mat.Dense) (ctPrev, ctLast []float64) {
	rw, rl := w.RawMatrix(), last.RawMatrix()
	n, b := rw.Rows, rw.Cols
	var rp blas64.General
	np := 0
	if prev != nil {
		rp, np = prev.RawMatrix(), 1
	}
	bb := b * b
	ct := streamParts(n, (1+np)*bb, func(acc []float64, lo, hi int) {
		if b == 4 {
			// Unrolled on fixed-size arrays (no bounds checks): the
			// loops below spent 4x the time on index arithmetic.
			al := (*[16]float64)(acc[:16])
			for i := lo; i < hi; i++ {
				wr := (*[4]float64)(rw.Data[i*rw.Stride:])
				outer4(al, wr, (*[4]float64)(rl.Data[i*rl.Stride:]))
			}
			if np == 1 {
				ap := (*[16]float64)(acc[16:32])
				for i := lo; i < hi; i++ {
					wr := (*[4]float64)(rw.Data[i*rw.Stride:])
					outer4(ap, wr, (*[4]float64)(rp.Data[i*rp.Stride:]))
				}
			}
			return
		}
		for i := lo; i < hi; i++ {
			wr := rw.Data[i*rw.Stride : i*rw.Stride+b]
			lr := rl.Data[i*rl.Stride : i*rl.Stride+b]
			for l, a := range wr {
				row := acc[l*b : l*b+b]
				for j, x := range lr {
					row[j] += a * x
				}
			}
			if np == 0 {
				continue
			}
			pr := rp.Data[i*rp.Stride : i*rp.Stride+b]
			for l, a := range wr {
				row := acc[bb+l*b : bb+l*b+b]
				for j, x := range pr {
					row[j] += a * x
				}
			}
		}
	})
	ctLast = ct[:bb]
	if np == 1 {
		ctPrev = ct[bb:]
	}
	sparse.ParallelRows(n, 2*n*bb, func(lo, hi int) {
		if b == 4 {
			cl := (*[16]float64)(ctLast)
			var cp *[16]float64
			if np == 1 {
				cp = (*[16]float64)(ctPrev)
			}
			for i := lo; i < hi; i++ {
				wr := (*[4]float64)(rw.Data[i*rw.Stride:])
				if cp != nil {
					sub4(wr, (*[4]float64)(rp.Data[i*rp.Stride:]), cp)
				}
				sub4(wr, (*[4]float64)(rl.Data[i*rl.Stride:]), cl)
			}
			return
		}
		for i := lo; i < hi; i++ {
			wr := rw.Data[i*rw.Stride : i*rw.Stride+b]
			if np == 1 {
				pr := rp.Data[i*rp.Stride : i*rp.Stride+b]
				for l := range wr {
					wr[l] -= dotSmall(pr, ctPrev[l*b:l*b+b])
				}
			}
			lr := rl.Data[i*rl.Stride : i*rl.Stride+b]
			for l := range wr {
				wr[l] -= dotSmall(lr, ctLast[l*b:l*b+b])
			}
		}
	})
	return ctPrev, ctLast
}

// outer4 adds w[l]·v[j] to acc[4l+j].
func outer4(acc *[16]float64, w, v *[4]float64) {
	v0, v1, v2, v3 := v[0], v[1], v[2], v[3]
	for l, a := range w {
		r := (*[4]float64)(acc[4*l:])
		r[0] += a * v0
		r[1] += a * v1
		r[2] += a * v2
		r[3] += a * v3
	}
}

// sub4 subtracts from w[l] the sum of v[j]·ct[4l+j] (dotSmall's pairing).
func sub4(w, v *[4]float64, ct *[16]float64) {
	v0, v1, v2, v3 := v[0], v[1], v[2], v[3]
	for l := range w {
		r := (*[4]float64)(ct[4*l:])
		w[l] -= (v0*r[0] + v1*r[1]) + (v2*r[2] + v3*r[3])
	}
}

// dotSmall returns Σ x[i]·y[i] for a short x, inlined: for four entries
// f64.Dot's pairing, (x₀y₀ + x₁y₁) + (x₂y₂ + x₃y₃), otherwise in order.
func dotSmall(x, y []float64) float64 {
	if len(x) == 4 {
		y = y[:4]
		return (x[0]*y[0] + x[1]*y[1]) + (x[2]*y[2] + x[3]*y[3])
	}
	var s float64
	for i, v := range x {
		s += v * y[i]
	}
	return s
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
	// Reciprocals of the diagonal: a multiply per entry instead of a
	// division (0.18 against 0.23 ms for a letters-sized block of four,
	// BenchmarkSolveUpperRows).
	inv := make([]float64, b)
	for j := range inv {
		inv[j] = 1 / ru.Data[j*ru.Stride+j]
	}
	sparse.ParallelRows(n, n*b*b, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x := rw.Data[i*rw.Stride : i*rw.Stride+b]
			for j := range x {
				v := x[j]
				for l := 0; l < j; l++ {
					v -= x[l] * ru.Data[l*ru.Stride+j]
				}
				x[j] = v * inv[j]
			}
		}
	})
}

// blas64General wraps a row-major r×c slice.
func blas64General(r, c int, data []float64) blas64.General {
	return blas64.General{Rows: r, Cols: c, Stride: c, Data: data}
}
