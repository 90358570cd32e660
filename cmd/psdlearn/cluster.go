package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/internal/plots"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/progress"
	"github.com/psdlearn/psdlearn/sparse"
)

// maxRestarts bounds --restarts: k-means++ restarts run without progress
// lines, so a count beyond it would look like a hang.
const maxRestarts = 10000

func init() {
	register(command{name: "cluster", summary: "learn a kernel from pairwise constraints (SimpleNPKL) and cluster with kernel k-means", run: runCluster})
}

// clusterSummary is the JSON object `psdlearn cluster --json` prints.
type clusterSummary struct {
	Algo        string      `json:"algo"`
	Loss        string      `json:"loss"`
	Backend     string      `json:"backend"`
	Data        string      `json:"data"`
	N           int         `json:"n_train"`
	Dim         int         `json:"dim"`
	Clusters    int         `json:"clusters"`
	Neighbors   int         `json:"k"`
	Graph       string      `json:"graph"`
	GraphNNZ    int         `json:"graph_nnz"`
	B           jsonFloat   `json:"B"`
	C           []jsonFloat `json:"C"`
	CChosen     []jsonFloat `json:"C_chosen,omitempty"`
	Ratio       jsonFloat   `json:"component_ratio"`
	Selection   string      `json:"selection"`
	Runs        int         `json:"runs"`
	Constraints jsonFloat   `json:"constraints"`
	Used        jsonFloat   `json:"constraints_used"`

	Accuracy     jsonFloat   `json:"cluster_accuracy"`
	AccuracySD   jsonFloat   `json:"cluster_accuracy_sd"`
	Accuracies   []jsonFloat `json:"cluster_accuracies"`
	KMeans       *jsonFloat  `json:"kmeans_accuracy,omitempty"`
	KMeansSD     *jsonFloat  `json:"kmeans_accuracy_sd,omitempty"`
	Iterations   jsonFloat   `json:"iterations"`
	Rank         jsonFloat   `json:"rank"`
	Covered      bool        `json:"spectrum_covered"`
	Objective    []jsonFloat `json:"objective"` // J per iteration of the first run
	Eigenvalues  []jsonFloat `json:"leading_eigenvalues"`
	GraphSeconds jsonFloat   `json:"graph_seconds"`
	TrainSeconds jsonFloat   `json:"train_seconds"` // mean kernel learning time per run (clustering excluded)
	TotalSeconds jsonFloat   `json:"total_seconds"`
	PeakRSSMB    jsonFloat   `json:"peak_rss_mb"`
	mpiFigures
	Plots     []string `json:"plots,omitempty"`
	PlotNotes []string `json:"plot_notes,omitempty"`
	// Out is --out; SavedRun the 1-based run whose kernel it holds and
	// SavedAccuracy that kernel's pairwise accuracy (the run's, in
	// cluster_accuracies[saved_run-1]).
	Out           string     `json:"out,omitempty"`
	SavedRun      int        `json:"saved_run,omitempty"`
	SavedAccuracy *jsonFloat `json:"saved_accuracy,omitempty"`
	// Warnings: the kernel clusters worse than k-means on the data, or a
	// run's eigenpairs did not cover the positive spectrum (also on stderr).
	Warnings []string `json:"warnings"`
}

// clusterFlags are the options of psdlearn cluster, as given and parsed.
type clusterFlags struct {
	algo, lossName, spec, labelCol, graph, weight, cList, selName string
	pairs, backend, plot, out                                     string
	k, iters, rank, maxRank, runs, clusters, restarts, saveRun    int
	bcap, holdOut, alpha0, eta, eigTol, ratio, fraction           float64
	standardize, baseline                                         bool
	seed                                                          uint64

	// Parsed by checkClusterFlags.
	loss npkl.Loss
	sel  npkl.Selection
	grid []float64
	g    sparse.GraphOptions
	b    engine.Backend
}

