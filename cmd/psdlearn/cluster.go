package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// maxRestarts bounds --restarts: k-means++ restarts run without progress
// lines, so a count beyond it would look like a hang.
const maxRestarts = 10000

func init() {
	register(command{name: "cluster", summary: "learn a kernel from pairwise constraints (SimpleNPKL) and cluster with kernel k-means", run: runCluster})
}

// clusterSummary is the JSON object `psdlearn cluster --json` prints.
type clusterSummary struct {
	Algo        string    `json:"algo"`
	Loss        string    `json:"loss"`
	Backend     string    `json:"backend"`
	Data        string    `json:"data"`
	N           int       `json:"n_train"`
	Dim         int       `json:"dim"`
	Clusters    int       `json:"clusters"`
	Neighbors   int       `json:"k"`
	Graph       string    `json:"graph"`
	GraphNNZ    int       `json:"graph_nnz"`
	B           float64   `json:"B"`
	C           []float64 `json:"C"`
	CChosen     []float64 `json:"C_chosen,omitempty"`
	Ratio       float64   `json:"component_ratio"`
	Selection   string    `json:"selection"`
	Runs        int       `json:"runs"`
	Constraints float64   `json:"constraints"`
	Used        float64   `json:"constraints_used"`

	Accuracy     float64   `json:"cluster_accuracy"`
	AccuracySD   float64   `json:"cluster_accuracy_sd"`
	Accuracies   []float64 `json:"cluster_accuracies"`
	KMeans       *float64  `json:"kmeans_accuracy,omitempty"`
	KMeansSD     *float64  `json:"kmeans_accuracy_sd,omitempty"`
	Iterations   float64   `json:"iterations"`
	Rank         float64   `json:"rank"`
	Covered      bool      `json:"spectrum_covered"`
	Objective    []float64 `json:"objective"` // J per iteration of the first run
	Eigenvalues  []float64 `json:"leading_eigenvalues"`
	GraphSeconds float64   `json:"graph_seconds"`
	TrainSeconds float64   `json:"train_seconds"` // mean kernel learning time per run (clustering excluded)
	TotalSeconds float64   `json:"total_seconds"`
	PeakRSSMB    float64   `json:"peak_rss_mb"`
	Plots        []string  `json:"plots,omitempty"`
	PlotNotes    []string  `json:"plot_notes,omitempty"`
	// Out is --out; SavedRun the 1-based run whose kernel it holds and
	// SavedAccuracy that kernel's pairwise accuracy, re-measured after
	// re-learning it (equal to cluster_accuracies[saved_run-1]).
	Out           string   `json:"out,omitempty"`
	SavedRun      int      `json:"saved_run,omitempty"`
	SavedAccuracy *float64 `json:"saved_accuracy,omitempty"`
	// Warnings: the kernel clusters worse than k-means on the data, or a
	// run's eigenpairs did not cover the positive spectrum (also on stderr).
	Warnings []string `json:"warnings"`
}

