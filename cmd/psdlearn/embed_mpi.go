package main

import (
	"fmt"

	"github.com/psdlearn/psdlearn/algos/sdp"
	"github.com/psdlearn/psdlearn/dist"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/mpi"
)

// embed under an MPI launcher (mpirun -np P psdlearn embed …): every rank
// loads the data and runs MVU, replicated, except for the sparse
// eigensolves of the dual's negative parts, which run on PARPACK with each
// rank owning a contiguous block of the n rows (dist.Eigs): its rows of
// every operator product and of the Lanczos basis. Rank 0 prints the
// progress and the summary and writes the outputs. The dense method and the
// block eigensolver are not distributed (usage errors). With
// shift-and-invert (the default) every rank factors and solves the whole
// sparse system and keeps its rows, so only the Lanczos basis is split;
// --shift-invert=false splits every product by rows, at many times the
// products. The replicated parts must compute the same bits on every rank,
// as on identical nodes; see docs/mpi.md.

// embedMPI opens MPI when the process is one rank of an MPI job and returns
// the distributed eigensolver (nil outside MPI), the number of ranks and
// this rank, and the function that closes MPI. It sets *m to the sparse
// method and makes the ranks other than 0 quiet.
func embedMPI(env *cmdEnv, m *sdp.Method, solver sdp.Eigensolver, n int) (engine.EigsSolver, int, int, func(), error) {
	none := func() {}
	if !mpi.Launched() {
		return nil, 1, 0, none, nil
	}
	switch {
	case *m == sdp.Dense:
		return nil, 0, 0, none, usagef("embed: under mpirun the negative parts are computed by PARPACK: --method dense is not distributed")
	case solver != sdp.Lanczos:
		return nil, 0, 0, none, usagef("embed: under mpirun only --eigensolver lanczos (PARPACK) is distributed")
	}
	comm, err := mpi.Open()
	if err != nil {
		return nil, 0, 0, none, fmt.Errorf("embed: %w", err)
	}
	closeMPI := func() { mpi.Close() }
	p, r := comm.Size(), comm.Rank()
	if n < 2*p {
		closeMPI()
		return nil, 0, 0, none, usagef("embed: %d points for %d ranks: every rank needs at least 2 rows", n, p)
	}
	counts := make([]int, p)
	for q := range counts {
		counts[q] = (q+1)*n/p - q*n/p
	}
	eigs, err := dist.Eigs(comm, counts, nil)
	if err != nil {
		closeMPI()
		return nil, 0, 0, none, fmt.Errorf("embed: %w", err)
	}
	if r != 0 {
		env.quiet = true
	}
	*m = sdp.Sparse
	return eigs, p, r, closeMPI, nil
}