func runCluster(ctx context.Context, env *cmdEnv, args []string) error {
	start := time.Now()
	fs := newFlagSet(env, "cluster")
	var f clusterFlags
	defineClusterFlags(fs, &f)
	rules := clusterFlagRules(&f)
	annotateFlagRules(fs, rules)
	if err := parseFlags(fs, "cluster", args); err != nil {
		return err
	}
	if err := checkClusterFlags(fs, &f, rules); err != nil {
		return err
	}
	j, ctx, env, stop, err := startJob(ctx, env, "cluster") // one rank of an MPI job: mpijob.go
	if err != nil {
		return err
	}
	defer stop()
	prog := newProgress(env)
	ds, err := j.load("cluster", f.spec, f.labelCol, 0, "", 2, prog, func() (*data.Dataset, error) { return loadData(f.spec, f.labelCol) })
	if err != nil {
		return err
	}
	if err := checkKernelOut("cluster", f.out, ds.Len()); err != nil {
		return err
	}
	if f.pairs != "" {
		if !j.root() { // every rank learns the same kernel; rank 0 writes it
			f.out, f.plot = "", ""
		}
		return runClusterPairs(ctx, env, f, ds, prog, start)
	}
	prog.printf("cluster: %s, %d points × %d features, %d classes; SimpleNPKL %v loss on backend %s", ds.Name, ds.Len(), ds.Dim(), len(ds.Classes), f.loss, f.b.Name())
	o := f.options(ds, prog)
	if j.ex != nil {
		o.Dist = j.ex
	}
	rep, err := psdlearn.Cluster(ctx, ds.X, ds.Y, o)
	if err != nil {
		return err
	}
	sum := clusterSummaryOf(f, rep)
	for _, w := range rep.Warnings {
		warnUser(w)
	}
	if sum.mpiFigures, err = j.figures("cluster"); err != nil {
		return err
	}
	if !j.root() {
		return nil
	}
	if f.out != "" {
		if err := saveClusterKernel(f, rep.Runs[f.saveRun-1].Model); err != nil {
			return err
		}
		sum.Out, sum.SavedRun, sum.SavedAccuracy = f.out, f.saveRun, ptrFloat(rep.Runs[f.saveRun-1].Accuracy)
	}
	if f.plot != "" {
		files, notes, err := clusterPlots(f.plot, ds, f.loss, rep.Runs[0])
		if err != nil {
			return fmt.Errorf("cluster: plot: %w", err)
		}
		sum.Plots, sum.PlotNotes = files, notes
	}
	sum.TotalSeconds, sum.PeakRSSMB = jsonFloat(time.Since(start).Seconds()), jsonFloat(peakRSSMB())
	if env.json {
		return emitJSON(env, sum)
	}
	printClusterSummary(env.stdout, f, ds.Name, sum)
	return nil
}

