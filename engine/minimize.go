package engine

import (
	"fmt"

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

// MinimizeSettings controls a bound-constrained minimisation (L-BFGS-B). The zero value selects the documented defaults.
type MinimizeSettings struct {
	M       int     // number of correction pairs; 0 selects 10
	Factr   float64 // stop when (f_k − f_{k+1})/max(|f_k|,|f_{k+1}|,1) ≤ Factr·ε; 0 selects 1e7; negative disables
	Pgtol   float64 // stop when max_i |proj g_i| ≤ Pgtol; 0 selects 1e-5; negative disables
	MaxIter int     // iteration limit; 0 selects 15000
	MaxEval int     // function evaluation limit; 0 selects 15000
	// Callback, if non-nil, is called after every iteration; returning false stops the solve
	// with ReasonCallback.
	Callback func(MinimizeIteration) bool
}

// MinimizeIteration describes the state after one iteration, for progress reporting.
type MinimizeIteration struct {
	Iter, Evals  int
	F            float64
	ProjGradNorm float64   // infinity norm of the projected gradient
	X            []float64 // current iterate; valid only during the callback
}

// MinimizeReason says why a minimisation stopped.
type MinimizeReason int

const (
	ReasonNone      MinimizeReason = iota // no stop reason (zero value)
	ReasonFactr                           // converged: relative reduction of f ≤ Factr·ε
	ReasonPgtol                           // converged: projected gradient ≤ Pgtol
	ReasonMaxIter                         // iteration limit reached
	ReasonMaxEval                         // evaluation limit reached
	ReasonAbnormal                        // the line search could not find an acceptable point
	ReasonCancelled                       // the context was cancelled
	ReasonCallback                        // the callback asked to stop
	ReasonError                           // the solver reported an error (e.g. a non-finite objective)
)

var reasonNames = [...]string{"none", "converged (factr)", "converged (pgtol)", "iteration limit", "evaluation limit", "abnormal line search", "cancelled", "stopped by callback", "error"}

// String returns a short description of r.
func (r MinimizeReason) String() string {
	if r >= 0 && int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("MinimizeReason(%d)", int(r))
}

// Converged reports whether r is one of the convergence reasons.
func (r MinimizeReason) Converged() bool { return r == ReasonFactr || r == ReasonPgtol }

// MinimizeResult is the outcome of a minimisation. When the solve did not converge the Result
// still holds the best point found: the accepted iterate (or the starting
// point, projected onto the bounds) with the lowest objective. If the
// objective was never evaluated successfully, X is the projected starting
// point and F and ProjGradNorm are NaN (or F is the non-finite value).
type MinimizeResult struct {
	X            []float64
	F            float64
	ProjGradNorm float64 // infinity norm of the projected gradient at X
	Iterations   int
	Evaluations  int
	Reason       MinimizeReason
}

// MinimizeNotConvergedError is returned, with the best point, when a solve stopped for
// any reason other than convergence. On cancellation the returned error wraps
// both a *MinimizeNotConvergedError (Reason ReasonCancelled) and the context's error,
// so errors.Is(err, context.Canceled) and errors.As both work.
type MinimizeNotConvergedError struct {
	Reason  MinimizeReason
	Message string // the solver's task string or detail, if any
}

// Error implements the error interface.
func (e *MinimizeNotConvergedError) Error() string {
	if e.Message != "" {
		return fmt.Sprintf("lbfgsb: not converged: %s (%s)", e.Reason, e.Message)
	}
	return fmt.Sprintf("lbfgsb: not converged: %s", e.Reason)
}

// Is makes errors.Is(err, errs.ErrNotConverged) hold.
func (e *MinimizeNotConvergedError) Is(target error) bool { return target == errs.ErrNotConverged }
