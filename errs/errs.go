// Package errs holds the few error conditions every psdlearn package
// reports, so that a caller tests one condition with errors.Is whichever
// package produced the error:
//
//	if errors.Is(err, errs.ErrInvalid) { … }        // bad argument, data, file or option
//	if errors.Is(err, errs.ErrDimension) { … }      // mismatched sizes (also ErrInvalid)
//	if errors.Is(err, errs.ErrOption) { … }         // a bad option or parameter value (also ErrInvalid)
//	if errors.Is(err, errs.ErrNotConverged) { … }   // a solver stopped without its certificate
//	if errors.Is(err, errs.ErrResource) { … }       // a memory or input budget refused the run
//	if errors.Is(err, context.Canceled) { … }       // cancelled: errors wrap the context's error
//
// Every package keeps its own sentinels (boost.ErrInvalid, lapack.ErrNotFinite,
// …) with their own messages; each matches the condition it belongs to.
// Errors that carry a solver's best point (lbfgsb.NotConvergedError,
// arpack.NotConvergedError) match ErrNotConverged and are recovered with
// errors.As.
//
// The package imports only the standard library, so every package, the
// bindings included, can use it.
package errs

import "errors"

// The conditions.
var (
	// ErrInvalid is an invalid argument, data set, file or option.
	ErrInvalid = errors.New("invalid input")
	// ErrDimension is a mismatch of sizes; it is also an ErrInvalid.
	ErrDimension = New("dimension mismatch", ErrInvalid)
	// ErrOption is an option or parameter value that cannot be right —
	// a regularisation weight out of its range, a split that cannot be
	// made of the data — rather than bad data; it is also an ErrInvalid.
	// A command line reports it as a usage error.
	ErrOption = New("invalid option", ErrInvalid)
	// ErrNotConverged is a solver that stopped without its certificate.
	ErrNotConverged = errors.New("not converged")
	// ErrResource is a run refused by a memory or input budget.
	ErrResource = errors.New("resource limit exceeded")
)

// New returns a sentinel error with the message msg that matches each of
// kinds (and whatever they match) under errors.Is.
func New(msg string, kinds ...error) error {
	return &sentinel{msg: msg, kinds: kinds}
}

type sentinel struct {
	msg   string
	kinds []error
}

func (s *sentinel) Error() string { return s.msg }

// Is reports whether target is one of the sentinel's conditions.
func (s *sentinel) Is(target error) bool {
	for _, k := range s.kinds {
		if errors.Is(k, target) {
			return true
		}
	}
	return false
}

// Option returns err marked as an invalid option: the result has err's
// message and matches whatever err matches, and ErrOption (so ErrInvalid)
// too. Option(nil) is nil.
func Option(err error) error {
	if err == nil {
		return nil
	}
	return &optionError{err}
}

type optionError struct{ err error }

func (e *optionError) Error() string   { return e.err.Error() }
func (e *optionError) Unwrap() []error { return []error{e.err, ErrOption} }
