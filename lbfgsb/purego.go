package lbfgsb

import (
	"context"
	"math"
)

// Go is the pure-Go port of L-BFGS-B 3.0: the same generalized Cauchy point,
// subspace minimisation (with the 3.0 projection and backtracking), Moré–
// Thuente line search, BFGS update rules and stopping tests as the Fortran
// code, so that it follows nearly the same path as Native. It is
// deterministic and safe for concurrent use.
var Go Solver = goSolver{}

type goSolver struct{}

func (goSolver) Minimize(ctx context.Context, p Problem, x0 []float64, s Settings) (Result, error) {
	st, err := prepare(p, x0, s)
	if err != nil {
		return Result{}, err
	}
	d := newDriver(ctx, p, st, s)
	start := append([]float64(nil), st.x0...)
	projectStart(start, st.l, st.u, st.nbd)
	w := newGoWork(st)
	r, msg := w.mainlb(d, st.factr, st.pgtol)
	return d.finish(r, msg, start)
}

// Task strings of the Fortran code, reported in NotConvergedError.Message.
const (
	taskConvPgtol = "CONVERGENCE: NORM_OF_PROJECTED_GRADIENT_<=_PGTOL"
	taskConvFactr = "CONVERGENCE: REL_REDUCTION_OF_F_<=_FACTR*EPSMCH"
	taskAbnormal  = "ABNORMAL_TERMINATION_IN_LNSRCH"
)

// mainlb is the main loop of L-BFGS-B (Fortran mainlb with the
// reverse-communication returns replaced by calls to the driver).
func (w *goWork) mainlb(dr *driver, factr, pgtol float64) (Reason, string) {
	const (
		ftol = 1e-3
		gtol = 0.9
		xtol = 0.1
		big  = 1e10
	)
	n := w.n
	x, g, l, u, nbd := w.x, w.g, w.l, w.u, w.nbd
	z, r, d, t := w.z, w.r, w.d, w.t

	var (
		col, head, iupdat, itail int
		theta                    = 1.0
		updatd, wrk              bool
		iter, nfree              = 0, n
		nenter, ileave           int
		info                     int
		fold, gd, gdold          float64
		stp, stpmx, dnorm, dtd   float64
	)
	tol := factr * epsmch
	reset := func() {
		info = 0
		col = 0
		head = 0
		theta = 1
		iupdat = 0
		updatd = false
	}

	_, cnstnd, boxed := w.active()

	f, ok := dr.evaluate(x, g)
	if !ok {
		return dr.stopReason()
	}
	sbgnrm := projGradNorm(x, g, l, u, nbd)
	if sbgnrm <= pgtol {
		return ReasonPgtol, taskConvPgtol
	}

	for {
		// Generalized Cauchy point (skipped for unconstrained problems once
		// there is curvature information).
		if !cnstnd && col > 0 {
			copy(z, x)
			wrk = updatd
		} else {
			_, info = w.cauchy(theta, col, head, sbgnrm)
			if info != 0 {
				// Singular triangular system: refresh the memory.
				reset()
				continue
			}
			nfree, nenter, ileave, wrk = w.freev(nfree, iter, updatd, cnstnd)
		}

		// Subspace minimisation.
		if nfree != 0 && col != 0 {
			if wrk {
				info = w.formk(nfree, nenter, ileave, iupdat, updatd, theta, col, head)
			}
			if info != 0 {
				// Nonpositive definiteness in formk: refresh the memory.
				reset()
				continue
			}
			info = w.cmprlb(theta, col, head, nfree, cnstnd)
			if info == 0 {
				_, info = w.subsm(nfree, theta, col, head)
			}
			if info != 0 {
				reset()
				continue
			}
		}

		// Line search along d = z - x (lnsrlb).
		for i := 0; i < n; i++ {
			d[i] = z[i] - x[i]
		}
		dtd = dot(d, d)
		dnorm = math.Sqrt(dtd)
		stpmx = big
		if cnstnd {
			if iter == 0 {
				stpmx = 1
			} else {
				for i := 0; i < n; i++ {
					a1 := d[i]
					if nbd[i] != 0 {
						if a1 < 0 && nbd[i] <= 2 {
							a2 := l[i] - x[i]
							if a2 >= 0 {
								stpmx = 0
							} else if a1*stpmx < a2 {
								stpmx = a2 / a1
							}
						} else if a1 > 0 && nbd[i] >= 2 {
							a2 := u[i] - x[i]
							if a2 <= 0 {
								stpmx = 0
							} else if a1*stpmx > a2 {
								stpmx = a2 / a1
							}
						}
					}
				}
			}
		}
		if iter == 0 && !boxed {
			stp = fmin(1/dnorm, stpmx)
		} else {
			stp = 1
		}
		copy(t, x)
		copy(r, g)
		fold = f
		ifun, iback := 0, 0
		task := lsStart
		for {
			gd = dot(g, d)
			if ifun == 0 {
				gdold = gd
				if gd >= 0 {
					// Not a descent direction: line search impossible.
					info = -4
					break
				}
			}
			task = w.ls.search(f, gd, &stp, ftol, gtol, xtol, 0, stpmx, task)
			if task == lsConv || task == lsWarn {
				break
			}
			ifun++
			iback = ifun - 1
			if stp == 1 {
				copy(x, z)
			} else {
				for i := 0; i < n; i++ {
					x[i] = stp*d[i] + t[i]
					// Prevent rounding errors beyond the bounds.
					if nbd[i] == 1 || nbd[i] == 2 {
						x[i] = fmax(x[i], l[i])
					}
					if nbd[i] == 2 || nbd[i] == 3 {
						x[i] = fmin(x[i], u[i])
					}
				}
			}
			if iback >= 20 {
				break
			}
			if f, ok = dr.evaluate(x, g); !ok {
				return dr.stopReason()
			}
		}
		if info != 0 || iback >= 20 {
			// Restore the previous iterate.
			copy(x, t)
			copy(g, r)
			f = fold
			if col == 0 {
				return ReasonAbnormal, taskAbnormal
			}
			// Refresh the memory and restart the iteration.
			reset()
			continue
		}

		// New iterate.
		iter++
		sbgnrm = projGradNorm(x, g, l, u, nbd)
		dr.accept(x, g, f)

		// Termination tests.
		if sbgnrm <= pgtol {
			return ReasonPgtol, taskConvPgtol
		}
		ddum := fmax(fmax(math.Abs(fold), math.Abs(f)), 1)
		if fold-f <= tol*ddum {
			return ReasonFactr, taskConvFactr
		}

		// s = x_new - x_old (= stp·d), y = g_new - g_old.
		for i := 0; i < n; i++ {
			r[i] = g[i] - r[i]
		}
		rr := dot(r, r)
		var ys float64
		if stp == 1 {
			ys = gd - gdold
			ddum = -gdold
		} else {
			ys = (gd - gdold) * stp
			for i := 0; i < n; i++ {
				d[i] *= stp
			}
			ddum = -gdold * stp
		}
		if ys <= epsmch*ddum {
			// Skip the L-BFGS update.
			updatd = false
			continue
		}
		updatd = true
		iupdat++
		col, head, itail, theta = w.matupd(itail, iupdat, col, head, rr, ys, stp, dtd)
		if info = w.formt(col, theta); info != 0 {
			reset()
			continue
		}
	}
}