// defineClusterFlags defines the flags of cluster on fs.
func defineClusterFlags(fs *flag.FlagSet, f *clusterFlags) {
	fs.StringVar(&f.algo, "algo", "simplenpkl", "kernel learner: simplenpkl")
	fs.StringVar(&f.lossName, "loss", "linear", "loss on the constraints: linear | sqhinge")
	fs.StringVar(&f.spec, "data", "", "labelled data: file.csv, file.libsvm, idx:IMAGES:LABELS, builtin:NAME, or - (CSV on standard input) (required)")
	labelColFlag(fs, &f.labelCol)
	fs.IntVar(&f.k, "k", psdlearn.DefaultGraphNeighbors, "neighbours of the kNN graph (the paper: 5 for small sets, 50 for large)")
	fs.StringVar(&f.graph, "graph", "union", "kNN graph symmetrisation: union | mutual | average")
	fs.StringVar(&f.weight, "weight", "binary", "kNN edge weights: binary (the paper) | heat")
	fs.Float64Var(&f.bcap, "B", npkl.DefaultB, "capacity bound tr(K²) ≤ B")
	fs.StringVar(&f.cList, "C", "0.5", "loss weight C; a comma-separated list is chosen among per run on held-out constraints")
	fs.Float64Var(&f.holdOut, "holdout", psdlearn.DefaultHoldOut, "share of constraints held out to choose C from a list, or with --pairs to score the clustering (0: none with --pairs)")
	fs.IntVar(&f.iters, "iters", npkl.DefaultIters, "squared-hinge iterations")
	fs.Float64Var(&f.alpha0, "alpha0", npkl.DefaultAlpha0, "squared-hinge initial α (1: the paper; with C ≠ 1, --alpha0 C starts from the linear-loss kernel of the same C)")
	fs.Float64Var(&f.eta, "eta", 0, "squared-hinge step scale, η_t = 2·eta/(t+2) (0: C)")
	fs.IntVar(&f.rank, "rank", 0, "eigenpairs requested first, doubled until the positive spectrum is covered (0: the Pataki bound)")
	fs.IntVar(&f.maxRank, "max-rank", 0, "cap on the rank of K / eigenpairs computed (0: min(max(2·rank, 64), 256))")
	fs.Float64Var(&f.eigTol, "eig-tol", 0, "relative accuracy of the eigenvalues (0: machine precision)")
	fs.Float64Var(&f.ratio, "ratio", psdlearn.DefaultComponentRatio, "must-link components as a fraction of n (sets the number of constraints)")
	fs.IntVar(&f.runs, "runs", psdlearn.DefaultClusterRuns, "repetitions with fresh constraints")
	fs.IntVar(&f.clusters, "clusters", 0, "number of clusters (0: the number of classes)")
	fs.IntVar(&f.restarts, "restarts", eval.DefaultRestarts, "k-means++ restarts per clustering")
	fs.StringVar(&f.selName, "select", "all", "constraints learned from: all | active (margin criterion) | random")
	fs.Float64Var(&f.fraction, "fraction", psdlearn.DefaultSelectFraction, "share of constraints kept by --select active|random")
	fs.BoolVar(&f.standardize, "standardize", false, "standardise the features before building the graph")
	fs.BoolVar(&f.baseline, "baseline", true, "also report plain k-means on the (preprocessed) data")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed (constraints, eigensolver start, k-means)")
	fs.StringVar(&f.pairs, "pairs", "", "learn from the pairs of this CSV file (header i,j,y: 0-based rows of --data, y = 1 similar, -1 dissimilar; - : standard input) instead of sampling them from labels")
	fs.StringVar(&f.backend, "backend", "", "numerical backend: native | go (default: $PSDLEARN_BACKEND, else native when built in)")
	fs.StringVar(&f.plot, "plot", "", "write PNG charts of run 1 into this directory: the learned kernel's heat map (N ≤ "+strconv.Itoa(plots.MaxHeatmap)+") and, with --loss sqhinge, its convergence")
	fs.StringVar(&f.out, "out", "", "save the kernel learned in run --save-run: FILE.npy writes the n×n matrix K, any other name a kernel model file (JSON, reloads in eval and transform)")
	fs.IntVar(&f.saveRun, "save-run", 1, "with --out: the run (1 to --runs) whose kernel is saved")
}

// clusterFlagRules says which choices the flags of cluster apply to.
func clusterFlagRules(f *clusterFlags) []flagRule {
	sqhinge := func() bool { return f.loss == npkl.SquaredHinge }
	sampled := func() bool { return f.pairs == "" }
	const fromLabels = "pairs sampled from labels, without --pairs"
	return []flagRule{
		{"iters", "--loss sqhinge", sqhinge}, {"alpha0", "--loss sqhinge", sqhinge}, {"eta", "--loss sqhinge", sqhinge},
		{"fraction", "--select active|random", func() bool { return f.sel != npkl.AllConstraints }},
		{"holdout", "a list of several --C values, or --pairs", func() bool { return len(f.grid) > 1 || f.pairs != "" }},
		{"ratio", fromLabels, sampled}, {"runs", fromLabels, sampled}, {"select", fromLabels, sampled},
	}
}

// checkClusterFlags parses the values of the flags of cluster and checks
// them against one another.
func checkClusterFlags(fs *flag.FlagSet, f *clusterFlags, rules []flagRule) error {
	if strings.ToLower(f.algo) != "simplenpkl" {
		return usagef("cluster: unknown algorithm %q (available: simplenpkl)", f.algo)
	}
	if f.spec == "" {
		return usagef("cluster: --data is required")
	}
	var err error
	if f.loss, err = npkl.ParseLoss(f.lossName); err != nil {
		return usagef("cluster: %w", err)
	}
	if f.sel, err = npkl.ParseSelection(f.selName); err != nil {
		return usagef("cluster: %w", err)
	}
	if f.grid, err = parseNumberList("C", f.cList); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	chosen := "simplenpkl --loss " + f.loss.String()
	if f.pairs != "" {
		chosen += " --pairs"
	}
	if err := checkFlagRules(fs, "cluster", chosen, rules); err != nil {
		return err
	}
	if len(f.grid) == 0 {
		return usagef("cluster: --C needs at least one value")
	}
	for _, c := range f.grid {
		if !(c > 0) {
			return usagef("cluster: --C: %v must be positive", c)
		}
	}
	if f.g, err = parseGraphOptions(f.graph, f.weight); err != nil {
		return usagef("cluster: %w", err)
	}
	if err := checkClusterNumbers(fs, f); err != nil {
		return err
	}
	if f.b, err = resolveBackend(f.backend); err != nil {
		return err
	}
	if f.pairs != "" {
		if len(f.grid) > 1 {
			return usagef("cluster: --pairs learns one kernel: give one --C value")
		}
		if f.labelCol == "" {
			cur.noLabels = true // every CSV column is a feature
		}
	}
	return nil
}

