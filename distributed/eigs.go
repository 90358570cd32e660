package distributed

import (
	"context"
	"fmt"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/parpack"
	"gonum.org/v1/gonum/mat"
)

// Eigs returns an engine.EigsSolver that solves every eigenproblem it is
// given with solver (nil: parpack.For(comm), PARPACK on the native world)
// over the ranks of comm, rank r owning rows counts[r] of the operator: an
// operator that implements engine.RowApplier has each rank compute only its
// rows of every product (the others are computed whole and cut, which
// distributes the Lanczos basis but not the product). The eigenvectors are
// gathered (one Allgatherv of n floats per pair) so that every rank gets
// the whole result, as a one-process solver returns it.
//
// It lets a solver written for one process run its sparse eigenproblems
// across an MPI job while everything else stays replicated: sdp.Options.Eigs
// takes it, so MVU's negative part is computed on PARPACK. Every rank must
// make the same calls with the same operators. It is collective.
func Eigs(comm mpi.Comm, counts []int, solver parpack.Solver) (engine.EigsSolver, error) {
	n, lo, err := rowLayout(comm, counts, 0)
	if err != nil {
		return nil, err
	}
	if solver == nil {
		solver = parpack.For(comm)
	}
	return &rowEigs{comm: comm, counts: append([]int(nil), counts...), n: n, lo: lo, solver: solver}, nil
}

// rowEigs is the solver Eigs returns.
type rowEigs struct {
	comm   mpi.Comm
	counts []int
	n, lo  int
	solver parpack.Solver
}

// Eigs implements engine.EigsSolver.
func (d *rowEigs) Eigs(ctx context.Context, op engine.Operator, k int, which engine.Which, opt engine.EigsOptions) (engine.EigsResult, error) {
	if op == nil || op.Dim() != d.n {
		return engine.EigsResult{}, fmt.Errorf("%w: an operator of dimension %d for rows summing to %d", ErrInvalid, dimOf(op), d.n)
	}
	loc := d.counts[d.comm.Rank()]
	var local func(y, x []float64)
	if ra, ok := op.(engine.RowApplier); ok {
		local = func(y, x []float64) { ra.ApplyRows(y, x, d.lo) }
	} else {
		full := make([]float64, d.n)
		local = func(y, x []float64) {
			op.Apply(full, x)
			copy(y, full[d.lo:d.lo+loc])
		}
	}
	r, err := d.solver.Eigs(ctx, d.comm, parpack.Gathered(d.comm, d.counts, local), d.counts, k, which, opt)
	res := engine.EigsResult{Values: r.Values, Iterations: r.Iterations, OpApplies: r.OpApplies}
	if len(r.Values) > 0 {
		// Gather the vectors whatever err says (a not-converged error
		// comes with the converged pairs), collectively on every rank.
		v := mat.NewDense(d.n, len(r.Values), nil)
		col, whole := make([]float64, loc), make([]float64, d.n)
		for j := range r.Values {
			if loc > 0 {
				mat.Col(col, j, r.Vectors)
			}
			if gerr := d.comm.Allgatherv(col, whole, d.counts); gerr != nil {
				return engine.EigsResult{}, fmt.Errorf("distributed: Eigs: gathering the eigenvectors: %w", gerr)
			}
			v.SetCol(j, whole)
		}
		res.Vectors = v
	}
	if err != nil {
		return res, fmt.Errorf("distributed: Eigs: %w", err)
	}
	return res, nil
}

func dimOf(op engine.Operator) int {
	if op == nil {
		return 0
	}
	return op.Dim()
}

// rowLayout checks every rank's row count (at least min each, one per
// rank) and returns the number of rows and this rank's first row.
func rowLayout(comm mpi.Comm, counts []int, min int) (n, lo int, err error) {
	if comm == nil {
		return 0, 0, fmt.Errorf("%w: nil communicator", ErrInvalid)
	}
	if len(counts) != comm.Size() {
		return 0, 0, fmt.Errorf("%w: %d counts for %d ranks", ErrInvalid, len(counts), comm.Size())
	}
	for r, c := range counts {
		if c < min {
			return 0, 0, fmt.Errorf("%w: rank %d owns %d rows", ErrInvalid, r, c)
		}
		if r == comm.Rank() {
			lo = n
		}
		n += c
	}
	return n, lo, nil
}
