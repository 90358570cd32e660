package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/algos/meg"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/internal/input"
	"github.com/psdlearn/psdlearn/internal/npy"
	"github.com/psdlearn/psdlearn/internal/plots"
	"github.com/psdlearn/psdlearn/limits"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/warn"
	"gonum.org/v1/gonum/mat"
)

func init() {
	register(command{
		name:    "kernel",
		summary: "learn a kernel matrix from distances to a target kernel: MEG (online) or DefiniteBoost (batch)",
		run:     runKernel,
	})
}

// kernelFlags are the options of `psdlearn kernel`.
type kernelFlags struct {
	algo, data, labelCol, backend string
	objects                       int
	standardize                   bool
	gamma, gammaScale             float64
	seed                          uint64
	splits                        int
	// MEG
	steps       int
	noise       float64
	c           string
	eta         float64
	checkpoints int
	// DefiniteBoost
	epsScale   float64
	projection string
	tol        float64
	maxIter    int
	plot       string
	// output
	out     string
	saveRun int
	// the user's target, labels, distance examples and pairs (kernel_input.go)
	target, labels, distances, pairs string
	epsFar                           float64
	passes                           int
	dataSet                          bool // --data was given
}

// kernelSetup is the experiment's target with the data set's name.
type kernelSetup struct {
	*meg.Target
	name    string
	classes []string
	b       engine.Backend
	ds      *data.Dataset // --data as read (nil with --target or without a target)
	rows    []int         // the rows of ds that are the objects, in order
	// in is the user's input of kernel_input.go: the target file, the
	// labels, the distance examples of MEG and the constraints of
	// DefiniteBoost.
	in userInput
}

func runKernel(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "kernel")
	var f kernelFlags
	defineKernelFlags(fs, &f)
	isMEG := func() bool { return f.algo == "meg" }
	isBoost := func() bool { return f.algo == "definiteboost" }
	rules := []flagRule{
		{"steps", "meg", isMEG}, {"noise", "meg", isMEG}, {"c", "meg", isMEG}, {"eta", "meg", isMEG}, {"checkpoints", "meg", isMEG},
		{"eps", "definiteboost", isBoost}, {"projection", "definiteboost", isBoost}, {"tol", "definiteboost", isBoost}, {"max-iter", "definiteboost", isBoost},
		{"save-run", "definiteboost with --out", func() bool { return isBoost() && f.out != "" }},
	}
	rules = append(rules, inputRules(&f, isMEG, isBoost)...)
	if err := parseFlags(fs, "kernel", args); err != nil {
		return err
	}
	if err := checkKernelFlags(fs, &f, rules); err != nil {
		return err
	}
	b, err := resolveBackend(f.backend)
	if err != nil {
		return err
	}
	var setup *kernelSetup
	if f.source() == sourceData {
		setup, err = kernelTarget(f, b)
		if err == nil {
			err = setup.readExamples(&f)
		}
	} else {
		setup, err = userTarget(&f, b)
	}
	if err != nil {
		return err
	}
	progress := newProgress(env)
	if f.algo == "meg" {
		progress.withTotal(f.steps) // exactly: the number of --distances if given
	} else {
		progress.withCap(f.maxIter) // DefiniteBoost stops once feasible
	}
	progress.printf("kernel: %s", setup.describe(f))
	if f.algo == "meg" {
		return runMEG(ctx, env, f, setup, progress)
	}
	return runDefiniteBoost(ctx, env, f, setup, progress)
}

