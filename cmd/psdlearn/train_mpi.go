package main

import (
	"context"
	"fmt"
	"io"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/distributed"
	"github.com/psdlearn/psdlearn/mpi"
)

// Distributed training: `mpirun -np P psdlearn train …` with a binary built
// with -tags mpi runs the same pipeline as one process, with every flag,
// as one rank of the job (docs/mpi.md). Each rank reads only its part of
// one CSV, LIBSVM, IDX or npy file (or its own file with {rank} in the
// spec) and the ranks exchange their rows, so that every rank holds the
// data; every rank then runs the pipeline with distributed.Executor, which
// shards FrobMetric's and BoostMetric's solves and the k-NN scores over
// the ranks and runs the other learners on rank 0. Rank 0 prints the
// progress, the warnings and the summary and writes the model; the others
// are silent. A binary built without the tag refuses to run as one of
// several processes (mpi.ErrNoMPISupport).

// trainExec is how a train run executes: in this process (the zero
// value) or as one rank of an MPI job.
type trainExec struct {
	comm     mpi.Comm
	executor psdlearn.Executor
	// readBytes is every rank's bytes read from the data files (0: it
	// loaded the whole input), in rank order.
	readBytes []int64
}

// mpiTrainExec returns the execution of a train run as one rank of comm,
// the run's context (distributed.NewExecutor) and the command line's
// environment of this rank (silent but for errors on ranks other than 0).
func mpiTrainExec(ctx context.Context, env *cmdEnv, comm mpi.Comm) (*trainExec, context.Context, *cmdEnv, error) {
	ex, rctx, err := distributed.NewExecutor(ctx, comm)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("train: %w", err)
	}
	if comm.Rank() != 0 {
		sub := *env
		sub.stdout, sub.stderr, sub.quiet = io.Discard, io.Discard, true
		env = &sub
		cur.env = env
	}
	return &trainExec{comm: comm, executor: ex}, rctx, env, nil
}

// loadData loads the data of a train run: in one process the whole input;
// as a rank of an MPI job its part, then every rank's rows
// (distributed.Rows.Gather).
func (tx *trainExec) loadData(f trainFlags, prog *progressLine) (*data.Dataset, error) {
	if tx == nil || tx.comm == nil {
		return loadMetricData(f.dataSpec, f.labelCol)
	}
	maxD, err := metricMaxFeatures()
	if err != nil {
		return nil, err
	}
	rows, err := readRowsMPI(tx.comm, f.dataSpec, f.labelCol, maxD, fmt.Sprintf("what a metric's %d D×D matrices fit in the memory limit; raise it with --max-memory", metricWords), 0)
	if err != nil {
		return nil, mpiDataError("train", err)
	}
	if _, tx.readBytes, err = rowsMemory(tx.comm, rows, prog, "train"); err != nil {
		return nil, err
	}
	d, err := rows.Gather(tx.comm)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	prog.printf("train: MPI job of %d ranks: %d points, %d features gathered on every rank", tx.comm.Size(), d.Len(), d.Dim())
	return d, nil
}

// finish adds the job's figures to rank 0's summary: the number of ranks,
// the bytes each read and each one's peak resident memory (collective).
func (tx *trainExec) finish(sum *trainSummary) error {
	if tx == nil || tx.comm == nil {
		return nil
	}
	p := tx.comm.Size()
	rss := make([]float64, p)
	if err := tx.comm.Allgatherv([]float64{peakRSSMB()}, rss, ones(p)); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	sum.MPIRanks, sum.RankReadBytes = p, tx.readBytes
	for _, v := range rss {
		sum.RankPeakRSSMB = append(sum.RankPeakRSSMB, jsonFloat(v))
	}
	return nil
}

// ones returns p ones (the counts of a one-value Allgatherv).
func ones(p int) []int {
	c := make([]int, p)
	for i := range c {
		c[i] = 1
	}
	return c
}
