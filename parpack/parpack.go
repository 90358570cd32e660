// Package parpack computes a few eigenpairs of a large symmetric operator
// whose vectors are distributed by rows over the ranks of an MPI job.
//
// Rank r owns the contiguous block of rows [lo_r, lo_r + counts[r]) of every
// vector, where lo_r is the sum of counts[:r]; the operator is applied by
// the caller to local blocks (Operator.Apply(y, x): this rank's rows of A·x
// from this rank's rows of x), and may communicate through the Comm to get
// the entries of x it needs (Gathered does this with one Allgatherv).
// Results are the same on every rank except the eigenvectors, of which each
// rank gets its own rows.
//
// Two implementations share the API, as in package arpack:
//
//   - Native drives arpack-ng's PARPACK (pdsaupd_c/pdseupd_c: implicitly
//     restarted Lanczos, mode 1, exact shifts) through cgo. It needs MPI, so
//     it is compiled only in cgo builds with the mpi tag and without purego,
//     and only accepts the native world communicator (mpi.IsNative). The
//     Lanczos basis is distributed: each rank holds counts[r]·NCV entries.
//   - Go, always compiled, runs arpack.Go's thick-restart Lanczos on every
//     rank, replicated: the full vectors live on every rank, and only the
//     operator is distributed (each rank applies its rows, then one
//     Allgatherv of A·x). Every rank computes bit-for-bit the same basis, so
//     the result does not depend on the number of ranks. It works on any
//     Comm (the pure-Go single process, the test fakes of mpitest.RunFake,
//     the native world) and costs n·(NCV+1) floats per rank.
//
// For selects Native for the native world communicator and Go otherwise.
//
// Every call is collective: all ranks pass the same counts, k, which and
// options. Arguments are checked before any communication (errors wrap
// ErrInvalidArgument; with equal arguments every rank fails alike).
// Cancellation is collective too: between two operator applications the
// ranks reduce a flag saying whether any rank's ctx is done (or any rank's
// operator failed or produced NaN/Inf), so all ranks stop at the same step
// and return an error.
//
// PARPACK, like ARPACK, keeps Fortran SAVE state: Native holds a
// process-wide lock, shared with package arpack's native solver, for the
// whole solve. Operator.Apply must therefore not call arpack.Native or
// parpack.Native.
package parpack

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/psdlearn/psdlearn/arpack"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/mpi"
	"gonum.org/v1/gonum/mat"
)

// Operator is a symmetric linear operator A whose vectors are distributed
// by rows (see the package documentation).
type Operator interface {
	// Apply sets y to this rank's rows of A·x, given this rank's rows of x
	// (len(y) = len(x) = counts[rank]). It is collective: every rank calls
	// it at the same step of the solve, so it may communicate. x must not
	// be modified or retained. An error stops the solve on every rank.
	Apply(y, x []float64) error
}

// OperatorFunc adapts a function to Operator.
type OperatorFunc func(y, x []float64) error

// Apply calls f(y, x).
func (f OperatorFunc) Apply(y, x []float64) error { return f(y, x) }

// Gathered returns an operator that gathers the whole of x on every rank
// (one Allgatherv of n floats) and calls apply(y, xFull): apply sets y to
// this rank's rows of A·xFull. It suits operators whose rows need entries
// of x from anywhere (a sparse graph Laplacian); the Go solver passes its
// already replicated vectors directly and skips the gather.
func Gathered(comm mpi.Comm, counts []int, apply func(y, xFull []float64)) Operator {
	n := 0
	for _, c := range counts {
		n += c
	}
	return &gathered{comm: comm, counts: counts, apply: apply, full: make([]float64, n)}
}

type gathered struct {
	comm   mpi.Comm
	counts []int
	apply  func(y, xFull []float64)
	full   []float64
}

func (g *gathered) Apply(y, x []float64) error {
	if err := g.comm.Allgatherv(x, g.full, g.counts); err != nil {
		return err
	}
	g.apply(y, g.full)
	return nil
}

// Options, errors and the parts of the spectrum are package arpack's.
type (
	// Options configures a solve (NCV, Tol, MaxIter, Seed as in package
	// arpack). Start, if set, is the whole start vector of length n, the
	// same on every rank; otherwise the start vector is arpack's for Seed,
	// so both solvers start where a one-process arpack solve would.
	Options = arpack.Options
	// Which selects the part of the spectrum to compute.
	Which = arpack.Which
	// NotConvergedError reports that fewer than the requested eigenpairs
	// converged (the converged ones are returned with it).
	NotConvergedError = arpack.NotConvergedError
	// Error is a failure code of pdsaupd/pdseupd (Routine "pdsaupd",
	// "pdseupd"), or of the Go solver's Lanczos ("lanczos", "dsyev").
	Error = arpack.Error
)

// The parts of the spectrum.
const (
	LargestAlgebraic  = arpack.LargestAlgebraic
	SmallestAlgebraic = arpack.SmallestAlgebraic
	LargestMagnitude  = arpack.LargestMagnitude
	SmallestMagnitude = arpack.SmallestMagnitude
	BothEnds          = arpack.BothEnds
)

// Result holds the computed eigenpairs, sorted by ascending eigenvalue.
type Result struct {
	Values []float64 // converged eigenvalues, ascending; the same on every rank
	// Vectors holds this rank's rows of the orthonormal eigenvectors:
	// counts[rank]×len(Values), column j belonging to Values[j]; nil if
	// Values is empty.
	Vectors    *mat.Dense
	Iterations int // restarts
	OpApplies  int // operator applications (collective steps)
}

