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
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/warn"
	"gonum.org/v1/gonum/mat"
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
	Model   string `json:"model"`
	Kind    string `json:"kind"`
	Algo    string `json:"algo"`
	Backend string `json:"backend"`
	Data    string `json:"data"`
	Mode    string `json:"mode"` // loo | split | ref | cluster
	// Rows says in words which rows of --data were evaluated and why.
	Rows string `json:"rows"`
	// Split and Seed are the split applied to --data (mode split), and
	// SplitFrom where they came from: "model" (the split recorded in the
	// model's provenance) or "flags" (--split).
	Split     string  `json:"split,omitempty"`
	Seed      *uint64 `json:"seed,omitempty"`
	SplitFrom string  `json:"split_from,omitempty"`
	// DataMatch compares --data with the data recorded in the model's
	// provenance, by SHA-256: "train" (the data the model was trained on,
	// before the split), "test" (its separate test set), "none" (neither)
	// or "unknown" (the model records none, e.g. a version 1 file). Empty
	// when not checked (--split, --ref, --loo, kernel models).
	DataMatch          string     `json:"data_match,omitempty"`
	K                  int        `json:"k,omitempty"`
	NRef               int        `json:"n_ref,omitempty"`
	NTest              int        `json:"n_test"`
	Dim                int        `json:"dim,omitempty"`
	Rank               int        `json:"rank"`
	ValError           *jsonFloat `json:"val_error,omitempty"`
	TestError          *jsonFloat `json:"test_error,omitempty"`
	EuclideanTestError *jsonFloat `json:"euclidean_test_error,omitempty"`
	Clusters           int        `json:"clusters,omitempty"`
	ClusterAccuracy    *jsonFloat `json:"cluster_accuracy,omitempty"`
	KMeansAccuracy     *jsonFloat `json:"kmeans_accuracy,omitempty"`
	// Retrieval (--precision-at K): PrecisionK is K, PrecisionAtK the mean
	// over the scored rows of the fraction of their K nearest reference
	// rows in the learned metric (kernel models: the kernel's feature
	// space, leave-one-out) that share their label, and
	// EuclideanPrecisionAtK the same in the Euclidean distance of the
	// preprocessed features.
	PrecisionK            int        `json:"precision_k,omitempty"`
	PrecisionAtK          *jsonFloat `json:"precision_at_k,omitempty"`
	EuclideanPrecisionAtK *jsonFloat `json:"euclidean_precision_at_k,omitempty"`
	// Pair verification (--pairs): the ROC AUC of the model's distances
	// on the labelled pairs of Pairs (rows of --data), the Euclidean AUC
	// of the preprocessed features (metric models), and with --threshold
	// or --val-pairs the threshold, where it came from ("flag" or
	// "val-pairs", then ValPairAccuracy is its accuracy on those pairs)
	// and PairAccuracy, the accuracy of its decisions on Pairs.
	Pairs           string     `json:"pairs,omitempty"`
	NPairs          int        `json:"n_pairs,omitempty"`
	AUC             *jsonFloat `json:"auc,omitempty"`
	EuclideanAUC    *jsonFloat `json:"euclidean_auc,omitempty"`
	Threshold       *jsonFloat `json:"threshold,omitempty"`
	ThresholdFrom   string     `json:"threshold_from,omitempty"`
	ValPairs        string     `json:"val_pairs,omitempty"`
	NValPairs       int        `json:"n_val_pairs,omitempty"`
	ValPairAccuracy *jsonFloat `json:"val_pair_accuracy,omitempty"`
	PairAccuracy    *jsonFloat `json:"pair_accuracy,omitempty"`
	PeakRSSMB       jsonFloat  `json:"peak_rss_mb"`
}

// evalFlags are the options of psdlearn eval.
type evalFlags struct {
	modelPath, spec, labelCol, split, ref, backend, pairs, threshold, valPairs string
	k, precK, clusters, runs                                                   int
	loo                                                                        bool
	seed                                                                       uint64
}

