package lbfgsb

import "math"

// lsTask is the task of the Moré–Thuente line search (MINPACK-2 dcsrch).
type lsTask int

const (
	lsStart lsTask = iota // begin a search
	lsFG                  // evaluate f and g at stp, then call again
	lsConv                // the step satisfies both conditions
	lsWarn                // no further progress possible; stp is the best step
	lsError               // invalid arguments
)

// dcsrch holds the state of the Moré–Thuente line search between calls
// (the isave/dsave arrays of the Fortran code).
type dcsrch struct {
	brackt                              bool
	stage                               int
	ginit, gtest, gx, gy, finit, fx, fy float64
	stx, sty, stmin, stmax              float64
	width, width1                       float64
}

// search is MINPACK-2 dcsrch: given f and g = f'(stp) along the search
// direction, it updates stp and returns what to do next. On lsStart, f and g
// are the values at stp = 0.
func (s *dcsrch) search(f, g float64, stp *float64, ftol, gtol, xtol, stpmin, stpmax float64, task lsTask) lsTask {
	const (
		p5     = 0.5
		p66    = 0.66
		xtrapl = 1.1
		xtrapu = 4.0
	)
	if task == lsStart {
		bad := *stp < stpmin || *stp > stpmax || g >= 0 || ftol < 0 || gtol < 0 ||
			xtol < 0 || stpmin < 0 || stpmax < stpmin
		if bad {
			return lsError
		}
		s.brackt = false
		s.stage = 1
		s.finit = f
		s.ginit = g
		s.gtest = ftol * s.ginit
		s.width = stpmax - stpmin
		s.width1 = s.width / p5
		s.stx = 0
		s.fx = s.finit
		s.gx = s.ginit
		s.sty = 0
		s.fy = s.finit
		s.gy = s.ginit
		s.stmin = 0
		s.stmax = *stp + xtrapu**stp
		return lsFG
	}

	ftest := s.finit + *stp*s.gtest
	if s.stage == 1 && f <= ftest && g >= 0 {
		s.stage = 2
	}

	// Warnings, then convergence (which overrides them).
	next := lsFG
	if s.brackt && (*stp <= s.stmin || *stp >= s.stmax) {
		next = lsWarn // rounding errors prevent progress
	}
	if s.brackt && s.stmax-s.stmin <= xtol*s.stmax {
		next = lsWarn // xtol test satisfied
	}
	if *stp == stpmax && f <= ftest && g <= s.gtest {
		next = lsWarn // stp = stpmax
	}
	if *stp == stpmin && (f > ftest || g >= s.gtest) {
		next = lsWarn // stp = stpmin
	}
	if f <= ftest && math.Abs(g) <= gtol*(-s.ginit) {
		next = lsConv
	}
	if next != lsFG {
		return next
	}

	if s.stage == 1 && f <= s.fx && f > ftest {
		// The modified function psi(stp) = f(stp) − f(0) − ftol·stp·f'(0).
		fm := f - *stp*s.gtest
		fxm := s.fx - s.stx*s.gtest
		fym := s.fy - s.sty*s.gtest
		gm := g - s.gtest
		gxm := s.gx - s.gtest
		gym := s.gy - s.gtest
		dcstep(&s.stx, &fxm, &gxm, &s.sty, &fym, &gym, stp, fm, gm, &s.brackt, s.stmin, s.stmax)
		s.fx = fxm + s.stx*s.gtest
		s.fy = fym + s.sty*s.gtest
		s.gx = gxm + s.gtest
		s.gy = gym + s.gtest
	} else {
		dcstep(&s.stx, &s.fx, &s.gx, &s.sty, &s.fy, &s.gy, stp, f, g, &s.brackt, s.stmin, s.stmax)
	}

	// Bisection if the interval does not shrink fast enough.
	if s.brackt {
		if math.Abs(s.sty-s.stx) >= p66*s.width1 {
			*stp = s.stx + p5*(s.sty-s.stx)
		}
		s.width1 = s.width
		s.width = math.Abs(s.sty - s.stx)
	}
	if s.brackt {
		s.stmin = fmin(s.stx, s.sty)
		s.stmax = fmax(s.stx, s.sty)
	} else {
		s.stmin = *stp + xtrapl*(*stp-s.stx)
		s.stmax = *stp + xtrapu*(*stp-s.stx)
	}
	*stp = fmax(*stp, stpmin)
	*stp = fmin(*stp, stpmax)
	if s.brackt && (*stp <= s.stmin || *stp >= s.stmax) || (s.brackt && s.stmax-s.stmin <= xtol*s.stmax) {
		*stp = s.stx
	}
	return lsFG
}

