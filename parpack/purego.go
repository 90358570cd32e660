package parpack

import (
	"context"
	"errors"
	"slices"

	"github.com/psdlearn/psdlearn/arpack"
	"github.com/psdlearn/psdlearn/mpi"
	"gonum.org/v1/gonum/mat"
)

// Go is the pure-Go solver: arpack.Go's thick-restart Lanczos, replicated
// on every rank, with the operator distributed. At every step each rank
// applies its rows of A to the (replicated) Lanczos vector, the ranks agree
// on whether to go on (one AllreduceMax of 3 flags) and gather A·x (one
// Allgatherv of n floats); everything else is local and identical on every
// rank, so the eigenpairs are bit-for-bit those of a one-process arpack.Go
// solve of the same operator, whatever the number of ranks (given an
// operator whose rows do not depend on the number of ranks). A Gathered
// operator gets the replicated vector directly (no gather of x).
//
// Why replicated rather than a Lanczos whose dot products are reduced
// over ranks: it reuses the tested solver unchanged, its result is
// independent of the number of ranks (sums over ranks would round
// differently for every P), and its cost is one gather per step; the price
// is n·(NCV+1) floats per rank for the basis, small next to the operator
// for the problem sizes psdlearn handles (n = 20,000, NCV = 20: 3.4 MB).
// Native distributes the basis too.
var Go Solver = goSolver{}

type goSolver struct{}

func (goSolver) Eigs(ctx context.Context, comm mpi.Comm, op Operator, counts []int, k int, which Which, opt Options) (Result, error) {
	p, err := setup(comm, op, counts, k, which, opt)
	if err != nil {
		return Result{}, err
	}
	// Collective check before the first step: no rank starts alone.
	if err := agree(ctx, comm, nil, nil, p.lo); err != nil {
		return Result{}, err
	}
	// The inner solve's context is cancelled only collectively (by Apply
	// below), never by this rank's ctx alone: arpack.Go checks its ctx
	// before every application, and the ranks must stop at the same one.
	inner, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &replicated{problem: p, ctx: ctx, cancel: cancel, yloc: make([]float64, p.loc)}
	if g, ok := op.(*gathered); ok && slices.Equal(g.counts, counts) {
		r.full = g.apply // the same layout: give it the replicated x
	}
	res, err := arpack.Go.Eigs(inner, r, k, which, Options{NCV: p.ncv, Tol: p.tol, MaxIter: p.maxIter, Start: p.start})
	if r.err != nil {
		return Result{}, r.err
	}
	out := Result{Values: res.Values, Iterations: res.Iterations, OpApplies: r.applies}
	if len(res.Values) > 0 {
		out.Vectors = mat.DenseCopyOf(res.Vectors.Slice(p.lo, p.lo+p.loc, 0, len(res.Values)))
	}
	var ae *arpack.Error
	if errors.As(err, &ae) {
		return out, &Error{Routine: ae.Routine, Info: ae.Info}
	}
	return out, err
}

// replicated is the arpack.Operator each rank gives arpack.Go.
type replicated struct {
	*problem
	ctx     context.Context
	cancel  context.CancelFunc
	full    func(y, xFull []float64) // a Gathered operator's function, or nil
	yloc    []float64
	err     error // why the ranks stopped
	applies int
}

func (r *replicated) Dim() int { return r.n }

func (r *replicated) Apply(y, x []float64) {
	if r.err != nil {
		clear(y)
		return
	}
	r.applies++
	var opErr error
	if r.full != nil {
		r.full(r.yloc, x)
	} else {
		opErr = r.op.Apply(r.yloc, x[r.lo:r.lo+r.loc])
	}
	err := agree(r.ctx, r.comm, opErr, r.yloc, r.lo)
	if err == nil {
		err = r.comm.Allgatherv(r.yloc, y, r.counts)
	}
	if err != nil {
		r.err = err
		r.cancel()
		clear(y)
	}
}
