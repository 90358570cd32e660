// Package f64 holds the few float64 vector loops on the hot paths of the
// matrix-free kernels (pair distances, Laplacian products), written with
// independent accumulators so they are bound by memory rather than by the
// latency of one floating-point add chain.
//
// Results depend on the summation order, which is fixed: the same inputs
// give bit-identical outputs on every call and every backend.
package f64

// SqDist returns ‖a − b‖². b must be at least as long as a.
func SqDist(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		t0 := a[i] - b[i]
		t1 := a[i+1] - b[i+1]
		t2 := a[i+2] - b[i+2]
		t3 := a[i+3] - b[i+3]
		s0 += t0 * t0
		s1 += t1 * t1
		s2 += t2 * t2
		s3 += t3 * t3
	}
	for ; i < len(a); i++ {
		t := a[i] - b[i]
		s0 += t * t
	}
	return (s0 + s1) + (s2 + s3)
}

// Dot returns a·b. b must be at least as long as a.
func Dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// DiffDot returns (xa − xb)·(ya − yb). All slices must be at least as long as xa.
func DiffDot(xa, xb, ya, yb []float64) float64 {
	n := len(xa)
	xb, ya, yb = xb[:n], ya[:n], yb[:n]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= n; i += 4 {
		s0 += (xa[i] - xb[i]) * (ya[i] - yb[i])
		s1 += (xa[i+1] - xb[i+1]) * (ya[i+1] - yb[i+1])
		s2 += (xa[i+2] - xb[i+2]) * (ya[i+2] - yb[i+2])
		s3 += (xa[i+3] - xb[i+3]) * (ya[i+3] - yb[i+3])
	}
	for ; i < n; i++ {
		s0 += (xa[i] - xb[i]) * (ya[i] - yb[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// Axpy sets y += alpha·x. y must be at least as long as x.
//
// Every element is computed as y[i] + alpha·x[i] with two roundings (a
// multiply, then an add: never a fused multiply-add), so the result is the
// same bit for bit whichever implementation runs: AVX2 on amd64 processors
// that have it (4 elements per instruction), the portable loop elsewhere.
func Axpy(alpha float64, x, y []float64) {
	y = y[:len(x)]
	if useAVX2 && len(x) >= 8 {
		axpyAVX2(alpha, x, y)
		return
	}
	axpyGeneric(alpha, x, y)
}

// axpyGeneric sets y += alpha·x. y must be at least as long as x.
func axpyGeneric(alpha float64, x, y []float64) {
	y = y[:len(x)]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		y[i] += alpha * x[i]
		y[i+1] += alpha * x[i+1]
		y[i+2] += alpha * x[i+2]
		y[i+3] += alpha * x[i+3]
	}
	for ; i < len(x); i++ {
		y[i] += alpha * x[i]
	}
}