func runEval(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "eval")
	var f evalFlags
	rules := defineEvalFlags(fs, &f)
	if err := parseFlags(fs, "eval", args); err != nil {
		return err
	}
	threshold, err := checkEvalFlags(fs, f, rules)
	if err != nil {
		return err
	}
	b, err := resolveBackend(f.backend)
	if err != nil {
		return err
	}
	m, err := model.LoadFile(f.modelPath)
	if err != nil {
		return err
	}
	warnUser(modelWarning(m))
	d, err := loadDataFeatures(f.spec, f.labelCol, m.InputDim(), "the input dimension of the model")
	if err != nil {
		return err
	}
	sum := evalSummary{Model: f.modelPath, Kind: m.Kind, Algo: m.Algo, Backend: b.Name(), Data: f.spec}
	if m.Kind == model.KindKernel {
		kseed, kruns, kclusters := kernelEvalDefaults(fs, m, f.seed, f.runs, f.clusters)
		err = evalKernel(ctx, &sum, b, m, d, kclusters, kruns, kseed, f.precK)
	} else {
		var rows evalPlan
		if rows, err = evalRows(&sum, m, d, f.split, f.ref, f.loo, f.seed, flagGiven(fs, "seed")); err == nil {
			err = evalMetric(&sum, b, m, d, f.k, rows, f.ref, f.labelCol, f.precK)
		}
	}
	if err == nil && f.pairs != "" {
		err = evalPairs(&sum, m, d, f.pairs, f.valPairs, threshold)
	}
	if err != nil {
		return err
	}
	sum.PeakRSSMB = jsonFloat(peakRSSMB())
	if env.json {
		return emitJSON(env, sum)
	}
	printEvalSummary(env.stdout, sum)
	return nil
}

// defineEvalFlags defines the flags of eval on fs and returns their
// scope rules.
func defineEvalFlags(fs *flag.FlagSet, f *evalFlags) []flagRule {
	fs.StringVar(&f.modelPath, "model", "", "model file written by psdlearn train (or another learner)")
	fs.StringVar(&f.spec, "data", "", "data SPEC to evaluate on (raw features: the model's preprocessing is applied)")
	labelColFlag(fs, &f.labelCol)
	fs.IntVar(&f.k, "k", psdlearn.DefaultK, "k of the k-NN classifier")
	fs.StringVar(&f.split, "split", "", "split --data as train did: the first part is the k-NN reference, the last the test set, a middle part the validation set (default: the split recorded in the model, when --data is the data it was trained on)")
	fs.StringVar(&f.ref, "ref", "", "k-NN reference (training) data SPEC; --data is then the test set")
	fs.BoolVar(&f.loo, "loo", false, "leave-one-out k-NN error over all rows of --data, ignoring the split recorded in the model")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed of --split fractions and of k-means (default: the seed recorded in the model, else 1)")
	fs.StringVar(&f.backend, "backend", "", "numerical backend: "+strings.Join(engine.Names(), "|"))
	fs.IntVar(&f.precK, "precision-at", 0, "also score retrieval: precision@K of the scored rows against the reference rows (kernel models: leave-one-out over the kernel's points); 0: off")
	fs.StringVar(&f.pairs, "pairs", "", "also score pair verification: CSV i,j,y of labelled pairs of rows of --data (y = +1 similar, -1 dissimilar): ROC AUC of the distances")
	fs.StringVar(&f.threshold, "threshold", "", "accuracy of deciding the --pairs similar when their distance is ≤ this")
	fs.StringVar(&f.valPairs, "val-pairs", "", "CSV i,j,y of validation pairs of --data: the accuracy on --pairs is at the threshold most accurate on these")
	rules := []flagRule{
		{"threshold", "--pairs", func() bool { return f.pairs != "" }},
		{"val-pairs", "--pairs", func() bool { return f.pairs != "" }},
	}
	annotateFlagRules(fs, rules)
	fs.IntVar(&f.clusters, "clusters", 0, "kernel models: number of clusters (default: the model's, from cluster --out, else the number of classes)")
	fs.IntVar(&f.runs, "runs", eval.DefaultRestarts, "kernel models: k-means restarts (default: the model's, from cluster --out, else "+strconv.Itoa(eval.DefaultRestarts)+")")
	return rules
}

