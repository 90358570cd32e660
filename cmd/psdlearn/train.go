package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/progress"
	"github.com/psdlearn/psdlearn/train"

	// The algorithm packages register their trainers with train.
	"github.com/psdlearn/psdlearn/algos/boost"  // boostmetric, psdboost
	"github.com/psdlearn/psdlearn/algos/frob"   // frobmetric
	_ "github.com/psdlearn/psdlearn/algos/itml" // itml
	_ "github.com/psdlearn/psdlearn/algos/lmnn" // lmnn
)

func init() {
	register(command{
		name:    "train",
		summary: "learn a Mahalanobis metric from labelled data or a constraint file (boostmetric, psdboost, frobmetric, lmnn, itml)",
		run:     runTrain,
	})
}

// trainSummary is the JSON output of psdlearn train. Errors are fractions in
// [0, 1]; null stands for "not applicable".
type trainSummary struct {
	Algo               string             `json:"algo"`
	Backend            string             `json:"backend"`
	Data               string             `json:"data"`
	Split              string             `json:"split,omitempty"`
	NTrain             int                `json:"n_train"`
	NVal               int                `json:"n_val"`
	NTest              int                `json:"n_test"`
	InputDim           int                `json:"input_dim"`
	Dim                int                `json:"dim"`
	Rank               int                `json:"rank"`
	K                  int                `json:"k"`
	Triplets           int                `json:"triplets"`
	Iterations         int                `json:"iterations"`
	TrainSeconds       float64            `json:"train_seconds"`
	TotalSeconds       float64            `json:"total_seconds"`
	Objective          any                `json:"objective"`
	DualityGap         any                `json:"duality_gap"`
	ChosenC            any                `json:"chosen_c"`
	ValError           any                `json:"val_error"`
	TestError          float64            `json:"test_error"`
	EuclideanTestError float64            `json:"euclidean_test_error"`
	EuclideanValError  any                `json:"euclidean_val_error"`
	Candidates         []candidateSummary `json:"candidates,omitempty"`
	// CPolicy says where the values of C tried came from and CSearched
	// lists them in the order tried (see package grid).
	CPolicy   string    `json:"c_policy,omitempty"`
	CSearched []float64 `json:"c_searched,omitempty"`
	Model     string    `json:"model,omitempty"`
	PeakRSSMB float64   `json:"peak_rss_mb"`
	// Converged is the certificate of the returned model; Warnings say why
	// a solve stopped without one (also printed on stderr).
	Converged bool     `json:"converged"`
	Warnings  []string `json:"warnings"`
	// Interrupted: the run was cancelled (Ctrl-C) and the model is the best
	// one found before; the test evaluation is skipped (null).
	Interrupted bool         `json:"interrupted"`
	Phases      train.Phases `json:"phases"`
	Curve       []float64    `json:"-"`
	// The fields of a run on a constraint file (--triplets, --pairs).
	*constraintSummary
}

// constraintSummary is what train --triplets/--pairs adds to the summary.
// val_error and the candidates' val_error are then the fraction of
// validation triplets violated; the k-NN errors are null.
type constraintSummary struct {
	Constraints     string  `json:"constraints"`      // the file
	ConstraintKind  string  `json:"constraint_kind"`  // triplets | pairs
	ConstraintCount int     `json:"constraint_count"` // lines read
	HoldOut         float64 `json:"holdout"`
	ValTriplets     int     `json:"val_triplets"`
	HeldOutTriplets int     `json:"heldout_triplets"`
	// Satisfaction is the fraction of held-out triplets (i,j,k) with
	// d(i,j) < d(i,k) under the learned metric, Euclidean under the
	// identity (on the preprocessed data); null with no held-out triplet.
	Satisfaction          any `json:"triplet_satisfaction"`
	EuclideanSatisfaction any `json:"triplet_satisfaction_euclidean"`
}

// candidateSummary is one row of the model-selection table: a C value tried
// and how its model did on the validation rows.
type candidateSummary struct {
	C          float64 `json:"c"`
	ValError   any     `json:"val_error"`
	Iterations int     `json:"iterations"`
	DualityGap any     `json:"duality_gap"`
	Converged  bool    `json:"converged"`
}

// trainFlags are the options of psdlearn train.
type trainFlags struct {
	algo, dataSpec, labelCol, testSpec, split, backend, out string
	standardize                                             bool
	pca, k                                                  int
	seed                                                    uint64
	opts                                                    train.Options
	cList                                                   string
	// Constraint files (--triplets, --pairs) and the share held out.
	triplets, pairs string
	holdout         float64
}