// defineKernelFlags defines the flags of kernel on fs.
func defineKernelFlags(fs *flag.FlagSet, f *kernelFlags) {
	fs.StringVar(&f.algo, "algo", "", "algorithm: meg (online) | definiteboost (batch)")
	fs.StringVar(&f.data, "data", "builtin:wine", "data SPEC whose points are the objects of the target kernel (- : CSV on standard input); not with --target")
	labelColFlag(fs, &f.labelCol)
	fs.StringVar(&f.backend, "backend", "", "numerical backend: "+strings.Join(engine.Names(), "|")+" (default: "+engine.Default().Name()+")")
	fs.IntVar(&f.objects, "objects", -1, "number of objects d, a class-stratified seeded sample of --data (0: all; default 52 for meg as in the paper, all for definiteboost); with --distances or --pairs and neither --target nor --data: the number of objects (default: the lines of --labels, else the largest index + 1)")
	fs.BoolVar(&f.standardize, "standardize", true, "standardise the features of the objects before the RBF kernel")
	fs.Float64Var(&f.gamma, "gamma", 0, "RBF kernel exp(-gamma |a-b|^2) of the target (0: gamma-scale / median squared distance)")
	fs.Float64Var(&f.gammaScale, "gamma-scale", 1, "multiplier of the median heuristic when --gamma is 0")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed (object sample, distance examples, noise, 1-NN splits)")
	fs.IntVar(&f.splits, "splits", meg.DefaultSplits, "random 50/50 train/test divisions for the 1-NN error")
	fs.IntVar(&f.steps, "steps", 200000, "meg: number of online distance examples")
	fs.Float64Var(&f.noise, "noise", 0, "meg: standard deviation of Gaussian noise on the distance labels")
	fs.StringVar(&f.c, "c", "auto", "meg: constant c of Lemma 3.2, eta = 2c/(r^2(2+c)): a number, inf, or auto (inf without noise, else r*sqrt(2*Delta/L_U) in hindsight)")
	fs.Float64Var(&f.eta, "eta", 0, "meg: learning rate (0: from --c); the bound is reported when eta*r^2 <= 2")
	fs.IntVar(&f.checkpoints, "checkpoints", 1, "meg: record loss, bound and 1-NN error at steps 1,2,5×10^k (0: only the end)")
	fs.Float64Var(&f.epsScale, "eps", psdlearn.DefaultNear, "definiteboost: epsilon*d, the constraints are ½|x_a-x_b|^2 <= epsilon for the pairs closer than epsilon under the target")
	fs.StringVar(&f.projection, "projection", "both", "definiteboost: approx | exact | both")
	fs.Float64Var(&f.tol, "tol", psdlearn.DefaultDefiniteBoostTol, "definiteboost: stop when every tr(W C_j) <= tol*epsilon")
	fs.IntVar(&f.maxIter, "max-iter", meg.DefaultMaxIter, "definiteboost: iteration limit")
	fs.StringVar(&f.plot, "plot", "", "write PNG charts into this directory: heat maps of the target (and of the DefiniteBoost kernel) for at most "+strconv.Itoa(plots.MaxHeatmap)+" objects, DefiniteBoost's convergence")
	fs.StringVar(&f.out, "out", "", "save the learned kernel on the objects: FILE.npy writes the d×d matrix, any other name a kernel model file (JSON, reloads in eval and transform)")
	fs.IntVar(&f.saveRun, "save-run", 1, "definiteboost with --out: the run whose kernel is saved, in --projection order (both: 1 approx, 2 exact)")
	inputFlags(fs, f)
}

// checkKernelFlags checks the flags of kernel against one another.
func checkKernelFlags(fs *flag.FlagSet, f *kernelFlags, rules []flagRule) error {
	f.dataSet = flagGiven(fs, "data")
	f.algo = strings.ToLower(f.algo)
	if f.algo != "meg" && f.algo != "definiteboost" {
		return usagef("kernel: --algo must be meg or definiteboost (got %q)", f.algo)
	}
	if err := checkFlagRules(fs, "kernel", "--algo "+f.algo, rules); err != nil {
		return err
	}
	if err := checkInputFlags(fs, *f); err != nil {
		return err
	}
	if f.objects == -1 && f.source() == sourceData {
		f.objects = 0
		if f.algo == "meg" {
			f.objects = 52
		}
	}
	if f.objects < -1 || f.objects == 1 || f.splits <= 0 {
		return usagef("kernel: --objects must be 0 or at least 2 and --splits positive")
	}
	if f.out == stdoutName {
		return usagef("kernel: --out - is not supported: give --out a file name")
	}
	return nil
}