// dcstep is MINPACK-2 dcstep: a safeguarded cubic/quadratic step that
// updates the interval [stx, sty] known to contain a step satisfying the
// sufficient decrease and curvature conditions.
func dcstep(stx, fx, dx, sty, fy, dy, stp *float64, fp, dp float64, brackt *bool, stpmin, stpmax float64) {
	const (
		p66   = 0.66
		two   = 2.0
		three = 3.0
	)
	sgnd := dp * (*dx / math.Abs(*dx))
	var stpf float64
	switch {
	case fp > *fx:
		// Higher function value: the minimum is bracketed.
		theta := three*(*fx-fp)/(*stp-*stx) + *dx + dp
		s := fmax(fmax(math.Abs(theta), math.Abs(*dx)), math.Abs(dp))
		ts := theta / s
		gamma := s * math.Sqrt(ts*ts-(*dx/s)*(dp/s))
		if *stp < *stx {
			gamma = -gamma
		}
		p := (gamma - *dx) + theta
		q := ((gamma - *dx) + gamma) + dp
		r := p / q
		stpc := *stx + r*(*stp-*stx)
		stpq := *stx + ((*dx/((*fx-fp)/(*stp-*stx)+*dx))/two)*(*stp-*stx)
		if math.Abs(stpc-*stx) < math.Abs(stpq-*stx) {
			stpf = stpc
		} else {
			stpf = stpc + (stpq-stpc)/two
		}
		*brackt = true
	case sgnd < 0:
		// Lower function value, derivatives of opposite sign: bracketed.
		theta := three*(*fx-fp)/(*stp-*stx) + *dx + dp
		s := fmax(fmax(math.Abs(theta), math.Abs(*dx)), math.Abs(dp))
		ts := theta / s
		gamma := s * math.Sqrt(ts*ts-(*dx/s)*(dp/s))
		if *stp > *stx {
			gamma = -gamma
		}
		p := (gamma - dp) + theta
		q := ((gamma - dp) + gamma) + *dx
		r := p / q
		stpc := *stp + r*(*stx-*stp)
		stpq := *stp + (dp/(dp-*dx))*(*stx-*stp)
		if math.Abs(stpc-*stp) > math.Abs(stpq-*stp) {
			stpf = stpc
		} else {
			stpf = stpq
		}
		*brackt = true
	case math.Abs(dp) < math.Abs(*dx):
		// Lower function value, same-sign derivatives, decreasing magnitude.
		theta := three*(*fx-fp)/(*stp-*stx) + *dx + dp
		s := fmax(fmax(math.Abs(theta), math.Abs(*dx)), math.Abs(dp))
		ts := theta / s
		gamma := s * math.Sqrt(fmax(0, ts*ts-(*dx/s)*(dp/s)))
		if *stp > *stx {
			gamma = -gamma
		}
		p := (gamma - dp) + theta
		q := (gamma + (*dx - dp)) + gamma
		r := p / q
		var stpc float64
		if r < 0 && gamma != 0 {
			stpc = *stp + r*(*stx-*stp)
		} else if *stp > *stx {
			stpc = stpmax
		} else {
			stpc = stpmin
		}
		stpq := *stp + (dp/(dp-*dx))*(*stx-*stp)
		if *brackt {
			if math.Abs(stpc-*stp) < math.Abs(stpq-*stp) {
				stpf = stpc
			} else {
				stpf = stpq
			}
			if *stp > *stx {
				stpf = fmin(*stp+p66*(*sty-*stp), stpf)
			} else {
				stpf = fmax(*stp+p66*(*sty-*stp), stpf)
			}
		} else {
			if math.Abs(stpc-*stp) > math.Abs(stpq-*stp) {
				stpf = stpc
			} else {
				stpf = stpq
			}
			stpf = fmin(stpmax, stpf)
			stpf = fmax(stpmin, stpf)
		}
	default:
		// Lower function value, same-sign derivatives, magnitude not
		// decreasing.
		if *brackt {
			theta := three*(fp-*fy)/(*sty-*stp) + *dy + dp
			s := fmax(fmax(math.Abs(theta), math.Abs(*dy)), math.Abs(dp))
			ts := theta / s
			gamma := s * math.Sqrt(ts*ts-(*dy/s)*(dp/s))
			if *stp > *sty {
				gamma = -gamma
			}
			p := (gamma - dp) + theta
			q := ((gamma - dp) + gamma) + *dy
			r := p / q
			stpc := *stp + r*(*sty-*stp)
			stpf = stpc
		} else if *stp > *stx {
			stpf = stpmax
		} else {
			stpf = stpmin
		}
	}

	// Update the interval that contains a minimizer.
	if fp > *fx {
		*sty = *stp
		*fy = fp
		*dy = dp
	} else {
		if sgnd < 0 {
			*sty = *stx
			*fy = *fx
			*dy = *dx
		}
		*stx = *stp
		*fx = fp
		*dx = dp
	}
	*stp = stpf
}
