package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/algos/frob"
	"github.com/psdlearn/psdlearn/algos/itml"
	"github.com/psdlearn/psdlearn/algos/lmnn"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/progress"
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
	Objective          jsonFloat          `json:"objective"`
	DualityGap         jsonFloat          `json:"duality_gap"`
	ChosenC            jsonFloat          `json:"chosen_c"`
	ValError           jsonFloat          `json:"val_error"`
	TestError          jsonFloat          `json:"test_error"`
	EuclideanTestError jsonFloat          `json:"euclidean_test_error"`
	EuclideanValError  jsonFloat          `json:"euclidean_val_error"`
	Candidates         []candidateSummary `json:"candidates,omitempty"`
	// CPolicy says where the values of C tried came from and CSearched
	// lists them (see psdlearn.Result.CPolicy and Searched).
	CPolicy   string    `json:"c_policy,omitempty"`
	CSearched []float64 `json:"c_searched,omitempty"`
	Model     string    `json:"model,omitempty"`
	PeakRSSMB jsonFloat `json:"peak_rss_mb"`
	mpiFigures
	// Converged is the certificate of the returned model; Warnings say why
	// a solve stopped without one (also printed on stderr).
	Converged bool     `json:"converged"`
	Warnings  []string `json:"warnings"`
	// Interrupted: the run was cancelled (Ctrl-C) and the model is the best
	// one found before; the test evaluation is skipped (null).
	Interrupted bool          `json:"interrupted"`
	Phases      phasesSummary `json:"phases"`
	Curve       []float64     `json:"-"`
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
	Satisfaction          jsonFloat `json:"triplet_satisfaction"`
	EuclideanSatisfaction jsonFloat `json:"triplet_satisfaction_euclidean"`
}

// candidateSummary is one row of the model-selection table: a C value tried
// and how its model did on the validation rows.
type candidateSummary struct {
	C          float64   `json:"c"`
	ValError   jsonFloat `json:"val_error"`
	Iterations int       `json:"iterations"`
	DualityGap jsonFloat `json:"duality_gap"`
	Converged  bool      `json:"converged"`
}

// trainFlags are the options of psdlearn train.
type trainFlags struct {
	algo, dataSpec, labelCol, testSpec, split, backend, out string
	standardize                                             bool
	pca, k                                                  int
	seed                                                    uint64
	opts                                                    trainOpts
	cList                                                   string
	// Constraint files (--triplets, --pairs) and the share held out.
	triplets, pairs string
	holdout         float64
}

// trainOpts are the algorithm flags of train, as given (train_mpi.go
// reads them too).
type trainOpts struct {
	Loss, Mode, Precision string
	Passes, Iters         int
	Nu                    float64
	C                     []float64
	WorkingSet            string
	Mu                    float64
	Rank                  int
}

// constraintMode reports whether train learns from a constraint file.
func (f *trainFlags) constraintMode() bool { return f.triplets != "" || f.pairs != "" }

func runTrain(ctx context.Context, env *cmdEnv, args []string) error {
	start := time.Now()
	fs := newFlagSet(env, "train")
	var f trainFlags
	defineTrainFlags(fs, &f)
	rules := trainFlagRules(&f)
	annotateFlagRules(fs, rules)
	if err := parseFlags(fs, "train", args); err != nil {
		return err
	}
	if err := checkTrainFlags(fs, &f, rules); err != nil {
		return err
	}
	b, err := resolveBackend(f.backend)
	if err != nil {
		return err
	}
	j, ctx, env, stop, err := startJob(ctx, env, "train") // one rank of an MPI job: mpijob.go
	if err != nil {
		return err
	}
	defer stop()
	return train(ctx, env, f, b, j, start)
}