// constraintMode reports whether train learns from a constraint file.
func (f *trainFlags) constraintMode() bool { return f.triplets != "" || f.pairs != "" }

func runTrain(ctx context.Context, env *cmdEnv, args []string) error {
	start := time.Now()
	fs := newFlagSet(env, "train")
	var f trainFlags
	fs.StringVar(&f.algo, "algo", "", "algorithm: "+strings.Join(train.Names(), "|"))
	fs.StringVar(&f.dataSpec, "data", "", "data SPEC: file.csv, file.libsvm|.svm|.txt, idx:IMAGES:LABELS, builtin:NAME, or - (CSV on standard input)")
	labelColFlag(fs, &f.labelCol)
	fs.StringVar(&f.testSpec, "test", "", "test data SPEC; --data is then train (and validation, with a 2-part --split)")
	fs.StringVar(&f.split, "split", "", "train,val,test fractions (seeded) or rows:TRAIN,VAL,TEST row ranges; 2 parts are train,test (train,val with --test) (default 0.7,0.15,0.15)")
	fs.BoolVar(&f.standardize, "standardize", false, "standardise features (mean and deviation of the training part)")
	fs.IntVar(&f.pca, "pca", 0, "project onto the top N principal components of the training part (0: off)")
	fs.IntVar(&f.k, "k", 3, "k of the triplets (k targets × k impostors per point) and of the k-NN evaluation")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed (split and algorithm)")
	fs.StringVar(&f.backend, "backend", "", "numerical backend: "+strings.Join(engine.Names(), "|")+" (default "+engine.Default().Name()+")")
	fs.StringVar(&f.out, "out", "", "write the model (metric and preprocessing) to this JSON file")
	fs.StringVar(&f.opts.Loss, "loss", "", "loss: exp|logistic|hinge (algorithm default if empty)")
	fs.StringVar(&f.opts.Mode, "mode", "", "mode: stagewise|corrective")
	fs.StringVar(&f.opts.Precision, "precision", "", "boostmetric's Gram arithmetic: auto (single precision for the direction when 2·N·D² ≥ 1e9, every stopping test in double) | double | mixed")
	fs.IntVar(&f.opts.Passes, "passes", 0, "number of passes (multi-pass BoostMetric)")
	fs.IntVar(&f.opts.Iters, "iters", 0, "maximum iterations of every phase of a solve, Newton polish included; LMNN's descent steps (> 0; default: the algorithm's)")
	fs.Float64Var(&f.opts.Nu, "nu", 0, "BoostMetric ν")
	fs.StringVar(&f.opts.WorkingSet, "working-set", "", "FrobMetric working set: auto|on|off (default auto: on from 20,000 triplets)")
	fs.Float64Var(&f.opts.Mu, "mu", 0, "LMNN push weight μ in (0, 1]: (1−μ)·pull + μ·push (0: the default 0.5)")
	fs.IntVar(&f.opts.Rank, "rank", 0, "LMNN low-rank factor: learn M = L Lᵀ with L of this many columns (1 … the dimension after preprocessing), by gradient steps on L started from the top principal axes; 0: the full-rank M")
	fs.StringVar(&f.triplets, "triplets", "", "learn from the triplets of this CSV file (header i,j,k: 0-based rows of --data, row i closer to j than to k; - : standard input) instead of labels")
	fs.StringVar(&f.pairs, "pairs", "", "learn from the pairs of this CSV file (header i,j,y: y = 1 similar, -1 dissimilar), turned into triplets (i,j,k) for every similar (i,j) and dissimilar (i,k)")
	fs.Float64Var(&f.holdout, "holdout", 0.2, "share of the constraints held out to score the metric (and of the rest to choose C from a list); 0: train on all")
	noLabelsFlag(fs, "implied with --triplets/--pairs unless --label-col is given")
	fs.StringVar(&f.cList, "C", "", "C: the weight of the average hinge loss (the per-triplet slack weight is C/m for m triplets; psdboost needs C ≥ 1); a comma-separated list is chosen on the validation set")
	rules := trainFlagRules(&f)
	annotateFlagRules(fs, rules)
	if err := parseFlags(fs, "train", args); err != nil {
		return err
	}
	if f.algo == "" || f.dataSpec == "" {
		return usagef("train: --algo and --data are required (algorithms: %s)", strings.Join(train.Names(), ", "))
	}
	if f.k < 1 || f.pca < 0 {
		return usagef("train: --k must be ≥ 1 and --pca ≥ 0")
	}
	itersGiven := false
	fs.Visit(func(fl *flag.Flag) { itersGiven = itersGiven || fl.Name == "iters" })
	if itersGiven && f.opts.Iters <= 0 {
		return usagef("train: --iters %d: the iteration limit must be > 0 (omit it for the algorithm's default)", f.opts.Iters)
	}
	if err := checkNonNegative("train", map[string]int{"iters": f.opts.Iters, "passes": f.opts.Passes, "rank": f.opts.Rank}); err != nil {
		return err
	}
	var err error
	if f.opts.C, err = parseNumberList("C", f.cList); err != nil {
		return err
	}
	if _, err := train.Lookup(f.algo); err != nil {
		return &usageError{err}
	}
	f.algo = strings.ToLower(f.algo)
	chosen := "--algo " + f.algo
	if f.algo == "boostmetric" && f.opts.Loss != "" {
		chosen += " --loss " + f.opts.Loss
	}
	switch {
	case f.triplets != "" && f.pairs != "":
		return usagef("train: give --triplets or --pairs, not both")
	case f.triplets != "":
		chosen += " --triplets"
	case f.pairs != "":
		chosen += " --pairs"
	}
	if err := checkFlagRules(fs, "train", chosen, rules); err != nil {
		return err
	}
	if math.IsNaN(f.opts.Mu) || f.opts.Mu < 0 || f.opts.Mu > 1 {
		return usagef("train: --mu %v: want a push weight in (0, 1] (omit it for the default 0.5)", f.opts.Mu)
	}
	if f.constraintMode() {
		if f.opts.Passes > 1 {
			return usagef("train: --passes %d regenerates triplets from labels after each pass; it cannot learn from --triplets or --pairs", f.opts.Passes)
		}
		if !(f.holdout >= 0 && f.holdout < 1) {
			return usagef("train: --holdout %v: want a share in [0, 1)", f.holdout)
		}
		// Every CSV column is a feature unless --label-col names the label
		// column (whose labels are then read and ignored).
		if f.labelCol == "" {
			cur.noLabels = true
		}
	}
	b, err := resolveBackend(f.backend)
	if err != nil {
		return err
	}
	if mpi.Launched() { // one rank of an MPI job: train_mpi.go
		return runTrainMPI(ctx, env, fs, f, b, start)
	}
	prog := newProgress(env).withTotal(trainIterBudget(f))
	if trainProgressHook != nil {
		prog.hook = func(e progress.Event) { trainProgressHook(e.Message) }
	}
	say := prog.printf

	// Data and splits.
	tLoad := time.Now()
	d, err := loadMetricData(f.dataSpec, f.labelCol)
	if err != nil {
		return err
	}
	if f.constraintMode() {
		return runTrainConstraints(ctx, env, f, d, b, prog, start, time.Since(tLoad).Seconds())
	}
	tr, val, test, splitDesc, err := trainSplits(f, d)
	if err != nil {
		return err
	}
	loadSeconds := time.Since(tLoad).Seconds()
	say("train: %s: %d train, %d validation, %d test points, %d features", f.dataSpec, tr.Len(), val.Len(), test.Len(), tr.Dim())
	// --rank is checked against the dimension the learner will see (after
	// --pca) before the triplets are built.
	if dim, what := tr.Dim(), "features"; f.opts.Rank > 0 {
		if f.pca > 0 && f.pca < dim {
			dim, what = f.pca, "dimensions after --pca"
		}
		if f.opts.Rank > dim {
			return usagef("train: --rank %d: the training data has %d %s; want 1 ≤ rank ≤ %d (or 0 for the full-rank M)", f.opts.Rank, dim, what, dim)
		}
	}

	rep, err := train.RunExperiment(ctx, train.Experiment{
		Algo: f.algo, Train: tr, Val: val, Test: test, Standardize: f.standardize, PCA: f.pca,
		K: f.k, Seed: f.seed, Backend: b, Options: f.opts, Progress: prog.event,
		Source: trainSource(f, d, test, splitDesc),
	})
	// A cancellation (Ctrl-C) with a metric in hand keeps the finished
	// work: the model is written, marked interrupted and not converged, the
	// summary printed, and the exit status is 130.
	interrupted := err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) && rep != nil && rep.Metric != nil
	if err != nil && !interrupted {
		if ctx.Err() != nil {
			return &exitStatus{code: exitInterrupted, err: err}
		}
		return err
	}
	runErr := err
	rep.Phases.Load = loadSeconds
	metric, pipe := rep.Metric, rep.Pipeline
	testErr, eucTest, valErr := rep.TestError, rep.EuclideanTestErr, rep.ValError
	sum := trainSummary{
		Algo: rep.Algo, Backend: rep.Backend, Data: f.dataSpec, Split: splitDesc,
		NTrain: rep.NTrain, NVal: rep.NVal, NTest: rep.NTest, InputDim: rep.InputDim, Dim: rep.Dim, Rank: rep.Rank,
		K: rep.K, Triplets: rep.Triplets, Iterations: rep.Iterations, TrainSeconds: rep.TrainSeconds,
		Objective: finiteOrNil(rep.Objective), DualityGap: finiteOrNil(rep.DualityGap), ChosenC: finiteOrNil(rep.ChosenC),
		ValError: finiteOrNil(valErr), TestError: testErr, EuclideanTestError: eucTest, EuclideanValError: finiteOrNil(rep.EuclideanValError),
		Curve: rep.Curve, Converged: rep.Converged, Warnings: append([]string{}, rep.Warnings...), Interrupted: interrupted,
		Phases: rep.Phases, CPolicy: rep.CPolicy, CSearched: rep.Searched,
	}
	for _, c := range rep.Candidates {
		sum.Candidates = append(sum.Candidates, candidateSummary{C: c.C, ValError: finiteOrNil(c.ValError), Iterations: c.Iterations, DualityGap: finiteOrNil(c.DualityGap), Converged: c.Converged})
	}
	for _, w := range sum.Warnings {
		fmt.Fprintf(env.stderr, "psdlearn: warning: %s\n", strings.ReplaceAll(w, "\n", " "))
	}
	if f.out != "" {
		m := &model.Model{
			Kind: model.KindMetric, Algo: sum.Algo, Metric: metric, Classes: tr.Classes,
			Info: map[string]any{
				"data": f.dataSpec, "split": splitDesc, "test": f.testSpec, "seed": f.seed, "k": f.k,
				"standardize": f.standardize, "pca": f.pca, "loss": f.opts.Loss, "mode": f.opts.Mode,
				"passes": f.opts.Passes, "iters": f.opts.Iters, "nu": f.opts.Nu, "C": f.opts.C, "working_set": f.opts.WorkingSet,
				"mu": f.opts.Mu, "rank": f.opts.Rank,
				"chosen_c": rep.ChosenC, "c_policy": rep.CPolicy, "c_searched": rep.Searched, "iterations": rep.Iterations, "objective": rep.Objective,
				"duality_gap": rep.DualityGap, "val_error": valErr, "test_error": testErr,
				"euclidean_test_error": eucTest, "euclidean_val_error": rep.EuclideanValError, "backend": b.Name(), "triplets": rep.Triplets,
				"interrupted": interrupted,
			},
			Certificate: &model.Certificate{
				Converged: rep.Converged, Gap: rep.DualityGap, Tolerance: rep.GapTol, Reason: rep.Reason,
				Interrupted: interrupted, Warnings: rep.Warnings,
			},
			Provenance: rep.Provenance,
		}
		if !pipe.Empty() {
			m.Preprocess = pipe
		}
		if err := m.SaveFile(f.out); err != nil {
			return fmt.Errorf("train: %w", err)
		}
		sum.Model = f.out
	}
	sum.TotalSeconds = time.Since(start).Seconds()
	sum.PeakRSSMB = peakRSSMB()
	if err := printTrainSummary(env, f, rep, sum); err != nil {
		return err
	}
	if interrupted {
		return &exitStatus{code: exitInterrupted, err: runErr, reported: true}
	}
	return nil
}

