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
	"gonum.org/v1/gonum/mat"
)

// Distributed training: `mpirun -np P psdlearn train --algo boostmetric
// --data …` with a binary built with -tags mpi runs stage-wise BoostMetric
// data-parallel (package dist, docs/mpi.md), and `--algo frobmetric --C c`
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
	Objective    any       `json:"objective"`
	Scale        float64   `json:"scale"`
	LoadSeconds  float64   `json:"load_seconds"`
	TripletSecs  float64   `json:"triplets_seconds"`
	TrainSeconds float64   `json:"train_seconds"`
	TotalSeconds float64   `json:"total_seconds"`
	Model        string    `json:"model,omitempty"`
	Warnings     []string  `json:"warnings"`    // one per condition a user must know: a run stopped short of its certificate
	PeakRSSMB    float64   `json:"peak_rss_mb"` // rank 0's
	Curve        []float64 `json:"-"`
	// FrobMetric only.
	C           *float64 `json:"c,omitempty"`
	RelGap      *float64 `json:"relative_gap,omitempty"`
	Evaluations *int     `json:"evaluations,omitempty"`
}

// runTrainMPI is train under an MPI launcher, after runTrain parsed and
// checked the flags.
func runTrainMPI(ctx context.Context, env *cmdEnv, fs *flag.FlagSet, f trainFlags, b engine.Backend, start time.Time) error {
	var bad []string
	fs.Visit(func(fl *flag.Flag) {
		if !mpiTrainFlags[fl.Name] {
			bad = append(bad, "--"+fl.Name)
		}
	})
	if len(bad) > 0 {
		sort.Strings(bad)
		return usagef("train: under mpirun, train runs distributed BoostMetric on all the rows and does not implement %s (docs/mpi.md)", strings.Join(bad, ", "))
	}
	var fopt frob.MetricOptions
	switch f.algo {
	case "boostmetric":
		for _, name := range []string{"C", "working-set"} {
			if flagGiven(fs, name) {
				return usagef("train: --%s does not apply to boostmetric", name)
			}
		}
	case "frobmetric":
		for _, name := range []string{"loss", "mode", "nu"} {
			if flagGiven(fs, name) {
				return usagef("train: --%s does not apply to frobmetric", name)
			}
		}
		if len(f.opts.C) != 1 {
			return usagef("train: under mpirun frobmetric needs a single --C value (choosing C from a list on a validation set is not distributed), got %q", f.cList)
		}
		ws, err := frob.ParseWorkingSet(f.opts.WorkingSet)
		if err != nil {
			return usagef("train: %v", err)
		}
		fopt = frob.MetricOptions{C: f.opts.C[0], MaxIter: f.opts.Iters, WorkingSet: ws, Backend: b}
	default:
		return usagef("train: under mpirun only --algo boostmetric and frobmetric are distributed, not %s", f.algo)
	}
	opt := boost.Options{Iters: f.opts.Iters, Nu: f.opts.Nu, Backend: b, Seed: f.seed}
	if f.opts.Loss != "" {
		l, err := boost.ParseLoss(f.opts.Loss)
		if err != nil || l == boost.Hinge {
			return usagef("train: under mpirun --loss must be exp or logistic, not %q", f.opts.Loss)
		}
		opt.Loss = l
	}
	if f.opts.Mode != "" {
		md, err := boost.ParseMode(f.opts.Mode)
		if err != nil {
			return usagef("train: under mpirun --mode must be stagewise or corrective, not %q", f.opts.Mode)
		}
		opt.Mode = md
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
	prog := newProgress(env).withTotal(trainIterBudget(f))
	if f.algo == "frobmetric" {
		prog.printf("train: MPI job of %d ranks, distributed FrobMetric (C = %g)", p, fopt.C)
	} else {
		prog.printf("train: MPI job of %d ranks, distributed BoostMetric (%s)", p, opt.Mode)
	}

	// With one file per rank ("{rank}" in the spec) every rank reads only
	// its file; otherwise every rank parses the data and keeps its block.
	// Either way the class numbering is the same on every rank.
	tLoad := time.Now()
	var (
		x       *mat.Dense
		y       []int
		classes []string
		n, dim  int
		lo, hi  int
	)
	if strings.Contains(f.dataSpec, rankPlaceholder) {
		sh, err := loadRankShard(comm, "train", f.dataSpec, f.labelCol, loadMetricData)
		if err != nil {
			return err
		}
		x, y, classes, n, lo = sh.x, sh.y, sh.classes, sh.n, sh.lo
		_, dim = x.Dims()
		hi = lo + len(y)
	} else {
		d, err := loadMetricData(f.dataSpec, f.labelCol)
		if err != nil {
			return err
		}
		n, dim = d.X.Dims()
		lo, hi = r*n/p, (r+1)*n/p
		if hi > lo {
			x = mat.DenseCopyOf(d.X.Slice(lo, hi, 0, dim))
		}
		y = append([]int(nil), d.Y[lo:hi]...)
		classes = d.Classes
	}
	loadSeconds := time.Since(tLoad).Seconds()
	prog.printf("train: %s: %d points, %d features; rank 0 has rows %d–%d", f.dataSpec, n, dim, lo, hi-1)

	tTrip := time.Now()
	sh, err := distributed.Triplets(comm, x, y, f.k)
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	m, err := comm.AllreduceSumScalar(float64(len(sh.Triplets)))
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	tripSeconds := time.Since(tTrip).Seconds()
	prog.printf("train: %d triplets (k = %d) in %.2f s", int(m), f.k, tripSeconds)
	if r == 0 {
		opt.Progress = prog.event
		fopt.Progress = prog.event
	}
	if f.algo == "frobmetric" {
		return trainFrobMPI(ctx, env, comm, x, sh, fopt, f, b, mpiTrainSummary{
			Algo: "frobmetric", Backend: b.Name(), Data: f.dataSpec, Ranks: p, NTrain: n, Dim: dim, K: f.k, Triplets: int(m),
			LoadSeconds: loadSeconds, TripletSecs: tripSeconds,
		}, classes, start)
	}
	tTrain := time.Now()
	res, err := distributed.BoostMetric(ctx, comm, x, sh, opt)
	if err != nil {
		if ctx.Err() != nil {
			return &exitStatus{code: exitInterrupted, err: err}
		}
		return fmt.Errorf("train: %w", err)
	}
	trainSeconds := time.Since(tTrain).Seconds()
	if r != 0 {
		return nil
	}
	metric, err := model.NewMetric(res.Matrix(dim))
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	sum := mpiTrainSummary{
		Algo: "boostmetric", Backend: b.Name(), Data: f.dataSpec, Ranks: p, NTrain: n, Dim: dim, Rank: metric.Rank(),
		K: f.k, Triplets: int(m), Iterations: res.Iterations, Stop: res.Stop.String(),
		Converged: res.Stop == boost.StopConverged, Objective: finiteOrNil(res.Objective), Scale: res.Scale,
		LoadSeconds: loadSeconds, TripletSecs: tripSeconds, TrainSeconds: trainSeconds, Curve: res.Curve,
	}
	if f.out != "" {
		md := &model.Model{
			Kind: model.KindMetric, Algo: "boostmetric", Metric: metric, Classes: classes,
			Info: map[string]any{
				"data": f.dataSpec, "k": f.k, "loss": opt.Loss.String(), "mode": opt.Mode.String(), "iters": f.opts.Iters,
				"nu": f.opts.Nu, "iterations": res.Iterations, "objective": res.Objective, "backend": b.Name(),
				"triplets": int(m), "mpi_ranks": p, "stop": res.Stop.String(),
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
		p, n, dim, sum.Triplets, sum.Iterations, sum.Stop, res.Objective, trainSeconds))
}

// finishTrainMPI completes rank 0's summary: warnings on stderr, then the
// JSON (schema psdlearn/train-mpi/v1) or the text line and the model path.
func finishTrainMPI(env *cmdEnv, sum *mpiTrainSummary, start time.Time, line string) error {
	sum.TotalSeconds = time.Since(start).Seconds()
	sum.PeakRSSMB = peakRSSMB()
	if sum.Warnings == nil {
		sum.Warnings = []string{}
	}
	for _, w := range sum.Warnings {
		fmt.Fprintf(env.stderr, "psdlearn: warning: %s\n", w)
	}
	if env.json {
		saved := env.command
		env.command = "train-mpi"
		defer func() { env.command = saved }()
		return emitJSON(env, sum)
	}
	fmt.Fprintln(env.stdout, line)
	if sum.Model != "" {
		fmt.Fprintf(env.stdout, "model written to %s\n", sum.Model)
	}
	return nil
}

// trainFrobMPI is the FrobMetric part of runTrainMPI, from the shards on:
// sum holds what the caller knows.
func trainFrobMPI(ctx context.Context, env *cmdEnv, comm mpi.Comm, x *mat.Dense, sh *distributed.Shard, opt frob.MetricOptions,
	f trainFlags, b engine.Backend, sum mpiTrainSummary, classes []string, start time.Time) error {
	tTrain := time.Now()
	res, err := distributed.FrobMetric(ctx, comm, x, sh, opt)
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
	sum.Objective, sum.Scale, sum.Curve = finiteOrNil(res.Primal), res.DataScale, res.Curve
	sum.C, sum.RelGap, sum.Evaluations = &c, &gap, &evals
	tol := cmp.Or(opt.GapTol, frob.DefaultGapTol)
	if f.out != "" {
		md := &model.Model{
			Kind: model.KindMetric, Algo: "frobmetric", Metric: metric, Classes: classes,
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
