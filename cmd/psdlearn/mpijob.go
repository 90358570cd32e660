package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/distributed"
	"github.com/psdlearn/psdlearn/mpi"
)

// Distributed runs: `mpirun -np P psdlearn train|cluster …` with a binary
// built with -tags mpi runs the same pipeline as one process, with every
// flag, as one rank of the job (docs/mpi.md). Each rank reads only its part
// of one CSV, LIBSVM, IDX or npy file (or its own file with {rank} in the
// spec) and the ranks exchange their rows, so that every rank holds the
// data; every rank then runs the pipeline with distributed.Executor, which
// spreads the solves (FrobMetric's and BoostMetric's sharded, LMNN's by
// anchor rows, SimpleNPKL's by rows of the Laplacian) and the k-NN scores
// over the ranks and runs the other learners on rank 0. Rank 0 prints the progress, the warnings
// and the summary and writes the output files; the others are silent but
// for an error. A binary built without the tag refuses to run as one of
// several processes (mpi.ErrNoMPISupport).

// mpiJob is how a command executes: in this process (comm nil) or as one
// rank of an MPI job.
type mpiJob struct {
	comm mpi.Comm
	ex   *distributed.Executor
	// readBytes is every rank's bytes read from the data files (0: it
	// loaded the whole input), in rank order.
	readBytes []int64
}

// startJob returns the execution of command cmd: in this process unless an
// MPI launcher started it, else as a rank of the MPI job, with the run's
// context (distributed.NewExecutor) and this rank's environment (silent
// but for errors on ranks other than 0). The caller calls stop when the
// command ends.
func startJob(ctx context.Context, env *cmdEnv, cmd string) (j *mpiJob, rctx context.Context, renv *cmdEnv, stop func(), err error) {
	if !mpi.Launched() {
		return &mpiJob{}, ctx, env, func() {}, nil
	}
	comm, err := openMPI()
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("%s: %w", cmd, err)
	}
	stop = func() { mpi.Close() }
	ex, rctx, err := distributed.NewExecutor(ctx, comm)
	if err != nil {
		stop()
		return nil, nil, nil, nil, fmt.Errorf("%s: %w", cmd, err)
	}
	if comm.Rank() != 0 {
		sub := *env
		sub.stdout, sub.stderr, sub.quiet = io.Discard, io.Discard, true
		env = &sub
		cur.env = env
	}
	return &mpiJob{comm: comm, ex: ex}, rctx, env, stop, nil
}

// root reports whether this process writes the outputs: one process, or
// rank 0 of a job.
func (j *mpiJob) root() bool { return j.comm == nil || j.comm.Rank() == 0 }

// load loads the data of command cmd: in one process the whole input
// (whole); as a rank of an MPI job its part (with maxFeatures and why as
// for loadDataFeatures, at least minRows rows per rank), then every rank's
// rows (distributed.Rows.Gather).
func (j *mpiJob) load(cmd, spec, labelCol string, maxFeatures int, why string, minRows int, prog *progressLine, whole func() (*data.Dataset, error)) (*data.Dataset, error) {
	if j.comm == nil {
		return whole()
	}
	rows, err := readRowsMPI(j.comm, spec, labelCol, maxFeatures, why, minRows)
	if err != nil {
		return nil, mpiDataError(cmd, err)
	}
	if _, j.readBytes, err = rowsMemory(j.comm, rows, prog, cmd); err != nil {
		return nil, err
	}
	d, err := rows.Gather(j.comm)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	prog.printf("%s: MPI job of %d ranks: %d points, %d features gathered on every rank", cmd, j.comm.Size(), d.Len(), d.Dim())
	return d, nil
}

// mpiFigures are what an MPI job adds to a command's JSON summary.
type mpiFigures struct {
	// Ranks is the job's size; RankReadBytes the bytes each rank read from
	// the data files (0: it loaded the whole input); RankPeakRSSMB each
	// one's peak resident memory.
	Ranks         int         `json:"mpi_ranks,omitempty"`
	RankReadBytes []int64     `json:"rank_read_bytes,omitempty"`
	RankPeakRSSMB []jsonFloat `json:"rank_peak_rss_mb,omitempty"`
}

// figures returns the job's figures (collective; zero in one process).
func (j *mpiJob) figures(cmd string) (mpiFigures, error) {
	if j.comm == nil {
		return mpiFigures{}, nil
	}
	p := j.comm.Size()
	rss := make([]float64, p)
	if err := j.comm.Allgatherv([]float64{peakRSSMB()}, rss, ones(p)); err != nil {
		return mpiFigures{}, fmt.Errorf("%s: %w", cmd, err)
	}
	f := mpiFigures{Ranks: p, RankReadBytes: j.readBytes}
	for _, v := range rss {
		f.RankPeakRSSMB = append(f.RankPeakRSSMB, jsonFloat(v))
	}
	return f, nil
}

// ones returns p ones (the counts of a one-value Allgatherv).
func ones(p int) []int {
	c := make([]int, p)
	for i := range c {
		c[i] = 1
	}
	return c
}

// mpiDataError is the error of loading a distributed data set: a rank
// layout the user chose that leaves a rank too few rows is a usage error.
func mpiDataError(cmd string, err error) error {
	if errors.Is(err, distributed.ErrTooFewRows) {
		return &usageError{fmt.Errorf("%s: %w", cmd, err)}
	}
	return fmt.Errorf("%s: %w", cmd, err)
}

// containsRankPlaceholder reports whether a data spec names one file per
// rank.
func containsRankPlaceholder(spec string) bool {
	return strings.Contains(spec, distributed.RankPlaceholder)
}
