package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/eval"
)

func init() {
	register(command{name: "demo", summary: "learn metrics and a kernel on bundled real data and print a results table", run: runDemo})
}

// demoMetricRun is one metric-learning row of the demo.
type demoMetricRun struct {
	Data, Split, Algo, Backend string
	NTrain, Triplets           int
	TestError, EuclideanError  jsonFloat
	Seconds                    float64
	DualityGap                 *jsonFloat `json:",omitempty"`
}

// demoKernelRun is one kernel-learning row of the demo.
type demoKernelRun struct {
	Data, Algo, Loss, Backend string
	N, Runs                   int
	Accuracy, AccuracySD      jsonFloat
	KMeans, KMeansSD          jsonFloat
	Seconds                   float64
}

// demoSummary is the JSON output of psdlearn demo.
type demoSummary struct {
	Backend      string          `json:"backend"`
	Metric       []demoMetricRun `json:"metric"`
	Kernel       []demoKernelRun `json:"kernel"`
	TotalSeconds float64         `json:"total_seconds"`
	PeakRSSMB    jsonFloat       `json:"peak_rss_mb"`
}

// demoMetricCases are the metric experiments of the demo: the bundled sets
// standardised, small sets split 70/15/15 with a seed, letters by its fixed
// row ranges (the protocol of docs/howto-real-data.md). FrobMetric's C is
// chosen on the validation rows among psdlearn.DefaultFrobMetricC.
var demoMetricCases = []struct {
	data, split string
	algo        string
}{
	{"wine", data.DefaultSplit, "boostmetric"},
	{"wine", data.DefaultSplit, "frobmetric"},
	{"letters", "rows:10500,4500,5000", "boostmetric"},
	{"letters", "rows:10500,4500,5000", "frobmetric"}, // C from psdlearn.DefaultFrobMetricC, following the data
}

func runDemo(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "demo")
	backend := fs.String("backend", "", "numerical backend (default: native when built with cgo)")
	seed := fs.Uint64("seed", 1, "random seed")
	quick := fs.Bool("quick", false, "skip letters (the 20,000-point set)")
	if err := parseFlags(fs, "demo", args); err != nil {
		return err
	}
	b, err := resolveBackend(*backend)
	if err != nil {
		return err
	}
	start := time.Now()
	sum := demoSummary{Backend: b.Name()}
	if sum.Metric, err = demoMetrics(ctx, env, b, *seed, *quick); err != nil {
		return err
	}
	if sum.Kernel, err = demoKernels(ctx, env, b, *seed); err != nil {
		return err
	}
	sum.TotalSeconds, sum.PeakRSSMB = time.Since(start).Seconds(), jsonFloat(peakRSSMB())
	if env.json {
		return emitJSON(env, sum)
	}
	w := env.stdout
	fmt.Fprintf(w, "psdlearn demo — backend %s\n\n", b.Name())
	fmt.Fprintln(w, "Metric learning: 3-NN test error (standardised features, triplets k = 3)")
	fmt.Fprintln(w, "| data | split | algorithm | train points | triplets | test error | Euclidean | time |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|")
	for _, r := range sum.Metric {
		fmt.Fprintf(w, "| %s | %s | %s | %d | %d | %.2f%% | %.2f%% | %.1f s |\n", r.Data, r.Split, r.Algo, r.NTrain, r.Triplets, 100*r.TestError, 100*r.EuclideanError, r.Seconds)
	}
	fmt.Fprintln(w, "\nKernel learning: pairwise clustering accuracy (kernel k-means on the learned kernel)")
	fmt.Fprintln(w, "| data | algorithm | loss | runs | accuracy | k-means | time |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|")
	for _, r := range sum.Kernel {
		fmt.Fprintf(w, "| %s | %s | %s | %d | %.1f ± %.1f%% | %.1f ± %.1f%% | %.1f s |\n", r.Data, r.Algo, r.Loss, r.Runs, 100*r.Accuracy, 100*r.AccuracySD, 100*r.KMeans, 100*r.KMeansSD, r.Seconds)
	}
	fmt.Fprintf(w, "\ntotal %.1f s, peak memory %.0f MB\n", sum.TotalSeconds, sum.PeakRSSMB)
	return nil
}