// train runs the pipeline of psdlearn train on the parsed flags and
// prints its summary.
func train(ctx context.Context, env *cmdEnv, f trainFlags, b engine.Backend, j *mpiJob, start time.Time) error {
	prog := newProgress(env).withCap(trainIterBudget(f))
	if trainProgressHook != nil {
		prog.hook = func(e progress.Event) { trainProgressHook(e.Message) }
	}
	tLoad := time.Now()
	job, err := loadTrainJob(env, f, prog, j)
	if err != nil {
		return err
	}
	loadSeconds := time.Since(tLoad).Seconds()
	c := psdlearn.Common{Standardize: f.standardize, PCA: f.pca, K: f.k, Validation: job.val, HoldOut: f.holdout, Seed: f.seed, Backend: b, Progress: prog.event}
	if j.ex != nil {
		c.Executor = j.ex
	}
	l, err := trainLearner(f, c)
	if err != nil {
		return err
	}
	if f.constraintMode() && f.holdout == 0 && len(l.Candidates()) > 1 {
		return usagef("train: choosing among %d values of C needs held-out constraints (a --holdout above 0), or give one --C", len(l.Candidates()))
	}
	res, err := psdlearn.Run(ctx, l, job.data)
	// A cancellation (Ctrl-C) with a metric in hand keeps the finished
	// work: the model is written, marked interrupted and not converged, the
	// summary printed, and the exit status is 130. A solve that stopped
	// without its certificate is reported by its warnings.
	interrupted := err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) && res != nil && res.Model != nil
	switch {
	case err != nil && ctx.Err() != nil && !interrupted:
		return &exitStatus{code: exitInterrupted, err: err}
	case err != nil && !interrupted && !(errors.Is(err, errs.ErrNotConverged) && res != nil):
		return err
	}
	runErr := err
	res.Phases.Load = loadSeconds
	for _, w := range job.warnings {
		addWarning(res, w)
	}
	sum := trainSummaryOf(f, job, res)
	for _, w := range sum.Warnings {
		warnUser(w)
	}
	if sum.mpiFigures, err = j.figures("train"); err != nil {
		return err
	}
	if f.out != "" && j.root() {
		if err := saveTrainModel(f, job, res); err != nil {
			return err
		}
		sum.Model = f.out
	}
	sum.TotalSeconds = time.Since(start).Seconds()
	sum.PeakRSSMB = jsonFloat(peakRSSMB())
	if err := printTrainSummary(env, f, sum); err != nil {
		return err
	}
	if interrupted {
		return &exitStatus{code: exitInterrupted, err: runErr, reported: true}
	}
	return nil
}

// defineTrainFlags defines the flags of train on fs.
func defineTrainFlags(fs *flag.FlagSet, f *trainFlags) {
	fs.StringVar(&f.algo, "algo", "", "algorithm: "+strings.Join(psdlearn.Algorithms(), "|"))
	fs.StringVar(&f.dataSpec, "data", "", "data SPEC: file.csv, file.libsvm|.svm|.txt, idx:IMAGES:LABELS, builtin:NAME, or - (CSV on standard input)")
	labelColFlag(fs, &f.labelCol)
	fs.StringVar(&f.testSpec, "test", "", "test data SPEC; --data is then train (and validation, with a 2-part --split)")
	fs.StringVar(&f.split, "split", "", "train,val,test fractions (seeded) or rows:TRAIN,VAL,TEST row ranges; 2 parts are train,test (train,val with --test) (default "+data.DefaultSplit+")")
	fs.BoolVar(&f.standardize, "standardize", false, "standardise features (mean and deviation of the training part)")
	fs.IntVar(&f.pca, "pca", 0, "project onto the top N principal components of the training part (0: off)")
	fs.IntVar(&f.k, "k", psdlearn.DefaultK, "k of the triplets (k targets × k impostors per point) and of the k-NN evaluation")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed (split and algorithm)")
	fs.StringVar(&f.backend, "backend", "", "numerical backend: "+strings.Join(engine.Names(), "|")+" (default "+engine.Default().Name()+")")
	fs.StringVar(&f.out, "out", "", "write the model (metric and preprocessing) to this JSON file")
	fs.StringVar(&f.opts.Loss, "loss", "", "loss: exp|logistic|hinge (algorithm default if empty)")
	fs.StringVar(&f.opts.Mode, "mode", "", "mode: stagewise|corrective")
	fs.StringVar(&f.opts.Precision, "precision", "", "boostmetric's Gram arithmetic: auto (single precision for the direction when 2·N·D² ≥ 1e9, every stopping test in double) | double | mixed")
	fs.IntVar(&f.opts.Passes, "passes", 0, "number of passes (multi-pass BoostMetric)")
	fs.IntVar(&f.opts.Iters, "iters", 0, "maximum iterations of every phase of a solve, Newton polish included; LMNN's descent steps (> 0; default: the algorithm's)")
	fs.Float64Var(&f.opts.Nu, "nu", 0, "BoostMetric ν")
	fs.StringVar(&f.opts.WorkingSet, "working-set", "", fmt.Sprintf("FrobMetric working set: auto|on|off (default auto: on from %d triplets)", frob.WorkingSetMinTriplets))
	fs.Float64Var(&f.opts.Mu, "mu", 0, fmt.Sprintf("LMNN push weight μ in (0, 1]: (1−μ)·pull + μ·push (0: the default %g)", lmnn.DefaultMu))
	fs.IntVar(&f.opts.Rank, "rank", 0, "LMNN low-rank factor: learn M = L Lᵀ with L of this many columns (1 … the dimension after preprocessing), by gradient steps on L started from the top principal axes; 0: the full-rank M")
	fs.StringVar(&f.triplets, "triplets", "", "learn from the triplets of this CSV file (header i,j,k: 0-based rows of --data, row i closer to j than to k; - : standard input) instead of labels")
	fs.StringVar(&f.pairs, "pairs", "", "learn from the pairs of this CSV file (header i,j,y: y = 1 similar, -1 dissimilar), turned into triplets (i,j,k) for every similar (i,j) and dissimilar (i,k)")
	fs.Float64Var(&f.holdout, "holdout", psdlearn.DefaultHoldOut, "share of the constraints held out to score the metric (and of the rest to choose C from a list); 0: train on all")
	noLabelsFlag(fs, "implied with --triplets/--pairs unless --label-col is given")
	fs.StringVar(&f.cList, "C", "", "C: the weight of the average hinge loss (the per-triplet slack weight is C/m for m triplets; psdboost needs C ≥ 1); a comma-separated list is chosen on the validation set (or by cross-validation without one)")
}

