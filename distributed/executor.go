package distributed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// Executor is the psdlearn.Executor of an MPI job: every rank runs the same
// pipeline (psdlearn.Run) on the same data, with the same options, and the
// Executor spreads over the ranks the parts of it that cost:
//
//   - FrobMetric's solves and single-pass BoostMetric's (stage-wise or
//     totally corrective) run sharded (FrobMetric and BoostMetric in this
//     package): rank p takes a contiguous block of the training rows, chosen
//     so that the triplets anchored at the blocks are balanced, and the
//     rows its triplets reach in other blocks as its halo;
//   - LMNN's solves run with each rank evaluating, and searching the
//     impostors of, the points of its block of rows (lmnn.Splitter), the
//     sums reduced in rank order;
//   - every other solve (PSDBoost, ITML, multi-pass BoostMetric) runs on
//     rank 0 alone, which broadcasts its solution;
//   - a k-NN score splits every query set into contiguous blocks, one per
//     rank, searched against all the reference rows; one AllreduceSum adds
//     the misclassified counts;
//   - as psdlearn.ClusterOptions.Dist, SimpleNPKL's kernels are learned with
//     the Laplacian's rows split over the ranks (SimpleNPKL) and their
//     factors gathered on every rank.
//
// Everything else (preprocessing, triplets, the choice of C) is computed by
// every rank from the same inputs in the same order, so every rank takes
// the same branches and ends with the same Result. The solves agree with
// one process's to rounding (FrobMetric's within its duality-gap
// certificate), the k-NN errors exactly.
//
// Cancellation is collective. The context NewExecutor returns is the one
// every rank's Run must use: it is cancelled on every rank at the same step
// of the run, at the first collective step (a solve's reduction, a k-NN
// score, rank 0's broadcast) after the context given to NewExecutor is done
// on some rank. Run then returns the best model so far on every rank.
//
// Every call is collective: an Executor serves one Run (or Cluster) at a
// time, which every rank of its communicator runs alongside.
type Executor struct {
	comm   mpi.Comm
	user   context.Context
	cancel context.CancelCauseFunc
}

// NewExecutor returns the Executor of comm and the context of the run (see
// Executor); ctx is this rank's own (a signal, a deadline).
func NewExecutor(ctx context.Context, comm mpi.Comm) (*Executor, context.Context, error) {
	if comm == nil {
		return nil, nil, fmt.Errorf("%w: nil communicator", ErrInvalid)
	}
	run, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	return &Executor{comm: comm, user: ctx, cancel: cancel}, run, nil
}

// stop cancels the run context on this rank, with err as its cause.
func (e *Executor) stop(err error) {
	if err == nil {
		err = context.Canceled
	}
	e.cancel(err)
}

// cancelled reports whether err is a collective cancellation: this rank's
// context done, or another rank's (ErrRemote with context.Canceled).
func (e *Executor) cancelled(err error) bool {
	if err == nil {
		return false
	}
	if e.user.Err() != nil && errors.Is(err, e.user.Err()) {
		return true
	}
	return errors.Is(err, ErrRemote) && errors.Is(err, context.Canceled)
}

// NewSolver returns l's solver on p: sharded for FrobMetric, LMNN and
// single-pass BoostMetric, on rank 0 for the others.
func (e *Executor) NewSolver(l psdlearn.Learner, p *psdlearn.Problem) (psdlearn.Solver, error) {
	if sharded(l) {
		q := *p
		q.Dist = kernels{e}
		return l.NewSolver(&q)
	}
	s, err := l.NewSolver(p)
	if err != nil {
		return nil, err
	}
	return &rootSolver{e: e, s: s, d: cols(p.X)}, nil
}

// sharded reports whether l's solves run sharded.
func sharded(l psdlearn.Learner) bool {
	switch a := l.(type) {
	case psdlearn.FrobMetric, *psdlearn.FrobMetric, psdlearn.LMNN, *psdlearn.LMNN:
		return true
	case psdlearn.BoostMetric:
		return a.Passes <= 1
	case *psdlearn.BoostMetric:
		return a.Passes <= 1
	}
	return false
}

// cols returns the number of columns of x (0 for nil).
func cols(x *mat.Dense) int {
	if x == nil {
		return 0
	}
	_, d := x.Dims()
	return d
}

