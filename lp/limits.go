package lp

import (
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/engine"
)

// MaxValue bounds the magnitude of every finite number in a Problem or a
// Column: objective coefficients, constraint coefficients and finite bounds
// must satisfy |v| ≤ MaxValue. CLP aborts the whole process (a failed C
// assertion, SIGABRT, which Go's recover cannot catch) on an objective
// coefficient of 1e25 or more, and it treats bounds of 1e27 and beyond as
// infinite; both implementations enforce the same range so that a problem
// behaves the same on either and never reaches CLP with a value it cannot
// take. Use ±Inf for an absent bound.
const MaxValue = engine.LPMaxValue

// checkValue reports whether v is finite with |v| ≤ MaxValue.
func checkValue(what string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > MaxValue {
		return fmt.Errorf("%w: %s is %g, want a finite number of magnitude at most %g (lp.MaxValue)", ErrInvalidArgument, what, v, MaxValue)
	}
	return nil
}

// checkBound reports whether a bound is ±Inf or within ±MaxValue.
func checkBound(what string, v float64) error {
	if math.IsInf(v, 0) {
		return nil
	}
	return checkValue(what, v)
}
