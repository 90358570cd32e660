package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/internal/input"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/warn"
)

func init() {
	register(command{
		name:    "predict",
		summary: "predict labels by k-NN in a learned metric, or decide pairs (similar when distance ≤ threshold)",
		run:     runPredict,
	})
}

// predictSummary is the JSON output of psdlearn predict. Accuracies and
// errors are fractions in [0, 1]; distances are the model's (not squared).
type predictSummary struct {
	Model   string `json:"model"`
	Kind    string `json:"kind"`
	Algo    string `json:"algo"`
	Backend string `json:"backend"`
	Data    string `json:"data,omitempty"`
	Mode    string `json:"mode"` // labels | pairs
	Out     string `json:"out"`
	// Label prediction: the k-NN reference, where it came from ("flag":
	// --ref; "model": the training rows recorded in the model's
	// provenance), in words, and its size.
	Ref     string `json:"ref,omitempty"`
	RefFrom string `json:"ref_from,omitempty"`
	RefRows string `json:"ref_rows,omitempty"`
	K       int    `json:"k,omitempty"`
	NRef    int    `json:"n_ref,omitempty"`
	// N is the number of rows predicted (labels) or of pairs decided.
	N int `json:"n"`
	// ClassCounts counts the predicted labels by class name.
	ClassCounts map[string]int `json:"class_counts,omitempty"`
	// KNNError is the fraction of predicted labels that differ from the
	// labels of --data, when it has labels (not --no-labels).
	KNNError *jsonFloat `json:"knn_error,omitempty"`
	// Pair decisions: the pairs file, the threshold and where it came from
	// ("flag": --threshold; "val-pairs": calibrated on --val-pairs, whose
	// accuracy at it is ValAccuracy), the number of pairs decided similar,
	// and, when the pairs file has a y column, the ROC AUC of the distances
	// and the accuracy of the decisions.
	Pairs         string     `json:"pairs,omitempty"`
	Threshold     *jsonFloat `json:"threshold,omitempty"`
	ThresholdFrom string     `json:"threshold_from,omitempty"`
	ValPairs      string     `json:"val_pairs,omitempty"`
	NValPairs     int        `json:"n_val_pairs,omitempty"`
	ValAccuracy   *jsonFloat `json:"val_accuracy,omitempty"`
	Similar       *int       `json:"similar,omitempty"`
	AUC           *jsonFloat `json:"auc,omitempty"`
	Accuracy      *jsonFloat `json:"accuracy,omitempty"`
}

const (
	predictLabels = "label prediction without --pairs"
	predictPairs  = "--pairs"
)

// predictFlags are the options of psdlearn predict.
type predictFlags struct {
	modelPath, spec, labelCol, ref, pairs, threshold, valPairs, out, backend string
	k                                                                        int
}

func runPredict(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "predict")
	var f predictFlags
	rules := definePredictFlags(fs, &f)
	if err := parseFlags(fs, "predict", args); err != nil {
		return err
	}
	threshold, err := checkPredictFlags(env, fs, &f, rules)
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
	sum := predictSummary{Model: f.modelPath, Kind: m.Kind, Algo: m.Algo, Backend: b.Name(), Data: f.spec, Out: f.out}
	if m.Kind == model.KindKernel && f.pairs == "" {
		return fmt.Errorf("predict: k-NN label prediction needs a metric model; %s is a kernel model (a learned kernel is transductive): decide pairs of its points with --pairs instead", f.modelPath)
	}
	if f.spec == "" && m.Kind != model.KindKernel {
		return usagef("predict: --data is required")
	}
	var d *data.Dataset
	if f.spec != "" {
		if d, err = loadDataFeatures(f.spec, f.labelCol, m.InputDim(), "the input dimension of the model"); err != nil {
			return err
		}
	}
	if f.pairs != "" {
		sum.Mode = "pairs"
		err = predictPairDecisions(env, &sum, m, d, f.pairs, f.valPairs, threshold, f.out)
	} else {
		sum.Mode = "labels"
		err = predictLabelsKNN(env, &sum, b, m, d, f.ref, f.labelCol, f.k, f.out)
	}
	if err != nil {
		return err
	}
	if env.json {
		return emitJSON(env, sum)
	}
	w := env.stdout
	if f.out == stdoutName {
		if env.quiet {
			return nil
		}
		w = env.stderr // stdout holds the CSV
	}
	printPredictSummary(w, sum)
	return nil
}