// checkClusterNumbers checks the numeric flags of cluster.
func checkClusterNumbers(fs *flag.FlagSet, f *clusterFlags) error {
	if !(f.ratio > 0 && f.ratio <= 1) {
		return usagef("cluster: --ratio %v: want a fraction in (0, 1]", f.ratio)
	}
	if !(f.fraction > 0 && f.fraction <= 1) || !(f.holdOut >= 0 && f.holdOut < 1) {
		return usagef("cluster: --fraction must lie in (0, 1] and --holdout in [0, 1)")
	}
	if f.restarts > maxRestarts {
		return usagef("cluster: --restarts %d: at most %d k-means++ restarts per clustering", f.restarts, maxRestarts)
	}
	if f.k < 1 || f.runs < 1 || f.restarts < 1 || f.iters < 1 || f.clusters < 0 || f.maxRank < 0 || f.rank < 0 || !(f.bcap > 0) || f.eta < 0 || f.eigTol < 0 || !(f.alpha0 > 0) {
		return usagef("cluster: --k, --runs, --restarts and --iters must be positive, --B and --alpha0 positive, --clusters, --rank, --max-rank, --eta and --eig-tol non-negative")
	}
	if flagGiven(fs, "save-run") && f.out == "" {
		return usagef("cluster: --save-run chooses the run whose kernel --out saves: give --out")
	}
	if f.saveRun < 1 || f.saveRun > f.runs {
		return usagef("cluster: --save-run %d: want a run from 1 to --runs %d", f.saveRun, f.runs)
	}
	if f.out == stdoutName {
		return usagef("cluster: --out - is not supported: give --out a file name")
	}
	return nil
}

// learn returns the SimpleNPKL options of the flags (C and the seed are
// the protocol's).
func (f clusterFlags) learn() npkl.Options {
	return npkl.Options{Loss: f.loss, B: f.bcap, Iters: f.iters, Eta: f.eta, Alpha0: f.alpha0, Rank: f.rank, MaxRank: f.maxRank, EigTol: f.eigTol, Backend: f.b}
}

// options returns the protocol options of the flags on the data ds: the
// runs --out saves and --plot draws are kept.
func (f clusterFlags) options(ds *data.Dataset, prog *progressLine) psdlearn.ClusterOptions {
	o := psdlearn.ClusterOptions{
		Standardize: f.standardize, Neighbors: f.k, Graph: f.g, Ratio: f.ratio, Runs: f.runs, Clusters: f.clusters, Restarts: f.restarts,
		Selection: f.sel, Fraction: f.fraction, CGrid: f.grid, HoldOut: f.holdOut, Baseline: f.baseline, Seed: f.seed,
		Learn: f.learn(), Source: &psdlearn.Source{Name: f.spec, Data: ds}, Progress: prog.event,
	}
	if f.out != "" {
		o.Keep = append(o.Keep, f.saveRun)
	}
	if f.plot != "" {
		o.Keep = append(o.Keep, 1)
	}
	return o
}

