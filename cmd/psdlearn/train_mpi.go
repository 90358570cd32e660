package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/algos/frob"
	"github.com/psdlearn/psdlearn/distributed"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/mpi"
)

// Distributed training: `mpirun -np P psdlearn train --algo boostmetric
// --data …` with a binary built with -tags mpi runs stage-wise BoostMetric
// data-parallel (package distributed, docs/mpi.md), and `--algo frobmetric --C c`
// FrobMetric with one C (the whole set, certified by its duality gap): rank p keeps the p-th
// contiguous block of the rows, rank 0 prints the progress and the summary
// and writes the model. A binary built without the tag refuses to run as one
// of several processes (mpi.ErrNoMPISupport). It trains on all the rows:
// the flags of the one-process pipeline that the distributed run does not
// implement (splits and evaluation, preprocessing, constraint files, other
// algorithms and modes) are refused rather than ignored.

// mpiTrainFlags are the train flags a distributed run accepts.
var mpiTrainFlags = map[string]bool{
	"algo": true, "data": true, "label-col": true, "header": true, "no-header": true,
	"k": true, "loss": true, "mode": true, "iters": true, "nu": true, "out": true, "backend": true,
	"seed": true, "json": true, "quiet": true, "max-memory": true, "max-input": true,
	"C": true, "working-set": true,
}

// mpiTrainSummary is rank 0's JSON output (schema psdlearn/train-mpi/v1).
type mpiTrainSummary struct {
	Algo         string    `json:"algo"`
	Backend      string    `json:"backend"`
	Data         string    `json:"data"`
	Ranks        int       `json:"ranks"`
	NTrain       int       `json:"n_train"`
	Dim          int       `json:"dim"`
	Rank         int       `json:"rank"`
	K            int       `json:"k"`
	Triplets     int       `json:"triplets"`
	Iterations   int       `json:"iterations"`
	Stop         string    `json:"stop"`
	Converged    bool      `json:"converged"`
	Objective    jsonFloat `json:"objective"`
	Scale        float64   `json:"scale"`
	LoadSeconds  float64   `json:"load_seconds"`
	TripletSecs  float64   `json:"triplets_seconds"`
	TrainSeconds float64   `json:"train_seconds"`
	TotalSeconds float64   `json:"total_seconds"`
	Model        string    `json:"model,omitempty"`
	Warnings     []string  `json:"warnings"`    // one per condition a user must know: a run stopped short of its certificate
	PeakRSSMB    jsonFloat `json:"peak_rss_mb"` // rank 0's
	// Every rank's bytes of rows and labels, and the bytes it read from the
	// data files (0: it loaded the whole input), in rank order.
	RankDataBytes []int64   `json:"rank_data_bytes"`
	RankReadBytes []int64   `json:"rank_read_bytes"`
	Curve         []float64 `json:"-"`
	// FrobMetric only.
	C           *jsonFloat `json:"c,omitempty"`
	RelGap      *jsonFloat `json:"relative_gap,omitempty"`
	Evaluations *int       `json:"evaluations,omitempty"`
}