// definePredictFlags defines the flags of predict on fs and returns their
// scope rules.
func definePredictFlags(fs *flag.FlagSet, f *predictFlags) []flagRule {
	fs.StringVar(&f.modelPath, "model", "", "model file written by psdlearn train (or kernel)")
	fs.StringVar(&f.spec, "data", "", "data SPEC with raw features (the model's preprocessing is applied); labels are predicted for its rows, and --pairs index them (optional for kernel models, whose pairs index the kernel's points)")
	labelColFlag(fs, &f.labelCol)
	noLabelsFlag(fs, "--ref, and the training data recorded in the model, still need theirs")
	fs.StringVar(&f.ref, "ref", "", "labelled k-NN reference data SPEC (default: the training rows recorded in the model, when the model records its training data and it can be read)")
	fs.IntVar(&f.k, "k", psdlearn.DefaultK, "k of the k-NN classifier")
	fs.StringVar(&f.pairs, "pairs", "", "CSV of pairs to decide: columns i,j (0-based rows of --data) and an optional y (+1 similar, -1 dissimilar), header optional")
	fs.StringVar(&f.threshold, "threshold", "", "decide a pair similar when its distance is ≤ this")
	fs.StringVar(&f.valPairs, "val-pairs", "", "CSV i,j,y of validation pairs of --data: the threshold is the one most accurate on them")
	fs.StringVar(&f.out, "out", stdoutName, "output CSV (labels: row,label; pairs: i,j,distance,decision); - for standard output")
	fs.StringVar(&f.backend, "backend", "", "numerical backend: "+strings.Join(engine.Names(), "|"))
	rules := []flagRule{
		{"k", "label prediction, without --pairs", func() bool { return f.pairs == "" }},
		{"ref", "label prediction, without --pairs", func() bool { return f.pairs == "" }},
		{"threshold", "--pairs", func() bool { return f.pairs != "" }},
		{"val-pairs", "--pairs", func() bool { return f.pairs != "" }},
	}
	annotateFlagRules(fs, rules)
	return rules
}

// checkPredictFlags checks the flags of predict against one another and
// returns --threshold (NaN when not given).
func checkPredictFlags(env *cmdEnv, fs *flag.FlagSet, f *predictFlags, rules []flagRule) (float64, error) {
	chosen := predictLabels
	if f.pairs != "" {
		chosen = predictPairs
	}
	if err := checkFlagRules(fs, "predict", chosen, rules); err != nil {
		return 0, err
	}
	if f.out == "" {
		f.out = stdoutName
	}
	switch {
	case f.modelPath == "":
		return 0, usagef("predict: --model is required")
	case f.out == stdoutName && env.json:
		return 0, usagef("predict: the CSV goes to standard output, where --json writes its summary: give --out a file name")
	case f.k < 1:
		return 0, usagef("predict: --k %d: want k ≥ 1", f.k)
	case f.pairs == "":
		return math.NaN(), nil
	case f.threshold != "" && f.valPairs != "":
		return 0, usagef("predict: give --threshold or --val-pairs, not both")
	case f.threshold == "" && f.valPairs == "":
		return 0, usagef("predict: --pairs needs a threshold: give --threshold T or --val-pairs FILE")
	case f.threshold != "":
		return parseThreshold(f.threshold)
	}
	return math.NaN(), nil
}