// kernelTarget loads the data and builds the target (meg.NewTarget).
func kernelTarget(f kernelFlags, b engine.Backend) (*kernelSetup, error) {
	ds, err := loadData(f.data, f.labelCol)
	if err != nil {
		return nil, err
	}
	if ds.Len() < 2 {
		return nil, fmt.Errorf("kernel: %s has %d points", f.data, ds.Len())
	}
	if f.gamma == 0 && !(f.gammaScale > 0) {
		return nil, usagef("kernel: --gamma-scale must be positive")
	}
	t, err := meg.NewTarget(ds.X, ds.Y, meg.TargetOptions{
		Objects: f.objects, Standardize: f.standardize, Gamma: f.gamma, GammaScale: f.gammaScale,
		Splits: f.splits, Seed: f.seed,
	})
	if err != nil {
		return nil, err
	}
	if err := checkKernelOut("kernel", f.out, len(t.Y)); err != nil {
		return nil, err
	}
	rows := meg.StratifiedSample(ds.Y, f.objects, f.seed) // the objects NewTarget took
	if len(rows) != len(t.Y) {
		return nil, fmt.Errorf("kernel: internal error: %d object rows for %d objects", len(rows), len(t.Y))
	}
	return &kernelSetup{Target: t, name: ds.Name, classes: ds.Classes, b: b, ds: ds, rows: rows}, nil
}

// megCheckpoint records the online run at one step.
type megCheckpoint struct {
	Step       int        `json:"step"`
	TotalLoss  jsonFloat  `json:"total_loss"`
	LossBound  *jsonFloat `json:"loss_bound"`
	Divergence jsonFloat  `json:"divergence"`
	NNError    jsonFloat  `json:"nn_error"`
}

// megSummary is the JSON summary of `kernel --algo meg`.
type megSummary struct {
	Algo            string          `json:"algo"`
	Backend         string          `json:"backend"`
	Data            string          `json:"data"`
	Objects         int             `json:"objects"`
	Dim             int             `json:"dim"`
	Gamma           jsonFloat       `json:"gamma"`
	Steps           int             `json:"steps"`
	Iterations      int             `json:"iterations"`
	Noise           jsonFloat       `json:"noise"`
	R               jsonFloat       `json:"r"`
	C               *jsonFloat      `json:"c"` // null: c = +Inf (or no bound)
	Eta             jsonFloat       `json:"eta"`
	TotalLoss       jsonFloat       `json:"total_loss"`
	Objective       jsonFloat       `json:"objective"`
	LossBound       *jsonFloat      `json:"loss_bound"`
	ComparatorLoss  jsonFloat       `json:"comparator_loss"`
	Divergence0     jsonFloat       `json:"divergence_initial"`
	DivergenceFinal jsonFloat       `json:"divergence_final"`
	NNError         jsonFloat       `json:"nn_error"`
	NNErrorSD       jsonFloat       `json:"nn_error_sd"`
	NNErrorLOO      jsonFloat       `json:"nn_error_loo"`
	TargetNNError   jsonFloat       `json:"target_nn_error"`
	TargetNNErrorSD jsonFloat       `json:"target_nn_error_sd"`
	TargetNNLOO     jsonFloat       `json:"target_nn_error_loo"`
	NNProtocol      string          `json:"nn_protocol"`
	TrainSeconds    jsonFloat       `json:"train_seconds"`
	PeakRSSMB       jsonFloat       `json:"peak_rss_mb"`
	Checkpoints     []megCheckpoint `json:"checkpoints,omitempty"`
	Plots           []string        `json:"plots,omitempty"`
	PlotNotes       []string        `json:"plot_notes,omitempty"`
	// Out is --out, the saved kernel.
	Out string `json:"out,omitempty"`
	inputSummary
}

func nnProtocol(f kernelFlags) string {
	return fmt.Sprintf("1-NN with d(a,b)^2 = K_aa + K_bb - 2K_ab: nn_error = mean (sd) over %d seeded random 50/50 train/test divisions of the objects; nn_error_loo = leave-one-out over all objects", f.splits)
}

// parseC returns c for --c; auto is resolved later.
func parseC(s string) (c float64, auto bool, err error) {
	switch strings.ToLower(s) {
	case "auto", "":
		return 0, true, nil
	case "inf", "+inf":
		return math.Inf(1), false, nil
	}
	c, err = strconv.ParseFloat(s, 64)
	if err != nil || !(c >= minNormal) {
		return 0, false, usagef("kernel: --c must be a positive normal number, inf or auto (got %s)", input.Clip(s, 40))
	}
	return c, false, nil
}

