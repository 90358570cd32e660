package psdlearn

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/progress"
	"github.com/psdlearn/psdlearn/sparse"
	"github.com/psdlearn/psdlearn/warn"
	"gonum.org/v1/gonum/mat"
)

// The defaults of SimpleNPKL's clustering protocol (Cluster, ClusterPairs)
// and of the SimpleNPKL estimator, each defined once.
const (
	// DefaultGraphNeighbors is the k of the kNN graph whose Laplacian
	// regularises the kernel (the paper's setting for the small sets).
	DefaultGraphNeighbors = 5
	// DefaultComponentRatio is the number of connected components of the
	// must-link graph, as a fraction of the points, at which Cluster stops
	// sampling pairs (the paper's 0.7).
	DefaultComponentRatio = 0.7
	// DefaultClusterRuns is the number of repetitions of the protocol,
	// each with fresh pairs.
	DefaultClusterRuns = 20
	// DefaultSelectFraction is the share of the sampled pairs active or
	// random selection keeps.
	DefaultSelectFraction = 0.5
)

// ClusterOptions configures Cluster, the clustering protocol of the
// SimpleNPKL paper. The zero value of every field means its default.
type ClusterOptions struct {
	// Standardize standardises the features before the kNN graph is built
	// (and before the k-means baseline).
	Standardize bool
	// Neighbors is the k of the kNN graph (0: DefaultGraphNeighbors).
	Neighbors int
	// Graph chooses the symmetrisation and weights of the kNN graph; the
	// zero value is the union graph with 0/1 weights.
	Graph sparse.GraphOptions
	// Ratio is the number of connected components of the must-link graph
	// as a fraction of n, which sets the number of pairs sampled per run
	// (0: DefaultComponentRatio).
	Ratio float64
	// Runs is the number of repetitions, fresh pairs each
	// (0: DefaultClusterRuns).
	Runs int
	// Clusters is the number of clusters (0: the number of classes).
	Clusters int
	// Restarts is the number of k-means++ starts per clustering
	// (0: eval.DefaultRestarts).
	Restarts int
	// Selection picks the pairs learned from; Fraction is the share kept
	// by active or random selection (0: DefaultSelectFraction).
	Selection npkl.Selection
	Fraction  float64
	// Learn configures SimpleNPKL (loss, B, C, backend, …). Its Seed is
	// replaced per run by ClusterRunSeed.
	Learn npkl.Options
	// CGrid, when it holds two or more values, chooses C in every run from
	// the side information alone: a share HoldOut (0: DefaultHoldOut) of
	// the sampled pairs is held out, a kernel is learned from the rest for
	// each C, clustered, and the C whose clustering satisfies the most
	// held-out pairs (ties: the first in CGrid) is used to learn from all
	// of them. The class labels are never looked at. One value sets C.
	CGrid   []float64
	HoldOut float64
	// Baseline also clusters the (preprocessed) rows with plain k-means,
	// Runs times with one k-means++ start each (the paper's baseline):
	// ClusterReport.KMeansMean and KMeansSD.
	Baseline bool
	// Keep lists the runs (from 1) whose learned kernels the report keeps
	// as kernel models (ClusterRun.Model); the others keep only figures.
	Keep []int
	// Seed fixes all random choices.
	Seed uint64
	// Source describes the data for the kept models' provenance and class
	// names (nil: the rows and labels as "fit").
	Source *Source
	// Progress, if non-nil, receives an event after every run.
	Progress progress.Func
	// Dist, if set, learns the kernels across the processes of an
	// execution mode (nil: npkl.Learn in this process).
	Dist KernelDistributor
}

// A KernelDistributor learns SimpleNPKL's kernels over the processes of an
// execution mode: SimpleNPKL returns what npkl.Learn returns on the same
// arguments, to the eigensolver's tolerance, and is called on every
// process with the same arguments in the same order.
type KernelDistributor interface {
	SimpleNPKL(ctx context.Context, lap *sparse.CSR, pairs *constraints.Pairs, opt npkl.Options) (*npkl.Result, error)
	// Laplacian returns npkl.Laplacian(x, k, g, b), bit for bit.
	Laplacian(x *mat.Dense, k int, g sparse.GraphOptions, b engine.Backend) (*sparse.CSR, error)
}

// learn learns a kernel: o.Dist's, else npkl.Learn's.
func (o ClusterOptions) learn(ctx context.Context, lap *sparse.CSR, pairs *constraints.Pairs, lo npkl.Options) (*npkl.Result, error) {
	if o.Dist != nil {
		return o.Dist.SimpleNPKL(ctx, lap, pairs, lo)
	}
	return npkl.Learn(ctx, lap, pairs, lo)
}

