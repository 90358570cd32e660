// Package distributed is psdlearn's distributed execution mode: it trains
// metrics and kernels data-parallel across the processes of an MPI job. The
// training rows are split into contiguous blocks, one per rank, and no rank
// ever holds all of them.
//
//   - ReadRows reads each rank's part of the data: only a byte range of
//     one CSV or LIBSVM file, the rows of an IDX or npy file at their
//     offsets, or one file per rank;
//   - Triplets generates on the sharded rows exactly the triplets
//     constraints.Triplets generates on the whole data (k-nearest targets and
//     impostors, the same ties), each rank getting those anchored at its
//     rows and the rows of other ranks they use (its halo);
//   - BoostMetric runs stage-wise BoostMetric on them and returns, on every
//     rank, the model the one-process boost.BoostMetric learns on the whole
//     data (to rounding: the sums are added in another order);
//   - FrobMetric solves FrobMetric over the shards, every rank running the
//     same L-BFGS-B over all the dual variables with the evaluations
//     distributed, and returns on every rank a solution certified by the
//     same duality gap as frob.Learn's (the whole set; no working set);
//   - SimpleNPKL computes SimpleNPKL's linear-loss kernel with the graph
//     Laplacian's rows and the eigenvectors' rows distributed, on the
//     eigensolvers of package parpack.
//   - Laplacian builds each rank's rows of npkl.Laplacian's kNN graph
//     Laplacian (bit for bit) from the sharded rows, for SimpleNPKL.
//
// The package only uses the mpi.Comm interface and package parpack (whose
// PARPACK solver is the one cgo part, in -tags mpi builds), so it has no
// cgo of its own: the
// native communicator (mpi.Open in a binary built with -tags mpi) runs it
// across processes, mpi.Single in one process, and the tests run it on an
// in-process fake of several ranks. Every function is collective: every
// rank calls it, with the same options. docs/mpi.md describes what each
// path does, how its results agree with one process, and its limits.
package distributed

import (
	"errors"

	"github.com/psdlearn/psdlearn/errs"
)

// ErrInvalid is wrapped by errors about invalid input.
var ErrInvalid = errs.New("distributed: invalid input", errs.ErrInvalid)

// ErrRemote is wrapped by the error a rank returns when another rank failed
// (its own error says why): the ranks agree to stop together rather than
// leave some waiting in a collective.
var ErrRemote = errors.New("distributed: stopped because another rank failed")