// printPredictSummary prints the text summary of a prediction.
func printPredictSummary(w io.Writer, sum predictSummary) {
	switch sum.Mode {
	case "labels":
		fmt.Fprintf(w, "predicted %d labels (%s) by %d-NN against %s", sum.N, sortedCounts(sum.ClassCounts), sum.K, sum.RefRows)
		if sum.KNNError != nil {
			fmt.Fprintf(w, "; error against the labels of --data %.2f%%", 100*float64(*sum.KNNError))
		}
	default:
		fmt.Fprintf(w, "decided %d pairs at threshold %.6g", sum.N, float64(*sum.Threshold))
		if sum.ThresholdFrom == "val-pairs" {
			fmt.Fprintf(w, " (calibrated on %d pairs of %s: accuracy %.2f%%)", sum.NValPairs, sum.ValPairs, 100*float64(*sum.ValAccuracy))
		}
		fmt.Fprintf(w, ": %d similar", *sum.Similar)
		if sum.AUC != nil {
			fmt.Fprintf(w, "; ROC AUC %.4f", float64(*sum.AUC))
		}
		if sum.Accuracy != nil {
			fmt.Fprintf(w, ", accuracy %.2f%%", 100*float64(*sum.Accuracy))
		}
	}
	if sum.Out != stdoutName {
		fmt.Fprintf(w, " → %s", sum.Out)
	}
	fmt.Fprintln(w)
}

// parseThreshold parses a --threshold value: a finite number.
func parseThreshold(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, usagef("--threshold %s: want a finite number", input.Clip(s, 40))
	}
	return v, nil
}

// predictLabelsKNN predicts the label of every row of d by k-NN in the
// metric of m against the reference rows, and writes them as CSV row,label.
func predictLabelsKNN(env *cmdEnv, sum *predictSummary, b engine.Backend, m *model.Model, d *data.Dataset, refSpec, labelCol string, k int, out string) error {
	refDS, err := predictReference(sum, m, refSpec, labelCol)
	if err != nil {
		return err
	}
	warnUser(warn.Resubstitution(data.SharedRows(refDS, d), d.Len()))
	labelled := !cur.noLabels
	if labelled {
		if err := data.UnifyClasses(refDS, d); err != nil {
			return fmt.Errorf("predict: %w", err)
		}
	}
	prep := func(what string, ds *data.Dataset) (*data.Dataset, error) {
		if err := checkModelDim(m, ds, what == "--data"); err != nil {
			return nil, fmt.Errorf("predict: %s %w", what, err)
		}
		x, err := m.Prepare(ds.X)
		if err != nil {
			return nil, fmt.Errorf("predict: %s: %w", what, err)
		}
		return ds.WithX(x), nil
	}
	if d, err = prep("--data", d); err != nil {
		return err
	}
	if refDS, err = prep("the reference", refDS); err != nil {
		return err
	}
	if n := refDS.Len(); k > n {
		return usagef("predict: --k %d: the reference has %d rows", k, n)
	}
	pred, err := eval.MetricKNNPredict(b, m.Metric, refDS.X, refDS.Y, d.X, k)
	if err != nil {
		return fmt.Errorf("predict: %w", err)
	}
	sum.K, sum.NRef, sum.N = k, refDS.Len(), len(pred)
	sum.ClassCounts = map[string]int{}
	wrong := 0
	names := make([]string, len(pred))
	for i, p := range pred {
		names[i] = className(refDS.Classes, p)
		sum.ClassCounts[names[i]]++
		if labelled && p != d.Y[i] {
			wrong++
		}
	}
	if labelled && len(pred) > 0 {
		sum.KNNError = ptrFloat(float64(wrong) / float64(len(pred)))
	}
	return writeRecords(env, out, []string{"row", "label"}, len(pred), func(i int, rec []string) {
		rec[0], rec[1] = strconv.Itoa(i), names[i]
	})
}

// className is the name of class y.
func className(classes []string, y int) string {
	if y >= 0 && y < len(classes) {
		return classes[y]
	}
	return strconv.Itoa(y)
}