// ClusterRun is one repetition of the protocol.
type ClusterRun struct {
	Run         int     // from 1
	Seed        uint64  // ClusterRunSeed of the run: its pairs, eigensolver start and k-means
	Constraints int     // pairs sampled
	Used        int     // pairs learned from (after selection)
	Accuracy    float64 // pairwise clustering accuracy
	C           float64 // the C used (chosen from CGrid when given)
	Rank        int     // rank of the learned K
	Eigenpairs  int     // eigenpairs computed in the last solve
	Covered     bool    // whether the positive spectrum was covered
	Iterations  int     // closed-form solves
	// OpApplies counts the eigensolver's operator products over all the
	// solves; Eigensolver names the eigensolver that ran.
	OpApplies   int
	Eigensolver string
	// LearnSeconds is the kernel learning time, including the selection of
	// pairs (the paper's CPU time, clustering excluded); ClusterSeconds the
	// k-means time; SelectCSeconds the time spent choosing C from CGrid.
	LearnSeconds, ClusterSeconds, SelectCSeconds float64
	// Objectives holds J(K_t, α_{t−1}) per iteration (squared hinge) or the
	// objective of the linear loss, and Primals the objective of K_t; for
	// the squared hinge every Objectives[t] is a lower bound of the optimum
	// and every Primals[t] an upper bound (see npkl.Iteration). History is
	// the whole record of every solve.
	Objectives, Primals []float64
	History             []npkl.Iteration
	// LeadingEigenvalues are up to the 5 largest eigenvalues of K.
	LeadingEigenvalues []float64
	// Model is the run's kernel as a kernel model (a run in
	// ClusterOptions.Keep only; nil otherwise).
	Model *model.Model
}

// ClusterReport summarises the protocol over all runs.
type ClusterReport struct {
	// N, Dim and Clusters describe the data and the clustering.
	N, Dim, Clusters int
	// GraphSeconds is the time to build the kNN Laplacian (once); GraphNNZ its nonzeros.
	GraphSeconds float64
	GraphNNZ     int
	// Runs holds one report per repetition.
	Runs []ClusterRun
	// AccuracyMean and AccuracySD are the mean and sample standard deviation
	// of the pairwise accuracy over the runs.
	AccuracyMean, AccuracySD float64
	// The means over runs of the learning time, iterations, rank of K, and
	// numbers of pairs sampled and learned from.
	LearnSecondsMean, ItersMean, RankMean, ConstraintsMean, UsedMean float64
	// AllCovered reports whether every run covered the positive spectrum.
	AllCovered bool
	// KMeansMean and KMeansSD are the plain k-means baseline's pairwise
	// accuracy (ClusterOptions.Baseline; NaN without it).
	KMeansMean, KMeansSD float64
	// Warnings say when the kernel clusters worse than the k-means
	// baseline (warn.BelowKMeans) and when a run's eigenpairs did not
	// cover the positive spectrum (warn.UncoveredSpectrum, the first such
	// run); none when the protocol has nothing to warn about.
	Warnings []string
}

// ClusterRunSeed is the seed of run run (from 1) of a protocol seeded
// with seed: it fixes the run's pairs, its eigensolver start vectors and
// its k-means, so one run can be repeated, or run elsewhere, on its own.
func ClusterRunSeed(seed uint64, run int) uint64 { return seed*1000003 + uint64(run-1) }