// trainFlagRules says which algorithms the algorithm flags of train apply
// to; a flag given for another is a usage error, not silently ignored.
// boostmetric with the hinge loss runs PSDBoost.
func trainFlagRules(f *trainFlags) []flagRule {
	boostSmooth := func() bool { return f.algo == "boostmetric" && !strings.EqualFold(f.opts.Loss, "hinge") }
	hasC := func() bool {
		return f.algo == "frobmetric" || f.algo == "psdboost" || f.algo == "itml" || f.algo == "boostmetric" && strings.EqualFold(f.opts.Loss, "hinge")
	}
	const smooth = "boostmetric with the exp or logistic loss"
	const fromLabels = "learning from labels, without --triplets or --pairs"
	labelMode := func() bool { return !f.constraintMode() }
	return []flagRule{
		{"loss", "boostmetric, psdboost", func() bool { return oneOf(f.algo, "boostmetric", "psdboost") }},
		{"mode", smooth, boostSmooth},
		{"precision", smooth, boostSmooth},
		{"passes", smooth, boostSmooth},
		{"nu", smooth, boostSmooth},
		{"working-set", "frobmetric", func() bool { return f.algo == "frobmetric" }},
		{"mu", "lmnn", func() bool { return f.algo == "lmnn" }},
		{"rank", "lmnn", func() bool { return f.algo == "lmnn" }},
		{"C", "frobmetric, psdboost, boostmetric --loss hinge, itml (as γ)", hasC},
		{"holdout", "--triplets or --pairs", f.constraintMode},
		{"no-labels", "--triplets or --pairs", f.constraintMode},
		{"split", fromLabels, labelMode},
		{"test", fromLabels, labelMode},
		{"k", fromLabels, labelMode},
	}
}