func runCluster(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "cluster")
	algo := fs.String("algo", "simplenpkl", "kernel learner: simplenpkl")
	lossName := fs.String("loss", "linear", "loss on the constraints: linear | sqhinge")
	spec := fs.String("data", "", "labelled data: file.csv, file.libsvm, idx:IMAGES:LABELS, builtin:NAME, or - (CSV on standard input) (required)")
	var labelCol string
	labelColFlag(fs, &labelCol)
	k := fs.Int("k", 5, "neighbours of the kNN graph (the paper: 5 for small sets, 50 for large)")
	graph := fs.String("graph", "union", "kNN graph symmetrisation: union | mutual | average")
	weight := fs.String("weight", "binary", "kNN edge weights: binary (the paper) | heat")
	bcap := fs.Float64("B", 1, "capacity bound tr(K²) ≤ B")
	cList := fs.String("C", "0.5", "loss weight C; a comma-separated list is chosen among per run on held-out constraints")
	holdOut := fs.Float64("holdout", 0.2, "share of constraints held out to choose C from a list, or with --pairs to score the clustering (0: none with --pairs)")
	iters := fs.Int("iters", 10, "squared-hinge iterations")
	alpha0 := fs.Float64("alpha0", 1, "squared-hinge initial α (1: the paper; with C ≠ 1, --alpha0 C starts from the linear-loss kernel of the same C)")
	eta := fs.Float64("eta", 0, "squared-hinge step scale, η_t = 2·eta/(t+2) (0: C)")
	rank := fs.Int("rank", 0, "eigenpairs requested first, doubled until the positive spectrum is covered (0: the Pataki bound)")
	maxRank := fs.Int("max-rank", 0, "cap on the rank of K / eigenpairs computed (0: min(max(2·rank, 64), 256))")
	eigTol := fs.Float64("eig-tol", 0, "relative accuracy of the eigenvalues (0: machine precision)")
	ratio := fs.Float64("ratio", 0.7, "must-link components as a fraction of n (sets the number of constraints)")
	runs := fs.Int("runs", 20, "repetitions with fresh constraints")
	clusters := fs.Int("clusters", 0, "number of clusters (0: the number of classes)")
	restarts := fs.Int("restarts", 10, "k-means++ restarts per clustering")
	selName := fs.String("select", "all", "constraints learned from: all | active (margin criterion) | random")
	fraction := fs.Float64("fraction", 0.5, "share of constraints kept by --select active|random")
	standardize := fs.Bool("standardize", false, "standardise the features before building the graph")
	baseline := fs.Bool("baseline", true, "also report plain k-means on the (preprocessed) data")
	seed := fs.Uint64("seed", 1, "random seed (constraints, eigensolver start, k-means)")
	pairsFile := fs.String("pairs", "", "learn from the pairs of this CSV file (header i,j,y: 0-based rows of --data, y = 1 similar, -1 dissimilar; - : standard input) instead of sampling them from labels")
	backendName := fs.String("backend", "", "numerical backend: native | go (default: $PSDLEARN_BACKEND, else native when built in)")
	plotDir := fs.String("plot", "", "write PNG charts of run 1 into this directory: the learned kernel's heat map (N ≤ 500) and, with --loss sqhinge, its convergence")
	out := fs.String("out", "", "save the kernel learned in run --save-run: FILE.npy writes the n×n matrix K, any other name a kernel model file (JSON, reloads in eval and transform)")
	saveRun := fs.Int("save-run", 1, "with --out: the run (1 to --runs) whose kernel is saved")
	var (
		loss npkl.Loss
		sel  npkl.Selection
		grid []float64
	)
	sqhinge := func() bool { return loss == npkl.SquaredHinge }
	rules := []flagRule{
		{"iters", "--loss sqhinge", sqhinge}, {"alpha0", "--loss sqhinge", sqhinge}, {"eta", "--loss sqhinge", sqhinge},
		{"fraction", "--select active|random", func() bool { return sel != npkl.AllConstraints }},
		{"holdout", "a list of several --C values, or --pairs", func() bool { return len(grid) > 1 || *pairsFile != "" }},
	}
	sampled := func() bool { return *pairsFile == "" }
	const fromLabels = "pairs sampled from labels, without --pairs"
	rules = append(rules, flagRule{"ratio", fromLabels, sampled}, flagRule{"runs", fromLabels, sampled}, flagRule{"select", fromLabels, sampled})
	annotateFlagRules(fs, rules)
	if err := parseFlags(fs, "cluster", args); err != nil {
		return err
	}
	if strings.ToLower(*algo) != "simplenpkl" {
		return usagef("cluster: unknown algorithm %q (available: simplenpkl)", *algo)
	}
	if *spec == "" {
		return usagef("cluster: --data is required")
	}
	var err error
	if loss, err = npkl.ParseLoss(*lossName); err != nil {
		return usagef("cluster: %w", err)
	}
	if sel, err = npkl.ParseSelection(*selName); err != nil {
		return usagef("cluster: %w", err)
	}
	if grid, err = parseNumberList("C", *cList); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	chosen := "simplenpkl --loss " + loss.String()
	if *pairsFile != "" {
		chosen += " --pairs"
	}
	if err := checkFlagRules(fs, "cluster", chosen, rules); err != nil {
		return err
	}
	if len(grid) == 0 {
		return usagef("cluster: --C needs at least one value")
	}
	for _, c := range grid {
		if !(c > 0) {
			return usagef("cluster: --C: %v must be positive", c)
		}
	}
	g, err := parseGraphOptions(*graph, *weight)
	if err != nil {
		return usagef("cluster: %w", err)
	}
	if !(*ratio > 0 && *ratio <= 1) {
		return usagef("cluster: --ratio %v: want a fraction in (0, 1]", *ratio)
	}
	if !(*fraction > 0 && *fraction <= 1) || !(*holdOut >= 0 && *holdOut < 1) {
		return usagef("cluster: --fraction must lie in (0, 1] and --holdout in [0, 1)")
	}
	if *restarts > maxRestarts {
		return usagef("cluster: --restarts %d: at most %d k-means++ restarts per clustering", *restarts, maxRestarts)
	}
	if *k < 1 || *runs < 1 || *restarts < 1 || *iters < 1 || *clusters < 0 || *maxRank < 0 || *rank < 0 || !(*bcap > 0) || *eta < 0 || *eigTol < 0 || !(*alpha0 > 0) {
		return usagef("cluster: --k, --runs, --restarts and --iters must be positive, --B and --alpha0 positive, --clusters, --rank, --max-rank, --eta and --eig-tol non-negative")
	}
	saveRunGiven := false
	fs.Visit(func(f *flag.Flag) { saveRunGiven = saveRunGiven || f.Name == "save-run" })
	if saveRunGiven && *out == "" {
		return usagef("cluster: --save-run chooses the run whose kernel --out saves: give --out")
	}
	if *saveRun < 1 || *saveRun > *runs {
		return usagef("cluster: --save-run %d: want a run from 1 to --runs %d", *saveRun, *runs)
	}
	if *out == stdoutName {
		return usagef("cluster: --out - is not supported: give --out a file name")
	}
	b, err := resolveBackend(*backendName)
	if err != nil {
		return err
	}
	if mpi.Launched() { // one rank of an MPI job: cluster_mpi.go
		return runClusterMPI(ctx, env, clusterMPIRun{
			fs: fs, spec: *spec, labelCol: labelCol, out: *out, graphSym: *graph, weight: *weight, g: g, loss: loss, grid: grid, b: b,
			bcap: *bcap, eigTol: *eigTol, ratio: *ratio, k: *k, rank: *rank, maxRank: *maxRank, clusters: *clusters,
			iters: *iters, alpha0: *alpha0, eta: *eta,
			runs: *runs, restarts: *restarts, saveRun: *saveRun, baseline: *baseline, seed: *seed, start: time.Now(),
		})
	}
	if *pairsFile != "" {
		if len(grid) > 1 {
			return usagef("cluster: --pairs learns one kernel: give one --C value")
		}
		if labelCol == "" {
			cur.noLabels = true // every CSV column is a feature
		}
	}
	start := time.Now()
	progress := newProgress(env)
	ds, err := loadData(*spec, labelCol)
	if err != nil {
		return err
	}
	if err := checkKernelOut("cluster", *out, ds.Len()); err != nil {
		return err
	}
	x := ds.X
	if *standardize {
		st, err := data.FitStandardizer(x)
		if err != nil {
			return fmt.Errorf("cluster: %w", err)
		}
		if x, err = st.Apply(x); err != nil {
			return fmt.Errorf("cluster: %w", err)
		}
	}
	if *pairsFile != "" {
		return runClusterPairs(ctx, env, clusterPairsRun{
			path: *pairsFile, spec: *spec, ds: ds, x: x, clusters: *clusters, holdOut: *holdOut, seed: *seed,
			k: *k, graph: *graph + "/" + *weight, g: g, restarts: *restarts, baseline: *baseline, start: start, progress: progress,
			learn: npkl.Options{Loss: loss, B: *bcap, C: grid[0], Iters: *iters, Eta: *eta, Alpha0: *alpha0, Rank: *rank, MaxRank: *maxRank, EigTol: *eigTol, Seed: *seed, Backend: b},
		})
	}
	progress.printf("cluster: %s, %d points × %d features, %d classes; SimpleNPKL %v loss on backend %s", ds.Name, ds.Len(), ds.Dim(), len(ds.Classes), loss, b.Name())
	opt := npkl.ClusterOptions{
		Neighbors: *k, Graph: g, Ratio: *ratio, Runs: *runs, Clusters: *clusters, Restarts: *restarts,
		Selection: sel, Fraction: *fraction, CGrid: grid, HoldOut: *holdOut, Seed: *seed,
		Learn:    npkl.Options{Loss: loss, B: *bcap, Iters: *iters, Eta: *eta, Alpha0: *alpha0, Rank: *rank, MaxRank: *maxRank, EigTol: *eigTol, Backend: b},
		Progress: progress.event,
	}
	rep, err := npkl.Cluster(ctx, x, ds.Y, opt)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	sum := clusterSummary{
		Algo: "simplenpkl", Loss: loss.String(), Backend: b.Name(), Data: *spec, N: rep.N, Dim: rep.Dim,
		Clusters: rep.Clusters, Neighbors: *k, Graph: *graph + "/" + *weight, GraphNNZ: rep.GraphNNZ, B: *bcap, C: grid,
		Ratio: *ratio, Selection: sel.String(), Runs: len(rep.Runs), Constraints: rep.ConstraintsMean, Used: rep.UsedMean,
		Accuracy: rep.AccuracyMean, AccuracySD: rep.AccuracySD, Iterations: rep.ItersMean, Rank: rep.RankMean,
		Covered: rep.AllCovered, GraphSeconds: rep.GraphSeconds, TrainSeconds: rep.LearnSecondsMean,
	}
	for _, r := range rep.Runs {
		sum.Accuracies = append(sum.Accuracies, r.Accuracy)
		if len(grid) > 1 {
			sum.CChosen = append(sum.CChosen, r.C)
		}
	}
	if len(rep.Runs) > 0 {
		sum.Objective = rep.Runs[0].Objectives
		sum.Eigenvalues = rep.Runs[0].LeadingEigenvalues
	}
	sum.Warnings = []string{}
	if *baseline {
		m, sd, err := npkl.KMeansBaseline(ctx, x, ds.Y, rep.Clusters, *runs, 1, *seed)
		if err != nil {
			return fmt.Errorf("cluster: %w", err)
		}
		sum.KMeans, sum.KMeansSD = &m, &sd
		if w := npkl.BaselineWarning(sum.Accuracy, m, *k, rep.N); w != "" {
			sum.Warnings = append(sum.Warnings, w)
		}
	}
	for _, r := range rep.Runs {
		if w := npkl.SpectrumWarning(r.Covered, r.Rank); w != "" {
			sum.Warnings = append(sum.Warnings, fmt.Sprintf("run %d: %s", r.Run, w))
			break
		}
	}
	for _, w := range sum.Warnings {
		fmt.Fprintf(env.stderr, "psdlearn: warning: cluster: %s\n", w)
	}
	if *out != "" {
		rr := rep.Runs[*saveRun-1]
		progress.printf("cluster: re-learning the kernel of run %d for --out %s", rr.Run, *out)
		m, acc, err := clusterKernelModel(ctx, x, ds, opt, rep.Clusters, rr, b)
		if err != nil {
			return fmt.Errorf("cluster: --out: %w", err)
		}
		m.Provenance.Data.Name = *spec
		m.Info["data"], m.Info["standardize"], m.Info["graph"], m.Info["weight"] = *spec, *standardize, *graph, *weight
		m.Info["C_grid"], m.Info["loss"], m.Info["runs"], m.Info["seed"] = grid, loss.String(), *runs, *seed
		if acc != rr.Accuracy && !(math.IsNaN(acc) && math.IsNaN(rr.Accuracy)) {
			w := fmt.Sprintf("re-learning run %d for --out gave a kernel whose clustering accuracy %.6g differs from the run's %.6g (the saved kernel is the re-learned one)", rr.Run, acc, rr.Accuracy)
			m.Certificate.Warnings = append(m.Certificate.Warnings, w)
			fmt.Fprintf(env.stderr, "psdlearn: warning: %s\n", w)
		}
		if err := writeKernelOut(*out, m, nil); err != nil {
			return fmt.Errorf("cluster: %w", err)
		}
		sum.Out, sum.SavedRun, sum.SavedAccuracy = *out, rr.Run, ptr(acc)
	}
	sum.TotalSeconds = time.Since(start).Seconds()
	if *plotDir != "" {
		if sum.Plots, sum.PlotNotes, err = clusterPlots(ctx, *plotDir, x, ds, opt, rep); err != nil {
			return fmt.Errorf("cluster: plot: %w", err)
		}
	}
	sum.PeakRSSMB = peakRSSMB()
	if env.json {
		return emitJSON(env, sum)
	}
	w := env.stdout
	fmt.Fprintf(w, "SimpleNPKL (%s loss) on %s: %d points, %d features, %d clusters, backend %s\n", sum.Loss, ds.Name, sum.N, sum.Dim, sum.Clusters, sum.Backend)
	fmt.Fprintf(w, "graph: k = %d %s, %d nonzeros, %.3fs\n", *k, sum.Graph, sum.GraphNNZ, sum.GraphSeconds)
	fmt.Fprintf(w, "constraints: %.1f per run (ratio %.2f), %.1f used (%s)\n", sum.Constraints, *ratio, sum.Used, sum.Selection)
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
	return nil
}

