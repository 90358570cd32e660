// Package progress is the one shape of progress report of psdlearn's long
// runs. Every algorithm option that reports progress is a Func; each call
// receives an Event with the iteration, the objective, the duality gap (or
// the algorithm's certificate) when there is one, and a one-line Message. A
// command-line tool prints Event.String(); a service can read the fields.
package progress

import (
	"fmt"
	"math"
	"time"
)

// Event is one progress report.
type Event struct {
	// Algorithm names the reporting algorithm ("frobmetric", "boostmetric",
	// "psdboost", "sdp", "simplenpkl", "train", "bench", …).
	Algorithm string
	// Iteration is the iteration or evaluation count the event reports (0
	// when it reports no iteration).
	Iteration int
	// Objective is the objective value (NaN when not reported).
	Objective float64
	// Gap is the relative duality gap, or the algorithm's certificate such
	// as λmax − π for PSDBoost (NaN when not reported).
	Gap float64
	// Elapsed is the time since the reporter started (0 when unknown).
	Elapsed time.Duration
	// Message is the event as one line of text.
	Message string
}

// String returns the event's line.
func (e Event) String() string { return e.Message }

// Func receives progress events. Implementations must return quickly; they
// are called from the solver's goroutine.
type Func func(Event)

// Printf returns a printf-style reporter that sends f one Event per call,
// with the formatted Message, Algorithm set and no objective or gap. With f
// nil it returns nil, so that callers can skip formatting.
func Printf(f Func, algorithm string) func(format string, args ...any) {
	if f == nil {
		return nil
	}
	start := time.Now()
	return func(format string, args ...any) {
		f(Event{Algorithm: algorithm, Objective: math.NaN(), Gap: math.NaN(), Elapsed: time.Since(start), Message: fmt.Sprintf(format, args...)})
	}
}

// Prefix returns a Func that prepends prefix to every event's Message and
// passes it on to f; nil when f is nil.
func Prefix(f Func, prefix string) Func {
	if f == nil {
		return nil
	}
	return func(e Event) {
		e.Message = prefix + e.Message
		f(e)
	}
}

// Number formats v with the verb (e.g. "%.4g") when it is finite and
// returns absent otherwise, so that a progress line says in words what is
// not available instead of printing NaN or ±Inf.
func Number(verb string, v float64, absent string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return absent
	}
	return fmt.Sprintf(verb, v)
}