// trainIterBudget is the iteration budget of one solve, for the progress
// lines: --iters, else the algorithm's default (0: unknown). FrobMetric
// reports objective evaluations, a few more than its iterations.
func trainIterBudget(f trainFlags) int {
	if f.opts.Iters > 0 {
		return f.opts.Iters
	}
	switch {
	case f.algo == "frobmetric":
		return 20000 // frob: MetricOptions.MaxIter's default
	case f.algo == "psdboost", f.algo == "boostmetric" && strings.EqualFold(f.opts.Loss, "hinge"):
		return 1000 // boost: Options.Iters' default for PSDBoost
	case f.algo == "boostmetric":
		return 500 // boost: Options.Iters' default for BoostMetric
	case f.algo == "itml":
		return 1000 // itml: DefaultMaxIter cycles
	case f.algo == "lmnn":
		return 1000 // lmnn: Options.MaxIter's default
	}
	return 0
}

// trainProgressHook, if non-nil, receives every progress message of
// psdlearn train unthrottled (tests use it to act at a given stage).
var trainProgressHook func(msg string)

// printTrainSummary prints the summary of a train run: one JSON object
// under --json, else a few lines of text.
func printTrainSummary(env *cmdEnv, f trainFlags, rep *train.Report, sum trainSummary) error {
	testErr, eucTest, valErr := rep.TestError, rep.EuclideanTestErr, rep.ValError
	if env.json {
		return emitJSON(env, sum)
	}
	w := env.stdout
	fmt.Fprintf(w, "%s on %s (backend %s): %d train / %d validation / %d test points, %d features", sum.Algo, f.dataSpec, sum.Backend, sum.NTrain, sum.NVal, sum.NTest, sum.InputDim)
	if sum.Dim != sum.InputDim {
		fmt.Fprintf(w, " → %d after PCA", sum.Dim)
	}
	fmt.Fprintf(w, "\n  %d triplets (k = %d), %d iterations, %.2f s training", sum.Triplets, sum.K, sum.Iterations, sum.TrainSeconds)
	if !math.IsNaN(rep.Objective) {
		fmt.Fprintf(w, ", objective %.6g", rep.Objective)
	}
	if !math.IsNaN(rep.DualityGap) {
		fmt.Fprintf(w, ", duality gap %.3g", rep.DualityGap)
	}
	if !math.IsNaN(rep.ChosenC) {
		fmt.Fprintf(w, ", C = %g", rep.ChosenC)
	}
	if sum.Interrupted {
		fmt.Fprintf(w, "\n  interrupted: the model is the best found so far, not converged; test evaluation skipped")
	} else {
		fmt.Fprintf(w, "\n  %d-NN test error %.2f%% (Euclidean %.2f%%)", f.k, 100*testErr, 100*eucTest)
	}
	if !math.IsNaN(valErr) {
		fmt.Fprintf(w, ", validation %.2f%%", 100*valErr)
	}
	fmt.Fprintf(w, "; metric rank %d", sum.Rank)
	if !sum.Converged {
		fmt.Fprintf(w, "; NOT converged")
	}
	fmt.Fprintln(w)
	ph := sum.Phases
	fmt.Fprintf(w, "  phases: load %.2f s, preprocess %.2f s, triplets %.2f s, train %.2f s", ph.Load, ph.Preprocess, ph.Triplets, ph.Train)
	for _, s := range ph.Solves {
		if math.IsNaN(s.C) {
			fmt.Fprintf(w, " (solve %.2f s)", s.Seconds)
		} else {
			fmt.Fprintf(w, " (C = %g: %.2f s)", s.C, s.Seconds)
		}
	}
	fmt.Fprintf(w, ", evaluation %.2f s\n", ph.Evaluation)
	if len(rep.Candidates) > 0 {
		fmt.Fprintf(w, "  validation error by C:")
		for i, c := range rep.Candidates {
			sep := ","
			if i == 0 {
				sep = ""
			}
			fmt.Fprintf(w, "%s %g → %.2f%%", sep, c.C, 100*c.ValError)
		}
		fmt.Fprintln(w)
	}
	if sum.Model != "" {
		fmt.Fprintf(w, "  model written to %s\n", sum.Model)
	}
	return nil
}