func runMEG(ctx context.Context, env *cmdEnv, f kernelFlags, s *kernelSetup, progress *progressLine) error {
	if f.steps <= 0 {
		return usagef("kernel: --steps must be positive")
	}
	if f.noise < 0 || math.IsNaN(f.noise) || math.IsInf(f.noise, 0) {
		return usagef("kernel: --noise must be a finite non-negative number")
	}
	if f.eta < 0 || math.IsNaN(f.eta) || math.IsInf(f.eta, 0) {
		return usagef("kernel: --eta must be a finite non-negative number")
	}
	c, auto, err := parseC(f.c)
	if err != nil {
		return err
	}
	if auto {
		c = 0 // chosen in hindsight
	}
	rep, err := meg.RunOnline(ctx, s.Target, meg.OnlineOptions{
		Steps: f.steps, Noise: f.noise, C: c, Eta: f.eta, Checkpoints: f.checkpoints > 0,
		Seed: f.seed, Backend: s.b, Progress: progress.event, Examples: s.in.examples,
	})
	if err != nil {
		return err
	}
	sum := megSummaryOf(f, s, rep)
	if f.plot != "" {
		if sum.Plots, sum.PlotNotes, err = kernelPlots(f.plot, f, s, nil); err != nil {
			return fmt.Errorf("kernel: plot: %w", err)
		}
	}
	if f.out != "" {
		if err := saveMEG(f, s, rep); err != nil {
			return err
		}
		sum.Out = f.out
	}
	sum.PeakRSSMB = jsonFloat(peakRSSMB())
	if env.json {
		return emitJSON(env, sum)
	}
	printMEGSummary(env.stdout, f, s, sum)
	return nil
}

// megSummaryOf is the summary of an online MEG run.
func megSummaryOf(f kernelFlags, s *kernelSetup, rep *meg.OnlineReport) megSummary {
	sum := megSummary{
		Algo: "meg", Backend: s.b.Name(), Data: s.dataName(f), Objects: s.Objects(), Dim: s.dim(), Gamma: jsonFloat(s.Gamma),
		Steps: f.steps, Iterations: rep.Steps, Noise: jsonFloat(f.noise), R: jsonFloat(rep.R), Eta: jsonFloat(rep.Eta), ComparatorLoss: jsonFloat(rep.ComparatorLoss),
		Divergence0: jsonFloat(rep.Divergence0), TotalLoss: jsonFloat(rep.TotalLoss), Objective: jsonFloat(rep.TotalLoss), LossBound: ptrOf(rep.LossBound),
		DivergenceFinal: jsonFloat(rep.DivergenceFinal), NNError: jsonFloat(rep.NN.Mean), NNErrorSD: jsonFloat(rep.NN.SD), NNErrorLOO: jsonFloat(rep.NN.LOO),
		TargetNNError: jsonFloat(s.NN.Mean), TargetNNErrorSD: jsonFloat(s.NN.SD), TargetNNLOO: jsonFloat(s.NN.LOO), NNProtocol: nnProtocol(f),
		TrainSeconds: jsonFloat(rep.Seconds), inputSummary: s.summary(f),
	}
	if rep.Bounded && !math.IsInf(rep.C, 1) {
		sum.C = ptrFloat(rep.C)
	}
	for _, cp := range rep.Checkpoints {
		sum.Checkpoints = append(sum.Checkpoints, megCheckpoint{Step: cp.Step, TotalLoss: jsonFloat(cp.TotalLoss), LossBound: ptrOf(cp.LossBound), Divergence: jsonFloat(cp.Divergence), NNError: jsonFloat(cp.NNError)})
	}
	return sum
}

// ptrOf converts an optional figure (nil: none) for JSON.
func ptrOf(v *float64) *jsonFloat {
	if v == nil {
		return nil
	}
	return ptrFloat(*v)
}