// predictReference loads the k-NN reference: --ref, else the training rows
// of the data recorded in the model's provenance (checked against its
// SHA-256, cut by the recorded split and seed).
func predictReference(sum *predictSummary, m *model.Model, refSpec, labelCol string) (*data.Dataset, error) {
	// The reference is labelled whatever --no-labels says of --data.
	saved := cur
	defer func() { cur.header, cur.noHeader, cur.noLabels = saved.header, saved.noHeader, saved.noLabels }()
	cur.noLabels = false
	if refSpec != "" {
		if saved.noLabels {
			labelCol = ""
		}
		r, err := loadDataFeatures(refSpec, labelCol, m.InputDim(), "the input dimension of the model")
		if err != nil {
			return nil, err
		}
		sum.Ref, sum.RefFrom = refSpec, "flag"
		sum.RefRows = fmt.Sprintf("all %d rows of --ref %s", r.Len(), refSpec)
		return r, nil
	}
	prov := m.Provenance
	if prov == nil || prov.Data == nil || prov.Data.Name == "" {
		return nil, usagef("predict: --ref is required: the model records no training data (a version 1 file, or made without provenance)")
	}
	name := prov.Data.Name
	if isStdinSpec(name) {
		return nil, usagef("predict: --ref is required: the model was trained on standard input")
	}
	// The training data is read as train read it by default: header
	// detected, label last.
	cur.header, cur.noHeader = false, false
	r, err := loadDataFeatures(name, "", m.InputDim(), "the input dimension of the model")
	if err != nil {
		return nil, fmt.Errorf("predict: reading the model's training data (give --ref to use other reference data): %w", err)
	}
	if h := prov.Data.SHA256; h != "" && model.DataSHA256(r.X, r.Y, r.Classes) != h {
		return nil, fmt.Errorf("predict: %s is not the data the model was trained on (its SHA-256 differs from the one recorded): give --ref", name)
	}
	sum.Ref, sum.RefFrom = name, "model"
	sum.RefRows = fmt.Sprintf("all %d rows of the model's training data %s", r.Len(), name)
	if prov.Split != "" {
		s, err := data.ParseSplit(prov.Split)
		if err != nil {
			return nil, fmt.Errorf("predict: the split recorded in the model: %w", err)
		}
		parts, err := s.Apply(r, prov.Seed)
		if err != nil {
			return nil, fmt.Errorf("predict: the split recorded in the model: %w", err)
		}
		r = parts[0]
		sum.RefRows = fmt.Sprintf("the %d training rows of the model's training data %s (split %s, seed %d)", r.Len(), name, prov.Split, prov.Seed)
	}
	return r, nil
}

// predictPairDecisions decides every pair of pairsPath: similar (+1) when
// its distance is ≤ the threshold (given, or calibrated on valPath), else
// dissimilar (−1), and writes i,j,distance,decision.
func predictPairDecisions(env *cmdEnv, sum *predictSummary, m *model.Model, d *data.Dataset, pairsPath, valPath string, threshold float64, out string) error {
	n, what, err := pairRows(m, d)
	if err != nil {
		return fmt.Errorf("predict: %w", err)
	}
	ps, err := readPairsFile(pairsPath, n, what, false)
	if err != nil {
		return fmt.Errorf("predict: --pairs: %w", err)
	}
	dist, err := modelPairDistances(m, d, ps.IJ)
	if err != nil {
		return fmt.Errorf("predict: %w", err)
	}
	sum.Pairs, sum.N = pairsPath, len(ps.IJ)
	if valPath != "" {
		vs, err := readPairsFile(valPath, n, what, true)
		if err != nil {
			return fmt.Errorf("predict: --val-pairs: %w", err)
		}
		vd, err := modelPairDistances(m, d, vs.IJ)
		if err != nil {
			return fmt.Errorf("predict: %w", err)
		}
		t, acc, err := eval.CalibrateThreshold(vd, vs.Y)
		if err != nil {
			return fmt.Errorf("predict: --val-pairs %s: %w", valPath, err)
		}
		threshold = t
		sum.ValPairs, sum.NValPairs, sum.ValAccuracy, sum.ThresholdFrom = valPath, len(vs.IJ), ptrFloat(acc), "val-pairs"
	} else {
		sum.ThresholdFrom = "flag"
	}
	sum.Threshold = ptrFloat(threshold)
	similar := 0
	for _, v := range dist {
		if v <= threshold {
			similar++
		}
	}
	sum.Similar = &similar
	if ps.Y != nil {
		if acc, err := eval.PairAccuracy(dist, ps.Y, threshold); err == nil {
			sum.Accuracy = ptrFloat(acc)
		}
		if auc, err := eval.PairAUC(dist, ps.Y); err == nil {
			sum.AUC = ptrFloat(auc)
		}
	}
	return writeRecords(env, out, []string{"i", "j", "distance", "decision"}, len(dist), func(r int, rec []string) {
		rec[0], rec[1] = strconv.Itoa(ps.IJ[r][0]), strconv.Itoa(ps.IJ[r][1])
		rec[2] = strconv.FormatFloat(dist[r], 'g', -1, 64)
		rec[3] = "-1"
		if dist[r] <= threshold {
			rec[3] = "1"
		}
	})
}

