package lbfgsb

import (
	"context"
	"fmt"
	"math"
)

// Defaults of the zero Settings.
const (
	DefaultM       = 10
	DefaultFactr   = 1e7
	DefaultPgtol   = 1e-5
	DefaultMaxIter = 15000
	DefaultMaxEval = 15000
)

// Bound types of the Fortran code (array nbd).
const (
	nbdFree  = 0 // no bound
	nbdLower = 1 // lower bound only
	nbdBoth  = 2 // both bounds
	nbdUpper = 3 // upper bound only
)

// epsmch is the machine precision, Fortran's epsilon(1d0).
const epsmch = 0x1p-52

// setup is a validated problem in the form the solvers use: bounds as
// (l, u, nbd) with unused entries zero, the starting point copied, and the
// settings with their defaults applied.
type setup struct {
	n            int
	m            int
	factr, pgtol float64 // as passed to the Fortran code
	maxIter      int
	maxEval      int
	x0           []float64
	l, u         []float64
	nbd          []int
}

// boundType returns the nbd code of the bounds lo ≤ x ≤ hi, where ±Inf means
// no bound on that side.
func boundType(lo, hi float64) int {
	hasL := !math.IsInf(lo, -1)
	hasU := !math.IsInf(hi, 1)
	switch {
	case hasL && hasU:
		return nbdBoth
	case hasL:
		return nbdLower
	case hasU:
		return nbdUpper
	}
	return nbdFree
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidArgument, fmt.Sprintf(format, args...))
}

// prepare validates the arguments of a solve and converts them.
func prepare(p Problem, x0 []float64, s Settings) (*setup, error) {
	n := len(x0)
	if p.Func == nil {
		return nil, invalid("nil objective function")
	}
	if n == 0 {
		return nil, invalid("empty starting point")
	}
	if p.Lower != nil && len(p.Lower) != n {
		return nil, invalid("len(Lower) = %d, want %d", len(p.Lower), n)
	}
	if p.Upper != nil && len(p.Upper) != n {
		return nil, invalid("len(Upper) = %d, want %d", len(p.Upper), n)
	}
	for i, v := range x0 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, invalid("x0[%d] = %v is not finite", i, v)
		}
	}
	st := &setup{
		n:       n,
		m:       s.M,
		factr:   s.Factr,
		pgtol:   s.Pgtol,
		maxIter: s.MaxIter,
		maxEval: s.MaxEval,
		x0:      append([]float64(nil), x0...),
		l:       make([]float64, n),
		u:       make([]float64, n),
		nbd:     make([]int, n),
	}
	switch {
	case s.M < 0:
		return nil, invalid("M = %d is negative", s.M)
	case s.M == 0:
		st.m = DefaultM
	}
	switch {
	case math.IsNaN(s.Factr) || math.IsInf(s.Factr, 1):
		return nil, invalid("Factr = %v", s.Factr)
	case s.Factr == 0:
		st.factr = DefaultFactr
	case s.Factr < 0:
		st.factr = 0
	}
	switch {
	case math.IsNaN(s.Pgtol) || math.IsInf(s.Pgtol, 1):
		return nil, invalid("Pgtol = %v", s.Pgtol)
	case s.Pgtol == 0:
		st.pgtol = DefaultPgtol
	case s.Pgtol < 0:
		st.pgtol = -1
	}
	switch {
	case s.MaxIter < 0:
		return nil, invalid("MaxIter = %d is negative", s.MaxIter)
	case s.MaxIter == 0:
		st.maxIter = DefaultMaxIter
	}
	switch {
	case s.MaxEval < 0:
		return nil, invalid("MaxEval = %d is negative", s.MaxEval)
	case s.MaxEval == 0:
		st.maxEval = DefaultMaxEval
	}
	for i := 0; i < n; i++ {
		lo, hi := math.Inf(-1), math.Inf(1)
		if p.Lower != nil {
			lo = p.Lower[i]
		}
		if p.Upper != nil {
			hi = p.Upper[i]
		}
		if math.IsNaN(lo) || math.IsNaN(hi) {
			return nil, invalid("bound %d is NaN", i)
		}
		if math.IsInf(lo, 1) {
			return nil, invalid("Lower[%d] = +Inf", i)
		}
		if math.IsInf(hi, -1) {
			return nil, invalid("Upper[%d] = -Inf", i)
		}
		if lo > hi {
			return nil, invalid("Lower[%d] = %v > Upper[%d] = %v", i, lo, i, hi)
		}
		st.nbd[i] = boundType(lo, hi)
		if st.nbd[i] == nbdLower || st.nbd[i] == nbdBoth {
			st.l[i] = lo
		}
		if st.nbd[i] == nbdUpper || st.nbd[i] == nbdBoth {
			st.u[i] = hi
		}
	}
	return st, nil
}

// projGradNorm is the infinity norm of the projected gradient (Fortran
// projgr, including the Debian/SciPy NaN propagation).
func projGradNorm(x, g, l, u []float64, nbd []int) float64 {
	var sbgnrm float64
	for i, gi := range g {
		if gi != gi {
			return gi
		}
		if nbd[i] != nbdFree {
			if gi < 0 {
				if nbd[i] >= nbdBoth {
					gi = fmax(x[i]-u[i], gi)
				}
			} else {
				if nbd[i] <= nbdBoth {
					gi = fmin(x[i]-l[i], gi)
				}
			}
		}
		sbgnrm = fmax(sbgnrm, math.Abs(gi))
	}
	return sbgnrm
}