// printMEGSummary prints the text summary of an online MEG run.
func printMEGSummary(w io.Writer, f kernelFlags, s *kernelSetup, sum megSummary) {
	defer printPlots(w, sum.Plots, sum.PlotNotes)
	fmt.Fprintf(w, "MEG online kernel learning on %d objects of %s (backend %s, %.1f s)\n", sum.Objects, s.name, sum.Backend, sum.TrainSeconds)
	fmt.Fprintf(w, "  steps %d, r %g, eta %.4g, noise %g\n", sum.Steps, sum.R, sum.Eta, f.noise)
	if s.U == nil {
		fmt.Fprintf(w, "  total loss %.6g (no target kernel: no comparator loss, no Lemma 3.2 bound)\n", sum.TotalLoss)
	} else if sum.LossBound != nil {
		fmt.Fprintf(w, "  total loss %.6g <= Lemma 3.2 bound %.6g (L_U %.4g, Δ(U,W1) %.4g)\n", sum.TotalLoss, *sum.LossBound, sum.ComparatorLoss, sum.Divergence0)
	} else {
		fmt.Fprintf(w, "  total loss %.6g (no Lemma 3.2 bound for this learning rate), L_U %.4g\n", sum.TotalLoss, sum.ComparatorLoss)
	}
	if sum.NNSkipped != "" {
		fmt.Fprintf(w, "  1-NN error: %s\n", sum.NNSkipped)
	} else {
		fmt.Fprintf(w, "  1-NN error: learned %.4f (sd %.4f, LOO %.4f), target %.4f (sd %.4f, LOO %.4f)\n",
			sum.NNError, sum.NNErrorSD, sum.NNErrorLOO, sum.TargetNNError, sum.TargetNNErrorSD, sum.TargetNNLOO)
	}
	if sum.Out != "" {
		fmt.Fprintf(w, "  kernel written to %s\n", sum.Out)
	}
}

// boostGapWarning is the warning about a DefiniteBoost run that stopped by
// its rule — every constraint within the tolerance — with a duality gap
// −Σ α_j tr(W C_j) above that tolerance: the kernel is feasible but not
// certified to be the projection.
func boostGapWarning(projection string, converged bool, gap, tol float64) string {
	return warn.GapAboveTolerance("DefiniteBoost ("+projection+" projection)", converged, gap, tol,
		"every constraint within the tolerance, the paper's stopping rule")
}

// boostRun is the JSON summary of one DefiniteBoost run.
type boostRun struct {
	Projection   string    `json:"projection"`
	Iterations   int       `json:"iterations"`
	Eigs         int       `json:"eigendecompositions"`
	Converged    bool      `json:"converged"`
	MaxViolation jsonFloat `json:"max_violation"`
	Dual         jsonFloat `json:"dual_objective"`
	DualBound    jsonFloat `json:"dual_bound"`
	Divergence   jsonFloat `json:"divergence"`
	DualityGap   jsonFloat `json:"duality_gap"`
	NNError      jsonFloat `json:"nn_error"`
	NNErrorSD    jsonFloat `json:"nn_error_sd"`
	NNErrorLOO   jsonFloat `json:"nn_error_loo"`
	Seconds      jsonFloat `json:"train_seconds"`
}

// boostSummary is the JSON summary of `kernel --algo definiteboost`.
type boostSummary struct {
	Algo            string     `json:"algo"`
	Backend         string     `json:"backend"`
	Data            string     `json:"data"`
	Objects         int        `json:"objects"`
	Dim             int        `json:"dim"`
	Gamma           jsonFloat  `json:"gamma"`
	Constraints     int        `json:"constraints"`
	Epsilon         jsonFloat  `json:"epsilon"`
	Tol             jsonFloat  `json:"tol"`
	Iterations      int        `json:"iterations"`
	Objective       jsonFloat  `json:"objective"`
	NNError         jsonFloat  `json:"nn_error"`
	TargetNNError   jsonFloat  `json:"target_nn_error"`
	TargetNNErrorSD jsonFloat  `json:"target_nn_error_sd"`
	TargetNNLOO     jsonFloat  `json:"target_nn_error_loo"`
	NNProtocol      string     `json:"nn_protocol"`
	TrainSeconds    jsonFloat  `json:"train_seconds"`
	PeakRSSMB       jsonFloat  `json:"peak_rss_mb"`
	Runs            []boostRun `json:"runs"`
	Plots           []string   `json:"plots,omitempty"`
	PlotNotes       []string   `json:"plot_notes,omitempty"`
	// Out is --out and SavedRun the 1-based index in runs of the saved kernel.
	Out      string `json:"out,omitempty"`
	SavedRun int    `json:"saved_run,omitempty"`
	inputSummary
}