// kernelEvalDefaults returns the k-means seed, restarts and number of
// clusters psdlearn eval uses on kernel model m: those given on its command
// line (fs), else the ones the model records — the provenance seed and
// info.restarts and info.clusters, written by cluster --out — so that eval
// repeats the clustering of the saved run; else seed, runs and clusters.
func kernelEvalDefaults(fs *flag.FlagSet, m *model.Model, seed uint64, runs, clusters int) (uint64, int, int) {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if !given["seed"] && m.Provenance != nil {
		seed = m.Provenance.Seed
	}
	recorded := func(key string) (int, bool) {
		v, ok := m.Info[key].(float64)
		if !ok || v < 1 || v != math.Trunc(v) || v > 1<<30 {
			return 0, false
		}
		return int(v), true
	}
	if r, ok := recorded("restarts"); ok && !given["runs"] {
		runs = r
	}
	if c, ok := recorded("clusters"); ok && !given["clusters"] {
		clusters = c
	}
	return seed, runs, clusters
}

// clusterRunSeed is the seed npkl.Cluster derives for its run-th run
// (0-based): it fixes the run's constraints, eigensolver start and k-means.
// It must follow algos/npkl's clusterRun; TestClusterOutReloads catches a
// drift (the re-learned kernel would cluster differently).
func clusterRunSeed(seed uint64, run int) uint64 { return seed*1000003 + uint64(run) }

