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

// axpyGeneric sets y += alpha·x. y must be at least as long as x. The
// conversions float64(alpha·x[i]) round the product, which keeps the
// compiler from fusing the multiply and the add (it does on arm64, and on
// amd64 with GOAMD64=v3).
func axpyGeneric(alpha float64, x, y []float64) {
	y = y[:len(x)]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		y[i] += float64(alpha * x[i])
		y[i+1] += float64(alpha * x[i+1])
		y[i+2] += float64(alpha * x[i+2])
		y[i+3] += float64(alpha * x[i+3])
	}
	for ; i < len(x); i++ {
		y[i] += float64(alpha * x[i])
	}
}

// Axpy4 adds w[l]·v to the rows l = 0..3 of c (row l is c[l·ldc:], at
// least len(v) long): four Axpy calls that read v once, with Axpy's
// roundings, so the result is the same bit for bit with and without AVX2.
func Axpy4(w *[4]float64, v, c []float64, ldc int) {
	n := len(v)
	_ = c[3*ldc+n-1]
	n4 := n &^ 3
	if useAVX2 && n4 > 0 {
		axpy4AVX2(n4, &v[0], w, &c[0], ldc)
	} else {
		for l, a := range w {
			axpyGeneric(a, v[:n4], c[l*ldc:])
		}
	}
	for l, a := range w {
		row := c[l*ldc : l*ldc+n]
		for j := n4; j < n; j++ {
			row[j] += float64(a * v[j]) // unfused, as in axpyGeneric
		}
	}
}

// Dot4 returns Dot(v, c[l·ldc:]) for l = 0..3, bit for bit, reading v
// once (AVX2 on amd64 processors that have it).
func Dot4(v, c []float64, ldc int) (d [4]float64) {
	n := len(v)
	_ = c[3*ldc+n-1]
	n4 := n &^ 3
	var acc [16]float64
	if useAVX2 && n4 > 0 {
		dot4AVX2(n4, &v[0], &c[0], ldc, &acc)
	} else {
		dot4Generic(v[:n4], c, ldc, &acc)
	}
	for l := range d {
		a, row := acc[4*l:4*l+4], c[l*ldc:l*ldc+n]
		for j := n4; j < n; j++ {
			a[0] += v[j] * row[j] // Dot's tail goes to its first accumulator
		}
		d[l] = (a[0] + a[1]) + (a[2] + a[3])
	}
	return d
}

// dot4Generic is dot4AVX2's loop: acc[4l+k] sums v[j]·c[l·ldc+j] over
// j ≡ k mod 4, len(v) a multiple of 4.
func dot4Generic(v, c []float64, ldc int, acc *[16]float64) {
	for l := 0; l < 4; l++ {
		row := c[l*ldc : l*ldc+len(v)]
		a := acc[4*l : 4*l+4]
		for j := 0; j+4 <= len(v); j += 4 {
			a[0] += v[j] * row[j]
			a[1] += v[j+1] * row[j+1]
			a[2] += v[j+2] * row[j+2]
			a[3] += v[j+3] * row[j+3]
		}
	}
}

// SpDot4 returns, for k = 0..3, Σ_p val[p]·x[4·ind[p]+k]: one row of a
// sparse matrix (values val, column indices ind) times a block of four
// columns stored row by row (x is n×4, contiguous). The terms are summed
// in two accumulators, one for the even p and one for the odd, each in
// order of p, and the two added at the end; with AVX2 this is one 256-bit
// multiply and add per entry, and the pure-Go loop rounds the same, so
// both give the same bits. Every ind[p] must be in [0, len(x)/4): on amd64
// the assembly does not check it (the caller's pattern is validated once).
// It panics if len(ind) ≠ len(val).
func SpDot4(val []float64, ind []int32, x []float64) (out [4]float64) {
	if len(ind) != len(val) {
		panic("f64: SpDot4: len(ind) ≠ len(val)")
	}
	if len(val) == 0 {
		return out
	}
	if useAVX2 {
		spDot4AVX2(len(val), &val[0], &ind[0], &x[0], &out)
		return out
	}
	return spDot4Go(val, ind, x)
}

// spDot4Go is SpDot4 in Go: even p into e, odd p into o.
func spDot4Go(val []float64, ind []int32, x []float64) [4]float64 {
	var e, o [4]float64
	for p, v := range val {
		acc := &e
		if p&1 == 1 {
			acc = &o
		}
		j := int(ind[p]) * 4
		xr := x[j : j+4 : j+4]
		acc[0] += v * xr[0]
		acc[1] += v * xr[1]
		acc[2] += v * xr[2]
		acc[3] += v * xr[3]
	}
	return [4]float64{e[0] + o[0], e[1] + o[1], e[2] + o[2], e[3] + o[3]}
}