func runDefiniteBoost(ctx context.Context, env *cmdEnv, f kernelFlags, s *kernelSetup, progress *progressLine) error {
	projs, err := checkDefiniteBoostFlags(f, s)
	if err != nil {
		return err
	}
	rep, err := meg.RunDefiniteBoost(ctx, s.Target, meg.BoostExperimentOptions{
		EpsScale: f.epsScale, Projections: projs, Tol: f.tol, MaxIter: f.maxIter, Backend: s.b, Progress: progress.event,
		Constraints: s.in.cons,
	})
	if err != nil {
		return err
	}
	sum := boostSummaryOf(f, s, rep)
	for _, r := range sum.Runs {
		warnUser(boostGapWarning(r.Projection, r.Converged, float64(r.DualityGap), rep.Tol))
	}
	if f.plot != "" {
		if sum.Plots, sum.PlotNotes, err = kernelPlots(f.plot, f, s, &rep.Runs[0]); err != nil {
			return fmt.Errorf("kernel: plot: %w", err)
		}
	}
	if f.out != "" {
		if err := saveDefiniteBoost(f, s, rep, rep.Runs[f.saveRun-1]); err != nil {
			return err
		}
		sum.Out, sum.SavedRun = f.out, f.saveRun
	}
	sum.PeakRSSMB = jsonFloat(peakRSSMB())
	if env.json {
		return emitJSON(env, sum)
	}
	printBoostSummary(env.stdout, f, s, sum)
	return nil
}

// checkDefiniteBoostFlags checks the flags of DefiniteBoost, makes the
// constraints of --pairs and returns the projections to run.
func checkDefiniteBoostFlags(f kernelFlags, s *kernelSetup) ([]meg.Projection, error) {
	var projs []meg.Projection
	switch strings.ToLower(f.projection) {
	case "approx", "approximate":
		projs = []meg.Projection{meg.Approximate}
	case "exact":
		projs = []meg.Projection{meg.Exact}
	case "both":
		projs = []meg.Projection{meg.Approximate, meg.Exact}
	default:
		return nil, usagef("kernel: --projection must be approx, exact or both (got %q)", f.projection)
	}
	if eps := f.epsScale / float64(s.Objects()); !(eps > 0 && eps < 1) {
		return nil, usagef("kernel: --eps must give 0 < epsilon = eps/d < 1")
	}
	if !(f.tol > 0) || f.maxIter <= 0 {
		return nil, usagef("kernel: --tol and --max-iter must be positive")
	}
	if f.saveRun < 1 || f.saveRun > len(projs) {
		return nil, usagef("kernel: --save-run %d: --projection %s makes %d run(s)", f.saveRun, f.projection, len(projs))
	}
	return projs, s.pairConstraints(f)
}

// boostSummaryOf is the summary of a DefiniteBoost run.
func boostSummaryOf(f kernelFlags, s *kernelSetup, rep *meg.BoostExperimentReport) boostSummary {
	d := s.Objects()
	sum := boostSummary{
		Algo: "definiteboost", Backend: s.b.Name(), Data: s.dataName(f), Objects: d, Dim: s.dim(), Gamma: jsonFloat(s.Gamma),
		Constraints: rep.Constraints, Epsilon: jsonFloat(rep.Epsilon), Tol: jsonFloat(rep.Tol),
		TargetNNError: jsonFloat(s.NN.Mean), TargetNNErrorSD: jsonFloat(s.NN.SD), TargetNNLOO: jsonFloat(s.NN.LOO), NNProtocol: nnProtocol(f),
		inputSummary: s.summary(f),
	}
	if s.in.pairs != nil {
		sum.EpsilonFar = ptrFloat(f.epsFar / float64(d))
	}
	for _, r := range rep.Runs {
		sum.Runs = append(sum.Runs, boostRun{
			Projection: r.Projection.String(), Iterations: r.Iterations, Eigs: r.Eigs, Converged: r.Converged,
			MaxViolation: jsonFloat(r.MaxViolation), Dual: jsonFloat(r.Dual), DualBound: jsonFloat(r.DualBound), Divergence: jsonFloat(r.Divergence),
			DualityGap: jsonFloat(r.DualityGap), NNError: jsonFloat(r.NN.Mean), NNErrorSD: jsonFloat(r.NN.SD), NNErrorLOO: jsonFloat(r.NN.LOO), Seconds: jsonFloat(r.Seconds),
		})
	}
	first := sum.Runs[0]
	sum.Iterations, sum.Objective, sum.NNError, sum.TrainSeconds = first.Iterations, first.Dual, first.NNError, first.Seconds
	return sum
}