// trainSource describes the data of a train run for the model's provenance:
// --data as read (d), the split and the --test set, if any.
func trainSource(f trainFlags, d, test *data.Dataset, split string) *train.Source {
	src := &train.Source{Name: f.dataSpec, Data: d, Split: split}
	if f.testSpec != "" {
		src.TestName, src.Test = f.testSpec, test
	}
	return src
}

// trainSplits splits d, the --data loaded, (and loads --test) into train,
// validation (possibly nil) and test parts, with a description of the split.
func trainSplits(f trainFlags, d *data.Dataset) (tr, val, test *data.Dataset, desc string, err error) {
	if f.testSpec != "" {
		test, err = loadMetricData(f.testSpec, f.labelCol)
		if err != nil {
			return nil, nil, nil, "", err
		}
		if test.Dim() != d.Dim() {
			return nil, nil, nil, "", fmt.Errorf("train: --test has %d features, --data %d", test.Dim(), d.Dim())
		}
		if err := data.UnifyClasses(d, test); err != nil {
			return nil, nil, nil, "", err
		}
		if f.split == "" {
			return d, nil, test, "", nil
		}
		spec, err := data.ParseSplit(f.split)
		if err != nil {
			return nil, nil, nil, "", err
		}
		if spec.Parts() != 2 {
			return nil, nil, nil, "", fmt.Errorf("train: with --test, --split needs 2 parts (train,validation of --data), got %d", spec.Parts())
		}
		parts, err := spec.Apply(d, f.seed)
		if err != nil {
			return nil, nil, nil, "", err
		}
		return parts[0], parts[1], test, spec.String(), nil
	}
	split := f.split
	if split == "" {
		split = "0.7,0.15,0.15"
	}
	spec, err := data.ParseSplit(split)
	if err != nil {
		return nil, nil, nil, "", err
	}
	parts, err := spec.Apply(d, f.seed)
	if err != nil {
		return nil, nil, nil, "", err
	}
	switch len(parts) {
	case 2:
		return parts[0], nil, parts[1], spec.String(), nil
	case 3:
		return parts[0], parts[1], parts[2], spec.String(), nil
	}
	return nil, nil, nil, "", fmt.Errorf("train: --split needs 2 (train,test) or 3 (train,validation,test) parts, got %d", len(parts))
}

