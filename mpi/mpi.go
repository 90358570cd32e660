// Package mpi is psdlearn's small binding to MPI, the message-passing
// interface of clusters: the collective operations a data-parallel solver
// needs (sums and maxima across processes, broadcasts, gathers of uneven
// pieces), on float64 slices, with Go errors.
//
// Open returns the world communicator, the processes started together by
// mpirun (or srun, …). Two implementations share the API, as in psdlearn's
// other bindings:
//
//   - the native one (HaveNative) calls Open MPI through cgo. It is compiled
//     only with the mpi build tag (go build -tags mpi), so that default builds
//     do not need libmpi: it needs cgo and the libopenmpi-dev package
//     (pkg-config ompi-c; third_party/install-deps.sh installs it);
//   - the pure-Go one, compiled otherwise, is a single process: rank 0 of a
//     world of size 1, where reductions and broadcasts leave the data as it is
//     and Allgatherv copies. Launched by mpirun with more than one process it
//     refuses to open (ErrNoMPISupport): each copy would believe it is alone
//     and compute the whole answer on its own.
//
// Single, the pure-Go single-process communicator, is compiled into every
// build.
//
// A program calls Open once (further calls return the same communicator)
// and Close once before it exits: Open MPI treats a process of a parallel
// job that exits without MPI_Finalize as a failure and aborts the job.
// MPI cannot be re-initialised, so Open after Close fails with ErrClosed.
//
// # Collectives
//
// Every Comm method but Rank and Size is collective: every rank must make the
// same calls in the same order, with equal buffer lengths, the same root and
// the same counts. MPI cannot detect a mismatch in general (the job usually
// hangs or fails with a truncation error), so it is the caller's contract.
// What one process can check on its own (nil buffers, a root out of range,
// counts that do not match the buffers) is checked before any communication
// and reported as ErrInvalidArgument. Such a check fails on every rank when
// the ranks pass the same arguments, except Allgatherv's send length, which
// is each rank's own.
//
// The native communicator sets MPI_ERRORS_RETURN on MPI_COMM_WORLD, so the
// errors MPI reports become *Error values instead of aborting the job. Which
// failures MPI reports at all is up to the library: when a process dies
// Open MPI 4.1 does not return an error to the others, mpirun kills the whole
// job instead (docs/mpi.md, "Failures").
//
// Calls are serialised with a lock (the native library runs at
// MPI_THREAD_SERIALIZED, goroutines may move between threads), so a Comm is
// safe for concurrent use; but because collectives must be issued in the same
// order on every rank, a program should issue them from one goroutine.
package mpi

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/psdlearn/psdlearn/errs"
)

// Comm is a communicator: a group of processes, numbered 0…Size()−1, that
// take part together in collective operations. See the package
// documentation for the rules every collective follows.
type Comm interface {
	// Rank returns this process's number in the communicator, in [0, Size()).
	Rank() int
	// Size returns the number of processes in the communicator.
	Size() int

	// Barrier returns once every rank has called it.
	Barrier() error

	// AllreduceSum replaces buf, on every rank, with the elementwise sum of
	// the bufs of all ranks. All ranks pass the same length; buf must not
	// be nil (an empty, non-nil buf is a valid no-op collective).
	AllreduceSum(buf []float64) error
	// AllreduceMax replaces buf, on every rank, with the elementwise maximum
	// of the bufs of all ranks (a NaN makes the result unspecified).
	AllreduceMax(buf []float64) error
	// AllreduceSumScalar returns, on every rank, the sum of x over all ranks.
	AllreduceSumScalar(x float64) (float64, error)
	// AllreduceMaxScalar returns, on every rank, the maximum of x over all ranks.
	AllreduceMaxScalar(x float64) (float64, error)

	// Bcast copies buf of rank root into buf of every other rank. All ranks
	// pass the same length and root; buf must not be nil.
	Bcast(buf []float64, root int) error
	// BcastBytes is Bcast for bytes (an encoded message, a model file).
	BcastBytes(buf []byte, root int) error

	// Allgatherv concatenates the send slices of all ranks, in rank order,
	// into recv on every rank. counts[r] is the length of rank r's send
	// (a count may be 0, and send nil with it); every rank passes the same
	// counts, of length Size(), and a recv of length sum(counts) that does
	// not overlap its send.
	Allgatherv(send, recv []float64, counts []int) error
}