// pairRows returns the number of rows pairs may index and names them: the
// rows of d for a metric model, the kernel's points for a kernel model
// (then d, if given, must have as many rows).
func pairRows(m *model.Model, d *data.Dataset) (int, string, error) {
	if m.Kind != model.KindKernel {
		return d.Len(), "rows of --data", nil
	}
	n := m.Kernel.N()
	if d != nil && d.Len() != n {
		return 0, "", fmt.Errorf("the kernel is on %d points, --data has %d (a learned kernel is transductive: pass the data it was learned on, or no --data)", n, d.Len())
	}
	return n, "points of the kernel", nil
}

// modelPairDistances returns the model's distances of the pairs: the
// metric distance of the raw rows of d (preprocessed), or for a kernel
// √(K_ii + K_jj − 2K_ij). The indices have been checked.
func modelPairDistances(m *model.Model, d *data.Dataset, ij [][2]int) ([]float64, error) {
	if m.Kind == model.KindKernel {
		out := make([]float64, len(ij))
		for r, p := range ij {
			out[r] = math.Sqrt(math.Max(m.Kernel.SqDistance(p[0], p[1]), 0))
		}
		return out, nil
	}
	if err := checkModelDim(m, d, true); err != nil {
		return nil, err
	}
	return m.PairDistances(d.X, ij)
}

// checkModelDim refuses data whose number of features is not the model's
// input dimension; hint adds that one column was taken as the label when
// that explains the difference.
func checkModelDim(m *model.Model, d *data.Dataset, hint bool) error {
	want := m.InputDim()
	if d.Dim() == want {
		return nil
	}
	why := ""
	if hint && d.Dim() == want-1 && !cur.noLabels {
		why = " (one column is taken as the label: pass --no-labels for unlabelled data)"
	}
	return fmt.Errorf("%s has %d features, the model expects %d%s", d.Name, d.Dim(), want, why)
}

// readPairsFile reads a CSV of pairs i,j[,y] of 0-based indices below n
// (what names them in errors), with an optional header naming the columns
// i, j and y (data.ParseIndexPairs, within --max-input and --max-line).
// needY requires the y column. Errors start with the file name and the
// line: "pairs.csv:3: j = 150 outside [0, 150) …".
func readPairsFile(path string, n int, what string, needY bool) (*data.IndexPairs, error) {
	r, closer, err := openTextReader(path)
	if err != nil {
		var pe *os.PathError
		var ie *input.Error
		switch {
		case errors.As(err, &ie):
			return nil, err // names the file
		case errors.As(err, &pe):
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer closer.Close()
	opt, err := loadOptions("")
	if err != nil {
		return nil, err
	}
	p, err := data.ParseIndexPairs(r, path, n, what, needY, opt)
	return p, limitHint(err, "")
}

// writeRecords writes a CSV with the header and rows records filled by
// fill to path ("-": standard output).
func writeRecords(env *cmdEnv, path string, header []string, rows int, fill func(i int, rec []string)) error {
	f, err := createOutput(env, path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	w := csv.NewWriter(bw)
	w.Write(header)
	rec := make([]string, len(header))
	for i := 0; i < rows; i++ {
		fill(i, rec)
		w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// sortedCounts formats class counts as "a 3, b 5" in class-name order.
func sortedCounts(c map[string]int) string {
	names := make([]string, 0, len(c))
	for n := range c {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %d", n, c[n])
	}
	return strings.Join(parts, ", ")
}