// Cluster runs the clustering protocol of the SimpleNPKL paper on the
// labelled rows x, y: build the kNN Laplacian once; then, per run, sample
// pairs by the connected-component rule, optionally select a subset, learn
// the kernel, cluster with kernel k-means on its factor and score the
// pairwise accuracy against y. Labels are values (never indices).
//
// On cancellation Cluster returns the report of the runs completed so far
// (its summary over them; nil if the kNN graph was not built yet) and an
// error wrapping ctx.Err(); a run in progress stops within one iteration of
// SimpleNPKL or k-means. Invalid options or data give an error matching
// errs.ErrInvalid before any work.
func Cluster(ctx context.Context, x *mat.Dense, y []int, opt ClusterOptions) (*ClusterReport, error) {
	o, err := opt.withDefaults(x, y)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("psdlearn: cluster: %w", err)
	}
	if o.Standardize {
		if x, err = standardize(x); err != nil {
			return nil, err
		}
	}
	n, d := x.Dims()
	t0 := time.Now()
	var lap *sparse.CSR
	if o.Dist != nil {
		lap, err = o.Dist.Laplacian(x, o.Neighbors, o.Graph, o.Learn.Backend)
	} else {
		lap, err = npkl.Laplacian(x, o.Neighbors, o.Graph, o.Learn.Backend)
	}
	if err != nil {
		return nil, fmt.Errorf("psdlearn: cluster: %w", err)
	}
	rep := &ClusterReport{N: n, Dim: d, Clusters: o.Clusters, GraphSeconds: time.Since(t0).Seconds(), GraphNNZ: lap.NNZ(),
		AllCovered: true, KMeansMean: math.NaN(), KMeansSD: math.NaN()}
	for run := 1; run <= o.Runs; run++ {
		rr, err := o.clusterRun(ctx, lap, y, run)
		if err != nil {
			err = fmt.Errorf("psdlearn: cluster: run %d: %w", run, err)
			if ctx.Err() != nil {
				rep.summarize()
				return rep, err
			}
			return nil, err
		}
		rep.Runs = append(rep.Runs, rr)
		if o.Progress != nil {
			o.Progress(progress.Event{Algorithm: "simplenpkl", Iteration: rr.Run, Objective: math.NaN(), Gap: math.NaN(),
				Message: fmt.Sprintf("run %d/%d: accuracy %.2f%%, C %g, rank %d, %d/%d constraints, learn %.3fs", rr.Run, o.Runs, 100*rr.Accuracy, rr.C, rr.Rank, rr.Used, rr.Constraints, rr.LearnSeconds)})
		}
	}
	rep.summarize()
	if o.Baseline {
		if rep.KMeansMean, rep.KMeansSD, err = KMeansBaseline(ctx, x, y, o.Clusters, o.Runs, 1, o.Seed); err != nil {
			return rep, err
		}
		if w := warn.BelowKMeans(rep.AccuracyMean, rep.KMeansMean, o.Neighbors, n); w != "" {
			rep.Warnings = append(rep.Warnings, w)
		}
	}
	for _, r := range rep.Runs {
		if w := warn.UncoveredSpectrum(r.Covered, r.Rank); w != "" {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("run %d: %s", r.Run, w))
			break
		}
	}
	return rep, nil
}

// withDefaults validates the options and the data and resolves the
// defaults.
func (o ClusterOptions) withDefaults(x *mat.Dense, y []int) (ClusterOptions, error) {
	if x == nil || x.IsEmpty() {
		return o, fmt.Errorf("%w: cluster: no data rows", ErrInvalid)
	}
	n, _ := x.Dims()
	if len(y) != n {
		return o, fmt.Errorf("%w: cluster: %d labels for %d points", ErrInvalid, len(y), n)
	}
	if err := checkFinite("X", x); err != nil {
		return o, err
	}
	// The protocol samples must-link and cannot-link pairs from the labels
	// and scores the clustering against them: with one class there are no
	// cannot-link pairs and every clustering into one group scores 100%.
	classes := newLabelMap(y).classes()
	if classes < 2 {
		return o, fmt.Errorf("%w: cluster: the labels have a single class; the protocol needs at least two", ErrInvalid)
	}
	o.Neighbors = cmp.Or(o.Neighbors, DefaultGraphNeighbors)
	o.Ratio = cmp.Or(o.Ratio, DefaultComponentRatio)
	o.Runs = cmp.Or(o.Runs, DefaultClusterRuns)
	o.Clusters = cmp.Or(o.Clusters, classes)
	o.Restarts = cmp.Or(o.Restarts, eval.DefaultRestarts)
	o.Fraction = cmp.Or(o.Fraction, DefaultSelectFraction)
	o.HoldOut = cmp.Or(o.HoldOut, DefaultHoldOut)
	if o.Neighbors < 1 || o.Neighbors >= n || o.Runs < 0 || o.Clusters < 1 || o.Clusters > n || o.Restarts < 0 ||
		!(o.Ratio > 0 && o.Ratio <= 1) || !(o.Fraction > 0 && o.Fraction <= 1) || !(o.HoldOut > 0 && o.HoldOut < 1) {
		return o, fmt.Errorf("%w: cluster: invalid options (neighbours %d, runs %d, clusters %d, restarts %d, ratio %v, fraction %v, hold-out %v) for %d points",
			ErrInvalid, o.Neighbors, o.Runs, o.Clusters, o.Restarts, o.Ratio, o.Fraction, o.HoldOut, n)
	}
	for _, c := range o.CGrid {
		if !(c > 0) || math.IsInf(c, 0) {
			return o, optionf("cluster: C = %v in the grid must be positive and finite", c)
		}
	}
	for _, r := range o.Keep {
		if r < 1 || r > o.Runs {
			return o, fmt.Errorf("%w: cluster: run %d to keep: want a run from 1 to %d", ErrInvalid, r, o.Runs)
		}
	}
	o.Learn.Backend = engine.Or(o.Learn.Backend)
	return o, nil
}