// runTrainConstraints is train with --triplets or --pairs: the metric is
// learned from the constraint file on the rows of d as read, with a seeded
// share --holdout of the constraints held out to score it (and, with
// several C, the same share of the rest to choose C). See
// train.ConstraintExperiment and docs/cli.md, "Constraint files".
func runTrainConstraints(ctx context.Context, env *cmdEnv, f trainFlags, d *data.Dataset, b engine.Backend, prog *progressLine, start time.Time, loadSeconds float64) error {
	kind, path := "triplets", f.triplets
	if f.pairs != "" {
		kind, path = "pairs", f.pairs
	}
	tLoad := time.Now()
	r, closeFile, err := openConstraintFile(env, path)
	if err != nil {
		return fmt.Errorf("train: --%s %s: %w", kind, path, err)
	}
	e := train.ConstraintExperiment{
		Algo: f.algo, Data: d, HoldOut: f.holdout, Standardize: f.standardize, PCA: f.pca,
		Seed: f.seed, Backend: b, Options: f.opts, Progress: prog.event,
		Source: &train.Source{Name: f.dataSpec, Data: d},
	}
	count := 0
	if kind == "triplets" {
		var ts *constraints.TripletSet
		ts, err = constraints.ReadTriplets(r, d.Len())
		if err == nil {
			e.Triplets, count = ts.Triplets, ts.Len()
		}
	} else {
		e.Pairs, err = constraints.ReadPairs(r, d.Len())
		if err == nil {
			count = e.Pairs.Len()
		}
	}
	closeFile()
	if err != nil {
		return fmt.Errorf("train: --%s %s: %w", kind, path, err)
	}
	loadSeconds += time.Since(tLoad).Seconds()
	if len(e.Options.C) == 0 {
		e.Options.C = defaultCs(f)
	}
	prog.printf("train: %s: %d points, %d features; %d %s from %s", f.dataSpec, d.Len(), d.Dim(), count, kind, path)
	rep, err := train.RunConstraintExperiment(ctx, e)
	interrupted := err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) && rep != nil && rep.Metric != nil
	if err != nil && !interrupted {
		if ctx.Err() != nil {
			return &exitStatus{code: exitInterrupted, err: err}
		}
		return err
	}
	runErr := err
	rep.Phases.Load = loadSeconds
	cs := &constraintSummary{
		Constraints: path, ConstraintKind: kind, ConstraintCount: count, HoldOut: f.holdout,
		ValTriplets: rep.ValTriplets, HeldOutTriplets: rep.HeldOutTriplets,
		Satisfaction: finiteOrNil(rep.Satisfaction), EuclideanSatisfaction: finiteOrNil(rep.EuclideanSatisfaction),
	}
	sum := trainSummary{
		Algo: rep.Algo, Backend: rep.Backend, Data: f.dataSpec,
		NTrain: rep.NTrain, InputDim: rep.InputDim, Dim: rep.Dim, Rank: rep.Rank,
		Triplets: rep.Triplets, Iterations: rep.Iterations, TrainSeconds: rep.TrainSeconds,
		Objective: finiteOrNil(rep.Objective), DualityGap: finiteOrNil(rep.DualityGap), ChosenC: finiteOrNil(rep.ChosenC),
		ValError: finiteOrNil(rep.ValError), TestError: math.NaN(), EuclideanTestError: math.NaN(), EuclideanValError: finiteOrNil(rep.EuclideanValError),
		Curve: rep.Curve, Converged: rep.Converged, Warnings: append([]string{}, rep.Warnings...), Interrupted: interrupted,
		Phases: rep.Phases, constraintSummary: cs,
	}
	for _, c := range rep.Candidates {
		sum.Candidates = append(sum.Candidates, candidateSummary{C: c.C, ValError: finiteOrNil(c.ValError), Iterations: c.Iterations, DualityGap: finiteOrNil(c.DualityGap), Converged: c.Converged})
	}
	for _, w := range sum.Warnings {
		fmt.Fprintf(env.stderr, "psdlearn: warning: %s\n", strings.ReplaceAll(w, "\n", " "))
	}
	if f.out != "" {
		m := &model.Model{
			Kind: model.KindMetric, Algo: sum.Algo, Metric: rep.Metric,
			Info: map[string]any{
				"data": f.dataSpec, kind: path, "holdout": f.holdout, "seed": f.seed,
				"standardize": f.standardize, "pca": f.pca, "loss": f.opts.Loss, "mode": f.opts.Mode,
				"iters": f.opts.Iters, "nu": f.opts.Nu, "C": e.Options.C, "working_set": f.opts.WorkingSet,
				"chosen_c": rep.ChosenC, "c_policy": rep.CPolicy, "c_searched": rep.Searched, "iterations": rep.Iterations, "objective": rep.Objective,
				"duality_gap": rep.DualityGap, "triplets": rep.Triplets, "heldout_triplets": rep.HeldOutTriplets,
				"triplet_satisfaction": rep.Satisfaction, "triplet_satisfaction_euclidean": rep.EuclideanSatisfaction,
				"backend": b.Name(), "interrupted": interrupted,
			},
			Certificate: &model.Certificate{
				Converged: rep.Converged, Gap: rep.DualityGap, Tolerance: rep.GapTol, Reason: rep.Reason,
				Interrupted: interrupted, Warnings: rep.Warnings,
			},
			Provenance: rep.Provenance,
		}
		if !rep.Pipeline.Empty() {
			m.Preprocess = rep.Pipeline
		}
		if err := m.SaveFile(f.out); err != nil {
			return fmt.Errorf("train: %w", err)
		}
		sum.Model = f.out
	}
	sum.TotalSeconds = time.Since(start).Seconds()
	sum.PeakRSSMB = peakRSSMB()
	if err := printConstraintSummary(env, f, sum); err != nil {
		return err
	}
	if interrupted {
		return &exitStatus{code: exitInterrupted, err: runErr, reported: true}
	}
	return nil
}