// runTrainMPI is train under an MPI launcher, after runTrain parsed and
// checked the flags.
func runTrainMPI(ctx context.Context, env *cmdEnv, fs *flag.FlagSet, f trainFlags, b engine.Backend, start time.Time) error {
	opt, fopt, err := mpiTrainOptions(fs, f, b)
	if err != nil {
		return err
	}
	comm, err := mpi.Open()
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	defer mpi.Close()
	p, r := comm.Size(), comm.Rank()
	if r != 0 {
		env.quiet = true
	}
	prog := newProgress(env).withCap(trainIterBudget(f))
	if f.algo == "frobmetric" {
		prog.printf("train: MPI job of %d ranks, distributed FrobMetric (C = %g)", p, fopt.C)
	} else {
		prog.printf("train: MPI job of %d ranks, distributed BoostMetric (%s)", p, opt.Mode)
	}
	// Every rank reads only its part of one CSV, LIBSVM or IDX file, or
	// its own file with "{rank}" in the spec; otherwise (builtin data,
	// gzip) every rank parses the data and keeps its block. Either way the
	// class numbering is the same on every rank.
	tLoad := time.Now()
	maxD, err := metricMaxFeatures()
	if err != nil {
		return err
	}
	rows, err := readRowsMPI(comm, f.dataSpec, f.labelCol, maxD, fmt.Sprintf("what a metric's %d D×D matrices fit in the memory limit; raise it with --max-memory", metricWords), 0)
	if err != nil {
		return mpiDataError("train", err)
	}
	sum := mpiTrainSummary{Backend: b.Name(), Data: f.dataSpec, Ranks: p, NTrain: rows.N, Dim: rows.Dim, K: f.k, LoadSeconds: time.Since(tLoad).Seconds()}
	prog.printf("train: %s: %d points, %d features; rank 0 has rows %d–%d", f.dataSpec, rows.N, rows.Dim, rows.Lo, rows.Lo+len(rows.Y)-1)
	if sum.RankDataBytes, sum.RankReadBytes, err = rowsMemory(comm, rows, prog, "train"); err != nil {
		return err
	}
	tTrip := time.Now()
	sh, err := distributed.Triplets(comm, rows.X, rows.Y, f.k)
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	m, err := comm.AllreduceSumScalar(float64(len(sh.Triplets)))
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	sum.Triplets, sum.TripletSecs = int(m), time.Since(tTrip).Seconds()
	prog.printf("train: %d triplets (k = %d) in %.2f s", sum.Triplets, f.k, sum.TripletSecs)
	if r == 0 {
		opt.Progress = prog.event
		fopt.Progress = prog.event
	}
	if f.algo == "frobmetric" {
		sum.Algo = "frobmetric"
		return trainFrobMPI(ctx, env, comm, rows, sh, fopt, f, b, sum, start)
	}
	sum.Algo = "boostmetric"
	return trainBoostMPI(ctx, env, comm, rows, sh, opt, f, b, sum, start)
}

// mpiTrainOptions checks the flags of a distributed train run and returns
// the options of the algorithm it runs: BoostMetric's, or FrobMetric's.
func mpiTrainOptions(fs *flag.FlagSet, f trainFlags, b engine.Backend) (boost.Options, frob.MetricOptions, error) {
	var (
		opt  = boost.Options{Iters: f.opts.Iters, Nu: f.opts.Nu, Backend: b, Seed: f.seed}
		fopt frob.MetricOptions
		bad  []string
	)
	fs.Visit(func(fl *flag.Flag) {
		if !mpiTrainFlags[fl.Name] {
			bad = append(bad, "--"+fl.Name)
		}
	})
	if len(bad) > 0 {
		sort.Strings(bad)
		return opt, fopt, usagef("train: under mpirun, train runs distributed BoostMetric on all the rows and does not implement %s (docs/mpi.md)", strings.Join(bad, ", "))
	}
	notFor := map[string][]string{"boostmetric": {"C", "working-set"}, "frobmetric": {"loss", "mode", "nu"}}
	names, ok := notFor[f.algo]
	if !ok {
		return opt, fopt, usagef("train: under mpirun only --algo boostmetric and frobmetric are distributed, not %s", f.algo)
	}
	for _, name := range names {
		if flagGiven(fs, name) {
			return opt, fopt, usagef("train: --%s does not apply to %s", name, f.algo)
		}
	}
	if f.algo == "frobmetric" {
		if len(f.opts.C) != 1 {
			return opt, fopt, usagef("train: under mpirun frobmetric needs a single --C value (choosing C from a list on a validation set is not distributed), got %q", f.cList)
		}
		ws, err := frob.ParseWorkingSet(f.opts.WorkingSet)
		if err != nil {
			return opt, fopt, usagef("train: %v", err)
		}
		fopt = frob.MetricOptions{C: f.opts.C[0], MaxIter: f.opts.Iters, WorkingSet: ws, Backend: b}
	}
	if f.opts.Loss != "" {
		l, err := boost.ParseLoss(f.opts.Loss)
		if err != nil || l == boost.Hinge {
			return opt, fopt, usagef("train: under mpirun --loss must be exp or logistic, not %q", f.opts.Loss)
		}
		opt.Loss = l
	}
	if f.opts.Mode != "" {
		md, err := boost.ParseMode(f.opts.Mode)
		if err != nil {
			return opt, fopt, usagef("train: under mpirun --mode must be stagewise or corrective, not %q", f.opts.Mode)
		}
		opt.Mode = md
	}
	return opt, fopt, nil
}

