package main

import (
	"fmt"

	"github.com/psdlearn/psdlearn/algos/sdp"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/distributed"
	"github.com/psdlearn/psdlearn/mpi"
	"gonum.org/v1/gonum/mat"
)

// embed under an MPI launcher (mpirun -np P psdlearn embed …): every rank
// holds a contiguous block of the rows (it reads only its part of one data
// file, or its own file with {rank} in --data: distributed.ReadRows; with
// --standardize it parses the whole data, standardises it as one process
// would and keeps its block: distributed.LoadRows), and
// distributed.MVU builds the kNN graph across the ranks and runs MVU
// replicated on it, with the sparse eigensolves of the dual's negative
// parts on PARPACK. Rank 0 prints the progress and the summary and writes
// the outputs. The dense method and the block eigensolver are not
// distributed (usage errors). With shift-and-invert (the default) every
// rank factors and solves the whole sparse system and keeps its rows, so
// only the Lanczos basis is split; --shift-invert=false splits every
// product by rows, at many times the products. The replicated parts must
// compute the same bits on every rank, as on identical nodes; see
// docs/mpi.md.

// loadEmbedRows opens MPI and loads this rank's rows of --data (prep, if
// not nil, applied to the whole data before the split).
func loadEmbedRows(env *cmdEnv, f embedFlags, prep func(*mat.Dense) (*mat.Dense, error)) (*embedInput, error) {
	switch {
	case f.m == sdp.Dense:
		return nil, usagef("embed: under mpirun the negative parts are computed by PARPACK: --method dense is not distributed")
	case f.solver != sdp.Lanczos:
		return nil, usagef("embed: under mpirun only --eigensolver lanczos (PARPACK) is distributed")
	case prep != nil && containsRankPlaceholder(f.dataSpec):
		return nil, usagef("embed: with one file per rank (%s) the data cannot be standardised across the files: standardise them beforehand", distributed.RankPlaceholder)
	}
	comm, err := mpi.Open()
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	if comm.Rank() != 0 {
		env.quiet = true
	}
	// Standardisation is fitted on all the rows, which every rank then
	// reads; otherwise each reads only its part (readRowsMPI).
	var rows *distributed.Rows
	if prep != nil {
		rows, err = distributed.LoadRows(comm, f.dataSpec, func(spec string) (*data.Dataset, error) { return loadData(spec, f.labelCol) }, 2, prep)
	} else {
		rows, err = readRowsMPI(comm, f.dataSpec, f.labelCol, 0, "", 2)
	}
	if err == nil {
		_, _, err = rowsMemory(comm, rows, newProgress(env), "embed")
	}
	if err != nil {
		mpi.Close()
		return nil, mpiDataError("embed", err)
	}
	if rows.Data != nil {
		rows.Data.Name = f.dataSpec
	}
	return &embedInput{rows: rows, comm: comm, close: func() { mpi.Close() }, n: rows.N, dim: rows.Dim,
		ranks: comm.Size(), rank: comm.Rank(), dataInfo: rows.Data}, nil
}