// clusterSummaryOf is the summary of a protocol run.
func clusterSummaryOf(f clusterFlags, rep *psdlearn.ClusterReport) clusterSummary {
	sum := clusterSummary{
		Algo: "simplenpkl", Loss: f.loss.String(), Backend: f.b.Name(), Data: f.spec, N: rep.N, Dim: rep.Dim,
		Clusters: rep.Clusters, Neighbors: f.k, Graph: f.graph + "/" + f.weight, GraphNNZ: rep.GraphNNZ, B: jsonFloat(f.bcap), C: jsonFloats(f.grid),
		Ratio: jsonFloat(f.ratio), Selection: f.sel.String(), Runs: len(rep.Runs), Constraints: jsonFloat(rep.ConstraintsMean), Used: jsonFloat(rep.UsedMean),
		Accuracy: jsonFloat(rep.AccuracyMean), AccuracySD: jsonFloat(rep.AccuracySD), Iterations: jsonFloat(rep.ItersMean), Rank: jsonFloat(rep.RankMean),
		Covered: rep.AllCovered, GraphSeconds: jsonFloat(rep.GraphSeconds), TrainSeconds: jsonFloat(rep.LearnSecondsMean),
		Warnings: append([]string{}, rep.Warnings...),
	}
	for _, r := range rep.Runs {
		sum.Accuracies = append(sum.Accuracies, jsonFloat(r.Accuracy))
		if len(f.grid) > 1 {
			sum.CChosen = append(sum.CChosen, jsonFloat(r.C))
		}
	}
	if len(rep.Runs) > 0 {
		sum.Objective = jsonFloats(rep.Runs[0].Objectives)
		sum.Eigenvalues = jsonFloats(rep.Runs[0].LeadingEigenvalues)
	}
	if f.baseline {
		sum.KMeans, sum.KMeansSD = ptrFloat(rep.KMeansMean), ptrFloat(rep.KMeansSD)
	}
	return sum
}

// saveClusterKernel writes the kernel model m of a run to --out, with
// what the command line adds: the data spec and the graph's names.
func saveClusterKernel(f clusterFlags, m *model.Model) error {
	m.Info["data"], m.Info["graph"], m.Info["weight"] = f.spec, f.graph, f.weight
	if err := writeKernelOut(f.out, m, nil); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	return nil
}

// printClusterSummary prints the text summary of a protocol run.
func printClusterSummary(w io.Writer, f clusterFlags, name string, sum clusterSummary) {
	fmt.Fprintf(w, "SimpleNPKL (%s loss) on %s: %d points, %d features, %d clusters, backend %s\n", sum.Loss, name, sum.N, sum.Dim, sum.Clusters, sum.Backend)
	fmt.Fprintf(w, "graph: k = %d %s, %d nonzeros, %.3fs\n", f.k, sum.Graph, sum.GraphNNZ, sum.GraphSeconds)
	fmt.Fprintf(w, "constraints: %.1f per run (ratio %.2f), %.1f used (%s)\n", sum.Constraints, f.ratio, sum.Used, sum.Selection)
	fmt.Fprintf(w, "pairwise accuracy: %.2f ± %.2f %% over %d runs\n", 100*sum.Accuracy, 100*sum.AccuracySD, sum.Runs)
	if sum.KMeans != nil {
		fmt.Fprintf(w, "k-means baseline:  %.2f ± %.2f %%\n", 100**sum.KMeans, 100**sum.KMeansSD)
	}
	fmt.Fprintf(w, "rank %.1f (covered: %v), iterations %.1f, learn %.4fs per run, total %.2fs, peak RSS %.0f MB\n",
		sum.Rank, sum.Covered, sum.Iterations, sum.TrainSeconds, sum.TotalSeconds, sum.PeakRSSMB)
	if len(sum.CChosen) > 0 {
		fmt.Fprintf(w, "C chosen per run: %v\n", sum.CChosen)
	}
	printPlots(w, sum.Plots, sum.PlotNotes)
	if sum.Out != "" {
		fmt.Fprintf(w, "kernel of run %d (pairwise accuracy %.2f %%) written to %s\n", sum.SavedRun, 100**sum.SavedAccuracy, sum.Out)
	}
}

// kernelEvalDefaults returns the k-means seed, restarts and number of
// clusters psdlearn eval uses on kernel model m: those given on its command
// line (fs), else the ones the model records — the provenance seed and
// info.restarts and info.clusters, written by cluster --out — so that eval
// repeats the clustering of the saved run; else seed, runs and clusters.
func kernelEvalDefaults(fs *flag.FlagSet, m *model.Model, seed uint64, runs, clusters int) (uint64, int, int) {
	if !flagGiven(fs, "seed") && m.Provenance != nil {
		seed = m.Provenance.Seed
	}
	recorded := func(key string) (int, bool) {
		v, ok := m.Info[key].(float64)
		if !ok || v < 1 || v != math.Trunc(v) || v > 1<<30 {
			return 0, false
		}
		return int(v), true
	}
	if r, ok := recorded("restarts"); ok && !flagGiven(fs, "runs") {
		runs = r
	}
	if c, ok := recorded("clusters"); ok && !flagGiven(fs, "clusters") {
		clusters = c
	}
	return seed, runs, clusters
}

