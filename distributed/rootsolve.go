package distributed

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/errs"
	"gonum.org/v1/gonum/mat"
)

// rootSolver runs a solver that is not sharded on rank 0, which broadcasts
// the solution (and how the solve ended) to the other ranks.
type rootSolver struct {
	e *Executor
	s psdlearn.Solver
	d int // the metric's dimension
}

// rootOutcome is what rank 0 broadcasts after a solve.
type rootOutcome struct {
	Sol *rootSolution // nil: no solution
	// Err is the solve's error message ("" for none), Kind its class.
	Err  string
	Kind int
}

// rootSolution is psdlearn.Solution with its matrix as the packed upper
// triangle.
type rootSolution struct {
	Upper                         []float64 // nil: no matrix
	Iterations, SingleIterations  int
	Objective, DualityGap, GapTol float64
	Converged                     bool
	Reason, Summary               string
	Curve                         []float64
	Warnings                      []string
}

// The classes of a solve's error, so that every rank's pipeline takes the
// branch rank 0's takes.
const (
	kindNone = iota
	kindNotConverged
	kindCancelled
	kindInvalid
	kindOther
)

// Solve runs the solve on rank 0 with this rank's context and broadcasts
// its outcome; a cancellation on rank 0 cancels the run on every rank.
func (rs *rootSolver) Solve(ctx context.Context, c float64) (*psdlearn.Solution, error) {
	e := rs.e
	var (
		sol *psdlearn.Solution
		err error
		msg []byte
	)
	if e.comm.Rank() == 0 {
		sctx, stop := mergeDone(ctx, e.user)
		sol, err = rs.s.Solve(sctx, c)
		stop()
		msg = encodeOutcome(sol, err, e.user.Err() != nil || ctx.Err() != nil)
	}
	size := []float64{float64(len(msg))}
	if err := e.comm.Bcast(size, 0); err != nil {
		return nil, fmt.Errorf("distributed: %w", err)
	}
	if e.comm.Rank() != 0 {
		msg = make([]byte, int(size[0]))
	}
	if err := e.comm.BcastBytes(msg, 0); err != nil {
		return nil, fmt.Errorf("distributed: %w", err)
	}
	out, derr := decodeOutcome(msg, rs.d)
	if derr != nil {
		return nil, derr
	}
	if out.Kind == kindCancelled {
		cause := e.user.Err()
		if cause == nil {
			cause = fmt.Errorf("%w: %w", ErrRemote, context.Canceled)
		}
		e.stop(cause)
	}
	if e.comm.Rank() == 0 {
		return sol, err
	}
	return out.solution(), out.err()
}

// encodeOutcome encodes a solve's outcome (an error of class kindOther if
// it cannot).
func encodeOutcome(sol *psdlearn.Solution, err error, cancelled bool) []byte {
	var out rootOutcome
	if sol != nil {
		rsol := &rootSolution{Iterations: sol.Iterations, SingleIterations: sol.SingleIterations, Objective: sol.Objective,
			DualityGap: sol.DualityGap, GapTol: sol.GapTol, Converged: sol.Converged, Reason: sol.Reason, Summary: sol.Summary,
			Curve: sol.Curve, Warnings: sol.Warnings}
		if sol.M != nil {
			n := sol.M.SymmetricDim()
			for i := 0; i < n; i++ {
				for j := i; j < n; j++ {
					rsol.Upper = append(rsol.Upper, sol.M.At(i, j))
				}
			}
		}
		out.Sol = rsol
	}
	if err != nil {
		out.Err = err.Error()
		switch {
		case cancelled:
			out.Kind = kindCancelled
		case errors.Is(err, errs.ErrNotConverged):
			out.Kind = kindNotConverged
		case errors.Is(err, errs.ErrInvalid):
			out.Kind = kindInvalid
		default:
			out.Kind = kindOther
		}
	}
	var buf bytes.Buffer
	if eerr := gob.NewEncoder(&buf).Encode(&out); eerr != nil {
		buf.Reset()
		out = rootOutcome{Err: "encoding the solution: " + eerr.Error(), Kind: kindOther}
		_ = gob.NewEncoder(&buf).Encode(&out) // two strings and an int
	}
	return buf.Bytes()
}

// decodeOutcome decodes rank 0's outcome of a solve with a d×d metric.
func decodeOutcome(msg []byte, d int) (*rootOutcome, error) {
	var out rootOutcome
	if err := gob.NewDecoder(bytes.NewReader(msg)).Decode(&out); err != nil {
		return nil, fmt.Errorf("distributed: decoding rank 0's solution: %w", err)
	}
	if out.Sol != nil && out.Sol.Upper != nil && len(out.Sol.Upper) != d*(d+1)/2 {
		return nil, fmt.Errorf("distributed: rank 0's solution has %d entries for a %d×%d metric", len(out.Sol.Upper), d, d)
	}
	return &out, nil
}

// solution returns the broadcast solution (nil if none).
func (o *rootOutcome) solution() *psdlearn.Solution {
	if o.Sol == nil {
		return nil
	}
	r := o.Sol
	sol := psdlearn.Solution{Iterations: r.Iterations, SingleIterations: r.SingleIterations, Objective: r.Objective,
		DualityGap: r.DualityGap, GapTol: r.GapTol, Converged: r.Converged, Reason: r.Reason, Summary: r.Summary,
		Curve: r.Curve, Warnings: r.Warnings}
	if u := r.Upper; u != nil {
		n := 0
		for n*(n+1)/2 < len(u) {
			n++
		}
		sol.M = mat.NewSymDense(n, nil)
		k := 0
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				sol.M.SetSym(i, j, u[k])
				k++
			}
		}
	}
	return &sol
}

// err returns an error of the class of rank 0's.
func (o *rootOutcome) err() error {
	switch o.Kind {
	case kindNone:
		return nil
	case kindNotConverged:
		return fmt.Errorf("%w: rank 0: %s", errs.ErrNotConverged, o.Err)
	case kindCancelled:
		return fmt.Errorf("%w: %w: rank 0: %s", ErrRemote, context.Canceled, o.Err)
	case kindInvalid:
		return fmt.Errorf("%w: rank 0: %s", errs.ErrInvalid, o.Err)
	}
	return fmt.Errorf("%w: rank 0: %s", ErrRemote, o.Err)
}

// mergeDone returns a context done when a or b is.
func mergeDone(a, b context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(a)
	stop := context.AfterFunc(b, func() { cancel(context.Cause(b)) })
	return ctx, func() { stop(); cancel(nil) }
}