// trainBoostMPI is the BoostMetric part of runTrainMPI, from the shards on:
// sum holds what the caller knows.
func trainBoostMPI(ctx context.Context, env *cmdEnv, comm mpi.Comm, rows *distributed.Rows, sh *distributed.Shard, opt boost.Options,
	f trainFlags, b engine.Backend, sum mpiTrainSummary, start time.Time) error {
	tTrain := time.Now()
	res, err := distributed.BoostMetric(ctx, comm, rows.X, sh, opt)
	if err != nil {
		if ctx.Err() != nil {
			return &exitStatus{code: exitInterrupted, err: err}
		}
		return fmt.Errorf("train: %w", err)
	}
	sum.TrainSeconds = time.Since(tTrain).Seconds()
	if comm.Rank() != 0 {
		return nil
	}
	metric, err := model.NewMetric(res.Matrix(rows.Dim))
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	sum.Rank, sum.Iterations, sum.Stop = metric.Rank(), res.Iterations, res.Stop.String()
	sum.Converged, sum.Objective, sum.Scale, sum.Curve = res.Stop == boost.StopConverged, jsonFloat(res.Objective), res.Scale, res.Curve
	if f.out != "" {
		md := &model.Model{
			Kind: model.KindMetric, Algo: "boostmetric", Metric: metric, Classes: rows.Classes,
			Info: map[string]any{
				"data": f.dataSpec, "k": f.k, "loss": opt.Loss.String(), "mode": opt.Mode.String(), "iters": f.opts.Iters,
				"nu": f.opts.Nu, "iterations": res.Iterations, "objective": res.Objective, "backend": b.Name(),
				"triplets": sum.Triplets, "mpi_ranks": sum.Ranks, "stop": res.Stop.String(),
			},
			Certificate: &model.Certificate{Converged: sum.Converged, Gap: math.NaN(), Reason: res.Stop.String()},
		}
		if !sum.Converged {
			md.Certificate.Warnings = append(md.Certificate.Warnings, "stopped before convergence: "+res.Stop.String())
		}
		sum.Model = f.out
		if err := md.SaveFile(f.out); err != nil {
			return fmt.Errorf("train: %w", err)
		}
	}
	if !sum.Converged {
		sum.Warnings = append(sum.Warnings, fmt.Sprintf("boostmetric: not converged (%s) after %d iterations", res.Stop, res.Iterations))
	}
	return finishTrainMPI(env, &sum, start, fmt.Sprintf("boostmetric on %d ranks: %d points, %d features, %d triplets; %d iterations (%s), objective %.6g, %.2f s training",
		sum.Ranks, sum.NTrain, sum.Dim, sum.Triplets, sum.Iterations, sum.Stop, res.Objective, sum.TrainSeconds))
}

