// Package lbfgsb minimises a smooth function subject to simple bounds with the
// limited-memory BFGS-B method (Byrd, Lu, Nocedal, Zhu 1995; version 3.0 of
// Morales and Nocedal 2011).
//
// Two implementations share one API: Native drives the Fortran setulb_ of
// Debian's liblbfgsb through cgo, running its reverse-communication loop in
// Go (present only in cgo builds without the purego tag), and Go is a pure-Go
// port of the same algorithm (generalised Cauchy point, subspace minimisation,
// Moré–Thuente line search) that is always compiled. All solver state lives in
// per-call work arrays, so concurrent solves are safe.
//
// Both run the same driver: the objective is evaluated on a copy of the
// iterate, a non-finite value or gradient stops the solve with ReasonError
// (it never reaches the solver), the evaluation limit is never exceeded, the
// context is checked before every evaluation, and limits or a callback that
// stop at an iterate take effect at the next evaluation, so a convergence
// test passed at that iterate still wins. The two implementations take
// nearly the same path: on the test problems their iteration counts are
// equal and final objectives agree to about 1e-12 relative.
//
// Bounds of ±Inf mean no bound (nbd codes 0, 1, 3 of the Fortran code), not
// a box with an infinite side. The Fortran library never writes to stdout
// or files: iprint is −1 and the binding swallows the one message Debian's
// build prints regardless ("ascent direction in projection").
package lbfgsb

import (
	"context"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/errs"
)

// Problem is a bound-constrained minimisation problem.
type Problem struct {
	// Func evaluates the objective at x and writes its gradient into grad
	// (len(grad) == len(x)). It must not retain x or grad.
	Func func(x, grad []float64) float64
	// Lower and Upper are the bounds; nil means unbounded on that side.
	// Entries may be -Inf / +Inf for no bound on that variable.
	Lower, Upper []float64
}

// Settings controls a solve. The zero value selects the documented defaults.
type Settings struct {
	M       int     // number of correction pairs; 0 selects 10
	Factr   float64 // stop when (f_k − f_{k+1})/max(|f_k|,|f_{k+1}|,1) ≤ Factr·ε; 0 selects 1e7; negative disables
	Pgtol   float64 // stop when max_i |proj g_i| ≤ Pgtol; 0 selects 1e-5; negative disables
	MaxIter int     // iteration limit; 0 selects 15000
	MaxEval int     // function evaluation limit; 0 selects 15000
	// Callback, if non-nil, is called after every iteration; returning false stops the solve
	// with ReasonCallback.
	Callback func(Iteration) bool
}

// Iteration describes the state after one iteration, for progress reporting.
type Iteration struct {
	Iter, Evals  int
	F            float64
	ProjGradNorm float64   // infinity norm of the projected gradient
	X            []float64 // current iterate; valid only during the callback
}

// Reason says why a solve stopped.
type Reason int

const (
	ReasonNone      Reason = iota // no stop reason (zero value)
	ReasonFactr                   // converged: relative reduction of f ≤ Factr·ε
	ReasonPgtol                   // converged: projected gradient ≤ Pgtol
	ReasonMaxIter                 // iteration limit reached
	ReasonMaxEval                 // evaluation limit reached
	ReasonAbnormal                // the line search could not find an acceptable point
	ReasonCancelled               // the context was cancelled
	ReasonCallback                // the callback asked to stop
	ReasonError                   // the solver reported an error (e.g. a non-finite objective)
)

var reasonNames = [...]string{"none", "converged (factr)", "converged (pgtol)", "iteration limit", "evaluation limit", "abnormal line search", "cancelled", "stopped by callback", "error"}

// String returns a short description of r.
func (r Reason) String() string {
	if r >= 0 && int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("Reason(%d)", int(r))
}

// Converged reports whether r is one of the convergence reasons.
func (r Reason) Converged() bool { return r == ReasonFactr || r == ReasonPgtol }

// Result is the outcome of a solve. When the solve did not converge the Result
// still holds the best point found: the accepted iterate (or the starting
// point, projected onto the bounds) with the lowest objective. If the
// objective was never evaluated successfully, X is the projected starting
// point and F and ProjGradNorm are NaN (or F is the non-finite value).
type Result struct {
	X            []float64
	F            float64
	ProjGradNorm float64 // infinity norm of the projected gradient at X
	Iterations   int
	Evaluations  int
	Reason       Reason
}

// ErrInvalidArgument is wrapped by every error about the arguments of a solve.
var ErrInvalidArgument = errs.New("lbfgsb: invalid argument", errs.ErrInvalid)

// NotConvergedError is returned, with the best point, when a solve stopped for
// any reason other than convergence. On cancellation the returned error wraps
// both a *NotConvergedError (Reason ReasonCancelled) and the context's error,
// so errors.Is(err, context.Canceled) and errors.As both work.
type NotConvergedError struct {
	Reason  Reason
	Message string // the solver's task string or detail, if any
}

// Error implements the error interface.
func (e *NotConvergedError) Error() string {
	if e.Message != "" {
		return fmt.Sprintf("lbfgsb: not converged: %s (%s)", e.Reason, e.Message)
	}
	return fmt.Sprintf("lbfgsb: not converged: %s", e.Reason)
}

// Is makes errors.Is(err, errs.ErrNotConverged) hold.
func (e *NotConvergedError) Is(target error) bool { return target == errs.ErrNotConverged }

// Solver minimises bound-constrained problems. Implementations are safe for concurrent use.
type Solver interface {
	Minimize(ctx context.Context, p Problem, x0 []float64, s Settings) (Result, error)
}

var _ = math.Inf