// Errors. Argument errors wrap ErrInvalidArgument (which matches
// errs.ErrInvalid); failures MPI reports are *Error values. Every error
// message starts with "mpi: " and the operation ("mpi: allreduce: …").
var (
	// ErrInvalidArgument is an argument refused before any communication.
	ErrInvalidArgument = errs.New("invalid argument", errs.ErrInvalid)
	// ErrClosed is a call after Close (MPI cannot be re-initialised).
	ErrClosed = errors.New("MPI already finalized by Close")
	// ErrNoMPISupport is the pure-Go build's Open refusing to run as one
	// of several processes started by an MPI launcher.
	ErrNoMPISupport = errors.New("binary built without MPI support")
)

// Error is a failure reported by the MPI library.
type Error struct {
	Code  int    // the MPI error code
	Class int    // its MPI error class (MPI_ERR_…)
	Msg   string // MPI_Error_string of Code
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("%s (MPI error code %d, class %d)", e.Msg, e.Code, e.Class)
}

// world is the process's state of Open and Close.
var world struct {
	mu     sync.Mutex
	opened bool // Open was called (whether or not it succeeded)
	comm   Comm
	err    error
}

// closed is set by Close once MPI is finalized; the world communicator's
// methods then fail with ErrClosed.
var closed atomic.Bool

// Open initialises MPI on its first call and returns the world
// communicator; later calls return the same communicator (or the same error).
// The native build calls MPI_Init_thread (asking for
// MPI_THREAD_SERIALIZED) unless MPI is already initialised, and sets
// MPI_ERRORS_RETURN on MPI_COMM_WORLD. The pure-Go build returns a
// single-process communicator, or ErrNoMPISupport when environment
// variables show that an MPI launcher started it with more than one process.
// After Close, Open fails with ErrClosed.
func Open() (Comm, error) {
	world.mu.Lock()
	defer world.mu.Unlock()
	if closed.Load() {
		return nil, fmt.Errorf("mpi: open: %w", ErrClosed)
	}
	if !world.opened {
		world.opened = true
		world.comm, world.err = openWorld()
	}
	return world.comm, world.err
}

// Close finalizes MPI (MPI_Finalize) after waiting for the calls in
// progress. It is idempotent: calling it again, or before Open, does
// nothing and returns nil. Every rank should call it before exiting.
func Close() error {
	world.mu.Lock()
	defer world.mu.Unlock()
	if !world.opened || closed.Load() {
		return nil
	}
	if world.err != nil {
		closed.Store(true)
		return nil
	}
	return closeWorld()
}

// Operation names, as they appear in error messages.
const (
	opOpen       = "open"
	opClose      = "close"
	opBarrier    = "barrier"
	opAllreduce  = "allreduce"
	opBcast      = "bcast"
	opAllgatherv = "allgatherv"
)

// maxCount is the largest element count of one MPI call (MPI counts are C
// ints); longer Allreduce and Bcast buffers are sent in pieces of this size.
//
//lint:ignore U1000 used by the Open MPI binding (build tag mpi)
const maxCount = 1 << 30

func argError(op, format string, args ...any) error {
	return fmt.Errorf("mpi: %s: %w: %s", op, ErrInvalidArgument, fmt.Sprintf(format, args...))
}

func closedError(op string) error { return fmt.Errorf("mpi: %s: %w", op, ErrClosed) }

// checkBuf refuses a nil buffer.
func checkBuf(op string, isNil bool) error {
	if isNil {
		return argError(op, "nil buffer")
	}
	return nil
}

// checkRoot refuses a root outside [0, size).
func checkRoot(op string, root, size int) error {
	if root < 0 || root >= size {
		return argError(op, "root %d out of range [0, %d)", root, size)
	}
	return nil
}