// checkEvalFlags checks the flags of eval against one another and returns
// --threshold (NaN when not given).
func checkEvalFlags(fs *flag.FlagSet, f evalFlags, rules []flagRule) (float64, error) {
	if err := checkFlagRules(fs, "eval", "evaluation without --pairs", rules); err != nil {
		return 0, err
	}
	if f.precK < 0 {
		return 0, usagef("eval: --precision-at %d: want K ≥ 1, or 0 for none", f.precK)
	}
	threshold := math.NaN()
	if f.threshold != "" && f.valPairs != "" {
		return 0, usagef("eval: give --threshold or --val-pairs, not both")
	}
	if f.threshold != "" {
		v, err := parseThreshold(f.threshold)
		if err != nil {
			return 0, err
		}
		threshold = v
	}
	if err := requireFlags("eval", "", []string{"model", "data"}, f.modelPath, f.spec); err != nil {
		return 0, err
	}
	switch {
	case f.split != "" && f.ref != "":
		return 0, usagef("eval: give --split or --ref, not both")
	case f.loo && (f.split != "" || f.ref != ""):
		return 0, usagef("eval: --loo scores every row of --data: give it without --split and --ref")
	case f.k < 1 || f.runs < 1 || f.clusters < 0:
		return 0, usagef("eval: --k %d, --runs %d, --clusters %d: want --k and --runs ≥ 1 and --clusters ≥ 0 (0: the number of classes)", f.k, f.runs, f.clusters)
	}
	return threshold, nil
}

// printEvalSummary prints the text summary of an evaluation.
func printEvalSummary(w io.Writer, sum evalSummary) {
	fmt.Fprintf(w, "%s %s model %s on %s (backend %s)\n", sum.Algo, sum.Kind, sum.Model, sum.Data, sum.Backend)
	fmt.Fprintf(w, "  rows: %s\n", sum.Rows)
	switch sum.Mode {
	case "cluster":
		fmt.Fprintf(w, "  kernel k-means, %d clusters on %d points: pairwise accuracy %s (k-means on the features: %s)\n", sum.Clusters, sum.NTest, pct(sum.ClusterAccuracy), pct(sum.KMeansAccuracy))
	case "loo":
		fmt.Fprintf(w, "  leave-one-out %d-NN error on %d points: %s (Euclidean %s)\n", sum.K, sum.NTest, pct(sum.TestError), pct(sum.EuclideanTestError))
	default:
		if sum.NTest > 0 {
			fmt.Fprintf(w, "  %d-NN test error on %d points (reference %d): %s (Euclidean %s)", sum.K, sum.NTest, sum.NRef, pct(sum.TestError), pct(sum.EuclideanTestError))
			if sum.ValError != nil {
				fmt.Fprintf(w, ", validation %s", pct(sum.ValError))
			}
		} else {
			fmt.Fprintf(w, "  %d-NN validation error (reference %d): %s; no test rows in --data", sum.K, sum.NRef, pct(sum.ValError))
		}
		fmt.Fprintln(w)
	}
	if sum.PrecisionK > 0 {
		fmt.Fprintf(w, "  precision@%d: %s (Euclidean %s)\n", sum.PrecisionK, pct(sum.PrecisionAtK), pct(sum.EuclideanPrecisionAtK))
	}
	if sum.Pairs != "" {
		fmt.Fprintf(w, "  pairs: ROC AUC %s on %d pairs of %s", num4(sum.AUC), sum.NPairs, sum.Pairs)
		if sum.EuclideanAUC != nil {
			fmt.Fprintf(w, " (Euclidean %s)", num4(sum.EuclideanAUC))
		}
		if sum.Threshold != nil {
			fmt.Fprintf(w, "; accuracy %s at threshold %.6g", pct(sum.PairAccuracy), *sum.Threshold)
			if sum.ThresholdFrom == "val-pairs" {
				fmt.Fprintf(w, " (calibrated on %d pairs of %s: accuracy %s)", sum.NValPairs, sum.ValPairs, pct(sum.ValPairAccuracy))
			}
		}
		fmt.Fprintln(w)
	}
}