func parseGraphOptions(sym, weight string) (sparse.GraphOptions, error) {
	var g sparse.GraphOptions
	switch sym {
	case "union":
		g.Symmetrize = sparse.Union
	case "mutual":
		g.Symmetrize = sparse.Mutual
	case "average":
		g.Symmetrize = sparse.Average
	default:
		return g, fmt.Errorf("unknown --graph %q (want union, mutual or average)", sym)
	}
	switch weight {
	case "binary":
		g.Weight = sparse.Binary
	case "heat":
		g.Weight = sparse.Heat
	default:
		return g, fmt.Errorf("unknown --weight %q (want binary or heat)", weight)
	}
	return g, nil
}

// clusterPairsSummary is the JSON object of `cluster --pairs --json`. The
// pair satisfaction of a clustering is the fraction of pairs it respects:
// similar pairs in one cluster, dissimilar pairs in two.
type clusterPairsSummary struct {
	Algo      string    `json:"algo"`
	Loss      string    `json:"loss"`
	Backend   string    `json:"backend"`
	Data      string    `json:"data"`
	Pairs     string    `json:"pairs"`
	N         int       `json:"n_train"`
	Dim       int       `json:"dim"`
	Clusters  int       `json:"clusters"`
	Neighbors int       `json:"k"`
	Graph     string    `json:"graph"`
	GraphNNZ  int       `json:"graph_nnz"`
	B         jsonFloat `json:"B"`
	C         jsonFloat `json:"C"`
	HoldOut   jsonFloat `json:"holdout"`
	// Constraints counts the pairs read; Used those learned from (the rest
	// are held out).
	Constraints  int `json:"constraints"`
	Used         int `json:"constraints_used"`
	HeldOutPairs int `json:"heldout_pairs"`
	// Satisfaction on the held-out pairs (null with none) and on the
	// pairs learned from, for the learned kernel's clustering and for
	// plain k-means on the (preprocessed) data.
	Satisfaction       jsonFloat   `json:"pair_satisfaction"`
	TrainSatisfaction  jsonFloat   `json:"pair_satisfaction_train"`
	KMeansSatisfaction *jsonFloat  `json:"kmeans_pair_satisfaction,omitempty"`
	Iterations         int         `json:"iterations"`
	Rank               int         `json:"rank"`
	Covered            bool        `json:"spectrum_covered"`
	Objective          []jsonFloat `json:"objective"`
	Eigenvalues        []jsonFloat `json:"leading_eigenvalues"`
	GraphSeconds       jsonFloat   `json:"graph_seconds"`
	TrainSeconds       jsonFloat   `json:"train_seconds"`
	TotalSeconds       jsonFloat   `json:"total_seconds"`
	PeakRSSMB          jsonFloat   `json:"peak_rss_mb"`
	Out                string      `json:"out,omitempty"`
}

// runClusterPairs is `cluster --pairs`: psdlearn.ClusterPairs learns a
// kernel from the pairs of the file (minus a seeded share --holdout held
// out), clusters it, and scores the clustering by the share of the
// held-out pairs it respects (next to plain k-means). See docs/cli.md,
// "Constraint files".
func runClusterPairs(ctx context.Context, env *cmdEnv, f clusterFlags, ds *data.Dataset, prog *progressLine, start time.Time) error {
	n, clusters := ds.Len(), f.clusters
	if clusters == 0 && len(ds.Classes) < 2 {
		return usagef("cluster: --pairs on unlabelled data needs --clusters")
	}
	if clusters == 0 {
		clusters = len(ds.Classes)
	}
	if clusters < 2 || clusters > n {
		return usagef("cluster: --clusters %d: want 2 to %d", clusters, n)
	}
	pairs, err := readConstraintFile(env, "cluster", "pairs", f.pairs, func(r io.Reader) (*constraints.Pairs, error) { return constraints.ReadPairs(r, n) })
	if err != nil {
		return err
	}
	prog.printf("cluster: %s, %d points × %d features; SimpleNPKL %v loss from the %d pairs of %s", f.spec, n, ds.Dim(), f.loss, pairs.Len(), f.pairs)
	lo := f.learn()
	lo.C = f.grid[0]
	rep, err := psdlearn.ClusterPairs(ctx, ds.X, nil, pairs, psdlearn.ClusterPairsOptions{
		Standardize: f.standardize, Neighbors: f.k, Graph: f.g, Clusters: clusters, Restarts: f.restarts, HoldOut: f.holdOut,
		Baseline: f.baseline, Learn: lo, Seed: f.seed, Source: &psdlearn.Source{Name: f.spec, Data: ds}, Progress: progress.Prefix(prog.event, "cluster: "),
	})
	if err != nil {
		return err
	}
	sum := clusterPairsSummaryOf(f, rep)
	if f.out != "" {
		if err := saveClusterKernel(f, rep.Model); err != nil {
			return err
		}
		sum.Out = f.out
	}
	sum.TotalSeconds, sum.PeakRSSMB = jsonFloat(time.Since(start).Seconds()), jsonFloat(peakRSSMB())
	if env.json {
		return emitJSON(env, sum)
	}
	printClusterPairsSummary(env.stdout, f, sum, rep)
	return nil
}

