package npkl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/progress"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// Selection chooses which of the sampled constraints SimpleNPKL learns from.
type Selection int

const (
	// AllConstraints uses every sampled constraint.
	AllConstraints Selection = iota
	// ActiveSelection keeps the constraints of the most uncertain points by
	// the margin criterion of a linear-loss kernel learned on all constraints.
	ActiveSelection
	// RandomSelection keeps a random subset of the same size.
	RandomSelection
)

// String returns the CLI name of the selection.
func (s Selection) String() string {
	switch s {
	case AllConstraints:
		return "all"
	case ActiveSelection:
		return "active"
	case RandomSelection:
		return "random"
	}
	return fmt.Sprintf("Selection(%d)", int(s))
}

// ParseSelection parses "all", "active" or "random".
func ParseSelection(s string) (Selection, error) {
	switch s {
	case "", "all":
		return AllConstraints, nil
	case "active":
		return ActiveSelection, nil
	case "random":
		return RandomSelection, nil
	}
	return 0, fmt.Errorf("npkl: unknown selection %q (want all, active or random)", s)
}

// ClusterOptions configures the clustering protocol of the paper.
type ClusterOptions struct {
	// Neighbors is the k of the kNN graph. Default 5.
	Neighbors int
	// Graph chooses the symmetrisation and weights of the kNN graph; the
	// zero value is the union graph with 0/1 weights.
	Graph sparse.GraphOptions
	// Ratio is the number of connected components of the must-link graph as
	// a fraction of n, which sets the number of constraints. Default 0.7.
	Ratio float64
	// Runs is the number of repetitions (fresh constraints each). Default 20.
	Runs int
	// Clusters is the number of clusters. Default: the number of classes.
	Clusters int
	// Restarts is the number of k-means++ restarts per clustering. Default 10.
	Restarts int
	// Selection picks the constraints learned from; Fraction is the share
	// kept by active or random selection (default 0.5).
	Selection Selection
	Fraction  float64
	// Learn configures SimpleNPKL (loss, B, C, backend, …). Its Seed is
	// replaced per run by one derived from Seed.
	Learn Options
	// CGrid, when it holds two or more values, chooses C in every run from the
	// side information alone: a share HoldOut (default 0.2) of the sampled
	// constraints is held out, a kernel is learned from the rest for each C,
	// clustered, and the C whose clustering satisfies the most held-out
	// constraints (ties: the first in CGrid) is used to learn from all of them.
	// The class labels are never looked at.
	CGrid   []float64
	HoldOut float64
	// Seed fixes all random choices.
	Seed uint64
	// Progress, if non-nil, receives an event after every run.
	Progress progress.Func
}

// RunReport is one repetition of the protocol.
type RunReport struct {
	Run         int     // 1-based
	Constraints int     // sampled
	Used        int     // learned from (after selection)
	Accuracy    float64 // pairwise clustering accuracy
	C           float64 // the C used (chosen from CGrid when given)
	Rank        int     // rank of the learned K
	Covered     bool    // whether the positive spectrum was covered
	Iterations  int     // closed-form solves
	// OpApplies counts the eigensolver's operator products over all the
	// solves; Eigensolver names the eigensolver that ran.
	OpApplies   int
	Eigensolver string
	// LearnSeconds is the kernel learning time, including constraint selection
	// (the paper's CPU time, clustering excluded); ClusterSeconds the k-means
	// time; SelectCSeconds the time spent choosing C from CGrid.
	LearnSeconds, ClusterSeconds, SelectCSeconds float64
	// Objectives holds J(K_t, α_{t−1}) per iteration (squared hinge) or the
	// objective of (6), and Primals the objective (9) (or (6)) of K_t; for
	// the squared hinge every Objectives[t] is a lower bound of the optimum
	// of (9) and every Primals[t] an upper bound (see Iteration).
	Objectives, Primals []float64
	// LeadingEigenvalues are up to the 5 largest eigenvalues of K.
	LeadingEigenvalues []float64
}

// ClusterReport summarises the protocol over all runs.
type ClusterReport struct {
	// N, Dim and Clusters describe the data and the clustering.
	N, Dim, Clusters int
	// GraphSeconds is the time to build the kNN Laplacian (once); GraphNNZ its nonzeros.
	GraphSeconds float64
	GraphNNZ     int
	// Runs holds one report per repetition.
	Runs []RunReport
	// AccuracyMean and AccuracySD are the mean and sample standard deviation
	// of the pairwise accuracy over the runs.
	AccuracyMean, AccuracySD float64
	// The means over runs of the learning time, iterations, rank of K, and
	// numbers of constraints sampled and learned from.
	LearnSecondsMean, ItersMean, RankMean, ConstraintsMean, UsedMean float64
	// AllCovered reports whether every run covered the positive spectrum.
	AllCovered bool
}

