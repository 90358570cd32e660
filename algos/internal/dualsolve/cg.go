package dualsolve

import "math"

// FreeCG is the truncated, Jacobi-preconditioned conjugate gradient shared
// by both semismooth Newton methods. It solves
//
//	(J_FF + ridge·I) x_F = −g_F − (J d_B)_F
//
// over the free variables F (free[i]), where jdb holds J d_B, the product of
// the generalised Hessian with the moves of the fixed variables onto their
// bounds. apply(out, p) sets out = J p for a p that is zero outside F. CG
// stops at the Eisenstat–Walker-like relative tolerance min(0.1, √‖r₀‖)·‖r₀‖,
// after maxIter products, or on a direction of non-positive curvature.
// x (zero outside F) receives the solution; r, z, p and hp are scratch of
// the same length; jdb may be the same slice as hp (it is read first). It
// returns the number of products applied.
func FreeCG(apply func(out, p []float64) error, grad, jdb []float64, free []bool, diag []float64, ridge float64, maxIter int, x, r, z, p, hp []float64) (int, error) {
	precond := func(i int) float64 { return r[i] / (diag[i] + ridge + 1e-300) }
	var rz, rr float64
	for i := range r {
		x[i], r[i], z[i], p[i] = 0, 0, 0, 0
		if free[i] {
			r[i] = -grad[i] - jdb[i]
			z[i] = precond(i)
			p[i] = z[i]
			rz += r[i] * z[i]
			rr += r[i] * r[i]
		}
	}
	rnorm := math.Sqrt(rr)
	tol := math.Min(0.1, math.Sqrt(rnorm)) * rnorm
	products := 0
	for it := 0; it < maxIter && rnorm > tol && rz > 0; it++ {
		if err := apply(hp, p); err != nil {
			return products, err
		}
		products++
		var php float64
		for i := range hp {
			if free[i] {
				hp[i] += ridge * p[i]
				php += p[i] * hp[i]
			}
		}
		if php <= 0 {
			break
		}
		alpha := rz / php
		var rz2, rr2 float64
		for i := range r {
			if free[i] {
				x[i] += alpha * p[i]
				r[i] -= alpha * hp[i]
				z[i] = precond(i)
				rz2 += r[i] * z[i]
				rr2 += r[i] * r[i]
			}
		}
		beta := rz2 / rz
		rz = rz2
		rnorm = math.Sqrt(rr2)
		for i := range p {
			if free[i] {
				p[i] = z[i] + beta*p[i]
			}
		}
	}
	return products, nil
}
