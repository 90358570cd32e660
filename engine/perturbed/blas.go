package perturbed

import (
	"math"

	"gonum.org/v1/gonum/blas"
)

// Blas is a blas.Float64 whose routines that compute (rather than copy or
// swap) return nudged results, and whose dot products, GEMM and SYRK add
// their inner sums in two halves.
type Blas struct{ blas.Float64 }

// Ddot adds the dot products of the two halves of x and y.
func (b Blas) Ddot(n int, x []float64, incX int, y []float64, incY int) float64 {
	if n < 2 || incX <= 0 || incY <= 0 {
		return Nudge(b.Float64.Ddot(n, x, incX, y, incY))
	}
	h := n / 2
	return Nudge(b.Float64.Ddot(n-h, x[h*incX:], incX, y[h*incY:], incY) + b.Float64.Ddot(h, x, incX, y, incY))
}

// Dnrm2 returns the nudged Euclidean norm of x.
func (b Blas) Dnrm2(n int, x []float64, incX int) float64 {
	return Nudge(b.Float64.Dnrm2(n, x, incX))
}

// Dasum returns the nudged sum of absolute values of x.
func (b Blas) Dasum(n int, x []float64, incX int) float64 {
	return Nudge(b.Float64.Dasum(n, x, incX))
}

// Daxpy computes y += αx and nudges y.
func (b Blas) Daxpy(n int, alpha float64, x []float64, incX int, y []float64, incY int) {
	b.Float64.Daxpy(n, alpha, x, incX, y, incY)
	nudgeVec(n, y, incY)
}

// Dscal computes x = αx and nudges x.
func (b Blas) Dscal(n int, alpha float64, x []float64, incX int) {
	b.Float64.Dscal(n, alpha, x, incX)
	if incX > 0 {
		nudgeVec(n, x, incX)
	}
}

// Dgemv computes y = α·op(A)x + βy and nudges y.
func (b Blas) Dgemv(tA blas.Transpose, m, n int, alpha float64, a []float64, lda int, x []float64, incX int, beta float64, y []float64, incY int) {
	b.Float64.Dgemv(tA, m, n, alpha, a, lda, x, incX, beta, y, incY)
	if tA == blas.NoTrans {
		nudgeVec(m, y, incY)
	} else {
		nudgeVec(n, y, incY)
	}
}

// Dsymv computes y = αAx + βy for a symmetric A and nudges y.
func (b Blas) Dsymv(ul blas.Uplo, n int, alpha float64, a []float64, lda int, x []float64, incX int, beta float64, y []float64, incY int) {
	b.Float64.Dsymv(ul, n, alpha, a, lda, x, incX, beta, y, incY)
	nudgeVec(n, y, incY)
}

// Dtrmv computes x = op(A)x for a triangular A and nudges x.
func (b Blas) Dtrmv(ul blas.Uplo, tA blas.Transpose, d blas.Diag, n int, a []float64, lda int, x []float64, incX int) {
	b.Float64.Dtrmv(ul, tA, d, n, a, lda, x, incX)
	nudgeVec(n, x, incX)
}

// Dtrsv solves op(A)x = b for a triangular A and nudges x.
func (b Blas) Dtrsv(ul blas.Uplo, tA blas.Transpose, d blas.Diag, n int, a []float64, lda int, x []float64, incX int) {
	b.Float64.Dtrsv(ul, tA, d, n, a, lda, x, incX)
	nudgeVec(n, x, incX)
}

// Dger computes A += αxyᵀ and nudges A.
func (b Blas) Dger(m, n int, alpha float64, x []float64, incX int, y []float64, incY int, a []float64, lda int) {
	b.Float64.Dger(m, n, alpha, x, incX, y, incY, a, lda)
	nudgeMat(m, n, a, lda)
}

// Dsyr computes A += αxxᵀ and nudges A's ul triangle.
func (b Blas) Dsyr(ul blas.Uplo, n int, alpha float64, x []float64, incX int, a []float64, lda int) {
	b.Float64.Dsyr(ul, n, alpha, x, incX, a, lda)
	nudgeTri(ul, n, a, lda)
}

// Dsyr2 computes A += αxyᵀ + αyxᵀ and nudges A's ul triangle.
func (b Blas) Dsyr2(ul blas.Uplo, n int, alpha float64, x []float64, incX int, y []float64, incY int, a []float64, lda int) {
	b.Float64.Dsyr2(ul, n, alpha, x, incX, y, incY, a, lda)
	nudgeTri(ul, n, a, lda)
}