// demoMetrics runs the metric rows of the demo (psdlearn.Run).
func demoMetrics(ctx context.Context, env *cmdEnv, b engine.Backend, seed uint64, quick bool) ([]demoMetricRun, error) {
	progress := newProgress(env)
	var metrics []demoMetricRun
	for _, c := range demoMetricCases {
		if quick && c.data == "letters" {
			continue
		}
		d, err := datasets.Open(c.data)
		if err != nil {
			return nil, err
		}
		spec, err := data.ParseSplit(c.split)
		if err != nil {
			return nil, err
		}
		parts, err := spec.Apply(d, seed)
		if err != nil {
			return nil, err
		}
		if !env.quiet {
			fmt.Fprintf(env.stderr, "psdlearn demo: %s on %s (%d training points)...\n", c.algo, c.data, parts[0].Len())
		}
		t0 := time.Now()
		common := psdlearn.Common{Standardize: true, Validation: parts[1], Seed: seed, Backend: b, Progress: progress.event}
		var l psdlearn.Learner = psdlearn.BoostMetric{Common: common}
		if c.algo == "frobmetric" {
			l = psdlearn.FrobMetric{Common: common}
		}
		rep, err := psdlearn.Run(ctx, l, psdlearn.Data{X: parts[0].X, Y: parts[0].Y, Test: parts[2]})
		if err != nil && !(errors.Is(err, errs.ErrNotConverged) && rep != nil && ctx.Err() == nil) {
			return nil, fmt.Errorf("demo: %s on %s: %w", c.algo, c.data, err)
		}
		metrics = append(metrics, demoMetricRun{Data: c.data, Split: c.split, Algo: c.algo, Backend: rep.Backend, NTrain: rep.NTrain,
			Triplets: rep.Triplets, TestError: jsonFloat(rep.Eval.TestError), EuclideanError: jsonFloat(rep.Eval.EuclideanTestError),
			Seconds: time.Since(t0).Seconds(), DualityGap: optFloat(rep.DualityGap)})
	}
	return metrics, nil
}

// demoKernels runs the kernel rows of the demo: SimpleNPKL's clustering
// protocol (psdlearn.Cluster) on standardised iris, next to k-means.
func demoKernels(ctx context.Context, env *cmdEnv, b engine.Backend, seed uint64) ([]demoKernelRun, error) {
	const runs = 5
	d, err := datasets.Open("iris")
	if err != nil {
		return nil, err
	}
	pipe, err := data.FitPipeline(b, d.X, true, 0)
	if err != nil {
		return nil, err
	}
	x, err := pipe.Apply(d.X)
	if err != nil {
		return nil, err
	}
	var kernels []demoKernelRun
	for _, loss := range []npkl.Loss{npkl.Linear, npkl.SquaredHinge} {
		if !env.quiet {
			fmt.Fprintf(env.stderr, "psdlearn demo: simplenpkl (%s loss) clustering on iris...\n", loss)
		}
		t0 := time.Now()
		rep, err := psdlearn.Cluster(ctx, x, d.Y, psdlearn.ClusterOptions{Runs: runs, Seed: seed, Learn: npkl.Options{Loss: loss, Backend: b}})
		if err != nil {
			return nil, fmt.Errorf("demo: simplenpkl on iris: %w", err)
		}
		secs := time.Since(t0).Seconds()
		km, kmsd, err := psdlearn.KMeansBaseline(ctx, x, d.Y, 0, runs, eval.DefaultRestarts, seed)
		if err != nil {
			return nil, err
		}
		kernels = append(kernels, demoKernelRun{Data: "iris", Algo: "simplenpkl", Loss: loss.String(), Backend: b.Name(), N: d.Len(), Runs: runs,
			Accuracy: jsonFloat(rep.AccuracyMean), AccuracySD: jsonFloat(rep.AccuracySD), KMeans: jsonFloat(km), KMeansSD: jsonFloat(kmsd), Seconds: secs})
	}
	return kernels, nil
}
