package lbfgsb

import (
	"math"

	"gonum.org/v1/gonum/floats"
)

// Small dense kernels of the pure-Go port. Matrices are column-major as in
// the Fortran code: element (i, j) (0-based) of a matrix with leading
// dimension ld starting at a[off] is a[off+i+j*ld].

// dot is BLAS ddot on two equal-length vectors.
func dot(x, y []float64) float64 { return floats.Dot(x, y) }

// potrfUpper is LAPACK dpotrf('U'): the Cholesky factorisation A = UᵀU of the
// leading n×n block at a[off] (leading dimension ld), U overwriting the upper
// triangle. It returns 0, or j+1 if the leading minor of order j+1 is not
// positive definite.
func potrfUpper(a []float64, off, ld, n int) int {
	for j := 0; j < n; j++ {
		cj := a[off+j*ld : off+j*ld+j]
		ajj := a[off+j+j*ld] - dot(cj, cj)
		if ajj <= 0 || math.IsNaN(ajj) {
			a[off+j+j*ld] = ajj
			return j + 1
		}
		ajj = math.Sqrt(ajj)
		a[off+j+j*ld] = ajj
		r := 1 / ajj
		for k := j + 1; k < n; k++ {
			ck := a[off+k*ld : off+k*ld+j]
			a[off+j+k*ld] = (a[off+j+k*ld] - dot(cj, ck)) * r
		}
	}
	return 0
}

// trtrsUpper is LAPACK dtrtrs('U', trans, 'N', n, 1, A, ld, b, n): it solves
// U·x = b (trans false) or Uᵀ·x = b (trans true) in place for the upper
// triangular n×n U at a[off]. It returns i+1 if U(i,i) is exactly zero (and
// leaves b unchanged), else 0.
func trtrsUpper(a []float64, off, ld, n int, b []float64, trans bool) int {
	for i := 0; i < n; i++ {
		if a[off+i+i*ld] == 0 {
			return i + 1
		}
	}
	if trans {
		// Forward substitution with Uᵀ (reference dtrsm, Left Upper Trans).
		for i := 0; i < n; i++ {
			temp := b[i]
			for k := 0; k < i; k++ {
				temp -= a[off+k+i*ld] * b[k]
			}
			b[i] = temp / a[off+i+i*ld]
		}
		return 0
	}
	// Back substitution with U (reference dtrsm, Left Upper NoTrans).
	for k := n - 1; k >= 0; k-- {
		if b[k] != 0 {
			b[k] /= a[off+k+k*ld]
			bk := b[k]
			for i := 0; i < k; i++ {
				b[i] -= bk * a[off+i+k*ld]
			}
		}
	}
	return 0
}