// defaultCs is the list of C values train chooses among when --C is not
// given: the trainers' own defaults (which they choose among on labelled
// validation rows; with a constraint file the choice is made on validation
// triplets instead), nil for an algorithm without C.
func defaultCs(f trainFlags) []float64 {
	switch {
	case f.algo == "frobmetric":
		return append([]float64(nil), frob.DefaultCs...)
	case f.algo == "psdboost", f.algo == "boostmetric" && strings.EqualFold(f.opts.Loss, "hinge"):
		var cs []float64
		for _, v := range boost.DefaultViolationFractions {
			cs = append(cs, 1/v)
		}
		return cs
	}
	return nil
}

// openConstraintFile opens a constraint file, or standard input for "-"
// (once per command line).
func openConstraintFile(env *cmdEnv, path string) (io.Reader, func(), error) {
	if path == data.StdinSpec {
		if cur.stdinUsed {
			return nil, nil, usagef("standard input can be read only once (--data is - too)")
		}
		cur.stdinUsed = true
		return env.stdin, func() {}, nil
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	return fh, func() { fh.Close() }, nil
}

// printConstraintSummary prints the summary of a train run on a constraint
// file: one JSON object under --json, else a few lines of text.
func printConstraintSummary(env *cmdEnv, f trainFlags, sum trainSummary) error {
	if env.json {
		return emitJSON(env, sum)
	}
	cs, w := sum.constraintSummary, env.stdout
	fmt.Fprintf(w, "%s on %s (backend %s): %d points, %d features", sum.Algo, f.dataSpec, sum.Backend, sum.NTrain, sum.InputDim)
	if sum.Dim != sum.InputDim {
		fmt.Fprintf(w, " → %d after PCA", sum.Dim)
	}
	fmt.Fprintf(w, "; %d %s from %s\n", cs.ConstraintCount, cs.ConstraintKind, cs.Constraints)
	fmt.Fprintf(w, "  %d training, %d validation, %d held-out triplets; %d iterations, %.2f s training", sum.Triplets, cs.ValTriplets, cs.HeldOutTriplets, sum.Iterations, sum.TrainSeconds)
	if v, ok := sum.ChosenC.(float64); ok {
		fmt.Fprintf(w, ", C = %g", v)
	}
	fmt.Fprintln(w)
	switch {
	case sum.Interrupted:
		fmt.Fprintf(w, "  interrupted: the model is the best found so far, not converged; held-out evaluation skipped")
	case cs.Satisfaction == nil:
		fmt.Fprintf(w, "  no held-out triplet (--holdout 0): nothing to score on")
	default:
		fmt.Fprintf(w, "  held-out triplets satisfied: %.2f%% (Euclidean %.2f%%)", 100*cs.Satisfaction.(float64), 100*cs.EuclideanSatisfaction.(float64))
	}
	fmt.Fprintf(w, "; metric rank %d", sum.Rank)
	if !sum.Converged {
		fmt.Fprintf(w, "; NOT converged")
	}
	fmt.Fprintln(w)
	if len(sum.Candidates) > 0 {
		fmt.Fprintf(w, "  validation triplets violated by C:")
		for i, c := range sum.Candidates {
			sep := ","
			if i == 0 {
				sep = ""
			}
			if v, ok := c.ValError.(float64); ok {
				fmt.Fprintf(w, "%s %g → %.2f%%", sep, c.C, 100*v)
			} else {
				fmt.Fprintf(w, "%s %g → n/a", sep, c.C)
			}
		}
		fmt.Fprintln(w)
	}
	if sum.Model != "" {
		fmt.Fprintf(w, "  model written to %s\n", sum.Model)
	}
	return nil
}
