package main

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/model"
)

func init() {
	register(command{
		name:    "eval",
		summary: "evaluate a saved model on data: k-NN error of a metric, clustering accuracy of a kernel",
		run:     runEval,
	})
}

// evalSummary is the JSON output of psdlearn eval. Errors and accuracies are
// fractions in [0, 1].
type evalSummary struct {
	Model              string  `json:"model"`
	Kind               string  `json:"kind"`
	Algo               string  `json:"algo"`
	Backend            string  `json:"backend"`
	Data               string  `json:"data"`
	Mode               string  `json:"mode"` // loo | split | ref | cluster
	K                  int     `json:"k,omitempty"`
	NRef               int     `json:"n_ref,omitempty"`
	NTest              int     `json:"n_test"`
	Dim                int     `json:"dim,omitempty"`
	Rank               int     `json:"rank"`
	ValError           any     `json:"val_error,omitempty"`
	TestError          any     `json:"test_error,omitempty"`
	EuclideanTestError any     `json:"euclidean_test_error,omitempty"`
	Clusters           int     `json:"clusters,omitempty"`
	ClusterAccuracy    any     `json:"cluster_accuracy,omitempty"`
	KMeansAccuracy     any     `json:"kmeans_accuracy,omitempty"`
	PeakRSSMB          float64 `json:"peak_rss_mb"`
}

func runEval(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "eval")
	modelPath := fs.String("model", "", "model file written by psdlearn train (or another learner)")
	spec := fs.String("data", "", "data SPEC to evaluate on (raw features: the model's preprocessing is applied)")
	var labelCol string
	labelColFlag(fs, &labelCol)
	k := fs.Int("k", 3, "k of the k-NN classifier")
	split := fs.String("split", "", "split --data as train did (same --seed): the first part is the k-NN reference, the last the test set, a middle part the validation set")
	ref := fs.String("ref", "", "k-NN reference (training) data SPEC; --data is then the test set")
	seed := fs.Uint64("seed", 1, "random seed of --split fractions and of k-means")
	backend := fs.String("backend", "", "numerical backend: "+strings.Join(engine.Names(), "|"))
	clusters := fs.Int("clusters", 0, "kernel models: number of clusters (default: the number of classes)")
	runs := fs.Int("runs", 10, "kernel models: k-means restarts")
	if err := parseFlags(fs, "eval", args); err != nil {
		return err
	}
	if *modelPath == "" || *spec == "" {
		return fmt.Errorf("eval: --model and --data are required")
	}
	if *split != "" && *ref != "" {
		return fmt.Errorf("eval: give --split or --ref, not both")
	}
	if *k < 1 || *runs < 1 || *clusters < 0 {
		return fmt.Errorf("eval: --k %d, --runs %d, --clusters %d: want --k and --runs ≥ 1 and --clusters ≥ 0 (0: the number of classes)", *k, *runs, *clusters)
	}
	b, err := resolveBackend(*backend)
	if err != nil {
		return err
	}
	m, err := model.LoadFile(*modelPath)
	if err != nil {
		return err
	}
	d, err := loadDataFeatures(*spec, labelCol, m.InputDim(), "the input dimension of the model")
	if err != nil {
		return err
	}
	sum := evalSummary{Model: *modelPath, Kind: m.Kind, Algo: m.Algo, Backend: b.Name(), Data: *spec}
	if m.Kind == model.KindKernel {
		if err := evalKernel(ctx, &sum, m, d, *clusters, *runs, *seed); err != nil {
			return err
		}
	} else {
		if err := evalMetric(&sum, b, m, d, *k, *split, *ref, labelCol, *seed); err != nil {
			return err
		}
	}
	sum.PeakRSSMB = peakRSSMB()
	if env.json {
		return emitJSON(env, sum)
	}
	w := env.stdout
	fmt.Fprintf(w, "%s %s model %s on %s (backend %s)\n", sum.Algo, sum.Kind, sum.Model, sum.Data, sum.Backend)
	pct := func(v any) string {
		if f, ok := v.(float64); ok {
			return fmt.Sprintf("%.2f%%", 100*f)
		}
		return "n/a"
	}
	switch sum.Mode {
	case "cluster":
		fmt.Fprintf(w, "  kernel k-means, %d clusters on %d points: pairwise accuracy %s (k-means on the features: %s)\n", sum.Clusters, sum.NTest, pct(sum.ClusterAccuracy), pct(sum.KMeansAccuracy))
	case "loo":
		fmt.Fprintf(w, "  leave-one-out %d-NN error on %d points: %s (Euclidean %s)\n", sum.K, sum.NTest, pct(sum.TestError), pct(sum.EuclideanTestError))
	default:
		fmt.Fprintf(w, "  %d-NN test error on %d points (reference %d): %s (Euclidean %s)", sum.K, sum.NTest, sum.NRef, pct(sum.TestError), pct(sum.EuclideanTestError))
		if sum.ValError != nil {
			fmt.Fprintf(w, ", validation %s", pct(sum.ValError))
		}
		fmt.Fprintln(w)
	}
	return nil
}