// standardize returns x with every feature centred and scaled to unit
// variance.
func standardize(x *mat.Dense) (*mat.Dense, error) {
	st, err := data.FitStandardizer(x)
	if err != nil {
		return nil, fmt.Errorf("psdlearn: %w", asInvalid(err))
	}
	z, err := st.Apply(x)
	if err != nil {
		return nil, fmt.Errorf("psdlearn: %w", asInvalid(err))
	}
	return z, nil
}

// summarize fills the means over rep.Runs.
func (rep *ClusterReport) summarize() {
	acc := make([]float64, len(rep.Runs))
	for i, r := range rep.Runs {
		acc[i] = r.Accuracy
		rep.LearnSecondsMean += r.LearnSeconds
		rep.ItersMean += float64(r.Iterations)
		rep.RankMean += float64(r.Rank)
		rep.ConstraintsMean += float64(r.Constraints)
		rep.UsedMean += float64(r.Used)
		rep.AllCovered = rep.AllCovered && r.Covered
	}
	if k := float64(len(rep.Runs)); k > 0 {
		rep.LearnSecondsMean /= k
		rep.ItersMean /= k
		rep.RankMean /= k
		rep.ConstraintsMean /= k
		rep.UsedMean /= k
	}
	rep.AccuracyMean, rep.AccuracySD = meanSD(acc)
}

// clusterRun is run run (from 1) of the protocol on the resolved options.
func (o ClusterOptions) clusterRun(ctx context.Context, lap *sparse.CSR, y []int, run int) (ClusterRun, error) {
	rr := ClusterRun{Run: run, Seed: ClusterRunSeed(o.Seed, run)}
	cons, err := constraints.XingPairs(y, o.Ratio, rr.Seed)
	if err != nil {
		return rr, err
	}
	rr.Constraints = cons.Len()
	lo := o.Learn
	lo.Seed = rr.Seed
	if len(o.CGrid) == 1 {
		lo.C = o.CGrid[0]
	} else if len(o.CGrid) > 1 {
		ts := time.Now()
		if lo.C, err = o.chooseC(ctx, lap, cons, lo); err != nil {
			return rr, err
		}
		rr.SelectCSeconds = time.Since(ts).Seconds()
	}
	rr.C = cmp.Or(lo.C, npkl.DefaultC)
	t0 := time.Now()
	used, err := npkl.SelectConstraints(ctx, lap, cons, lo, o.Selection, o.Fraction)
	if err != nil {
		return rr, err
	}
	rr.Used = used.Len()
	res, err := o.learn(ctx, lap, used, lo)
	if err != nil {
		return rr, err
	}
	rr.LearnSeconds = time.Since(t0).Seconds()
	rr.Rank, rr.Covered, rr.Iterations = res.Rank(), res.Covered, res.Iterations
	rr.OpApplies, rr.Eigensolver, rr.History = res.OpApplies, res.Eigensolver.String(), res.History
	if len(res.History) > 0 {
		rr.Eigenpairs = res.History[len(res.History)-1].Eigenpairs
	}
	for _, it := range res.History {
		rr.Objectives = append(rr.Objectives, it.Objective)
		rr.Primals = append(rr.Primals, it.Primal)
	}
	rr.LeadingEigenvalues = append([]float64(nil), res.Lambda[:min(5, res.Rank())]...)
	t1 := time.Now()
	km, err := eval.KMeans(ctx, res.Factor(), o.Clusters, eval.KMeansOptions{Restarts: o.Restarts, Seed: rr.Seed})
	if err != nil {
		return rr, err
	}
	rr.ClusterSeconds = time.Since(t1).Seconds()
	rr.Accuracy = eval.PairwiseAccuracy(y, km.Assign)
	if slices.Contains(o.Keep, run) {
		k, err := model.NewKernel(res.V, res.Lambda)
		if err != nil {
			return rr, fmt.Errorf("learned kernel: %w", err)
		}
		rr.Model = o.RunModel(k, rr, lo)
	}
	return rr, nil
}