// clusterKernelModel re-learns the kernel of run rr of the protocol that
// npkl.Cluster ran with opt on x — the same seed, constraints, selection
// and C (npkl.ClusterReport keeps the accuracies, not the kernels, so
// keeping all of them would cost n·rank numbers per run) — and returns it
// as a kernel model with its pairwise accuracy, clustered as the run was.
// The model's provenance seed is the run's seed, so that psdlearn eval
// repeats the run's k-means.
func clusterKernelModel(ctx context.Context, x *mat.Dense, ds *data.Dataset, opt npkl.ClusterOptions, clusters int, rr npkl.RunReport, b engine.Backend) (*model.Model, float64, error) {
	seed := clusterRunSeed(opt.Seed, rr.Run-1)
	lap, err := npkl.Laplacian(x, opt.Neighbors, opt.Graph, b)
	if err != nil {
		return nil, 0, err
	}
	cons, err := constraints.XingPairs(ds.Y, opt.Ratio, seed)
	if err != nil {
		return nil, 0, err
	}
	lo := opt.Learn
	lo.Seed, lo.C, lo.Progress = seed, rr.C, nil
	used := cons
	if opt.Selection != npkl.AllConstraints {
		target := max(1, int(math.Round(opt.Fraction*float64(cons.Len()))))
		if opt.Selection == npkl.ActiveSelection {
			base := lo
			base.Loss = npkl.Linear
			res, err := npkl.Learn(ctx, lap, cons, base)
			if err != nil {
				return nil, 0, fmt.Errorf("active selection: %w", err)
			}
			if used, err = npkl.SelectActive(res, cons, target); err != nil {
				return nil, 0, err
			}
		} else if used, err = npkl.SelectRandom(cons, target, seed); err != nil {
			return nil, 0, err
		}
	}
	if used.Len() != rr.Used {
		return nil, 0, fmt.Errorf("re-learning run %d drew %d constraints, the run used %d", rr.Run, used.Len(), rr.Used)
	}
	res, err := npkl.Learn(ctx, lap, used, lo)
	if err != nil {
		return nil, 0, err
	}
	km, err := eval.KernelKMeans(ctx, res.Kernel, clusters, eval.KMeansOptions{Restarts: opt.Restarts, Seed: seed})
	if err != nil {
		return nil, 0, err
	}
	acc := eval.PairwiseAccuracy(ds.Y, km.Assign)
	cert := &model.Certificate{Converged: res.Covered, Gap: math.NaN(), Tolerance: math.NaN()}
	switch {
	case lo.Loss == npkl.Linear:
		cert.Reason = "closed-form solution of the linear-loss problem"
	default:
		cert.Reason = fmt.Sprintf("squared hinge: %d closed-form iterations (a fixed count; no duality certificate)", res.Iterations)
	}
	if !res.Covered {
		cert.Reason += "; the positive spectrum was not covered within --max-rank"
		cert.Warnings = append(cert.Warnings, fmt.Sprintf("the positive spectrum was not covered within %d eigenpairs: K is the best rank-%d approximation of the closed form (raise --max-rank)", res.Rank(), res.Rank()))
	}
	prov := model.NewProvenance(b.Name(), seed)
	prov.Data = model.DescribeData(ds.Name, ds.X, ds.Y, ds.Classes)
	m := &model.Model{
		Kind: model.KindKernel, Algo: "simplenpkl", Kernel: res.Kernel, Classes: ds.Classes,
		Info: map[string]any{
			"run": rr.Run, "run_seed": seed, "C": rr.C, "B": lo.B, "k": opt.Neighbors, "ratio": opt.Ratio,
			"selection": opt.Selection.String(), "fraction": opt.Fraction, "clusters": clusters, "restarts": opt.Restarts,
			"constraints": rr.Constraints, "constraints_used": used.Len(), "rank": res.Rank(), "covered": res.Covered,
			"iterations": res.Iterations, "cluster_accuracy": acc, "backend": b.Name(),
		},
		Certificate: cert, Provenance: prov,
	}
	return m, acc, nil
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

// clusterPairsRun is what `cluster --pairs` needs from the command line.
type clusterPairsRun struct {
	path, spec, graph string
	ds                *data.Dataset
	x                 *mat.Dense
	clusters          int
	holdOut           float64
	seed              uint64
	k, restarts       int
	g                 sparse.GraphOptions
	baseline          bool
	learn             npkl.Options
	start             time.Time
	progress          *progressLine
}

// clusterPairsSummary is the JSON object of `cluster --pairs --json`. The
// pair satisfaction of a clustering is the fraction of pairs it respects:
// similar pairs in one cluster, dissimilar pairs in two.
type clusterPairsSummary struct {
	Algo      string  `json:"algo"`
	Loss      string  `json:"loss"`
	Backend   string  `json:"backend"`
	Data      string  `json:"data"`
	Pairs     string  `json:"pairs"`
	N         int     `json:"n_train"`
	Dim       int     `json:"dim"`
	Clusters  int     `json:"clusters"`
	Neighbors int     `json:"k"`
	Graph     string  `json:"graph"`
	GraphNNZ  int     `json:"graph_nnz"`
	B         float64 `json:"B"`
	C         float64 `json:"C"`
	HoldOut   float64 `json:"holdout"`
	// Constraints counts the pairs read; Used those learned from (the rest
	// are held out).
	Constraints  int `json:"constraints"`
	Used         int `json:"constraints_used"`
	HeldOutPairs int `json:"heldout_pairs"`
	// Satisfaction on the held-out pairs (null with none) and on the
	// pairs learned from, for the learned kernel's clustering and for
	// plain k-means on the (preprocessed) data.
	Satisfaction       any       `json:"pair_satisfaction"`
	TrainSatisfaction  float64   `json:"pair_satisfaction_train"`
	KMeansSatisfaction any       `json:"kmeans_pair_satisfaction,omitempty"`
	Assignments        []int     `json:"-"` // the clustering, cluster of each row
	Iterations         int       `json:"iterations"`
	Rank               int       `json:"rank"`
	Covered            bool      `json:"spectrum_covered"`
	Objective          []float64 `json:"objective"`
	Eigenvalues        []float64 `json:"leading_eigenvalues"`
	GraphSeconds       float64   `json:"graph_seconds"`
	TrainSeconds       float64   `json:"train_seconds"`
	TotalSeconds       float64   `json:"total_seconds"`
	PeakRSSMB          float64   `json:"peak_rss_mb"`
}

// clusterPairsSeedStream is the PCG stream of the hold-out of cluster --pairs.
const clusterPairsSeedStream = 0x636c_7573_7061_6972

// runClusterPairs is `cluster --pairs`: SimpleNPKL learns a kernel from the
// pairs of the file (minus a seeded share --holdout held out), kernel
// k-means clusters it, and the clustering is scored by the share of the
// held-out pairs it respects (next to plain k-means). See docs/cli.md,
// "Constraint files".
func runClusterPairs(ctx context.Context, env *cmdEnv, r clusterPairsRun) error {
	n := r.ds.Len()
	clusters := r.clusters
	if clusters == 0 {
		if len(r.ds.Classes) < 2 {
			return usagef("cluster: --pairs on unlabelled data needs --clusters")
		}
		clusters = len(r.ds.Classes)
	}
	if clusters < 2 || clusters > n {
		return usagef("cluster: --clusters %d: want 2 to %d", clusters, n)
	}
	in, closeFile, err := openConstraintFile(env, r.path)
	if err != nil {
		return fmt.Errorf("cluster: --pairs %s: %w", r.path, err)
	}
	all, err := constraints.ReadPairs(in, n)
	closeFile()
	if err != nil {
		return fmt.Errorf("cluster: --pairs %s: %w", r.path, err)
	}
	m := all.Len()
	trainPairs, held := &constraints.Pairs{N: n}, &constraints.Pairs{N: n}
	nHeld := 0
	if r.holdOut > 0 {
		nHeld = max(1, int(math.Round(r.holdOut*float64(m))))
	}
	if nHeld >= m {
		return fmt.Errorf("cluster: --pairs %s: %d pairs leave none to learn from after holding out a share %g", r.path, m, r.holdOut)
	}
	isHeld := make([]bool, m)
	for _, c := range rand.New(rand.NewPCG(r.seed, clusterPairsSeedStream)).Perm(m)[:nHeld] {
		isHeld[c] = true
	}
	for c, q := range all.List {
		if isHeld[c] {
			held.List = append(held.List, q)
		} else {
			trainPairs.List = append(trainPairs.List, q)
		}
	}
	r.progress.printf("cluster: %s, %d points × %d features; SimpleNPKL %v loss from %d pairs of %s (%d held out)", r.spec, n, r.ds.Dim(), r.learn.Loss, trainPairs.Len(), r.path, held.Len())
	t0 := time.Now()
	lap, err := npkl.Laplacian(r.x, r.k, r.g, r.learn.Backend)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	graphSeconds := time.Since(t0).Seconds()
	t1 := time.Now()
	res, err := npkl.Learn(ctx, lap, trainPairs, r.learn)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	trainSeconds := time.Since(t1).Seconds()
	km, err := eval.KernelKMeans(ctx, res.Kernel, clusters, eval.KMeansOptions{Restarts: r.restarts, Seed: r.seed})
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	sum := clusterPairsSummary{
		Algo: "simplenpkl", Loss: r.learn.Loss.String(), Backend: engine.Or(r.learn.Backend).Name(), Data: r.spec, Pairs: r.path,
		N: n, Dim: r.ds.Dim(), Clusters: clusters, Neighbors: r.k, Graph: r.graph, GraphNNZ: lap.NNZ(), B: r.learn.B, C: r.learn.C,
		HoldOut: r.holdOut, Constraints: m, Used: trainPairs.Len(), HeldOutPairs: held.Len(),
		Satisfaction: finiteOrNil(pairSatisfaction(km.Assign, held)), TrainSatisfaction: pairSatisfaction(km.Assign, trainPairs),
		Assignments: km.Assign, Iterations: res.Iterations, Rank: res.Rank(), Covered: res.Covered,
		Eigenvalues: append([]float64(nil), res.Lambda[:min(5, res.Rank())]...), GraphSeconds: graphSeconds, TrainSeconds: trainSeconds,
	}
	for _, it := range res.History {
		sum.Objective = append(sum.Objective, it.Objective)
	}
	kmTrain, kmHeld := math.NaN(), math.NaN()
	if r.baseline {
		base, err := eval.KMeans(ctx, r.x, clusters, eval.KMeansOptions{Restarts: r.restarts, Seed: r.seed})
		if err != nil {
			return fmt.Errorf("cluster: k-means baseline: %w", err)
		}
		kmTrain, kmHeld = pairSatisfaction(base.Assign, trainPairs), pairSatisfaction(base.Assign, held)
		sum.KMeansSatisfaction = finiteOrNil(kmHeld)
	}
	sum.TotalSeconds = time.Since(r.start).Seconds()
	sum.PeakRSSMB = peakRSSMB()
	if env.json {
		return emitJSON(env, sum)
	}
	w := env.stdout
	fmt.Fprintf(w, "SimpleNPKL (%s loss) on %s: %d points, %d features, %d clusters, backend %s\n", sum.Loss, r.spec, n, sum.Dim, clusters, sum.Backend)
	fmt.Fprintf(w, "pairs: %d from %s, %d learned from, %d held out\n", m, r.path, sum.Used, sum.HeldOutPairs)
	if held.Len() > 0 {
		fmt.Fprintf(w, "held-out pairs respected: %.2f %%", 100*pairSatisfaction(km.Assign, held))
		if r.baseline {
			fmt.Fprintf(w, " (k-means %.2f %%)", 100*kmHeld)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "pairs learned from respected: %.2f %%", 100*sum.TrainSatisfaction)
	if r.baseline {
		fmt.Fprintf(w, " (k-means %.2f %%)", 100*kmTrain)
	}
	fmt.Fprintf(w, "\nrank %d (covered: %v), iterations %d, learn %.4fs, total %.2fs\n", sum.Rank, sum.Covered, sum.Iterations, sum.TrainSeconds, sum.TotalSeconds)
	return nil
}

// pairSatisfaction is the fraction of the pairs a clustering respects
// (similar in one cluster, dissimilar in two); NaN for no pair.
func pairSatisfaction(assign []int, p *constraints.Pairs) float64 {
	if p.Len() == 0 {
		return math.NaN()
	}
	ok := 0
	for _, q := range p.List {
		if (assign[q.A] == assign[q.B]) == q.Same {
			ok++
		}
	}
	return float64(ok) / float64(p.Len())
}