// KNNErrors returns eval.FactorKNNErrors of the query sets, each rank
// scoring its block of every set.
func (e *Executor) KNNErrors(b engine.Backend, l, refX *mat.Dense, refY []int, k int, sets ...eval.Queries) ([]float64, error) {
	p, r := e.comm.Size(), e.comm.Rank()
	mine := make([]eval.Queries, len(sets))
	sizes := make([]int, len(sets))
	for s, q := range sets {
		if q.X == nil {
			return nil, fmt.Errorf("%w: query set %d: nil data", ErrInvalid, s)
		}
		n, d := q.X.Dims()
		if n != len(q.Y) {
			return nil, fmt.Errorf("%w: query set %d: %d points, %d labels", ErrInvalid, s, n, len(q.Y))
		}
		lo, hi := n*r/p, n*(r+1)/p
		sizes[s] = hi - lo
		mine[s] = eval.Queries{X: q.X.Slice(lo, hi, 0, d).(*mat.Dense), Y: q.Y[lo:hi]}
	}
	rates, lerr := eval.FactorKNNErrors(b, l, refX, refY, k, mine...)
	// [misclassified per set…, failed, cancelled]
	buf := make([]float64, len(sets)+2)
	if lerr == nil {
		for s, rate := range rates {
			buf[s] = math.Round(rate * float64(sizes[s]))
		}
	} else {
		buf[len(sets)] = 1
	}
	if e.user.Err() != nil {
		buf[len(sets)+1] = 1
	}
	if err := e.comm.AllreduceSum(buf); err != nil {
		return nil, fmt.Errorf("distributed: %w", err)
	}
	switch {
	case lerr != nil:
		return nil, lerr
	case buf[len(sets)] > 0:
		return nil, fmt.Errorf("%w: another rank's k-NN search failed", ErrRemote)
	case buf[len(sets)+1] > 0:
		err := e.user.Err()
		if err == nil {
			err = fmt.Errorf("%w: %w", ErrRemote, context.Canceled)
		}
		e.stop(err)
		return nil, fmt.Errorf("distributed: k-NN scores: %w", err)
	}
	out := make([]float64, len(sets))
	for s, q := range sets {
		if n := len(q.Y); n > 0 {
			out[s] = buf[s] / float64(n)
		}
	}
	return out, nil
}

// agree is a collective check of the ranks' own contexts: if any is done,
// every rank cancels the run context and returns an error.
func (e *Executor) agree() error {
	flag := 0.0
	if e.user.Err() != nil {
		flag = 1
	}
	v, err := e.comm.AllreduceMaxScalar(flag)
	if err != nil {
		return fmt.Errorf("distributed: %w", err)
	}
	if v == 0 {
		return nil
	}
	cause := e.user.Err()
	if cause == nil {
		cause = fmt.Errorf("%w: %w", ErrRemote, context.Canceled)
	}
	e.stop(cause)
	return fmt.Errorf("distributed: %w", cause)
}

// SimpleNPKL returns npkl.Learn's kernel of lap and pairs, learned by
// SimpleNPKL in this package with the Laplacian's rows split into one
// contiguous block per rank (PARPACK on the native world), and its factor
// gathered on every rank (psdlearn.KernelDistributor). The ranks first
// agree on their contexts: a cancellation is seen before a kernel, not
// during one. ctx must be the run context.
func (e *Executor) SimpleNPKL(ctx context.Context, lap *sparse.CSR, pairs *constraints.Pairs, opt npkl.Options) (*npkl.Result, error) {
	if err := e.agree(); err != nil {
		return nil, err
	}
	if lap == nil {
		return nil, fmt.Errorf("%w: nil Laplacian", ErrInvalid)
	}
	t0 := time.Now()
	n, p, r := lap.Rows, e.comm.Size(), e.comm.Rank()
	counts := make([]int, p)
	for q := range counts {
		counts[q] = n*(q+1)/p - n*q/p
	}
	res, err := SimpleNPKL(ctx, e.comm, RowBlock(lap, n*r/p, n*(r+1)/p), counts, pairs, opt, nil)
	if err != nil {
		return nil, err
	}
	k, err := res.Kernel(e.comm, counts)
	if err != nil {
		return nil, err
	}
	return &npkl.Result{V: k.V, Lambda: k.Lambda, Spectrum: res.Spectrum, Covered: res.Covered, Alpha: res.Alpha,
		History: res.History, Iterations: res.Iterations, EigIterations: res.EigIterations, OpApplies: res.OpApplies,
		Eigensolver: npkl.Lanczos, Seconds: time.Since(t0).Seconds()}, nil
}