// pct formats a fraction as a percentage with 2 decimals, or "n/a".
func pct(v *jsonFloat) string {
	if v == nil || !v.Finite() {
		return "n/a"
	}
	return fmt.Sprintf("%.2f%%", 100*float64(*v))
}

// num4 formats a number with 4 decimals, or "n/a".
func num4(v *jsonFloat) string {
	if v == nil || !v.Finite() {
		return "n/a"
	}
	return fmt.Sprintf("%.4f", float64(*v))
}

// evalPairs fills sum with the pair-verification scores of the model's
// distances on the labelled pairs of pairsPath (rows of d): the ROC AUC and,
// with a threshold (given, or calibrated on valPath), the accuracy.
func evalPairs(sum *evalSummary, m *model.Model, d *data.Dataset, pairsPath, valPath string, threshold float64) error {
	n, what, err := pairRows(m, d)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	ps, err := readPairsFile(pairsPath, n, what, true)
	if err != nil {
		return fmt.Errorf("eval: --pairs: %w", err)
	}
	dist, err := modelPairDistances(m, d, ps.IJ)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	sum.Pairs, sum.NPairs = pairsPath, len(ps.IJ)
	auc, err := eval.PairAUC(dist, ps.Y)
	if err != nil {
		return fmt.Errorf("eval: --pairs %s: %w", pairsPath, err)
	}
	sum.AUC = ptrFloat(auc)
	if m.Kind != model.KindKernel {
		x, err := m.Prepare(d.X)
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		eu := make([]float64, len(ps.IJ))
		for r, p := range ps.IJ {
			eu[r] = rowDistance(x, p[0], p[1])
		}
		if a, err := eval.PairAUC(eu, ps.Y); err == nil {
			sum.EuclideanAUC = ptrFloat(a)
		}
	}
	if valPath != "" {
		vs, err := readPairsFile(valPath, n, what, true)
		if err != nil {
			return fmt.Errorf("eval: --val-pairs: %w", err)
		}
		vd, err := modelPairDistances(m, d, vs.IJ)
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		t, acc, err := eval.CalibrateThreshold(vd, vs.Y)
		if err != nil {
			return fmt.Errorf("eval: --val-pairs %s: %w", valPath, err)
		}
		threshold = t
		sum.ValPairs, sum.NValPairs, sum.ValPairAccuracy, sum.ThresholdFrom = valPath, len(vs.IJ), ptrFloat(acc), "val-pairs"
	} else if !math.IsNaN(threshold) {
		sum.ThresholdFrom = "flag"
	}
	if !math.IsNaN(threshold) {
		acc, err := eval.PairAccuracy(dist, ps.Y, threshold)
		if err != nil {
			return fmt.Errorf("eval: --pairs %s: %w", pairsPath, err)
		}
		sum.Threshold, sum.PairAccuracy = ptrFloat(threshold), ptrFloat(acc)
	}
	return nil
}

// rowDistance is the Euclidean distance between rows a and b of x.
func rowDistance(x *mat.Dense, a, b int) float64 {
	ra, rb := x.RawRowView(a), x.RawRowView(b)
	var s float64
	for j, v := range ra {
		e := v - rb[j]
		s += e * e
	}
	return math.Sqrt(s)
}

