package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/model"
	"gonum.org/v1/gonum/mat"
)

// Tests of psdlearn predict, and of eval's pair and
// retrieval scores.

// readCSVFile reads a whole CSV file.
func readCSVFile(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// irisPairsCSV writes all pairs among the iris rows first, first+step, …
// with y = +1 for rows of the same species (iris lists 50 of each in
// order), −1 otherwise.
func irisPairsCSV(t *testing.T, path string, first, step int, header bool) int {
	t.Helper()
	var b strings.Builder
	if header {
		b.WriteString("i,j,y\n")
	}
	var rows []int
	for i := first; i < 150; i += step {
		rows = append(rows, i)
	}
	n := 0
	for a := range rows {
		for c := a + 1; c < len(rows); c++ {
			i, j := rows[a], rows[c]
			y := -1
			if i/50 == j/50 {
				y = 1
			}
			fmt.Fprintf(&b, "%d,%d,%d\n", i, j, y)
			n++
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return n
}

// trainIrisModel trains the diag-test metric (M = diag(1, 2, 3, 4) on
// standardised features) on builtin:iris with the default split and seed 7,
// and writes the reference (training) and test rows of that split as CSV.
func trainIrisModel(t *testing.T, dir string) (modelPath, refCSV, testCSV string, test *data.Dataset) {
	t.Helper()
	modelPath = filepath.Join(dir, "iris.json")
	runJSON(t, "train", "--algo", "diag-test", "--data", "builtin:iris", "--standardize", "--seed", "7", "--out", modelPath, "--backend", "go")
	d, err := datasets.Open("iris")
	if err != nil {
		t.Fatal(err)
	}
	parts, err := data.Split(d, []float64{0.7, 0.15, 0.15}, 7)
	if err != nil {
		t.Fatal(err)
	}
	refCSV, testCSV = filepath.Join(dir, "ref.csv"), filepath.Join(dir, "test.csv")
	if err := writeCSV(&cmdEnv{}, refCSV, parts[0].X, parts[0].Y, parts[0].Classes, true); err != nil {
		t.Fatal(err)
	}
	if err := writeCSV(&cmdEnv{}, testCSV, parts[2].X, parts[2].Y, parts[2].Classes, true); err != nil {
		t.Fatal(err)
	}
	return modelPath, refCSV, testCSV, parts[2]
}

// TestPredictLabelsIris: predict's labels are the k-NN labels eval scores
// (their error is eval's test error), with --ref or, by default, the
// training rows recorded in the model; unlabelled data gives the same
// labels; the CSV goes to standard output by default.
func TestPredictLabelsIris(t *testing.T) {
	dir := t.TempDir()
	modelPath, refCSV, testCSV, test := trainIrisModel(t, dir)
	ev := runJSON(t, "eval", "--model", modelPath, "--data", testCSV, "--ref", refCSV)
	wantErr := field(t, ev, "test_error")
	t.Logf("eval: 3-NN test error %v (Euclidean %v)", wantErr, ev["euclidean_test_error"])
	if wantErr == 0 {
		t.Fatalf("eval: test error 0; the comparison below would not tell labels apart")
	}

	// errorOf scores a labels CSV against the test rows by class name.
	errorOf := func(path string) (float64, []string) {
		recs := readCSVFile(t, path)
		if len(recs) != test.Len()+1 || strings.Join(recs[0], ",") != "row,label" {
			t.Fatalf("%s: %d records, header %v", path, len(recs), recs[0])
		}
		wrong := 0
		var labels []string
		for i, r := range recs[1:] {
			if r[0] != strconv.Itoa(i) {
				t.Fatalf("%s: row %d numbered %s", path, i, r[0])
			}
			labels = append(labels, r[1])
			if r[1] != test.Classes[test.Y[i]] {
				wrong++
			}
		}
		return float64(wrong) / float64(test.Len()), labels
	}

	withRef := filepath.Join(dir, "labels-ref.csv")
	p := runJSON(t, "predict", "--model", modelPath, "--data", testCSV, "--ref", refCSV, "--out", withRef)
	gotErr, labelsRef := errorOf(withRef)
	if gotErr != wantErr || field(t, p, "knn_error") != wantErr || p["mode"] != "labels" || p["ref_from"] != "flag" ||
		field(t, p, "k") != 3 || field(t, p, "n_ref") != 105 || field(t, p, "n") != 22 {
		t.Errorf("predict --ref: error %v, summary %v; want eval's test error %v", gotErr, p, wantErr)
	}
	counts, _ := p["class_counts"].(map[string]any)
	total := 0.0
	for _, c := range counts {
		total += c.(float64)
	}
	if total != 22 {
		t.Errorf("class_counts %v", p["class_counts"])
	}

	// Default reference: the training rows recorded in the model.
	fromModel := filepath.Join(dir, "labels-model.csv")
	p = runJSON(t, "predict", "--model", modelPath, "--data", testCSV, "--out", fromModel)
	_, labelsModel := errorOf(fromModel)
	if rows, _ := p["ref_rows"].(string); p["ref_from"] != "model" || p["ref"] != "builtin:iris" || field(t, p, "n_ref") != 105 ||
		!strings.Contains(rows, "105 training rows") || strings.Join(labelsModel, " ") != strings.Join(labelsRef, " ") {
		t.Errorf("predict with the recorded training rows: %v\nlabels %v\nwant   %v", p, labelsModel, labelsRef)
	}

	// Unlabelled data: the same labels, no error.
	bare := filepath.Join(dir, "bare.csv")
	if err := writeCSV(&cmdEnv{}, bare, test.X, nil, nil, false); err != nil {
		t.Fatal(err)
	}
	bareOut := filepath.Join(dir, "labels-bare.csv")
	p = runJSON(t, "predict", "--model", modelPath, "--data", bare, "--no-labels", "--ref", refCSV, "--out", bareOut)
	_, labelsBare := errorOf(bareOut)
	if p["knn_error"] != nil || strings.Join(labelsBare, " ") != strings.Join(labelsRef, " ") {
		t.Errorf("unlabelled --data: %v, labels %v", p, labelsBare)
	}
	// Without --no-labels the last feature is taken as the label: a hint.
	if st, _, errs := runCLI(t, "predict", "--model", modelPath, "--data", bare, "--ref", refCSV); st != 1 || !strings.Contains(errs, "pass --no-labels") {
		t.Errorf("unlabelled data without --no-labels: status %d, %s", st, errs)
	}

	// Standard output by default, the summary line on stderr.
	st, out, errs := runCLI(t, "predict", "--model", modelPath, "--data", testCSV, "--ref", refCSV)
	if st != 0 || !strings.HasPrefix(out, "row,label\n0,") || strings.Count(out, "\n") != 23 || !strings.Contains(errs, "predicted 22 labels") {
		t.Errorf("predict to stdout: status %d\nstdout %s\nstderr %s", st, out, errs)
	}
	if st, out, errs = runCLI(t, "predict", "--model", modelPath, "--data", testCSV, "--ref", refCSV, "--quiet"); st != 0 || errs != "" || !strings.HasPrefix(out, "row,label\n") {
		t.Errorf("predict --quiet: status %d, stderr %q", st, errs)
	}
}

// TestPredictPairsIris: on same- versus different-species pairs of iris the
// metric's distances have a ROC AUC above 0.9; the decisions follow the
// threshold calibrated on validation pairs; eval reports the same AUC and
// accuracy.
func TestPredictPairsIris(t *testing.T) {
	dir := t.TempDir()
	modelPath, _, _, _ := trainIrisModel(t, dir)
	pairs, val := filepath.Join(dir, "pairs.csv"), filepath.Join(dir, "val.csv")
	np := irisPairsCSV(t, pairs, 0, 5, true)
	nv := irisPairsCSV(t, val, 2, 5, false) // no header
	out := filepath.Join(dir, "decisions.csv")
	p := runJSON(t, "predict", "--model", modelPath, "--data", "builtin:iris", "--pairs", pairs, "--val-pairs", val, "--out", out)
	auc, th := field(t, p, "auc"), field(t, p, "threshold")
	t.Logf("pairs: ROC AUC %v, threshold %v, accuracy %v", auc, th, p["accuracy"])
	if p["mode"] != "pairs" || field(t, p, "n") != float64(np) || field(t, p, "n_val_pairs") != float64(nv) || p["threshold_from"] != "val-pairs" || !(auc > 0.9) || !(field(t, p, "accuracy") > 0.8) {
		t.Errorf("predict --pairs: %v", p)
	}
	// The decisions file: the model's distances, similar when ≤ threshold.
	m, err := model.LoadFile(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	iris, _ := datasets.Open("iris")
	recs := readCSVFile(t, out)
	if len(recs) != np+1 || strings.Join(recs[0], ",") != "i,j,distance,decision" {
		t.Fatalf("decisions: %d records, header %v", len(recs), recs[0])
	}
	similar, right := 0, 0
	for _, r := range recs[1:] {
		i, _ := strconv.Atoi(r[0])
		j, _ := strconv.Atoi(r[1])
		dist, _ := strconv.ParseFloat(r[2], 64)
		want, err := m.PairDistances(iris.X, [][2]int{{i, j}})
		if err != nil || dist != want[0] {
			t.Fatalf("pair %d,%d: distance %v, model %v (%v)", i, j, dist, want, err)
		}
		if wantDec := map[bool]string{true: "1", false: "-1"}[dist <= th]; r[3] != wantDec {
			t.Fatalf("pair %d,%d: decision %s at distance %v, threshold %v", i, j, r[3], dist, th)
		}
		if r[3] == "1" {
			similar++
		}
		if (r[3] == "1") == (i/50 == j/50) {
			right++
		}
	}
	if field(t, p, "similar") != float64(similar) || field(t, p, "accuracy") != float64(right)/float64(np) {
		t.Errorf("similar %v accuracy %v; the file has %d similar, %d right", p["similar"], p["accuracy"], similar, right)
	}

	// eval: the same AUC, and the accuracy at the same calibrated threshold.
	ev := runJSON(t, "eval", "--model", modelPath, "--data", "builtin:iris", "--pairs", pairs, "--val-pairs", val)
	if field(t, ev, "auc") != auc || field(t, ev, "threshold") != th || field(t, ev, "pair_accuracy") != field(t, p, "accuracy") ||
		field(t, ev, "val_pair_accuracy") != field(t, p, "val_accuracy") || field(t, ev, "n_pairs") != float64(np) || !(field(t, ev, "euclidean_auc") > 0.5) {
		t.Errorf("eval --pairs: %v\npredict: %v", ev, p)
	}
	st, text, _ := runCLI(t, "eval", "--model", modelPath, "--data", "builtin:iris", "--pairs", pairs, "--val-pairs", val)
	if st != 0 || !strings.Contains(text, fmt.Sprintf("  pairs: ROC AUC %.4f on %d pairs", auc, np)) || !strings.Contains(text, "(calibrated on") {
		t.Errorf("eval --pairs text (status %d):\n%s", st, text)
	}
	// eval without a threshold: the AUC only.
	ev = runJSON(t, "eval", "--model", modelPath, "--data", "builtin:iris", "--pairs", pairs)
	if field(t, ev, "auc") != auc || ev["threshold"] != nil || ev["pair_accuracy"] != nil {
		t.Errorf("eval --pairs without a threshold: %v", ev)
	}

	// A given threshold: every pair is similar at a huge one.
	p = runJSON(t, "predict", "--model", modelPath, "--data", "builtin:iris", "--pairs", pairs, "--threshold", "1e9", "--out", out)
	if p["threshold_from"] != "flag" || field(t, p, "threshold") != 1e9 || field(t, p, "similar") != float64(np) || p["val_pairs"] != nil {
		t.Errorf("predict --threshold: %v", p)
	}
	// A byte-order mark before the header, CRLF line ends and spaces are fine.
	bom := writeFile(t, dir, "bom.csv", []byte("\ufeffi, j, y\r\n0, 1, +1\r\n0, 100, -1\r\n"))
	if p = runJSON(t, "predict", "--model", modelPath, "--data", "builtin:iris", "--pairs", bom, "--threshold", "1e9", "--out", out); field(t, p, "n") != 2 || field(t, p, "accuracy") != 0.5 {
		t.Errorf("pairs file with a BOM and CRLF: %v", p)
	}
	// Pairs without y: decisions, no scores.
	noY := writeFile(t, dir, "noy.csv", []byte("i,j\n0,1\n0,100\n"))
	st, text, _ = runCLI(t, "predict", "--model", modelPath, "--data", "builtin:iris", "--pairs", noY, "--threshold", "0.5", "--quiet")
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if st != 0 || len(lines) != 3 || lines[0] != "i,j,distance,decision" || !strings.HasPrefix(lines[1], "0,1,") || !strings.HasSuffix(lines[2], ",-1") {
		t.Errorf("pairs without y (status %d):\n%s", st, text)
	}
}

// TestPredictKernelPairs: a kernel model decides pairs of its own points
// by K_ii + K_jj − 2K_ij and refuses k-NN label prediction.
func TestPredictKernelPairs(t *testing.T) {
	dir := t.TempDir()
	// K = v vᵀ with v = (0, 1, 3, 6): distances |v_i − v_j|.
	k, err := model.NewKernel(mat.NewDense(4, 1, []float64{0, 1, 3, 6}), []float64{1})
	if err != nil {
		t.Fatal(err)
	}
	kp := filepath.Join(dir, "kernel.json")
	if err := (&model.Model{Kind: model.KindKernel, Algo: "test", Kernel: k}).SaveFile(kp); err != nil {
		t.Fatal(err)
	}
	pairs := writeFile(t, dir, "kp.csv", []byte("0,1,1\n1,2,1\n2,3,-1\n0,3,-1\n"))
	out := filepath.Join(dir, "kd.csv")
	p := runJSON(t, "predict", "--model", kp, "--pairs", pairs, "--threshold", "2.5", "--out", out)
	if p["kind"] != "kernel" || field(t, p, "auc") != 1 || field(t, p, "accuracy") != 1 || field(t, p, "similar") != 2 {
		t.Errorf("kernel pairs: %v", p)
	}
	recs := readCSVFile(t, out)
	want := [][]string{{"i", "j", "distance", "decision"}, {"0", "1", "1", "1"}, {"1", "2", "2", "1"}, {"2", "3", "3", "-1"}, {"0", "3", "6", "-1"}}
	if fmt.Sprint(recs) != fmt.Sprint(want) {
		t.Errorf("kernel decisions %v, want %v", recs, want)
	}
	// Calibrated: midway between 2 and 3.
	if p = runJSON(t, "predict", "--model", kp, "--pairs", pairs, "--val-pairs", pairs, "--out", out); field(t, p, "threshold") != 2.5 {
		t.Errorf("kernel calibrated threshold: %v", p)
	}
	// eval on the kernel's points: pair AUC, and leave-one-out precision@1
	// in its feature space (the point at 3 is nearer 1, of the other class).
	pts := writeFile(t, dir, "pts.csv", []byte("x,label\n0,a\n1,a\n3,b\n6,b\n"))
	ev := runJSON(t, "eval", "--model", kp, "--data", pts, "--pairs", pairs, "--val-pairs", pairs, "--precision-at", "1")
	if field(t, ev, "auc") != 1 || field(t, ev, "pair_accuracy") != 1 || field(t, ev, "precision_at_k") != 0.75 || ev["euclidean_auc"] != nil {
		t.Errorf("eval of a kernel with --pairs, --precision-at: %v", ev)
	}
	// A pairs file beyond --max-input is refused, not truncated.
	big := writeFile(t, dir, "bigpairs.csv", []byte(strings.Repeat("0,1,1\n", 100)))
	if st, _, errs := runCLI(t, "predict", "--model", kp, "--pairs", big, "--threshold", "1", "--max-input", "64"); st != 1 || !strings.Contains(errs, "larger than 64 bytes") || !strings.Contains(errs, "--max-input") {
		t.Errorf("pairs file over --max-input: status %d, %s", st, errs)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"predict", "--model", kp, "--data", "builtin:iris"}, "k-NN label prediction needs a metric model"},
		{[]string{"predict", "--model", kp, "--pairs", writeFile(t, dir, "far.csv", []byte("0,4\n")), "--threshold", "1"}, "far.csv:1: j = 4 outside [0, 4): there are 4 points of the kernel"},
		{[]string{"predict", "--model", kp, "--data", "builtin:iris", "--pairs", pairs, "--threshold", "1"}, "the kernel is on 4 points, --data has 150"},
	} {
		if st, _, errs := runCLI(t, tc.args...); st != 1 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: status %d, %q; want 1 and %q", tc.args, st, errs, tc.want)
		}
	}
}

// TestEvalPrecisionAt: --precision-at scores retrieval on the rows eval
// scores; the identity metric's precision is the Euclidean one.
func TestEvalPrecisionAt(t *testing.T) {
	dir := t.TempDir()
	id := filepath.Join(dir, "id.json")
	runJSON(t, "train", "--algo", "identity-test", "--data", "builtin:iris", "--standardize", "--seed", "7", "--out", id, "--backend", "go")
	for _, extra := range [][]string{nil, {"--loo"}, {"--split", "0.5,0.5"}} {
		ev := runJSON(t, append([]string{"eval", "--model", id, "--data", "builtin:iris", "--precision-at", "5"}, extra...)...)
		p := field(t, ev, "precision_at_k")
		if field(t, ev, "precision_k") != 5 || p != field(t, ev, "euclidean_precision_at_k") || !(p > 0.8 && p <= 1) {
			t.Errorf("eval %v --precision-at 5: %v", extra, ev)
		}
	}
	modelPath, _, _, _ := trainIrisModel(t, dir)
	st, out, _ := runCLI(t, "eval", "--model", modelPath, "--data", "builtin:iris", "--precision-at", "4")
	if st != 0 || !strings.Contains(out, "  precision@4: ") {
		t.Errorf("eval --precision-at text (status %d):\n%s", st, out)
	}
	if ev := runJSON(t, "eval", "--model", modelPath, "--data", "builtin:iris"); ev["precision_at_k"] != nil || ev["auc"] != nil {
		t.Errorf("eval without --precision-at or --pairs reports them: %v", ev)
	}
}

// TestPredictHostile: malformed pairs files, bad indices and missing
// columns give one-line errors naming the file and line, exit non-zero and
// never panic; flag mistakes are usage errors (exit 2).
func TestPredictHostile(t *testing.T) {
	dir := t.TempDir()
	modelPath, refCSV, _, _ := trainIrisModel(t, dir)
	f := func(name, content string) string { return writeFile(t, dir, name, []byte(content)) }
	good := f("good.csv", "i,j,y\n0,1,1\n0,100,-1\n")
	base := []string{"predict", "--model", modelPath, "--data", "builtin:iris", "--threshold", "1", "--pairs"}
	evalBase := []string{"eval", "--model", modelPath, "--data", "builtin:iris", "--pairs"}
	cases := []hostileCase{
		{"index too large", append(base, f("big.csv", "i,j\n0,1\n2,150\n")), "big.csv:3: j = 150 outside [0, 150): there are 150 rows of --data"},
		{"negative index", append(base, f("neg.csv", "0,1\n-1,2\n")), "neg.csv:2: i = -1 outside [0, 150)"},
		{"not an integer", append(base, f("float.csv", "i,j\n0,1.5\n")), `float.csv:2: j = "1.5" is not an integer`},
		{"huge integer", append(base, f("huge.csv", "0,99999999999999999999999\n")), "huge.csv:1: j = "},
		{"missing column", append(base, f("short.csv", "i,j,y\n0,1,1\n0\n")), "short.csv:3: 1 fields, want 3"},
		{"one column", append(base, f("one.csv", "0\n1\n")), "one.csv:1: 1 fields: want i,j or i,j,y"},
		{"extra column", append(base, f("wide.csv", "0,1\n0,1,1\n")), "wide.csv:2: 3 fields, want 2"},
		{"bad header", append(base, f("hdr.csv", "a,b\n0,1\n")), `hdr.csv:1: header "a,b": want i,j or i,j,y`},
		{"bad y", append(base, f("y.csv", "i,j,y\n0,1,0\n")), `y.csv:2: y = "0": want 1 (similar) or -1 (dissimilar)`},
		{"empty file", append(base, f("empty.csv", "")), "empty.csv: no pairs"},
		{"header only", append(base, f("hdronly.csv", "i,j\n")), "hdronly.csv: no pairs"},
		{"bad quoting", append(base, f("quote.csv", "0,1\n\"2,3\n")), "quote.csv:2:"},
		{"missing file", append(base, filepath.Join(dir, "nope.csv")), "nope.csv"},
		{"val pairs without y", []string{"predict", "--model", modelPath, "--data", "builtin:iris", "--pairs", good, "--val-pairs", f("vnoy.csv", "i,j\n0,1\n")}, filepath.Join(dir, "vnoy.csv") + ":1: no y column"},
		{"eval pairs without y", append(evalBase, f("enoy.csv", "0,1\n0,100\n")), "enoy.csv:1: 2 fields: want i,j,y"},
		{"eval pairs one class", append(evalBase, f("eone.csv", "0,1,1\n0,2,1\n")), "ROC AUC needs similar and dissimilar pairs"},
		{"eval pairs bad index", append(evalBase, f("ebig.csv", "0,1,1\n0,1000,-1\n")), "ebig.csv:2: j = 1000 outside [0, 150)"},
		{"predict --k above reference", []string{"predict", "--model", modelPath, "--data", "builtin:iris", "--ref", refCSV, "--k", "106"}, "--k 106: the reference has 105 rows"},
		{"eval --precision-at above reference", []string{"eval", "--model", modelPath, "--data", "builtin:iris", "--precision-at", "106"}, "--precision-at"},
	}
	runHostile(t, cases)
	// Validation pairs of one class are fine: every one similar, accept all.
	if st, _, errs := runCLI(t, "predict", "--model", modelPath, "--data", "builtin:iris", "--pairs", good, "--val-pairs", f("v1b.csv", "0,1,1\n0,2,1\n"), "--out", filepath.Join(dir, "o.csv")); st != 0 {
		t.Errorf("validation pairs of one class: status %d, %s", st, errs)
	}

	// Usage errors: exit 2, one line, under --json one object.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"predict", "--data", "builtin:iris"}, "--model is required"},
		{[]string{"predict", "--model", modelPath}, "--data is required"},
		{[]string{"predict", "--model", modelPath, "--data", "builtin:iris", "--pairs", good}, "--pairs needs a threshold"},
		{[]string{"predict", "--model", modelPath, "--data", "builtin:iris", "--pairs", good, "--threshold", "1", "--val-pairs", good}, "give --threshold or --val-pairs, not both"},
		{[]string{"predict", "--model", modelPath, "--data", "builtin:iris", "--pairs", good, "--threshold", "NaN"}, `--threshold "NaN": want a finite number`},
		{[]string{"predict", "--model", modelPath, "--data", "builtin:iris", "--pairs", good, "--threshold", "1", "--k", "5"}, "--k does not apply to --pairs (it applies to label prediction, without --pairs)"},
		{[]string{"predict", "--model", modelPath, "--data", "builtin:iris", "--pairs", good, "--threshold", "1", "--ref", refCSV}, "--ref does not apply to --pairs"},
		{[]string{"predict", "--model", modelPath, "--data", "builtin:iris", "--threshold", "1"}, "--threshold does not apply to label prediction without --pairs (it applies to --pairs)"},
		{[]string{"predict", "--model", modelPath, "--data", "builtin:iris", "--val-pairs", good}, "--val-pairs does not apply"},
		{[]string{"predict", "--model", modelPath, "--data", "builtin:iris", "--k", "0"}, "--k 0"},
		{[]string{"predict", "--model", modelPath, "--data", "builtin:iris", "extra"}, "unexpected arguments"},
		{[]string{"eval", "--model", modelPath, "--data", "builtin:iris", "--threshold", "1"}, "--threshold does not apply to evaluation without --pairs"},
		{[]string{"eval", "--model", modelPath, "--data", "builtin:iris", "--pairs", good, "--threshold", "1", "--val-pairs", good}, "not both"},
		{[]string{"eval", "--model", modelPath, "--data", "builtin:iris", "--precision-at", "-1"}, "--precision-at -1"},
	} {
		for _, asJSON := range []bool{false, true} {
			args := tc.args
			if asJSON {
				args = append(append([]string(nil), args...), "--json")
				if args[0] == "predict" { // the CSV cannot go to stdout with --json
					args = append(args, "--out", filepath.Join(dir, "o.csv"))
				}
			}
			st, out, errs := runIO(args, "")
			msg := strings.TrimRight(errs, "\n")
			if asJSON {
				msg, _ = decodeJSON(t, out)["error"].(string)
			}
			if st != 2 || strings.Contains(msg, "\n") || !strings.Contains(msg, tc.want) {
				t.Errorf("%q: status %d, error %q; want 2 and %q", args, st, msg, tc.want)
			}
		}
	}
	// --json needs --out: the CSV and the summary cannot share stdout.
	if st, out, _ := runIO([]string{"predict", "--model", modelPath, "--data", "builtin:iris", "--json"}, ""); st != 2 || !strings.Contains(out, "give --out a file name") {
		t.Errorf("predict --json to stdout: status %d, %s", st, out)
	}
}