// RunChunks computes the chunks of a reduction over the ranks, chunk c on
// rank c mod P, and returns every part on every rank, in chunk order
// (psdlearn.ChunkExecutor, data.ChunkRunner): PCA's covariance is then
// summed in one process's order.
func (e *Executor) RunChunks(chunks int, part func(c int) []float64) ([][]float64, error) {
	p, r := e.comm.Size(), e.comm.Rank()
	owned := func(q int) int { return (chunks - q + p - 1) / p } // chunks q, q+p, …
	var lens, data []float64
	for c := r; c < chunks; c += p {
		v := part(c)
		lens = append(lens, float64(len(v)))
		data = append(data, v...)
	}
	counts := make([]int, p)
	for q := range counts {
		counts[q] = owned(q)
	}
	all := make([]float64, chunks)
	if err := e.comm.Allgatherv(lens, all, counts); err != nil {
		return nil, fmt.Errorf("distributed: %w", err)
	}
	// all holds the lengths rank by rank: rank q's chunks q, q+p, ….
	size := make([]int, chunks)
	sizes := make([]int, p)
	k := 0
	for q := 0; q < p; q++ {
		for c := q; c < chunks; c += p {
			size[c] = int(all[k])
			sizes[q] += size[c]
			k++
		}
	}
	total := 0
	for _, s := range sizes {
		total += s
	}
	buf := make([]float64, total)
	if err := e.comm.Allgatherv(data, buf, sizes); err != nil {
		return nil, fmt.Errorf("distributed: %w", err)
	}
	out := make([][]float64, chunks)
	off := 0
	for q := 0; q < p; q++ {
		for c := q; c < chunks; c += p {
			out[c] = buf[off : off+size[c] : off+size[c]]
			off += size[c]
		}
	}
	return out, nil
}

// Laplacian returns npkl.Laplacian(x, k, g, b) bit for bit, built across
// the ranks (Laplacian in this package: each rank's block of rows) and
// gathered on every rank (psdlearn.KernelDistributor); b is not used.
func (e *Executor) Laplacian(x *mat.Dense, k int, g sparse.GraphOptions, _ engine.Backend) (*sparse.CSR, error) {
	if x == nil {
		return nil, fmt.Errorf("%w: Laplacian: nil data", ErrInvalid)
	}
	n, d := x.Dims()
	p, r := e.comm.Size(), e.comm.Rank()
	lo, hi := n*r/p, n*(r+1)/p
	var xl *mat.Dense
	if hi > lo {
		xl = x.Slice(lo, hi, 0, d).(*mat.Dense)
	}
	lr, err := Laplacian(e.comm, xl, k, g)
	if err != nil {
		return nil, err
	}
	return gatherRows(e.comm, lr.L, lr.Counts, n)
}

// gatherRows gathers every rank's rows (counts[q] of them on rank q, in
// rank order) of an n-column CSR matrix on every rank.
func gatherRows(comm mpi.Comm, a *sparse.CSR, counts []int, n int) (*sparse.CSR, error) {
	p := comm.Size()
	rows := 0
	for _, c := range counts {
		rows += c
	}
	if a == nil {
		a = &sparse.CSR{Cols: n, Indptr: []int{0}}
	}
	first, last := a.Indptr[0], a.Indptr[a.Rows]
	// Row lengths, then the entries' columns and values.
	lens := make([]float64, a.Rows)
	for i := range lens {
		lens[i] = float64(a.Indptr[i+1] - a.Indptr[i])
	}
	all := make([]float64, rows)
	if err := comm.Allgatherv(lens, all, counts); err != nil {
		return nil, fmt.Errorf("distributed: %w", err)
	}
	out := &sparse.CSR{Rows: rows, Cols: n, Indptr: make([]int, rows+1)}
	for i, l := range all {
		out.Indptr[i+1] = out.Indptr[i] + int(l)
	}
	nnz := make([]int, p)
	row := 0
	for q, c := range counts {
		nnz[q] = out.Indptr[row+c] - out.Indptr[row]
		row += c
	}
	ind := make([]float64, last-first)
	for i, c := range a.Ind[first:last] {
		ind[i] = float64(c)
	}
	allInd := make([]float64, out.Indptr[rows])
	if err := comm.Allgatherv(ind, allInd, nnz); err != nil {
		return nil, fmt.Errorf("distributed: %w", err)
	}
	out.Data = make([]float64, out.Indptr[rows])
	if err := comm.Allgatherv(a.Data[first:last], out.Data, nnz); err != nil {
		return nil, fmt.Errorf("distributed: %w", err)
	}
	out.Ind = make([]int, len(allInd))
	for i, v := range allInd {
		out.Ind[i] = int(v)
	}
	return out, nil
}