// checkTrainFlags checks the flags of train against one another.
func checkTrainFlags(fs *flag.FlagSet, f *trainFlags, rules []flagRule) error {
	if f.algo == "" || f.dataSpec == "" {
		return requireFlags("train", fmt.Sprintf(" (algorithms: %s)", strings.Join(psdlearn.Algorithms(), ", ")), []string{"algo", "data"}, f.algo, f.dataSpec)
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
	if _, err := psdlearn.Lookup(f.algo); err != nil {
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
		return usagef("train: --mu %v: want a push weight in (0, 1] (omit it for the default %g)", f.opts.Mu, lmnn.DefaultMu)
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
	} else {
		f.holdout = 0 // --holdout applies to constraint files only
	}
	return nil
}

// trainLearner is the learner the flags of train select, with the settings c.
func trainLearner(f trainFlags, c psdlearn.Common) (psdlearn.Learner, error) {
	o := f.opts
	hinge := strings.EqualFold(o.Loss, "hinge")
	switch {
	case f.algo == "boostmetric" && !hinge:
		e := psdlearn.BoostMetric{Common: c, Passes: o.Passes, Iters: o.Iters, Nu: o.Nu}
		var err error
		if o.Loss != "" {
			if e.Loss, err = boost.ParseLoss(o.Loss); err != nil {
				return nil, usagef("train: --loss %q: want exp, logistic or hinge", o.Loss)
			}
		}
		if o.Mode != "" {
			if e.Mode, err = boost.ParseMode(o.Mode); err != nil {
				return nil, usagef("train: --mode %q: want stagewise or corrective", o.Mode)
			}
		}
		if e.Precision, err = boost.ParsePrecision(o.Precision); err != nil {
			return nil, usagef("train: --precision %q: want auto, double or mixed", o.Precision)
		}
		return e, nil
	case f.algo == "psdboost" || f.algo == "boostmetric":
		if o.Loss != "" && !hinge {
			return nil, usagef("train: psdboost uses the hinge loss, not %q (use --algo boostmetric)", o.Loss)
		}
		return psdlearn.PSDBoost{Common: c, C: o.C, Iters: o.Iters}, nil
	case f.algo == "frobmetric":
		ws, err := frob.ParseWorkingSet(o.WorkingSet)
		if err != nil {
			return nil, usagef("train: --working-set %q: want auto, on or off", o.WorkingSet)
		}
		return psdlearn.FrobMetric{Common: c, C: o.C, Iters: o.Iters, WorkingSet: ws}, nil
	case f.algo == "itml":
		return psdlearn.ITML{Common: c, Gamma: o.C, Iters: o.Iters}, nil
	case f.algo == "lmnn":
		return psdlearn.LMNN{Common: c, Mu: o.Mu, Iters: o.Iters, Rank: o.Rank}, nil
	}
	// Another registered learner: its defaults with the shared settings.
	l, err := psdlearn.Lookup(f.algo)
	if err != nil {
		return nil, &usageError{err}
	}
	if s, ok := l.(interface{ SetCommon(psdlearn.Common) }); ok {
		s.SetCommon(c)
	}
	return l, nil
}

// trainJob is the data of a train run.
type trainJob struct {
	data psdlearn.Data
	// tr and val are the training and validation rows (labelled input);
	// split describes how they were cut.
	tr, val *data.Dataset
	split   string
	// kind, path and count describe a constraint file.
	kind, path string
	count      int
	// warnings are about the protocol (the split), not the solve.
	warnings []string
}

// loadTrainJob loads --data and cuts it into training, validation and test
// rows, or reads the constraint file.
func loadTrainJob(env *cmdEnv, f trainFlags, prog *progressLine, j *mpiJob) (*trainJob, error) {
	maxD, err := metricMaxFeatures()
	if err != nil {
		return nil, err
	}
	d, err := j.load("train", f.dataSpec, f.labelCol, maxD, fmt.Sprintf("what a metric's %d D×D matrices fit in the memory limit; raise it with --max-memory", metricWords), 0, prog,
		func() (*data.Dataset, error) { return loadMetricData(f.dataSpec, f.labelCol) })
	if err != nil {
		return nil, err
	}
	if f.constraintMode() {
		return loadConstraintJob(env, f, d, prog)
	}
	tr, val, test, splitDesc, err := trainSplits(f, d)
	if err != nil {
		return nil, err
	}
	prog.printf("train: %s: %d train, %d validation, %d test points, %d features", f.dataSpec, tr.Len(), val.Len(), test.Len(), tr.Dim())
	// --rank is checked against the dimension the learner will see (after
	// --pca) before the triplets are built.
	if dim, what := tr.Dim(), "features"; f.opts.Rank > 0 {
		if f.pca > 0 && f.pca < dim {
			dim, what = f.pca, "dimensions after --pca"
		}
		if f.opts.Rank > dim {
			return nil, usagef("train: --rank %d: the training data has %d %s; want 1 ≤ rank ≤ %d (or 0 for the full-rank M)", f.opts.Rank, dim, what, dim)
		}
	}
	job := &trainJob{tr: tr, val: val, split: splitDesc, warnings: splitWarnings(d, tr, val, test, f.testSpec != "")}
	job.data = psdlearn.Data{X: tr.X, Y: tr.Y, Test: test, Source: trainSource(f, d, test, splitDesc)}
	return job, nil
}

// loadConstraintJob reads the constraint file of train --triplets or
// --pairs on the rows of d as read (see psdlearn.Data.HoldOut and
// docs/cli.md, "Constraint files").
func loadConstraintJob(env *cmdEnv, f trainFlags, d *data.Dataset, prog *progressLine) (*trainJob, error) {
	job := &trainJob{kind: "triplets", path: f.triplets}
	if f.pairs != "" {
		job.kind, job.path = "pairs", f.pairs
	}
	job.data = psdlearn.Data{X: d.X, HoldOut: f.holdout, Source: &psdlearn.Source{Name: f.dataSpec, Data: d}}
	var err error
	if job.kind == "triplets" {
		job.data.Triplets, err = readConstraintFile(env, "train", job.kind, job.path, func(r io.Reader) (*constraints.TripletSet, error) { return constraints.ReadTriplets(r, d.Len()) })
		if err == nil {
			job.count = job.data.Triplets.Len()
		}
	} else {
		job.data.Pairs, err = readConstraintFile(env, "train", job.kind, job.path, func(r io.Reader) (*constraints.Pairs, error) { return constraints.ReadPairs(r, d.Len()) })
		if err == nil {
			job.count = job.data.Pairs.Len()
		}
	}
	if err != nil {
		return nil, err
	}
	prog.printf("train: %s: %d points, %d features; %d %s from %s", f.dataSpec, d.Len(), d.Dim(), job.count, job.kind, job.path)
	return job, nil
}

// trainSummaryOf is the summary of a train run.
func trainSummaryOf(f trainFlags, job *trainJob, r *psdlearn.Result) trainSummary {
	sum := trainSummary{
		Algo: r.Algorithm, Backend: r.Backend, Data: f.dataSpec, Split: job.split,
		NTrain: r.NTrain, NVal: r.NVal, NTest: r.NTest, InputDim: r.InputDim, Dim: r.Dim, Rank: r.Rank,
		K: r.K, Triplets: r.Triplets, Iterations: r.Iterations, TrainSeconds: r.Phases.Train,
		Objective: jsonFloat(r.Objective), DualityGap: jsonFloat(r.DualityGap), ChosenC: jsonFloat(r.ChosenC),
		ValError: jsonFloat(r.Eval.ValError), TestError: jsonFloat(r.Eval.TestError),
		EuclideanTestError: jsonFloat(r.Eval.EuclideanTestError), EuclideanValError: jsonFloat(r.Eval.EuclideanValError),
		Curve: r.Curve, Converged: r.Certificate.Converged, Warnings: append([]string{}, r.Warnings...),
		Interrupted: r.Interrupted, Phases: phasesOf(r.Phases), CPolicy: r.CPolicy, CSearched: r.Searched,
	}
	for _, s := range r.Scores {
		sum.Candidates = append(sum.Candidates, candidateSummary{C: s.C, ValError: jsonFloat(s.ValError), Iterations: s.Iterations, DualityGap: jsonFloat(s.DualityGap), Converged: s.Converged})
	}
	if job.kind != "" {
		sum.K = 0 // the triplets are given: no k
		sum.constraintSummary = &constraintSummary{
			Constraints: job.path, ConstraintKind: job.kind, ConstraintCount: job.count, HoldOut: f.holdout,
			ValTriplets: r.ValTriplets, HeldOutTriplets: r.HeldOutTriplets,
			Satisfaction: jsonFloat(r.Eval.Satisfaction), EuclideanSatisfaction: jsonFloat(r.Eval.EuclideanSatisfaction),
		}
	}
	return sum
}

// saveTrainModel writes the model of a train run to --out, with what the
// command line adds to the library's summary: the data, the split, the
// test set or the constraint file, and the class names.
func saveTrainModel(f trainFlags, job *trainJob, r *psdlearn.Result) error {
	m := r.Model
	m.Info["data"] = f.dataSpec
	if job.kind != "" {
		m.Info[job.kind] = job.path
	} else {
		m.Info["split"], m.Info["test"] = job.split, f.testSpec
		m.Classes = job.tr.Classes
	}
	if err := m.SaveFile(f.out); err != nil {
		return fmt.Errorf("train: %w", err)
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
		return frob.DefaultMaxIter
	case f.algo == "psdboost", f.algo == "boostmetric" && strings.EqualFold(f.opts.Loss, "hinge"):
		return psdlearn.DefaultPSDBoostIters
	case f.algo == "boostmetric":
		return psdlearn.DefaultBoostIters
	case f.algo == "itml":
		return itml.DefaultMaxIter
	case f.algo == "lmnn":
		return lmnn.DefaultMaxIter
	}
	return 0
}

// trainProgressHook, if non-nil, receives every progress message of
// psdlearn train unthrottled (tests use it to act at a given stage).
var trainProgressHook func(msg string)

// printTrainSummary prints the summary of a train run: one JSON object
// under --json, else a few lines of text.
func printTrainSummary(env *cmdEnv, f trainFlags, sum trainSummary) error {
	if env.json {
		return emitJSON(env, sum)
	}
	if sum.constraintSummary != nil {
		printConstraintSummary(env.stdout, f, sum)
		return nil
	}
	w := env.stdout
	fmt.Fprintf(w, "%s on %s (backend %s): %d train / %d validation / %d test points, %d features", sum.Algo, f.dataSpec, sum.Backend, sum.NTrain, sum.NVal, sum.NTest, sum.InputDim)
	if sum.Dim != sum.InputDim {
		fmt.Fprintf(w, " → %d after PCA", sum.Dim)
	}
	fmt.Fprintf(w, "\n  %d triplets (k = %d), %d iterations, %.2f s training", sum.Triplets, sum.K, sum.Iterations, sum.TrainSeconds)
	if sum.Objective.Finite() {
		fmt.Fprintf(w, ", objective %.6g", sum.Objective)
	}
	if sum.DualityGap.Finite() {
		fmt.Fprintf(w, ", duality gap %.3g", sum.DualityGap)
	}
	if sum.ChosenC.Finite() {
		fmt.Fprintf(w, ", C = %g", sum.ChosenC)
	}
	if sum.Interrupted {
		fmt.Fprintf(w, "\n  interrupted: the model is the best found so far, not converged; test evaluation skipped")
	} else {
		fmt.Fprintf(w, "\n  %d-NN test error %.2f%% (Euclidean %.2f%%)", f.k, 100*sum.TestError, 100*sum.EuclideanTestError)
	}
	if sum.ValError.Finite() {
		fmt.Fprintf(w, ", validation %.2f%%", 100*sum.ValError)
	}
	fmt.Fprintf(w, "; metric rank %d", sum.Rank)
	if !sum.Converged {
		fmt.Fprintf(w, "; NOT converged")
	}
	fmt.Fprintln(w)
	printPhases(w, sum.Phases)
	printCandidates(w, "validation error by C:", sum.Candidates)
	if sum.Model != "" {
		fmt.Fprintf(w, "  model written to %s\n", sum.Model)
	}
	return nil
}

// phasesSummary is psdlearn.Phases in the JSON output: the wall times of
// the stages of a run, in seconds, with every solve.
type phasesSummary struct {
	Load       float64        `json:"load"`
	Preprocess float64        `json:"preprocess"`
	Triplets   float64        `json:"triplets"`
	Train      float64        `json:"train"`
	Solves     []solveSummary `json:"solves"`
	Evaluation float64        `json:"evaluation"`
}

// solveSummary is one psdlearn.Solve: C is null for an algorithm without C.
type solveSummary struct {
	C                jsonFloat `json:"c"`
	Seconds          float64   `json:"seconds"`
	Iterations       int       `json:"iterations"`
	Converged        bool      `json:"converged"`
	Reason           string    `json:"reason,omitempty"`
	Fold             int       `json:"fold,omitempty"`
	SingleIterations int       `json:"single_precision_iterations,omitempty"`
}

// phasesOf is the summary of the phases of a run.
func phasesOf(ph psdlearn.Phases) phasesSummary {
	out := phasesSummary{Load: ph.Load, Preprocess: ph.Preprocess, Triplets: ph.Triplets, Train: ph.Train, Evaluation: ph.Evaluation}
	for _, s := range ph.Solves {
		out.Solves = append(out.Solves, solveSummary{C: jsonFloat(s.C), Seconds: s.Seconds, Iterations: s.Iterations, Converged: s.Converged,
			Reason: s.Reason, Fold: s.Fold, SingleIterations: s.SingleIterations})
	}
	return out
}

// printPhases prints the wall times of a train run.
func printPhases(w io.Writer, ph phasesSummary) {
	fmt.Fprintf(w, "  phases: load %.2f s, preprocess %.2f s, triplets %.2f s, train %.2f s", ph.Load, ph.Preprocess, ph.Triplets, ph.Train)
	for _, s := range ph.Solves {
		switch {
		case !s.C.Finite():
			fmt.Fprintf(w, " (solve %.2f s)", s.Seconds)
		case s.Fold > 0:
			fmt.Fprintf(w, " (fold %d, C = %g: %.2f s)", s.Fold, s.C, s.Seconds)
		default:
			fmt.Fprintf(w, " (C = %g: %.2f s)", s.C, s.Seconds)
		}
	}
	fmt.Fprintf(w, ", evaluation %.2f s\n", ph.Evaluation)
}

// printCandidates prints the validation score of every C tried.
func printCandidates(w io.Writer, title string, cs []candidateSummary) {
	if len(cs) == 0 {
		return
	}
	fmt.Fprintf(w, "  %s", title)
	for i, c := range cs {
		sep := ","
		if i == 0 {
			sep = ""
		}
		if c.ValError.Finite() {
			fmt.Fprintf(w, "%s %g → %.2f%%", sep, c.C, 100*c.ValError)
		} else {
			fmt.Fprintf(w, "%s %g → n/a", sep, c.C)
		}
	}
	fmt.Fprintln(w)
}

// trainSource describes the data of a train run for the model's provenance:
// --data as read (d), the split and the --test set, if any.
func trainSource(f trainFlags, d, test *data.Dataset, split string) *psdlearn.Source {
	src := &psdlearn.Source{Name: f.dataSpec, Data: d, Split: split}
	if f.testSpec != "" {
		src.TestName, src.Test = f.testSpec, test
	}
	return src
}

// cutSplit splits d by spec. Row ranges are cut as views of d (the rows
// stay in place, so the model's hash of the data as read is unchanged),
// saving a copy of the data; a seeded split copies (cutting it would
// reorder d).
func cutSplit(spec data.SplitSpec, d *data.Dataset, seed uint64) ([]*data.Dataset, error) {
	if spec.Rows != nil {
		return spec.Cut(d, seed)
	}
	return spec.Apply(d, seed)
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
			return nil, nil, nil, "", usagef("train: with --test, --split needs 2 parts (train,validation of --data), got %d", spec.Parts())
		}
		parts, err := cutSplit(spec, d, f.seed)
		if err != nil {
			return nil, nil, nil, "", err
		}
		return parts[0], parts[1], test, spec.String(), nil
	}
	split := f.split
	if split == "" {
		split = data.DefaultSplit
	}
	spec, err := data.ParseSplit(split)
	if err != nil {
		return nil, nil, nil, "", err
	}
	parts, err := cutSplit(spec, d, f.seed)
	if err != nil {
		return nil, nil, nil, "", err
	}
	switch len(parts) {
	case 2:
		return parts[0], nil, parts[1], spec.String(), nil
	case 3:
		return parts[0], parts[1], parts[2], spec.String(), nil
	}
	return nil, nil, nil, "", usagef("train: --split needs 2 (train,test) or 3 (train,validation,test) parts, got %d", len(parts))
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
	fh, err := openText(path)
	if err != nil {
		return nil, nil, err
	}
	return fh, func() { fh.Close() }, nil
}