// fmax and fmin are Fortran's MAX and MIN for finite arguments.
func fmax(a, b float64) float64 {
	if b > a {
		return b
	}
	return a
}

func fmin(a, b float64) float64 {
	if b < a {
		return b
	}
	return a
}

// driver holds everything both implementations share: the user's function,
// counters and limits, the best accepted point, and the stop logic. The
// solvers call evaluate for every function request and accept for every new
// iterate; evaluate returning false means the solve must stop at once.
type driver struct {
	ctx context.Context
	fn  func(x, g []float64) float64
	st  *setup
	cb  func(Iteration) bool

	xe []float64 // copy of the point handed to the user

	evals, iters int

	haveBest bool
	bestX    []float64
	bestG    []float64
	bestF    float64
	bestPG   float64

	// pending is a stop requested at an iterate (iteration limit,
	// callback); it takes effect at the next function request, so that a
	// convergence test passed at that iterate still wins.
	pending Reason

	reason Reason // set when evaluate refuses to continue
	msg    string
	ctxErr error
}

func newDriver(ctx context.Context, p Problem, st *setup, s Settings) *driver {
	if ctx == nil {
		ctx = context.Background()
	}
	return &driver{
		ctx:   ctx,
		fn:    p.Func,
		st:    st,
		cb:    s.Callback,
		xe:    make([]float64, st.n),
		bestX: make([]float64, st.n),
		bestG: make([]float64, st.n),
		bestF: math.NaN(),
	}
}

// evaluate computes f and its gradient g at x for the solver, or reports
// that the solve must stop (pending stop, cancellation, evaluation limit,
// non-finite values).
func (d *driver) evaluate(x, g []float64) (float64, bool) {
	if d.pending != ReasonNone {
		d.reason = d.pending
		return 0, false
	}
	if err := d.ctx.Err(); err != nil {
		d.reason, d.ctxErr = ReasonCancelled, err
		return 0, false
	}
	if d.evals >= d.st.maxEval {
		d.reason = ReasonMaxEval
		return 0, false
	}
	copy(d.xe, x)
	for i := range g {
		g[i] = 0
	}
	f := d.fn(d.xe, g)
	d.evals++
	if math.IsNaN(f) || math.IsInf(f, 0) {
		d.reason = ReasonError
		d.msg = fmt.Sprintf("objective is %v at evaluation %d", f, d.evals)
		if !d.haveBest {
			d.bestF = f
		}
		return f, false
	}
	for i, v := range g {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			d.reason = ReasonError
			d.msg = fmt.Sprintf("gradient[%d] is %v at evaluation %d", i, v, d.evals)
			if !d.haveBest {
				d.bestF = f
			}
			return f, false
		}
	}
	if d.evals == 1 {
		// The starting point (after projection onto the bounds).
		d.record(x, g, f)
	}
	return f, true
}

// record makes (x, g, f) the best point.
func (d *driver) record(x, g []float64, f float64) {
	copy(d.bestX, x)
	copy(d.bestG, g)
	d.bestF = f
	d.bestPG = projGradNorm(x, g, d.st.l, d.st.u, d.st.nbd)
	d.haveBest = true
}

// accept is called at every new iterate (task NEW_X).
func (d *driver) accept(x, g []float64, f float64) {
	d.iters++
	if f <= d.bestF {
		d.record(x, g, f)
	}
	if d.cb != nil {
		copy(d.xe, x)
		it := Iteration{Iter: d.iters, Evals: d.evals, F: f, X: d.xe,
			ProjGradNorm: projGradNorm(x, g, d.st.l, d.st.u, d.st.nbd)}
		if !d.cb(it) && d.pending == ReasonNone {
			d.pending = ReasonCallback
		}
	}
	if d.pending == ReasonNone && d.iters >= d.st.maxIter {
		d.pending = ReasonMaxIter
	}
}

// finish builds the Result and error for the stop reason r (with an
// optional message from the solver).
func (d *driver) finish(r Reason, msg string, x0 []float64) (Result, error) {
	if !r.Converged() && d.pending != ReasonNone {
		r = d.pending
	}
	res := Result{
		F:            d.bestF,
		ProjGradNorm: d.bestPG,
		Iterations:   d.iters,
		Evaluations:  d.evals,
		Reason:       r,
	}
	if d.haveBest {
		res.X = append([]float64(nil), d.bestX...)
	} else {
		// Never evaluated successfully: the (projected) starting point.
		res.X = append([]float64(nil), x0...)
		res.ProjGradNorm = math.NaN()
	}
	if r.Converged() {
		return res, nil
	}
	e := &NotConvergedError{Reason: r, Message: msg}
	if r == ReasonCancelled {
		return res, fmt.Errorf("%w: %w", e, d.ctxErr)
	}
	return res, e
}

// stopReason returns the reason evaluate gave for stopping.
func (d *driver) stopReason() (Reason, string) { return d.reason, d.msg }

// projectStart projects x onto the bounds as the Fortran routine active does.
func projectStart(x, l, u []float64, nbd []int) {
	for i := range x {
		if nbd[i] > 0 {
			if nbd[i] <= nbdBoth && x[i] <= l[i] {
				if x[i] < l[i] {
					x[i] = l[i]
				}
			} else if nbd[i] >= nbdBoth && x[i] >= u[i] {
				if x[i] > u[i] {
					x[i] = u[i]
				}
			}
		}
	}
}