// evalMetric fills sum with the k-NN errors of a metric model.
func evalMetric(sum *evalSummary, b engine.Backend, m *model.Model, d *data.Dataset, k int, split, refSpec, labelCol string, seed uint64) error {
	sum.K, sum.Dim, sum.Rank = k, m.Metric.Dim(), m.Metric.Rank()
	prep := func(ds *data.Dataset) (*data.Dataset, error) {
		if want := m.InputDim(); ds.Dim() != want {
			return nil, fmt.Errorf("eval: %q has %d features, the model expects %d", ds.Name, ds.Dim(), want)
		}
		x, err := m.Prepare(ds.X)
		if err != nil {
			return nil, err
		}
		return ds.WithX(x), nil
	}
	var refDS, testDS, valDS *data.Dataset
	switch {
	case split != "":
		spec, err := data.ParseSplit(split)
		if err != nil {
			return err
		}
		if spec.Parts() < 2 {
			return fmt.Errorf("eval: --split needs at least 2 parts (reference, test)")
		}
		parts, err := spec.Apply(d, seed)
		if err != nil {
			return err
		}
		refDS, testDS = parts[0], parts[len(parts)-1]
		if len(parts) == 3 {
			valDS = parts[1]
		}
		sum.Mode = "split"
	case refSpec != "":
		r, err := loadDataFeatures(refSpec, labelCol, m.InputDim(), "the input dimension of the model")
		if err != nil {
			return err
		}
		if err := data.UnifyClasses(r, d); err != nil {
			return err
		}
		refDS, testDS = r, d
		sum.Mode = "ref"
	default:
		sum.Mode = "loo"
		x, err := prep(d)
		if err != nil {
			return err
		}
		z, err := m.Metric.TransformBLAS(b.BLAS(), x.X)
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		e, err := eval.LOOKNNError(b, z, x.Y, k)
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		eu, err := eval.LOOKNNError(b, x.X, x.Y, k)
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		sum.NTest, sum.TestError, sum.EuclideanTestError = x.Len(), e, eu
		return nil
	}
	var err error
	if refDS, err = prep(refDS); err != nil {
		return err
	}
	if testDS, err = prep(testDS); err != nil {
		return err
	}
	e, err := eval.MetricKNNError(b, m.Metric, refDS.X, refDS.Y, testDS.X, testDS.Y, k)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	eu, err := eval.KNNError(b, refDS.X, refDS.Y, testDS.X, testDS.Y, k)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	sum.NRef, sum.NTest, sum.TestError, sum.EuclideanTestError = refDS.Len(), testDS.Len(), e, eu
	if valDS != nil {
		if valDS, err = prep(valDS); err != nil {
			return err
		}
		v, err := eval.MetricKNNError(b, m.Metric, refDS.X, refDS.Y, valDS.X, valDS.Y, k)
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		sum.ValError = v
	}
	return nil
}

// evalKernel clusters the kernel's points with kernel k-means and scores the
// clustering against the labels of d.
func evalKernel(ctx context.Context, sum *evalSummary, m *model.Model, d *data.Dataset, clusters, runs int, seed uint64) error {
	n := m.Kernel.N()
	if d.Len() != n {
		return fmt.Errorf("eval: the kernel is on %d points, --data has %d (a learned kernel is transductive: pass the data it was learned on)", n, d.Len())
	}
	if clusters <= 0 {
		clusters = len(d.ClassCounts())
	}
	opt := eval.KMeansOptions{Restarts: runs, Seed: seed}
	res, err := eval.KernelKMeans(ctx, m.Kernel, clusters, opt)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	base, err := eval.KMeans(ctx, d.X, clusters, opt)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	acc, bacc := eval.PairwiseAccuracy(d.Y, res.Assign), eval.PairwiseAccuracy(d.Y, base.Assign)
	sum.Mode, sum.NTest, sum.Rank, sum.Clusters = "cluster", n, m.Kernel.Rank(), clusters
	if !math.IsNaN(acc) {
		sum.ClusterAccuracy = acc
	}
	if !math.IsNaN(bacc) {
		sum.KMeansAccuracy = bacc
	}
	return nil
}