// Dgemm computes C = α·op(A)op(B) + βC as two products over the halves of
// the inner dimension k, the second added to the first.
func (b Blas) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, bm []float64, ldb int, beta float64, c []float64, ldc int) {
	if k < 2 || m == 0 || n == 0 {
		b.Float64.Dgemm(tA, tB, m, n, k, alpha, a, lda, bm, ldb, beta, c, ldc)
		nudgeMat(m, n, c, ldc)
		return
	}
	h := k / 2
	a2 := a[h:] // op(A) = A: columns h… of the m×k A
	if tA != blas.NoTrans {
		a2 = a[h*lda:] // rows h… of the k×m A
	}
	b2 := bm[h*ldb:] // rows h… of the k×n B
	if tB != blas.NoTrans {
		b2 = bm[h:] // columns h… of the n×k B
	}
	b.Float64.Dgemm(tA, tB, m, n, k-h, alpha, a2, lda, b2, ldb, beta, c, ldc)
	b.Float64.Dgemm(tA, tB, m, n, h, alpha, a, lda, bm, ldb, 1, c, ldc)
	nudgeMat(m, n, c, ldc)
}

// Dsymm computes C = αAB + βC (or αBA + βC) for a symmetric A and nudges C.
func (b Blas) Dsymm(s blas.Side, ul blas.Uplo, m, n int, alpha float64, a []float64, lda int, bm []float64, ldb int, beta float64, c []float64, ldc int) {
	b.Float64.Dsymm(s, ul, m, n, alpha, a, lda, bm, ldb, beta, c, ldc)
	nudgeMat(m, n, c, ldc)
}

// Dsyrk computes C = α·op(A)op(A)ᵀ + βC as two updates over the halves of
// the inner dimension k.
func (b Blas) Dsyrk(ul blas.Uplo, t blas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	if k < 2 || n == 0 {
		b.Float64.Dsyrk(ul, t, n, k, alpha, a, lda, beta, c, ldc)
		nudgeTri(ul, n, c, ldc)
		return
	}
	h := k / 2
	a2 := a[h:] // columns h… of the n×k A
	if t != blas.NoTrans {
		a2 = a[h*lda:] // rows h… of the k×n A
	}
	b.Float64.Dsyrk(ul, t, n, k-h, alpha, a2, lda, beta, c, ldc)
	b.Float64.Dsyrk(ul, t, n, h, alpha, a, lda, 1, c, ldc)
	nudgeTri(ul, n, c, ldc)
}

// Dsyr2k computes C = α·op(A)op(B)ᵀ + α·op(B)op(A)ᵀ + βC and nudges C's ul triangle.
func (b Blas) Dsyr2k(ul blas.Uplo, t blas.Transpose, n, k int, alpha float64, a []float64, lda int, bm []float64, ldb int, beta float64, c []float64, ldc int) {
	b.Float64.Dsyr2k(ul, t, n, k, alpha, a, lda, bm, ldb, beta, c, ldc)
	nudgeTri(ul, n, c, ldc)
}

// Dtrmm computes B = α·op(A)B (or α·B·op(A)) for a triangular A and nudges B.
func (b Blas) Dtrmm(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, bm []float64, ldb int) {
	b.Float64.Dtrmm(s, ul, tA, d, m, n, alpha, a, lda, bm, ldb)
	nudgeMat(m, n, bm, ldb)
}

// Dtrsm solves op(A)X = αB (or X·op(A) = αB) for a triangular A and nudges X.
func (b Blas) Dtrsm(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, bm []float64, ldb int) {
	b.Float64.Dtrsm(s, ul, tA, d, m, n, alpha, a, lda, bm, ldb)
	nudgeMat(m, n, bm, ldb)
}

// Blas32 is Blas for a base that also implements blas.Float32 (OpenBLAS
// does; BoostMetric's mixed precision uses its Sgemm). Its Sgemm results
// are nudged by up to 4 single-precision ulps.
type Blas32 struct {
	Blas
	blas.Float32
}

// Sgemm computes C = α·op(A)op(B) + βC in single precision and nudges C.
func (b Blas32) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, bm []float32, ldb int, beta float32, c []float32, ldc int) {
	b.Float32.Sgemm(tA, tB, m, n, k, alpha, a, lda, bm, ldb, beta, c, ldc)
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		for j, v := range row {
			row[j] = nudge32(v)
		}
	}
}

// nudge32 is Nudge at single precision: |δ| ≤ 4·2⁻²⁴.
func nudge32(x float32) float32 {
	if x == 0 || x != x || x > math.MaxFloat32 || x < -math.MaxFloat32 {
		return x
	}
	h := mix(uint64(math.Float32bits(x) &^ (0xff << 23)))
	s := float32(int64(h>>11)-1<<52) / (1 << 52)
	return x * (1 + 4*0x1p-24*s)
}