// chooseC returns the value of o.CGrid whose kernel, learned from a share
// 1 − o.HoldOut of the pairs and clustered, satisfies the most held-out
// pairs.
func (o ClusterOptions) chooseC(ctx context.Context, lap *sparse.CSR, cons *constraints.Pairs, lo npkl.Options) (float64, error) {
	m := cons.Len()
	hold := min(max(1, int(math.Round(o.HoldOut*float64(m)))), m-1)
	if hold < 1 {
		return 0, fmt.Errorf("choosing C: %d constraints are too few to hold some out", m)
	}
	rng := rand.New(rand.NewPCG(lo.Seed, 0x63686f6f736543))
	isHeld := make([]bool, m)
	for _, c := range rng.Perm(m)[:hold] {
		isHeld[c] = true
	}
	train, held := &constraints.Pairs{N: cons.N}, &constraints.Pairs{N: cons.N}
	for c, q := range cons.List {
		if isHeld[c] {
			held.List = append(held.List, q)
		} else {
			train.List = append(train.List, q)
		}
	}
	best, bestScore := o.CGrid[0], -1.0
	for _, c := range o.CGrid {
		lc := lo
		lc.C, lc.Progress = c, nil
		res, err := o.learn(ctx, lap, train, lc)
		if errors.Is(err, npkl.ErrNoPositiveSpectrum) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("choosing C: C = %v: %w", c, err)
		}
		km, err := eval.KMeans(ctx, res.Factor(), o.Clusters, eval.KMeansOptions{Restarts: o.Restarts, Seed: lo.Seed})
		if err != nil {
			return 0, fmt.Errorf("choosing C: %w", err)
		}
		if score := eval.PairSatisfaction(km.Assign, held); score > bestScore {
			best, bestScore = c, score
		}
	}
	return best, nil
}

// RunModel returns the kernel k learned in run r of the protocol as a
// kernel model: its certificate (simpleNPKLCertificate), the settings and
// figures of the run in Info, and its provenance (the run's seed, the
// backend and o.Source). lo are the SimpleNPKL options the run learned
// with. o must hold the options the protocol ran with (defaults resolved).
func (o ClusterOptions) RunModel(k *model.Kernel, r ClusterRun, lo npkl.Options) *model.Model {
	b := engine.Or(lo.Backend)
	prov := model.NewProvenance(b.Name(), r.Seed)
	var classes []string
	if src := o.Source; src != nil && src.Data != nil {
		prov.Data = model.DescribeData(cmp.Or(src.Name, src.Data.Name), src.Data.X, src.Data.Y, src.Data.Classes)
		classes = src.Data.Classes
	}
	return &model.Model{
		Kind: model.KindKernel, Algo: "simplenpkl", Kernel: k, Classes: classes,
		Info: map[string]any{
			"run": r.Run, "run_seed": r.Seed, "C": r.C, "B": cmp.Or(lo.B, npkl.DefaultB), "k": o.Neighbors, "ratio": o.Ratio,
			"selection": o.Selection.String(), "fraction": o.Fraction, "clusters": o.Clusters, "restarts": o.Restarts,
			"constraints": r.Constraints, "constraints_used": r.Used, "rank": r.Rank, "covered": r.Covered,
			"iterations": r.Iterations, "cluster_accuracy": r.Accuracy, "backend": b.Name(),
			"standardize": o.Standardize, "C_grid": o.CGrid, "loss": lo.Loss.String(), "runs": o.Runs, "seed": o.Seed,
		},
		Certificate: simpleNPKLCertificate(lo.Loss, r.Covered, r.Iterations, r.Eigenpairs, r.Rank),
		Provenance:  prov,
	}
}

// simpleNPKLCertificate records what a SimpleNPKL kernel can claim: the
// linear loss's closed form is exact when the whole positive spectrum was
// computed; the squared-hinge algorithm runs a fixed number of closed-form
// iterations without a duality certificate; a kernel whose positive
// spectrum was not covered within the eigenpair cap is the best rank-r
// approximation of the closed form, and says so in a warning.
func simpleNPKLCertificate(loss npkl.Loss, covered bool, iterations, eigenpairs, rank int) *model.Certificate {
	c := &model.Certificate{Gap: math.NaN(), Tolerance: math.NaN()}
	switch {
	case loss == npkl.Linear:
		c.Converged, c.Reason = covered, "closed form over the whole positive spectrum"
	default:
		c.Reason = fmt.Sprintf("squared hinge: %d closed-form iterations (a fixed count; no duality certificate)", iterations)
	}
	if !covered {
		c.Converged = false
		c.Reason = "rank cap reached before the positive spectrum was covered (best low-rank approximation); " + c.Reason
		c.Warnings = []string{fmt.Sprintf("simplenpkl: the positive spectrum was not covered within %d eigenpairs: K is the best rank-%d approximation of the closed form (raise the rank cap)", eigenpairs, rank)}
	}
	return c
}