// evalPlan is the rows evalMetric scores: the parts of a split of --data
// (reference, optional validation, optional test); without parts, --ref as
// the reference and --data as the test set, else leave-one-out over --data.
type evalPlan struct {
	parts         []*data.Dataset // a split: reference first, test last
	hasTest       bool            // the last part is a test set (not when the model's test set was a separate file)
	validationIdx int             // index of the validation part in parts, -1 for none
}

// evalRows decides which rows of d eval scores — --split, --ref, --loo,
// else the split recorded in the model when d is the data the model was
// trained on — and says so in sum.
func evalRows(sum *evalSummary, m *model.Model, d *data.Dataset, split, refSpec string, loo bool, seed uint64, seedGiven bool) (evalPlan, error) {
	n := d.Len()
	prov := m.Provenance
	switch {
	case refSpec != "":
		sum.Mode, sum.Rows = "ref", fmt.Sprintf("all %d rows of --data, with --ref %s as the k-NN reference", n, refSpec)
		return evalPlan{validationIdx: -1}, nil
	case loo:
		sum.Mode, sum.Rows = "loo", fmt.Sprintf("all %d rows of --data, leave-one-out (--loo)", n)
		return evalPlan{validationIdx: -1}, nil
	case split != "":
		seedNote := fmt.Sprintf("seed %d", seed)
		if !seedGiven && prov != nil {
			seed = prov.Seed
			seedNote = fmt.Sprintf("the model's seed %d", seed)
		}
		plan, err := splitPlan(sum, d, split, seed, false)
		if err != nil {
			return plan, err
		}
		sum.SplitFrom = "flags"
		sum.Rows = fmt.Sprintf("the %s (--split %s, %s): %d of the %d rows of --data", plan.partName(), sum.Split, seedNote, plan.scored(), n)
		return plan, nil
	}
	sum.DataMatch = "unknown"
	if prov == nil || prov.Data == nil || prov.Data.SHA256 == "" {
		sum.Mode = "loo"
		sum.Rows = fmt.Sprintf("all %d rows of --data, leave-one-out: the model records no training data (a version 1 file, or made without provenance), so these may include its training rows", n)
		return evalPlan{validationIdx: -1}, nil
	}
	hash := model.DataSHA256(d.X, d.Y, d.Classes)
	switch {
	case hash == prov.Data.SHA256 && prov.Split != "":
		sum.DataMatch = "train"
		seedNote := fmt.Sprintf("recorded seed %d", prov.Seed)
		if seedGiven {
			seedNote = fmt.Sprintf("seed %d from --seed", seed)
		} else {
			seed = prov.Seed
		}
		plan, err := splitPlan(sum, d, prov.Split, seed, prov.Test != nil)
		if err != nil {
			return plan, fmt.Errorf("eval: the split recorded in the model: %w", err)
		}
		sum.SplitFrom = "model"
		sum.Rows = fmt.Sprintf("the %s of the split %s recorded in the model (%s): %d of the %d rows of --data, the data the model was trained on", plan.partName(), prov.Split, seedNote, plan.scored(), n)
		if prov.Test != nil {
			sum.Rows += fmt.Sprintf("; its test set was a separate file, %s: score that with --data %s --ref TRAINING-DATA", prov.Test.Name, prov.Test.Name)
		}
		return plan, nil
	case hash == prov.Data.SHA256:
		sum.DataMatch = "train"
		sum.Mode = "loo"
		sum.Rows = fmt.Sprintf("all %d rows of --data, leave-one-out: they are the model's training data (no split recorded), so the error is optimistic", n)
	case prov.Test != nil && hash == prov.Test.SHA256:
		sum.DataMatch = "test"
		sum.Mode = "loo"
		sum.Rows = fmt.Sprintf("all %d rows of --data, the model's test set, leave-one-out among themselves (give --ref for a training reference)", n)
	default:
		sum.DataMatch = "none"
		sum.Mode = "loo"
		sum.Rows = fmt.Sprintf("all %d rows of --data, leave-one-out: not the data the model was trained on (%s, SHA-256 %.12s…), so the recorded split does not apply", n, prov.Data.Name, prov.Data.SHA256)
	}
	return evalPlan{validationIdx: -1}, nil
}