// clusterPairsSummaryOf is the summary of a cluster --pairs run.
func clusterPairsSummaryOf(f clusterFlags, rep *psdlearn.ClusterPairsReport) clusterPairsSummary {
	sum := clusterPairsSummary{
		Algo: "simplenpkl", Loss: f.loss.String(), Backend: f.b.Name(), Data: f.spec, Pairs: f.pairs,
		N: rep.N, Dim: rep.Dim, Clusters: rep.Clusters, Neighbors: f.k, Graph: f.graph + "/" + f.weight, GraphNNZ: rep.GraphNNZ,
		B: jsonFloat(f.bcap), C: jsonFloat(f.grid[0]), HoldOut: jsonFloat(f.holdOut), Constraints: rep.Pairs, Used: rep.Used, HeldOutPairs: rep.HeldOut,
		Satisfaction: jsonFloat(rep.Satisfaction), TrainSatisfaction: jsonFloat(rep.TrainSatisfaction),
		Iterations: rep.Iterations, Rank: rep.Rank, Covered: rep.Covered, Eigenvalues: jsonFloats(rep.LeadingEigenvalues),
		GraphSeconds: jsonFloat(rep.GraphSeconds), TrainSeconds: jsonFloat(rep.LearnSeconds),
	}
	for _, it := range rep.History {
		sum.Objective = append(sum.Objective, jsonFloat(it.Objective))
	}
	if f.baseline {
		sum.KMeansSatisfaction = optFloat(rep.KMeansSatisfaction)
	}
	return sum
}

// printClusterPairsSummary prints the text summary of a cluster --pairs run.
func printClusterPairsSummary(w io.Writer, f clusterFlags, sum clusterPairsSummary, rep *psdlearn.ClusterPairsReport) {
	fmt.Fprintf(w, "SimpleNPKL (%s loss) on %s: %d points, %d features, %d clusters, backend %s\n", sum.Loss, f.spec, sum.N, sum.Dim, sum.Clusters, sum.Backend)
	fmt.Fprintf(w, "pairs: %d from %s, %d learned from, %d held out\n", sum.Constraints, f.pairs, sum.Used, sum.HeldOutPairs)
	kmHeld, kmTrain := "", ""
	if f.baseline {
		kmHeld, kmTrain = fmt.Sprintf(" (k-means %.2f %%)", 100*rep.KMeansSatisfaction), fmt.Sprintf(" (k-means %.2f %%)", 100*rep.KMeansTrainSatisfaction)
	}
	if sum.HeldOutPairs > 0 {
		fmt.Fprintf(w, "held-out pairs respected: %.2f %%%s\n", 100*sum.Satisfaction, kmHeld)
	}
	fmt.Fprintf(w, "pairs learned from respected: %.2f %%%s\n", 100*sum.TrainSatisfaction, kmTrain)
	fmt.Fprintf(w, "rank %d (covered: %v), iterations %d, learn %.4fs, total %.2fs\n", sum.Rank, sum.Covered, sum.Iterations, sum.TrainSeconds, sum.TotalSeconds)
	if sum.Out != "" {
		fmt.Fprintf(w, "kernel written to %s\n", sum.Out)
	}
}