// Cluster runs the paper's protocol on the labelled data x, y: build the kNN
// Laplacian once; then, per run, sample constraints by the connected-component
// rule, optionally select a subset, learn the kernel, cluster with kernel
// k-means on its factor and score the pairwise accuracy against y.
//
// On cancellation Cluster returns the report of the runs completed so far
// (its summary over them; nil if the kNN graph was not built yet) and an
// error wrapping ctx.Err(); a run in progress stops within one iteration of
// SimpleNPKL or k-means.
func Cluster(ctx context.Context, x *mat.Dense, y []int, opt ClusterOptions) (*ClusterReport, error) {
	if x == nil {
		return nil, fmt.Errorf("npkl: Cluster: nil data")
	}
	n, d := x.Dims()
	if len(y) != n {
		return nil, fmt.Errorf("npkl: Cluster: %d labels for %d points", len(y), n)
	}
	// The protocol samples must-link and cannot-link pairs from the labels
	// and scores the clustering against them: with one class there are no
	// cannot-link pairs and every clustering into one group scores 100%.
	if numClasses(y) < 2 {
		return nil, fmt.Errorf("npkl: Cluster: the labels have a single class; the protocol needs at least two")
	}
	o := opt
	if o.Neighbors == 0 {
		o.Neighbors = 5
	}
	if o.Ratio == 0 {
		o.Ratio = 0.7
	}
	if o.Runs == 0 {
		o.Runs = 20
	}
	if o.Clusters == 0 {
		o.Clusters = numClasses(y)
	}
	if o.Restarts == 0 {
		o.Restarts = 10
	}
	if o.Fraction == 0 {
		o.Fraction = 0.5
	}
	if o.HoldOut == 0 {
		o.HoldOut = 0.2
	}
	if o.Runs < 0 || o.Clusters < 1 || o.Restarts < 0 || !(o.Fraction > 0 && o.Fraction <= 1) || !(o.HoldOut > 0 && o.HoldOut < 1) {
		return nil, fmt.Errorf("npkl: Cluster: invalid options (runs %d, clusters %d, restarts %d, fraction %v, hold-out %v)", o.Runs, o.Clusters, o.Restarts, o.Fraction, o.HoldOut)
	}
	for _, c := range o.CGrid {
		if !(c > 0) || math.IsInf(c, 0) {
			return nil, errs.Option(fmt.Errorf("npkl: Cluster: C = %v in the grid must be positive and finite", c))
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("npkl: Cluster: %w", err)
	}
	t0 := time.Now()
	lap, err := Laplacian(x, o.Neighbors, o.Graph, o.Learn.Backend)
	if err != nil {
		return nil, err
	}
	rep := &ClusterReport{N: n, Dim: d, Clusters: o.Clusters, GraphSeconds: time.Since(t0).Seconds(), GraphNNZ: lap.NNZ(), AllCovered: true}
	for run := 0; run < o.Runs; run++ {
		rr, err := clusterRun(ctx, lap, y, o, run)
		if err != nil {
			err = fmt.Errorf("npkl: Cluster: run %d: %w", run+1, err)
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
	return rep, nil
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

func clusterRun(ctx context.Context, lap *sparse.CSR, y []int, o ClusterOptions, run int) (RunReport, error) {
	rr := RunReport{Run: run + 1}
	seed := o.Seed*1000003 + uint64(run)
	cons, err := constraints.XingPairs(y, o.Ratio, seed)
	if err != nil {
		return rr, err
	}
	rr.Constraints = cons.Len()
	lo := o.Learn
	lo.Seed = seed
	if len(o.CGrid) == 1 {
		lo.C = o.CGrid[0]
	} else if len(o.CGrid) > 1 {
		ts := time.Now()
		if lo.C, err = chooseC(ctx, lap, cons, o, lo); err != nil {
			return rr, err
		}
		rr.SelectCSeconds = time.Since(ts).Seconds()
	}
	rr.C = lo.C
	if rr.C == 0 {
		rr.C = 1 // the Options default
	}
	t0 := time.Now()
	used := cons
	if o.Selection != AllConstraints {
		target := max(1, int(math.Round(o.Fraction*float64(cons.Len()))))
		if o.Selection == ActiveSelection {
			base := lo
			base.Loss = Linear
			base.Progress = nil
			res, err := Learn(ctx, lap, cons, base)
			if err != nil {
				return rr, fmt.Errorf("active selection: %w", err)
			}
			if used, err = SelectActive(res, cons, target); err != nil {
				return rr, err
			}
		} else if used, err = SelectRandom(cons, target, seed); err != nil {
			return rr, err
		}
	}
	rr.Used = used.Len()
	res, err := Learn(ctx, lap, used, lo)
	if err != nil {
		return rr, err
	}
	rr.LearnSeconds = time.Since(t0).Seconds()
	rr.Rank, rr.Covered, rr.Iterations = res.Rank(), res.Covered, res.Iterations
	rr.OpApplies, rr.Eigensolver = res.OpApplies, res.Eigensolver.String()
	for _, it := range res.History {
		rr.Objectives = append(rr.Objectives, it.Objective)
		rr.Primals = append(rr.Primals, it.Primal)
	}
	rr.LeadingEigenvalues = append([]float64(nil), res.Lambda[:min(5, res.Rank())]...)
	t1 := time.Now()
	km, err := eval.KernelKMeans(ctx, res.Kernel, o.Clusters, eval.KMeansOptions{Restarts: o.Restarts, Seed: seed})
	if err != nil {
		return rr, err
	}
	rr.ClusterSeconds = time.Since(t1).Seconds()
	rr.Accuracy = eval.PairwiseAccuracy(y, km.Assign)
	return rr, nil
}

// chooseC returns the value of o.CGrid whose kernel, learned from a share
// 1 − o.HoldOut of the constraints and clustered, satisfies the most held-out
// constraints.
func chooseC(ctx context.Context, lap *sparse.CSR, cons *constraints.Pairs, o ClusterOptions, lo Options) (float64, error) {
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
	train := &constraints.Pairs{N: cons.N}
	var held []constraints.LabelledPair
	for c, q := range cons.List {
		if isHeld[c] {
			held = append(held, q)
		} else {
			train.List = append(train.List, q)
		}
	}
	best, bestScore := o.CGrid[0], -1.0
	for _, c := range o.CGrid {
		lc := lo
		lc.C, lc.Progress = c, nil
		res, err := Learn(ctx, lap, train, lc)
		if errors.Is(err, ErrNoPositiveSpectrum) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("choosing C: C = %v: %w", c, err)
		}
		km, err := eval.KernelKMeans(ctx, res.Kernel, o.Clusters, eval.KMeansOptions{Restarts: o.Restarts, Seed: lo.Seed})
		if err != nil {
			return 0, fmt.Errorf("choosing C: %w", err)
		}
		var ok int
		for _, q := range held {
			if (km.Assign[q.A] == km.Assign[q.B]) == q.Same {
				ok++
			}
		}
		if score := float64(ok) / float64(len(held)); score > bestScore {
			best, bestScore = c, score
		}
	}
	return best, nil
}

// KMeansBaseline is the paper's baseline: k-means on the raw rows of x, runs
// times with different seeds, scored by pairwise accuracy. It returns the
// mean and sample standard deviation of the accuracy. On cancellation it
// returns those of the runs completed so far (NaN if none) and an error
// wrapping ctx.Err().
func KMeansBaseline(ctx context.Context, x *mat.Dense, y []int, clusters, runs, restarts int, seed uint64) (mean, sd float64, err error) {
	if clusters == 0 {
		clusters = numClasses(y)
	}
	acc := make([]float64, runs)
	for r := range acc {
		km, err := eval.KMeans(ctx, x, clusters, eval.KMeansOptions{Restarts: restarts, Seed: seed*1000003 + uint64(r)})
		if err != nil {
			err = fmt.Errorf("npkl: k-means baseline: %w", err)
			if ctx.Err() != nil {
				mean, sd = meanSD(acc[:r])
				return mean, sd, err
			}
			return 0, 0, err
		}
		acc[r] = eval.PairwiseAccuracy(y, km.Assign)
	}
	mean, sd = meanSD(acc)
	return mean, sd, nil
}

func numClasses(y []int) int {
	s := map[int]bool{}
	for _, c := range y {
		s[c] = true
	}
	return len(s)
}

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