// KMeansBaseline is the paper's baseline: k-means on the rows of x, runs
// times with different seeds (restarts k-means++ starts each), scored by
// pairwise accuracy against y. It returns the mean and sample standard
// deviation of the accuracy. On cancellation it returns those of the runs
// completed so far (NaN if none) and an error wrapping ctx.Err().
func KMeansBaseline(ctx context.Context, x *mat.Dense, y []int, clusters, runs, restarts int, seed uint64) (mean, sd float64, err error) {
	if x == nil || len(y) != x.RawMatrix().Rows || runs < 0 {
		return math.NaN(), math.NaN(), fmt.Errorf("%w: k-means baseline: %d labels for the rows, %d runs", ErrInvalid, len(y), runs)
	}
	clusters = cmp.Or(clusters, newLabelMap(y).classes())
	acc := make([]float64, runs)
	for r := range acc {
		km, err := eval.KMeans(ctx, x, clusters, eval.KMeansOptions{Restarts: restarts, Seed: ClusterRunSeed(seed, r+1)})
		if err != nil {
			err = fmt.Errorf("psdlearn: k-means baseline: %w", err)
			if ctx.Err() != nil {
				mean, sd = meanSD(acc[:r])
				return mean, sd, err
			}
			return math.NaN(), math.NaN(), err
		}
		acc[r] = eval.PairwiseAccuracy(y, km.Assign)
	}
	mean, sd = meanSD(acc)
	return mean, sd, nil
}