// readConstraintFile reads the constraint file path (standard input for
// "-") given to cmd's flag --kind with read.
func readConstraintFile[T any](env *cmdEnv, cmd, kind, path string, read func(io.Reader) (T, error)) (T, error) {
	var zero T
	r, closeFile, err := openConstraintFile(env, path)
	if err != nil {
		return zero, fmt.Errorf("%s: --%s %s: %w", cmd, kind, path, err)
	}
	v, err := read(r)
	closeFile()
	if err != nil {
		return zero, fmt.Errorf("%s: --%s %s: %w", cmd, kind, path, err)
	}
	return v, nil
}

// printConstraintSummary prints the text summary of a train run on a
// constraint file.
func printConstraintSummary(w io.Writer, f trainFlags, sum trainSummary) {
	cs := sum.constraintSummary
	fmt.Fprintf(w, "%s on %s (backend %s): %d points, %d features", sum.Algo, f.dataSpec, sum.Backend, sum.NTrain, sum.InputDim)
	if sum.Dim != sum.InputDim {
		fmt.Fprintf(w, " → %d after PCA", sum.Dim)
	}
	fmt.Fprintf(w, "; %d %s from %s\n", cs.ConstraintCount, cs.ConstraintKind, cs.Constraints)
	fmt.Fprintf(w, "  %d training, %d validation, %d held-out triplets; %d iterations, %.2f s training", sum.Triplets, cs.ValTriplets, cs.HeldOutTriplets, sum.Iterations, sum.TrainSeconds)
	if sum.ChosenC.Finite() {
		fmt.Fprintf(w, ", C = %g", sum.ChosenC)
	}
	fmt.Fprintln(w)
	switch {
	case sum.Interrupted:
		fmt.Fprintf(w, "  interrupted: the model is the best found so far, not converged; held-out evaluation skipped")
	case !cs.Satisfaction.Finite():
		fmt.Fprintf(w, "  no held-out triplet (--holdout 0): nothing to score on")
	default:
		fmt.Fprintf(w, "  held-out triplets satisfied: %.2f%% (Euclidean %.2f%%)", 100*cs.Satisfaction, 100*cs.EuclideanSatisfaction)
	}
	fmt.Fprintf(w, "; metric rank %d", sum.Rank)
	if !sum.Converged {
		fmt.Fprintf(w, "; NOT converged")
	}
	fmt.Fprintln(w)
	printCandidates(w, "validation triplets violated by C:", sum.Candidates)
	if sum.Model != "" {
		fmt.Fprintf(w, "  model written to %s\n", sum.Model)
	}
}

// addWarning adds w to the warnings of r, of its certificate and of its
// model's certificate.
func addWarning(r *psdlearn.Result, w string) {
	r.Warnings = append(r.Warnings, w)
	r.Certificate.Warnings = append(r.Certificate.Warnings, w)
	if r.Model != nil && r.Model.Certificate != nil {
		r.Model.Certificate.Warnings = append(r.Model.Certificate.Warnings, w)
	}
}