// checkGather validates Allgatherv's arguments for rank of size and returns
// the displacements (prefix sums of counts).
func checkGather(send, recv []float64, counts []int, rank, size int) ([]int, error) {
	op := opAllgatherv
	if counts == nil {
		return nil, argError(op, "nil counts")
	}
	if len(counts) != size {
		return nil, argError(op, "%d counts for %d ranks", len(counts), size)
	}
	displs := make([]int, size)
	total := 0
	for r, c := range counts {
		if c < 0 {
			return nil, argError(op, "negative count %d for rank %d", c, r)
		}
		displs[r] = total
		total += c
		if total > math.MaxInt32 {
			return nil, argError(op, "total count exceeds %d elements (MPI's limit)", math.MaxInt32)
		}
	}
	if len(send) != counts[rank] {
		return nil, argError(op, "send has length %d but counts[%d] = %d", len(send), rank, counts[rank])
	}
	if len(recv) != total {
		return nil, argError(op, "recv has length %d but the counts sum to %d", len(recv), total)
	}
	if overlap(send, recv) {
		return nil, argError(op, "send and recv overlap")
	}
	return displs, nil
}

// overlap reports whether two slices share memory.
func overlap(a, b []float64) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	a0, b0 := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	const w = unsafe.Sizeof(float64(0))
	return a0 < b0+uintptr(len(b))*w && b0 < a0+uintptr(len(a))*w
}

// launcherVars are the environment variables through which MPI launchers
// tell a process its job size or rank: Open MPI's mpirun (OMPI_COMM_WORLD_*,
// PMIX_RANK), MPICH's Hydra and Intel MPI (PMI_*), MVAPICH2 (MV2_*) and Slurm
// with PMI or PMIx (PMI_*, PMIX_RANK).
var (
	launcherSizeVars = []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE"}
	launcherRankVars = []string{"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK"}
)

// Launched reports whether environment variables show that an MPI launcher
// (mpirun, srun, …) started this process as one of several: a job size
// above 1 or a rank above 0. A program that also runs alone calls Open only
// then, so that a native build run without mpirun does not initialise MPI
// as a singleton (about 0.3 s and a helper process).
func Launched() bool {
	multi, _ := launched(os.Getenv)
	return multi
}

// launched reports whether the environment (read through getenv) shows that
// an MPI launcher started this process as one of several: a job size above
// 1 or a rank above 0. evidence names the variable.
func launched(getenv func(string) string) (multi bool, evidence string) {
	for _, v := range launcherSizeVars {
		if n, err := strconv.Atoi(getenv(v)); err == nil && n > 1 {
			return true, fmt.Sprintf("%s=%d", v, n)
		}
	}
	for _, v := range launcherRankVars {
		if n, err := strconv.Atoi(getenv(v)); err == nil && n > 0 {
			return true, fmt.Sprintf("%s=%d", v, n)
		}
	}
	return false, ""
}

// ErrNotNative is returned by WithFortranHandle for a communicator that no
// MPI library backs (Single, the pure-Go world, a test fake).
var ErrNotNative = errors.New("communicator is not backed by an MPI library")

// IsNative reports whether c is the native build's world communicator, the
// one WithFortranHandle accepts.
func IsNative(c Comm) bool { return isNative(c) }

// WithFortranHandle calls f with the Fortran handle of c's MPI communicator
// (MPI_Comm_c2f of MPI_COMM_WORLD) while holding the lock that serialises
// the process's MPI calls. It is for bindings to libraries that make MPI
// calls of their own, such as PARPACK: their calls then never overlap
// this package's (the library runs at MPI_THREAD_SERIALIZED). f must not
// call c's methods (they take the same lock). It fails with ErrNotNative,
// without calling f, when c is not the native world communicator, and with
// ErrClosed after Close.
func WithFortranHandle(c Comm, f func(handle int32)) error {
	if !isNative(c) {
		return fmt.Errorf("mpi: fortran handle: %w", ErrNotNative)
	}
	return withFortranHandle(f)
}