// splitPlan splits d by spec with seed. Two parts are reference and test,
// three reference, validation and test; with noTest (the model's test set
// was a separate file) two parts are reference and validation.
func splitPlan(sum *evalSummary, d *data.Dataset, spec string, seed uint64, noTest bool) (evalPlan, error) {
	s, err := data.ParseSplit(spec)
	if err != nil {
		return evalPlan{}, err
	}
	if s.Parts() < 2 {
		return evalPlan{}, fmt.Errorf("eval: --split needs at least 2 parts (reference, test)")
	}
	parts, err := s.Apply(d, seed)
	if err != nil {
		return evalPlan{}, err
	}
	plan := evalPlan{parts: parts, hasTest: !noTest, validationIdx: -1}
	switch {
	case noTest:
		plan.validationIdx = 1
	case len(parts) == 3:
		plan.validationIdx = 1
	}
	sum.Mode, sum.Split, sum.Seed = "split", s.String(), &seed
	return plan, nil
}

// partName names the part of the split that is scored.
func (p evalPlan) partName() string {
	if p.hasTest {
		return "test rows"
	}
	return "validation rows"
}

// scored returns the number of rows scored.
func (p evalPlan) scored() int {
	if p.hasTest {
		return p.parts[len(p.parts)-1].Len()
	}
	return p.parts[p.validationIdx].Len()
}

// evalMetric fills sum with the k-NN errors of a metric model on the rows
// of plan.
func evalMetric(sum *evalSummary, b engine.Backend, m *model.Model, d *data.Dataset, k int, plan evalPlan, refSpec, labelCol string, precK int) error {
	sum.K, sum.Dim, sum.Rank = k, m.Metric.Dim(), m.Metric.Rank()
	prep := func(ds *data.Dataset) (*data.Dataset, error) { return evalPrepare(m, ds) }
	var refDS, testDS, valDS *data.Dataset
	switch {
	case plan.parts != nil:
		refDS = plan.parts[0]
		if plan.hasTest {
			testDS = plan.parts[len(plan.parts)-1]
		}
		if plan.validationIdx >= 0 {
			valDS = plan.parts[plan.validationIdx]
		}
	case refSpec != "":
		r, err := loadDataFeatures(refSpec, labelCol, m.InputDim(), "the input dimension of the model")
		if err != nil {
			return err
		}
		if err := data.UnifyClasses(r, d); err != nil {
			return err
		}
		refDS, testDS = r, d
	default:
		return evalMetricLOO(sum, b, m, d, k, precK)
	}
	for _, p := range []struct {
		name string
		ds   *data.Dataset
	}{{plan.partName(), testDS}, {"validation", valDS}} {
		if p.ds != nil {
			warnUser(warn.Resubstitution(data.SharedRows(refDS, p.ds), p.ds.Len()))
			classes, rows := data.MissingClasses(refDS, p.ds)
			warnUser(warn.MissingClasses(p.name, classes, rows))
		}
	}
	var err error
	if refDS, err = prep(refDS); err != nil {
		return err
	}
	sum.NRef = refDS.Len()
	if testDS != nil {
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
		sum.NTest, sum.TestError, sum.EuclideanTestError = testDS.Len(), ptrFloat(e), ptrFloat(eu)
	}
	if valDS != nil {
		if valDS, err = prep(valDS); err != nil {
			return err
		}
		v, err := eval.MetricKNNError(b, m.Metric, refDS.X, refDS.Y, valDS.X, valDS.Y, k)
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		sum.ValError = ptrFloat(v)
	}
	// The rows scored: the test rows, else the validation rows.
	q := testDS
	if q == nil {
		q = valDS
	}
	if precK > 0 && q != nil {
		return evalPrecision(sum, b, m, refDS, q, precK)
	}
	return nil
}

