package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
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
	"github.com/psdlearn/psdlearn/model"
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
	KNNError any `json:"knn_error,omitempty"`
	// Pair decisions: the pairs file, the threshold and where it came from
	// ("flag": --threshold; "val-pairs": calibrated on --val-pairs, whose
	// accuracy at it is ValAccuracy), the number of pairs decided similar,
	// and, when the pairs file has a y column, the ROC AUC of the distances
	// and the accuracy of the decisions.
	Pairs         string `json:"pairs,omitempty"`
	Threshold     any    `json:"threshold,omitempty"`
	ThresholdFrom string `json:"threshold_from,omitempty"`
	ValPairs      string `json:"val_pairs,omitempty"`
	NValPairs     int    `json:"n_val_pairs,omitempty"`
	ValAccuracy   any    `json:"val_accuracy,omitempty"`
	Similar       *int   `json:"similar,omitempty"`
	AUC           any    `json:"auc,omitempty"`
	Accuracy      any    `json:"accuracy,omitempty"`
}

const (
	predictLabels = "label prediction without --pairs"
	predictPairs  = "--pairs"
)

func runPredict(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "predict")
	modelPath := fs.String("model", "", "model file written by psdlearn train (or kernel)")
	spec := fs.String("data", "", "data SPEC with raw features (the model's preprocessing is applied); labels are predicted for its rows, and --pairs index them (optional for kernel models, whose pairs index the kernel's points)")
	var labelCol string
	labelColFlag(fs, &labelCol)
	noLabelsFlag(fs, "--ref, and the training data recorded in the model, still need theirs")
	ref := fs.String("ref", "", "labelled k-NN reference data SPEC (default: the training rows recorded in the model, when the model records its training data and it can be read)")
	k := fs.Int("k", psdlearn.DefaultK, "k of the k-NN classifier")
	pairsPath := fs.String("pairs", "", "CSV of pairs to decide: columns i,j (0-based rows of --data) and an optional y (+1 similar, -1 dissimilar), header optional")
	thresholdFlag := fs.String("threshold", "", "decide a pair similar when its distance is ≤ this")
	valPairs := fs.String("val-pairs", "", "CSV i,j,y of validation pairs of --data: the threshold is the one most accurate on them")
	out := fs.String("out", stdoutName, "output CSV (labels: row,label; pairs: i,j,distance,decision); - for standard output")
	backend := fs.String("backend", "", "numerical backend: "+strings.Join(engine.Names(), "|"))
	rules := []flagRule{
		{"k", "label prediction, without --pairs", func() bool { return *pairsPath == "" }},
		{"ref", "label prediction, without --pairs", func() bool { return *pairsPath == "" }},
		{"threshold", "--pairs", func() bool { return *pairsPath != "" }},
		{"val-pairs", "--pairs", func() bool { return *pairsPath != "" }},
	}
	annotateFlagRules(fs, rules)
	if err := parseFlags(fs, "predict", args); err != nil {
		return err
	}
	chosen := predictLabels
	if *pairsPath != "" {
		chosen = predictPairs
	}
	if err := checkFlagRules(fs, "predict", chosen, rules); err != nil {
		return err
	}
	if *out == "" {
		*out = stdoutName
	}
	if *modelPath == "" {
		return usagef("predict: --model is required")
	}
	if *out == stdoutName && env.json {
		return usagef("predict: the CSV goes to standard output, where --json writes its summary: give --out a file name")
	}
	if *k < 1 {
		return usagef("predict: --k %d: want k ≥ 1", *k)
	}
	threshold := math.NaN()
	if *pairsPath != "" {
		switch {
		case *thresholdFlag != "" && *valPairs != "":
			return usagef("predict: give --threshold or --val-pairs, not both")
		case *thresholdFlag == "" && *valPairs == "":
			return usagef("predict: --pairs needs a threshold: give --threshold T or --val-pairs FILE")
		case *thresholdFlag != "":
			v, err := parseThreshold(*thresholdFlag)
			if err != nil {
				return err
			}
			threshold = v
		}
	}
	b, err := resolveBackend(*backend)
	if err != nil {
		return err
	}
	m, err := model.LoadFile(*modelPath)
	if err != nil {
		return err
	}
	sum := predictSummary{Model: *modelPath, Kind: m.Kind, Algo: m.Algo, Backend: b.Name(), Data: *spec, Out: *out}
	if m.Kind == model.KindKernel && *pairsPath == "" {
		return fmt.Errorf("predict: k-NN label prediction needs a metric model; %s is a kernel model (a learned kernel is transductive): decide pairs of its points with --pairs instead", *modelPath)
	}
	if *spec == "" && m.Kind != model.KindKernel {
		return usagef("predict: --data is required")
	}
	var d *data.Dataset
	if *spec != "" {
		if d, err = loadDataFeatures(*spec, labelCol, m.InputDim(), "the input dimension of the model"); err != nil {
			return err
		}
	}
	if *pairsPath != "" {
		sum.Mode = "pairs"
		err = predictPairDecisions(env, &sum, m, d, *pairsPath, *valPairs, threshold, *out)
	} else {
		sum.Mode = "labels"
		err = predictLabelsKNN(env, &sum, b, m, d, *ref, labelCol, *k, *out)
	}
	if err != nil {
		return err
	}
	if env.json {
		return emitJSON(env, sum)
	}
	w := env.stdout
	if *out == stdoutName {
		if env.quiet {
			return nil
		}
		w = env.stderr // stdout holds the CSV
	}
	switch sum.Mode {
	case "labels":
		fmt.Fprintf(w, "predicted %d labels (%s) by %d-NN against %s", sum.N, sortedCounts(sum.ClassCounts), sum.K, sum.RefRows)
		if e, ok := sum.KNNError.(float64); ok {
			fmt.Fprintf(w, "; error against the labels of --data %.2f%%", 100*e)
		}
	default:
		fmt.Fprintf(w, "decided %d pairs at threshold %.6g", sum.N, sum.Threshold)
		if sum.ThresholdFrom == "val-pairs" {
			fmt.Fprintf(w, " (calibrated on %d pairs of %s: accuracy %.2f%%)", sum.NValPairs, sum.ValPairs, 100*sum.ValAccuracy.(float64))
		}
		fmt.Fprintf(w, ": %d similar", *sum.Similar)
		if auc, ok := sum.AUC.(float64); ok {
			fmt.Fprintf(w, "; ROC AUC %.4f", auc)
		}
		if acc, ok := sum.Accuracy.(float64); ok {
			fmt.Fprintf(w, ", accuracy %.2f%%", 100*acc)
		}
	}
	if *out != stdoutName {
		fmt.Fprintf(w, " → %s", *out)
	}
	fmt.Fprintln(w)
	return nil
}