// meanSD returns the mean and sample standard deviation of x (NaN for
// none, a deviation of 0 for one value).
func meanSD(x []float64) (mean, sd float64) {
	if len(x) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	if len(x) < 2 {
		return mean, 0
	}
	for _, v := range x {
		sd += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(sd / float64(len(x)-1))
}

// ClusterPairsOptions configures ClusterPairs. The zero value of every
// field means its default.
type ClusterPairsOptions struct {
	// Standardize standardises the features before the kNN graph is built
	// (and before the k-means baseline).
	Standardize bool
	// Neighbors is the k of the kNN graph (0: DefaultGraphNeighbors);
	// Graph its symmetrisation and weights.
	Neighbors int
	Graph     sparse.GraphOptions
	// Clusters is the number of clusters (0: the number of classes of the
	// labels, which must then be given).
	Clusters int
	// Restarts is the number of k-means++ starts (0: eval.DefaultRestarts).
	Restarts int
	// HoldOut is the share of the pairs held out (never learned from) to
	// score the clustering; 0 holds out none.
	HoldOut float64
	// Baseline also scores plain k-means on the (preprocessed) rows.
	Baseline bool
	// Learn configures SimpleNPKL; its Seed is replaced by Seed.
	Learn npkl.Options
	// Seed fixes the held-out pairs, the eigensolver's start vectors and
	// k-means.
	Seed uint64
	// Source describes the data for the model's provenance and class names
	// (nil: the rows as "fit").
	Source *Source
	// Progress, if set, receives the progress events of the run.
	Progress progress.Func
}

// ClusterPairsReport is the outcome of ClusterPairs. Satisfactions are
// fractions of pairs respected (similar pairs in one cluster, dissimilar
// pairs in two); NaN where there is nothing to score.
type ClusterPairsReport struct {
	N, Dim, Clusters int
	GraphNNZ         int
	// Pairs counts the pairs given, Used those learned from, HeldOut the
	// rest.
	Pairs, Used, HeldOut int
	// Satisfaction and TrainSatisfaction score the learned kernel's
	// clustering on the held-out pairs and on the pairs learned from;
	// KMeansSatisfaction and KMeansTrainSatisfaction plain k-means's
	// (Baseline; NaN without it).
	Satisfaction, TrainSatisfaction             float64
	KMeansSatisfaction, KMeansTrainSatisfaction float64
	// Assign is the clustering: the cluster of every row.
	Assign []int
	// Rank, Covered, Iterations and History describe the learned kernel
	// and its solves; LeadingEigenvalues are up to its 5 largest
	// eigenvalues.
	Rank               int
	Covered            bool
	Iterations         int
	History            []npkl.Iteration
	LeadingEigenvalues []float64
	// GraphSeconds and LearnSeconds time the kNN Laplacian and the kernel.
	GraphSeconds, LearnSeconds float64
	// Model is the learned kernel as a kernel model.
	Model *model.Model
}

// clusterPairsSeedStream is the PCG stream of ClusterPairs' held-out pairs.
const clusterPairsSeedStream = 0x636c_7573_7061_6972

// ClusterPairs learns a SimpleNPKL kernel on the rows of x from the given
// pairs (minus a seeded share HoldOut held out), clusters it with kernel
// k-means, and scores the clustering by the share of the held-out pairs
// it respects, next to plain k-means (Baseline). y, if not nil, gives the
// number of clusters when opt.Clusters is 0 (its labels are never looked
// at otherwise). Invalid options or data give an error matching
// errs.ErrInvalid before any work; on cancellation the error wraps
// ctx.Err().
func ClusterPairs(ctx context.Context, x *mat.Dense, y []int, pairs *constraints.Pairs, opt ClusterPairsOptions) (*ClusterPairsReport, error) {
	o, err := opt.withDefaults(x, y, pairs)
	if err != nil {
		return nil, err
	}
	rep := &ClusterPairsReport{Clusters: o.Clusters, Pairs: pairs.Len(), KMeansSatisfaction: math.NaN(), KMeansTrainSatisfaction: math.NaN()}
	rep.N, rep.Dim = x.Dims()
	train, held, err := holdOutPairs(pairs, o.HoldOut, o.Seed)
	if err != nil {
		return nil, err
	}
	rep.Used, rep.HeldOut = train.Len(), held.Len()
	if say := progress.Printf(o.Progress, "simplenpkl"); say != nil {
		say("simplenpkl (%v loss): learning from %d pairs, %d held out", o.Learn.Loss, train.Len(), held.Len())
	}
	if o.Standardize {
		if x, err = standardize(x); err != nil {
			return nil, err
		}
	}
	t0 := time.Now()
	lap, err := npkl.Laplacian(x, o.Neighbors, o.Graph, o.Learn.Backend)
	if err != nil {
		return nil, fmt.Errorf("psdlearn: simplenpkl: %w", err)
	}
	rep.GraphSeconds, rep.GraphNNZ = time.Since(t0).Seconds(), lap.NNZ()
	t1 := time.Now()
	lo := o.Learn
	lo.Seed = o.Seed
	res, err := npkl.Learn(ctx, lap, train, lo)
	if err != nil {
		return nil, fmt.Errorf("psdlearn: simplenpkl: %w", err)
	}
	rep.LearnSeconds = time.Since(t1).Seconds()
	rep.Rank, rep.Covered, rep.Iterations, rep.History = res.Rank(), res.Covered, res.Iterations, res.History
	rep.LeadingEigenvalues = append([]float64(nil), res.Lambda[:min(5, res.Rank())]...)
	km, err := eval.KMeans(ctx, res.Factor(), o.Clusters, eval.KMeansOptions{Restarts: o.Restarts, Seed: o.Seed})
	if err != nil {
		return nil, fmt.Errorf("psdlearn: kernel k-means: %w", err)
	}
	rep.Assign = km.Assign
	rep.Satisfaction, rep.TrainSatisfaction = eval.PairSatisfaction(km.Assign, held), eval.PairSatisfaction(km.Assign, train)
	if o.Baseline {
		base, err := eval.KMeans(ctx, x, o.Clusters, eval.KMeansOptions{Restarts: o.Restarts, Seed: o.Seed})
		if err != nil {
			return nil, fmt.Errorf("psdlearn: k-means baseline: %w", err)
		}
		rep.KMeansSatisfaction, rep.KMeansTrainSatisfaction = eval.PairSatisfaction(base.Assign, held), eval.PairSatisfaction(base.Assign, train)
	}
	if rep.Model, err = o.model(res, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// withDefaults validates the options and the data and resolves the
// defaults.
func (o ClusterPairsOptions) withDefaults(x *mat.Dense, y []int, pairs *constraints.Pairs) (ClusterPairsOptions, error) {
	if x == nil || x.IsEmpty() || pairs == nil {
		return o, fmt.Errorf("%w: simplenpkl: nil data or pairs", ErrInvalid)
	}
	n, _ := x.Dims()
	if err := checkFinite("X", x); err != nil {
		return o, err
	}
	if err := pairs.Validate(); err != nil {
		return o, err
	}
	if pairs.N != n {
		return o, fmt.Errorf("%w: pairs on %d points for %d rows", ErrInvalid, pairs.N, n)
	}
	if o.Clusters == 0 && y != nil {
		if len(y) != n {
			return o, fmt.Errorf("%w: %d labels for %d rows", ErrInvalid, len(y), n)
		}
		o.Clusters = newLabelMap(y).classes()
	}
	o.Neighbors = cmp.Or(o.Neighbors, DefaultGraphNeighbors)
	o.Restarts = cmp.Or(o.Restarts, eval.DefaultRestarts)
	switch {
	case o.Clusters < 2 || o.Clusters > n:
		return o, fmt.Errorf("%w: %d clusters for %d rows: want 2 to %d (without labels, give the number of clusters)", ErrInvalid, o.Clusters, n, n)
	case o.Neighbors < 1 || o.Neighbors >= n || o.Restarts < 0:
		return o, fmt.Errorf("%w: %d neighbours, %d restarts for %d rows", ErrInvalid, o.Neighbors, o.Restarts, n)
	case !(o.HoldOut >= 0 && o.HoldOut < 1):
		return o, fmt.Errorf("%w: hold-out share %v, want a share in [0, 1)", ErrInvalid, o.HoldOut)
	}
	o.Learn.Backend = engine.Or(o.Learn.Backend)
	return o, nil
}

// holdOutPairs splits pairs into the ones learned from and a seeded share
// held out (none for share 0; at least one otherwise).
func holdOutPairs(pairs *constraints.Pairs, share float64, seed uint64) (train, held *constraints.Pairs, err error) {
	m := pairs.Len()
	train, held = &constraints.Pairs{N: pairs.N}, &constraints.Pairs{N: pairs.N}
	nHeld := 0
	if share > 0 {
		nHeld = max(1, int(math.Round(share*float64(m))))
	}
	if nHeld >= m {
		return nil, nil, fmt.Errorf("%w: %d pairs leave none to learn from after holding out a share %g", ErrInvalid, m, share)
	}
	isHeld := make([]bool, m)
	for _, c := range rand.New(rand.NewPCG(seed, clusterPairsSeedStream)).Perm(m)[:nHeld] {
		isHeld[c] = true
	}
	for c, q := range pairs.List {
		if isHeld[c] {
			held.List = append(held.List, q)
		} else {
			train.List = append(train.List, q)
		}
	}
	return train, held, nil
}

// model returns the kernel of res as a kernel model.
func (o ClusterPairsOptions) model(res *npkl.Result, rep *ClusterPairsReport) (*model.Model, error) {
	k, err := model.NewKernel(res.V, res.Lambda)
	if err != nil {
		return nil, fmt.Errorf("psdlearn: simplenpkl: learned kernel: %w", err)
	}
	eigenpairs := 0
	if len(res.History) > 0 {
		eigenpairs = res.History[len(res.History)-1].Eigenpairs
	}
	b := engine.Or(o.Learn.Backend)
	prov := model.NewProvenance(b.Name(), o.Seed)
	var classes []string
	if src := o.Source; src != nil && src.Data != nil {
		prov.Data = model.DescribeData(cmp.Or(src.Name, src.Data.Name), src.Data.X, src.Data.Y, src.Data.Classes)
		classes = src.Data.Classes
	}
	return &model.Model{
		Kind: model.KindKernel, Algo: "simplenpkl", Kernel: k, Classes: classes,
		Info: map[string]any{
			"C": cmp.Or(o.Learn.C, npkl.DefaultC), "B": cmp.Or(o.Learn.B, npkl.DefaultB), "k": o.Neighbors, "loss": o.Learn.Loss.String(),
			"clusters": o.Clusters, "restarts": o.Restarts, "holdout": o.HoldOut, "pairs": rep.Pairs, "constraints_used": rep.Used,
			"heldout_pairs": rep.HeldOut, "rank": rep.Rank, "covered": rep.Covered, "iterations": rep.Iterations,
			"pair_satisfaction": rep.Satisfaction, "standardize": o.Standardize, "seed": o.Seed, "backend": b.Name(),
		},
		Certificate: simpleNPKLCertificate(o.Learn.Loss, res.Covered, res.Iterations, eigenpairs, res.Rank()),
		Provenance:  prov,
	}, nil
}