// Solver computes k eigenpairs of a row-distributed symmetric operator.
type Solver interface {
	// Eigs returns k eigenpairs of op, of dimension n = sum(counts), from
	// the part of the spectrum selected by which; 0 < k < n. It is
	// collective over comm. On non-convergence it returns the converged
	// pairs with a *NotConvergedError; when a rank's ctx is done it
	// returns no pairs and, on every rank, an error (wrapping ctx.Err() on
	// the ranks whose ctx is done, ErrStopped on the others).
	Eigs(ctx context.Context, comm mpi.Comm, op Operator, counts []int, k int, which Which, opt Options) (Result, error)
}

// For returns Native when comm is the native world communicator (and
// Native is compiled in), Go otherwise.
func For(comm mpi.Comm) Solver {
	if HaveNative && mpi.IsNative(comm) {
		return Native
	}
	return Go
}

// Errors.
var (
	// ErrInvalidArgument is wrapped by every argument error.
	ErrInvalidArgument = errs.New("parpack: invalid argument", errs.ErrInvalid)
	// ErrNotFinite is wrapped when the operator produces NaN or ±Inf on some rank.
	ErrNotFinite = errs.New("parpack: operator produced NaN or Inf", errs.ErrInvalid)
	// ErrStopped is wrapped by the error of the ranks that stopped because
	// another rank's ctx was done or another rank's operator failed.
	ErrStopped = fmt.Errorf("parpack: stopped by another rank")
)

// problem holds validated arguments.
type problem struct {
	comm       mpi.Comm
	op         Operator
	counts     []int
	n, lo, loc int // dimension, first local row, local rows
	k          int
	which      Which
	ncv        int
	tol        float64
	maxIter    int
	start      []float64 // whole start vector, length n
	seed       uint64
}

func setup(comm mpi.Comm, op Operator, counts []int, k int, which Which, opt Options) (*problem, error) {
	if comm == nil {
		return nil, fmt.Errorf("%w: nil communicator", ErrInvalidArgument)
	}
	if op == nil {
		return nil, fmt.Errorf("%w: nil operator", ErrInvalidArgument)
	}
	p := comm.Size()
	if len(counts) != p {
		return nil, fmt.Errorf("%w: %d counts for %d ranks", ErrInvalidArgument, len(counts), p)
	}
	n, lo := 0, 0
	for r, c := range counts {
		if c <= 0 {
			return nil, fmt.Errorf("%w: rank %d owns %d rows (every rank needs at least one)", ErrInvalidArgument, r, c)
		}
		if r == comm.Rank() {
			lo = n
		}
		n += c
		if n > math.MaxInt32 {
			return nil, fmt.Errorf("%w: dimension above %d", ErrInvalidArgument, math.MaxInt32)
		}
	}
	r, err := arpack.Resolve(n, k, which, opt) // the same checks and defaults as arpack.Eigs
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalidArgument, strings.TrimPrefix(err.Error(), arpack.ErrInvalidArgument.Error()+": "))
	}
	ncv, tol, maxIter, start := r.NCV, r.Tol, r.MaxIter, r.Start
	return &problem{comm: comm, op: op, counts: counts, n: n, lo: lo, loc: counts[comm.Rank()],
		k: k, which: which, ncv: ncv, tol: tol, maxIter: maxIter, start: start, seed: opt.Seed}, nil
}

// Flags reduced (maximum over ranks) at every collective step.
const (
	flagCancelled = iota // this rank's ctx is done
	flagFailed           // this rank's operator returned an error
	flagNotFinite        // this rank's rows of A·x hold NaN or ±Inf
	nflags
)

// agree reduces the step's flags over the ranks and returns the error every
// rank stops with, or nil to go on. local is this rank's own reason, if any.
func agree(ctx context.Context, comm mpi.Comm, opErr error, y []float64, lo int) error {
	var f [nflags]float64
	var local error
	if opErr != nil {
		f[flagFailed] = 1
		local = fmt.Errorf("parpack: operator: %w", opErr)
	} else if i := notFinite(y); i >= 0 {
		f[flagNotFinite] = 1
		local = fmt.Errorf("%w (row %d of A·x is %v)", ErrNotFinite, lo+i, y[i])
	}
	if err := ctx.Err(); err != nil {
		f[flagCancelled] = 1
		if local == nil {
			local = fmt.Errorf("parpack: %w", err)
		}
	}
	if err := comm.AllreduceMax(f[:]); err != nil {
		return fmt.Errorf("parpack: %w", err)
	}
	switch {
	case local != nil:
		return local
	case f[flagNotFinite] != 0:
		return fmt.Errorf("%w: %w on another rank", ErrStopped, ErrNotFinite)
	case f[flagFailed] != 0:
		return fmt.Errorf("%w: its operator failed", ErrStopped)
	case f[flagCancelled] != 0:
		return fmt.Errorf("%w: its context is done", ErrStopped)
	}
	return nil
}

// notFinite returns the index of the first NaN or ±Inf in y, or −1.
func notFinite(y []float64) int {
	var s float64
	for _, v := range y {
		s += v * 0
	}
	if s == 0 {
		return -1
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return i
		}
	}
	return -1
}