// parseThreshold parses a --threshold value: a finite number.
func parseThreshold(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, usagef("--threshold %q: want a finite number", s)
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
	labelled := !cur.noLabels
	if labelled {
		if err := data.UnifyClasses(refDS, d); err != nil {
			return fmt.Errorf("predict: %w", err)
		}
	}
	prep := func(what string, ds *data.Dataset) (*data.Dataset, error) {
		if want := m.InputDim(); ds.Dim() != want {
			hint := ""
			if what == "--data" && ds.Dim() == want-1 && !cur.noLabels {
				hint = " (one column is taken as the label: pass --no-labels for unlabelled data)"
			}
			return nil, fmt.Errorf("predict: %s %s has %d features, the model expects %d%s", what, ds.Name, ds.Dim(), want, hint)
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
		sum.KNNError = float64(wrong) / float64(len(pred))
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
		return fmt.Errorf("predict: --pairs %w", err)
	}
	dist, err := modelPairDistances(m, d, ps.ij)
	if err != nil {
		return fmt.Errorf("predict: %w", err)
	}
	sum.Pairs, sum.N = pairsPath, len(ps.ij)
	if valPath != "" {
		vs, err := readPairsFile(valPath, n, what, true)
		if err != nil {
			return fmt.Errorf("predict: --val-pairs %w", err)
		}
		vd, err := modelPairDistances(m, d, vs.ij)
		if err != nil {
			return fmt.Errorf("predict: %w", err)
		}
		t, acc, err := eval.CalibrateThreshold(vd, vs.y)
		if err != nil {
			return fmt.Errorf("predict: --val-pairs %s: %w", valPath, err)
		}
		threshold = t
		sum.ValPairs, sum.NValPairs, sum.ValAccuracy, sum.ThresholdFrom = valPath, len(vs.ij), acc, "val-pairs"
	} else {
		sum.ThresholdFrom = "flag"
	}
	sum.Threshold = threshold
	similar := 0
	for _, v := range dist {
		if v <= threshold {
			similar++
		}
	}
	sum.Similar = &similar
	if ps.y != nil {
		if acc, err := eval.PairAccuracy(dist, ps.y, threshold); err == nil {
			sum.Accuracy = acc
		}
		if auc, err := eval.PairAUC(dist, ps.y); err == nil {
			sum.AUC = auc
		}
	}
	return writeRecords(env, out, []string{"i", "j", "distance", "decision"}, len(dist), func(r int, rec []string) {
		rec[0], rec[1] = strconv.Itoa(ps.ij[r][0]), strconv.Itoa(ps.ij[r][1])
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
	if want := m.InputDim(); d.Dim() != want {
		hint := ""
		if d.Dim() == want-1 && !cur.noLabels {
			hint = " (one column is taken as the label: pass --no-labels for unlabelled data)"
		}
		return nil, fmt.Errorf("%s has %d features, the model expects %d%s", d.Name, d.Dim(), want, hint)
	}
	return m.PairDistances(d.X, ij)
}

// maxPairs caps the pairs read from one file (about 40 bytes each in memory).
const maxPairs = 10_000_000

// pairsFile is a parsed pairs CSV: index pairs and, when the file has a y
// column, their labels (+1 similar, −1 dissimilar).
type pairsFile struct {
	ij [][2]int
	y  []int
}

// readPairsFile reads a CSV of pairs i,j[,y] of 0-based indices below n
// (what names them in errors), with an optional header naming the columns
// i, j and y. needY requires the y column. Errors start with the file name
// and the line: "pairs.csv:3: j = 150 outside [0, 150) …".
func readPairsFile(path string, n int, what string, needY bool) (*pairsFile, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	limit := maxInput
	if limit <= 0 {
		limit = data.DefaultMaxInputBytes
	}
	return parsePairs(bufio.NewReader(&cappedReader{r: f, left: limit, limit: limit}), path, n, what, needY)
}

// cappedReader fails once more than left bytes have been read (the
// --max-input cap of the data files), instead of truncating silently.
type cappedReader struct {
	r           io.Reader
	left, limit int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// One byte more tells a file of exactly the cap from a longer one.
		var one [1]byte
		if k, _ := c.r.Read(one[:]); k > 0 {
			return 0, fmt.Errorf("longer than %d bytes (--max-input)", c.limit)
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	k, err := c.r.Read(p)
	c.left -= int64(k)
	return k, err
}

// parsePairs is readPairsFile on a reader.
func parsePairs(r io.Reader, name string, n int, what string, needY bool) (*pairsFile, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	out := &pairsFile{}
	cols := 0 // 2 or 3, fixed by the header or the first row
	for rec := 0; ; rec++ {
		fields, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("%s:%d: %v", name, pe.Line, pe.Err)
			}
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		for i := range fields {
			fields[i] = strings.TrimSpace(fields[i])
		}
		if rec == 0 {
			fields[0] = strings.TrimPrefix(fields[0], "\ufeff") // a spreadsheet's byte-order mark
			if _, err := strconv.Atoi(strings.TrimPrefix(fields[0], "+")); err != nil {
				// A header: i,j or i,j,y.
				h := strings.ToLower(strings.Join(fields, ","))
				switch h {
				case "i,j":
					cols = 2
				case "i,j,y":
					cols = 3
				default:
					return nil, fmt.Errorf("%s:%d: header %q: want i,j or i,j,y (or no header)", name, line, strings.Join(fields, ","))
				}
				if needY && cols == 2 {
					return nil, fmt.Errorf("%s:%d: no y column: want i,j,y (y = +1 similar, -1 dissimilar)", name, line)
				}
				continue
			}
		}
		if cols == 0 {
			cols = len(fields)
			if cols != 2 && cols != 3 {
				return nil, fmt.Errorf("%s:%d: %d fields: want i,j or i,j,y", name, line, len(fields))
			}
			if needY && cols == 2 {
				return nil, fmt.Errorf("%s:%d: 2 fields: want i,j,y (y = +1 similar, -1 dissimilar)", name, line)
			}
		}
		if len(fields) != cols {
			return nil, fmt.Errorf("%s:%d: %d fields, want %d like the first row (i,j%s)", name, line, len(fields), cols, map[bool]string{true: ",y"}[cols == 3])
		}
		if len(out.ij) >= maxPairs {
			return nil, fmt.Errorf("%s:%d: more than %d pairs", name, line, maxPairs)
		}
		var p [2]int
		for c, col := range []string{"i", "j"} {
			v, err := strconv.Atoi(strings.TrimPrefix(fields[c], "+"))
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %s = %q is not an integer", name, line, col, fields[c])
			}
			if v < 0 || v >= n {
				return nil, fmt.Errorf("%s:%d: %s = %d outside [0, %d): there are %d %s", name, line, col, v, n, n, what)
			}
			p[c] = v
		}
		out.ij = append(out.ij, p)
		if cols == 3 {
			switch fields[2] {
			case "1", "+1":
				out.y = append(out.y, 1)
			case "-1":
				out.y = append(out.y, -1)
			default:
				return nil, fmt.Errorf("%s:%d: y = %q: want 1 (similar) or -1 (dissimilar)", name, line, fields[2])
			}
		}
	}
	if len(out.ij) == 0 {
		return nil, fmt.Errorf("%s: no pairs", name)
	}
	return out, nil
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