// printBoostSummary prints the text summary of a DefiniteBoost run.
func printBoostSummary(w io.Writer, f kernelFlags, s *kernelSetup, sum boostSummary) {
	defer printPlots(w, sum.Plots, sum.PlotNotes)
	fmt.Fprintf(w, "DefiniteBoost kernel learning on %d objects of %s (backend %s)\n", sum.Objects, s.name, sum.Backend)
	if s.in.pairs != nil {
		fmt.Fprintf(w, "  %d constraints from %s: %d must-links ½|x_a-x_b|^2 <= epsilon = %.4g, %d cannot-links >= epsilon_far = %.4g, tolerance %.3g\n",
			sum.Constraints, f.pairs, *sum.MustLinks, sum.Epsilon, *sum.CannotLinks, *sum.EpsilonFar, sum.Tol)
	} else {
		fmt.Fprintf(w, "  %d constraints ½|x_a-x_b|^2 <= epsilon = %.4g, tolerance %.3g\n", sum.Constraints, sum.Epsilon, sum.Tol)
	}
	for _, r := range sum.Runs {
		fmt.Fprintf(w, "  %-6s iterations %d, eigendecompositions %d, converged %v, max violation %.3g, dual %.6g (Theorem 4.1 bound %.6g), gap %.4g, %.2f s\n",
			r.Projection, r.Iterations, r.Eigs, r.Converged, r.MaxViolation, r.Dual, r.DualBound, r.DualityGap, r.Seconds)
		if sum.NNSkipped == "" {
			fmt.Fprintf(w, "         1-NN error %.4f (sd %.4f, LOO %.4f)\n", r.NNError, r.NNErrorSD, r.NNErrorLOO)
		}
	}
	if sum.NNSkipped != "" {
		fmt.Fprintf(w, "  1-NN error: %s\n", sum.NNSkipped)
	} else if s.U != nil {
		fmt.Fprintf(w, "  target kernel 1-NN error %.4f (sd %.4f, LOO %.4f)\n", sum.TargetNNError, sum.TargetNNErrorSD, sum.TargetNNLOO)
	}
	if sum.Out != "" {
		fmt.Fprintf(w, "  kernel of run %d (%s) written to %s\n", sum.SavedRun, sum.Runs[sum.SavedRun-1].Projection, sum.Out)
	}
}

// The learned kernels of psdlearn kernel and cluster are saved by --out:
// a name ending in .npy gets the n×n matrix as a NumPy array, any other a
// kernel model file (model.KindKernel) that eval and transform read.
//
// The reports of meg.RunOnline and meg.RunDefiniteBoost and the runs that
// psdlearn.Cluster keeps hold the learned kernels themselves: --out saves
// the kernel of the run reported, nothing is learned again.

// checkKernelOut refuses, before anything is learned, an .npy --out whose
// dense n×n matrix would not fit the memory limit.
func checkKernelOut(cmd, out string, n int) error {
	if out == "" || !npy.IsNPY(out) {
		return nil
	}
	if err := limits.Check(fmt.Sprintf("%s: the %d×%d kernel matrix of --out %s", cmd, n, n, out), limits.Words(2, n, n)); err != nil {
		return err
	}
	return nil
}

// writeKernelOut saves kernel model m to path: the dense kernel matrix as
// .npy (gram if not nil, else V·diag(λ)·Vᵀ from the model), or the model
// file.
func writeKernelOut(path string, m *model.Model, gram mat.Symmetric) error {
	if w := modelWarning(m); w != "" {
		warnUser(w)
		if m.Certificate != nil {
			m.Certificate.Warnings = append(m.Certificate.Warnings, w)
		}
	}
	if !npy.IsNPY(path) {
		return m.SaveFile(path)
	}
	if gram == nil {
		gram = kernelGram(m.Kernel)
	}
	return npy.WriteFile(path, gram)
}

// kernelGram returns K = F·Fᵀ for the factor F = V·diag(√λ), exactly
// symmetric.
func kernelGram(k *model.Kernel) *mat.SymDense {
	var g mat.SymDense
	g.SymOuterK(1, k.Factor())
	return &g
}