// evalPrecision fills sum with the precision@precK of the metric model
// and of the Euclidean metric on the (prepared) query rows q against refDS.
func evalPrecision(sum *evalSummary, b engine.Backend, m *model.Model, refDS, q *data.Dataset, precK int) error {
	p, err := eval.MetricPrecisionAtK(b, m.Metric, refDS.X, refDS.Y, q.X, q.Y, precK)
	if err != nil {
		return fmt.Errorf("eval: --precision-at: %w", err)
	}
	pe, err := eval.PrecisionAtK(b, refDS.X, refDS.Y, q.X, q.Y, precK)
	if err != nil {
		return fmt.Errorf("eval: --precision-at: %w", err)
	}
	sum.PrecisionK, sum.PrecisionAtK, sum.EuclideanPrecisionAtK = precK, ptrFloat(p), ptrFloat(pe)
	return nil
}

// evalMetricLOO fills sum with the leave-one-out k-NN errors of a metric
// model on the rows of d (and the precision@precK).
func evalMetricLOO(sum *evalSummary, b engine.Backend, m *model.Model, d *data.Dataset, k, precK int) error {
	x, err := evalPrepare(m, d)
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
	sum.NTest, sum.TestError, sum.EuclideanTestError = x.Len(), ptrFloat(e), ptrFloat(eu)
	if precK > 0 {
		p, err := eval.LOOPrecisionAtK(b, z, x.Y, precK)
		if err != nil {
			return fmt.Errorf("eval: --precision-at: %w", err)
		}
		pe, err := eval.LOOPrecisionAtK(b, x.X, x.Y, precK)
		if err != nil {
			return fmt.Errorf("eval: --precision-at: %w", err)
		}
		sum.PrecisionK, sum.PrecisionAtK, sum.EuclideanPrecisionAtK = precK, ptrFloat(p), ptrFloat(pe)
	}
	return nil
}

// evalPrepare applies the preprocessing of metric model m to the rows of
// ds.
func evalPrepare(m *model.Model, ds *data.Dataset) (*data.Dataset, error) {
	if want := m.InputDim(); ds.Dim() != want {
		return nil, fmt.Errorf("eval: %q has %d features, the model expects %d", ds.Name, ds.Dim(), want)
	}
	x, err := m.Prepare(ds.X)
	if err != nil {
		return nil, err
	}
	return ds.WithX(x), nil
}

// evalKernel clusters the kernel's points with kernel k-means and scores the
// clustering against the labels of d.
func evalKernel(ctx context.Context, sum *evalSummary, b engine.Backend, m *model.Model, d *data.Dataset, clusters, runs int, seed uint64, precK int) error {
	n := m.Kernel.N()
	d, rows, err := kernelPoints(m, d, "eval")
	if err != nil {
		return err
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
	sum.Rows = rows
	sum.ClusterAccuracy, sum.KMeansAccuracy = optFloat(acc), optFloat(bacc)
	if precK > 0 {
		// Retrieval among the kernel's points: leave-one-out in its feature
		// space (the rows of V·diag(√λ)), and in the features of --data.
		p, err := eval.LOOPrecisionAtK(b, m.Kernel.Factor(), d.Y, precK)
		if err != nil {
			return fmt.Errorf("eval: --precision-at: %w", err)
		}
		pe, err := eval.LOOPrecisionAtK(b, d.X, d.Y, precK)
		if err != nil {
			return fmt.Errorf("eval: --precision-at: %w", err)
		}
		sum.PrecisionK, sum.PrecisionAtK, sum.EuclideanPrecisionAtK = precK, ptrFloat(p), ptrFloat(pe)
	}
	return nil
}