// finishTrainMPI completes rank 0's summary: warnings on stderr, then the
// JSON (schema psdlearn/train-mpi/v1) or the text line and the model path.
func finishTrainMPI(env *cmdEnv, sum *mpiTrainSummary, start time.Time, line string) error {
	sum.TotalSeconds = time.Since(start).Seconds()
	sum.PeakRSSMB = jsonFloat(peakRSSMB())
	if sum.Warnings == nil {
		sum.Warnings = []string{}
	}
	for _, w := range sum.Warnings {
		fmt.Fprintf(env.stderr, "psdlearn: warning: %s\n", w)
	}
	if env.json {
		return emitJSONAs(env, "train-mpi", sum)
	}
	fmt.Fprintln(env.stdout, line)
	if sum.Model != "" {
		fmt.Fprintf(env.stdout, "model written to %s\n", sum.Model)
	}
	return nil
}

// trainFrobMPI is the FrobMetric part of runTrainMPI, from the shards on:
// sum holds what the caller knows.
func trainFrobMPI(ctx context.Context, env *cmdEnv, comm mpi.Comm, rows *distributed.Rows, sh *distributed.Shard, opt frob.MetricOptions,
	f trainFlags, b engine.Backend, sum mpiTrainSummary, start time.Time) error {
	tTrain := time.Now()
	res, err := distributed.FrobMetric(ctx, comm, rows.X, sh, opt)
	if err != nil {
		if ctx.Err() != nil {
			return &exitStatus{code: exitInterrupted, err: err}
		}
		return fmt.Errorf("train: %w", err)
	}
	sum.TrainSeconds = time.Since(tTrain).Seconds()
	if comm.Rank() != 0 {
		return nil
	}
	metric, err := model.NewMetric(res.M)
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	c, gap, evals := opt.C, res.RelGap, res.Evaluations
	sum.Rank, sum.Iterations, sum.Stop, sum.Converged = metric.Rank(), res.Iterations, res.Reason, res.Certified
	sum.Objective, sum.Scale, sum.Curve = jsonFloat(res.Primal), res.DataScale, res.Curve
	sum.C, sum.RelGap, sum.Evaluations = ptrFloat(c), ptrFloat(gap), &evals
	tol := cmp.Or(opt.GapTol, frob.DefaultGapTol)
	if f.out != "" {
		md := &model.Model{
			Kind: model.KindMetric, Algo: "frobmetric", Metric: metric, Classes: rows.Classes,
			Info: map[string]any{
				"data": f.dataSpec, "k": f.k, "C": opt.C, "working_set": cmp.Or(f.opts.WorkingSet, "auto"), "working_set_rounds": res.Rounds, "iters": f.opts.Iters,
				"iterations": res.Iterations, "evaluations": res.Evaluations, "primal": res.Primal, "dual": res.Dual,
				"backend": b.Name(), "triplets": sum.Triplets, "mpi_ranks": sum.Ranks,
			},
			Certificate: &model.Certificate{Converged: res.Certified, Gap: res.RelGap, Tolerance: tol, Reason: res.Reason},
		}
		if !res.Certified {
			md.Certificate.Warnings = append(md.Certificate.Warnings, fmt.Sprintf("relative duality gap %.3g above the tolerance %.3g", res.RelGap, tol))
		}
		sum.Model = f.out
		if err := md.SaveFile(f.out); err != nil {
			return fmt.Errorf("train: %w", err)
		}
	}
	if !res.Certified {
		sum.Warnings = append(sum.Warnings, fmt.Sprintf("frobmetric: not certified (%s): relative gap %.3g above the tolerance %.3g", res.Reason, res.RelGap, tol))
	}
	return finishTrainMPI(env, &sum, start, fmt.Sprintf("frobmetric (C = %g) on %d ranks: %d points, %d features, %d triplets; %d iterations, %d evaluations (%s), relative gap %.3g%s, %.2f s training",
		opt.C, sum.Ranks, sum.NTrain, sum.Dim, sum.Triplets, res.Iterations, res.Evaluations, res.Reason, res.RelGap, map[bool]string{true: " (certified)", false: " (NOT certified)"}[res.Certified], sum.TrainSeconds))
}