// kernelModel wraps the learned matrix w of psdlearn kernel as a kernel
// model with the experiment's settings and provenance.
func kernelModel(f kernelFlags, s *kernelSetup, algo string, w mat.Symmetric, cert *model.Certificate, info map[string]any) (*model.Model, error) {
	k, err := psdlearn.KernelOfMatrix(w)
	if err != nil {
		return nil, fmt.Errorf("kernel: --out: %w", err)
	}
	prov := model.NewProvenance(s.b.Name(), f.seed)
	var base map[string]any
	if s.ds != nil {
		prov.Data = model.DescribeData(f.data, s.ds.X, s.ds.Y, s.ds.Classes)
		base = map[string]any{
			"data": f.data, "objects": len(s.Y), "standardize": f.standardize, "gamma": s.Gamma, "gamma_scale": f.gammaScale,
			"seed": f.seed, "splits": f.splits, "backend": s.b.Name(),
		}
		if len(s.rows) < s.ds.Len() {
			base["object_rows"] = s.rows
		}
	} else {
		prov.Data = s.provenanceData(f)
		base = map[string]any{"objects": s.Objects(), "seed": f.seed, "splits": f.splits, "backend": s.b.Name()}
	}
	for key, v := range s.in.info(f) {
		base[key] = v
	}
	for key, v := range info {
		base[key] = v
	}
	return &model.Model{Kind: model.KindKernel, Algo: algo, Kernel: k, Classes: s.classes, Info: base, Certificate: cert, Provenance: prov}, nil
}

// saveMEG writes the kernel W the MEG run of rep learned to --out.
func saveMEG(f kernelFlags, s *kernelSetup, rep *meg.OnlineReport) error {
	cert := &model.Certificate{Gap: math.NaN(), Tolerance: math.NaN(),
		Reason: fmt.Sprintf("online MEG after %d examples: no convergence certificate (Lemma 3.2 bounds the total loss)", f.steps)}
	m, err := kernelModel(f, s, "meg", rep.W, cert, map[string]any{
		"steps": f.steps, "noise": f.noise, "eta": rep.Eta, "r": rep.R, "c": rep.C, "total_loss": rep.TotalLoss,
		"nn_error": rep.NN.Mean, "nn_error_sd": rep.NN.SD, "nn_error_loo": rep.NN.LOO,
	})
	if err != nil {
		return err
	}
	if err := writeKernelOut(f.out, m, rep.W); err != nil {
		return fmt.Errorf("kernel: %w", err)
	}
	return nil
}

// saveDefiniteBoost writes the kernel W of the DefiniteBoost run r of rep
// (the run --save-run chose) to --out.
func saveDefiniteBoost(f kernelFlags, s *kernelSetup, rep *meg.BoostExperimentReport, r meg.BoostRun) error {
	// The gap is −Σ α_j tr(W C_j), the run's DualityGap.
	cert := &model.Certificate{Converged: r.Converged, Gap: r.DualityGap, Tolerance: rep.Tol,
		Reason: fmt.Sprintf("DefiniteBoost (%v projection): %d iterations, max violation %.3g, tolerance %.3g", r.Projection, r.Iterations, r.MaxViolation, rep.Tol)}
	if !r.Converged {
		cert.Warnings = append(cert.Warnings, fmt.Sprintf("DefiniteBoost stopped at --max-iter %d with max violation %.3g > tolerance %.3g", f.maxIter, r.MaxViolation, rep.Tol))
	}
	if w := boostGapWarning(r.Projection.String(), r.Converged, r.DualityGap, rep.Tol); w != "" {
		cert.Warnings = append(cert.Warnings, w)
	}
	m, err := kernelModel(f, s, "definiteboost", r.W, cert, map[string]any{
		"projection": r.Projection.String(), "run": f.saveRun, "eps": f.epsScale, "epsilon": rep.Epsilon, "tol": f.tol, "max_iter": f.maxIter,
		"constraints": rep.Constraints, "iterations": r.Iterations, "dual_objective": r.Dual, "max_violation": r.MaxViolation,
		"nn_error": r.NN.Mean, "nn_error_sd": r.NN.SD, "nn_error_loo": r.NN.LOO,
	})
	if err != nil {
		return err
	}
	if err := writeKernelOut(f.out, m, r.W); err != nil {
		return fmt.Errorf("kernel: %w", err)
	}
	return nil
}
