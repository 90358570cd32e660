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
	"math"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/errs"
)

// The problem, settings and result types are the engine's (the algorithms
// use them through the engine without importing this package).
type (
	// Problem is a bound-constrained minimisation problem.
	Problem = engine.Problem
	// Settings controls a solve.
	Settings = engine.MinimizeSettings
	// Iteration describes the state after one iteration.
	Iteration = engine.MinimizeIteration
	// Reason says why a solve stopped.
	Reason = engine.MinimizeReason
	// Result is the outcome of a solve.
	Result = engine.MinimizeResult
	// NotConvergedError is returned, with the best point, when a solve
	// stopped for any reason other than convergence.
	NotConvergedError = engine.MinimizeNotConvergedError
)

// The stop reasons.
const (
	ReasonNone      = engine.ReasonNone
	ReasonFactr     = engine.ReasonFactr
	ReasonPgtol     = engine.ReasonPgtol
	ReasonMaxIter   = engine.ReasonMaxIter
	ReasonMaxEval   = engine.ReasonMaxEval
	ReasonAbnormal  = engine.ReasonAbnormal
	ReasonCancelled = engine.ReasonCancelled
	ReasonCallback  = engine.ReasonCallback
	ReasonError     = engine.ReasonError
)

// ErrInvalidArgument is wrapped by every error about the arguments of a solve.
var ErrInvalidArgument = errs.New("lbfgsb: invalid argument", errs.ErrInvalid)

// Solver minimises bound-constrained problems. Implementations are safe for concurrent use.
type Solver interface {
	Minimize(ctx context.Context, p Problem, x0 []float64, s Settings) (Result, error)
}

var _ = math.Inf
