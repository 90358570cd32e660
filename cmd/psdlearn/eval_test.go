package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/model"
	"gonum.org/v1/gonum/mat"
)

// TestEvalRecordedSplit: by default eval scores the test
// rows of the split recorded in the model when --data is the data the model
// was trained on (same SHA-256), says which rows it scored, and explicit
// --split, --seed, --ref and --loo override the recorded split.
func TestEvalRecordedSplit(t *testing.T) {
	dir := t.TempDir()
	modelPath := filepath.Join(dir, "iris.json")
	runJSON(t, "train", "--algo", "identity-test", "--data", "builtin:iris", "--standardize", "--seed", "7", "--out", modelPath, "--backend", "go")
	_, wantVal, wantTest := irisReference(t, 7)

	// The model file records where it came from.
	m, err := model.LoadFile(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	iris, err := datasets.Open("iris")
	if err != nil {
		t.Fatal(err)
	}
	p := m.Provenance
	want := model.DataInfo{Name: "builtin:iris", Rows: 150, Features: 4, SHA256: model.DataSHA256(iris.X, iris.Y, iris.Classes)}
	if p == nil || p.Backend != "go" || p.Seed != 7 || p.Split != "0.7,0.15,0.15" || p.Data == nil || *p.Data != want || p.Test != nil || p.Created.IsZero() || p.Module == "" {
		t.Fatalf("provenance %+v", p)
	}

	// Default: the recorded split's test rows, as train scored them.
	ev := runJSON(t, "eval", "--model", modelPath, "--data", "builtin:iris")
	if ev["mode"] != "split" || ev["split_from"] != "model" || ev["data_match"] != "train" || ev["split"] != "0.7,0.15,0.15" ||
		field(t, ev, "seed") != 7 || field(t, ev, "n_ref") != 105 || field(t, ev, "n_test") != 22 ||
		field(t, ev, "test_error") != wantTest || field(t, ev, "val_error") != wantVal {
		t.Errorf("eval with the recorded split: %v, want test error %v, validation %v", ev, wantTest, wantVal)
	}
	if rows, _ := ev["rows"].(string); !strings.Contains(rows, "test rows of the split 0.7,0.15,0.15 recorded in the model (recorded seed 7): 22 of the 150 rows") {
		t.Errorf("rows: %q", rows)
	}
	st, out, _ := runCLI(t, "eval", "--model", modelPath, "--data", "builtin:iris")
	if st != 0 || !strings.Contains(out, "\n  rows: the test rows of the split 0.7,0.15,0.15 recorded in the model") || !strings.Contains(out, "test error on 22 points (reference 105)") {
		t.Errorf("text output (status %d):\n%s", st, out)
	}

	// Explicit flags override.
	for _, tc := range []struct {
		args                []string
		mode, from          string
		seed, nRef, nTest   float64
		rowsHave, matchWant string
	}{
		{[]string{"--loo"}, "loo", "", 0, 0, 150, "all 150 rows of --data, leave-one-out (--loo)", ""},
		{[]string{"--split", "0.5,0.5"}, "split", "flags", 7, 75, 75, "(--split 0.5,0.5, the model's seed 7)", ""},
		{[]string{"--split", "0.5,0.5", "--seed", "2"}, "split", "flags", 2, 75, 75, "(--split 0.5,0.5, seed 2)", ""},
		{[]string{"--seed", "3"}, "split", "model", 3, 105, 22, "(seed 3 from --seed)", "train"},
		{[]string{"--ref", "builtin:iris"}, "ref", "", 0, 150, 150, "with --ref builtin:iris as the k-NN reference", ""},
	} {
		ev := runJSON(t, append([]string{"eval", "--model", modelPath, "--data", "builtin:iris"}, tc.args...)...)
		rows, _ := ev["rows"].(string)
		seed, _ := ev["seed"].(float64)
		nRef, _ := ev["n_ref"].(float64)
		match, _ := ev["data_match"].(string)
		if ev["mode"] != tc.mode || (ev["split_from"] != nil && ev["split_from"] != tc.from) || (ev["split_from"] == nil) != (tc.from == "") ||
			seed != tc.seed || nRef != tc.nRef || field(t, ev, "n_test") != tc.nTest || !strings.Contains(rows, tc.rowsHave) || match != tc.matchWant {
			t.Errorf("eval %v: %v", tc.args, ev)
		}
	}
	if st, _, errOut := runCLI(t, "eval", "--model", modelPath, "--data", "builtin:iris", "--loo", "--split", "0.5,0.5"); st == 0 || !strings.Contains(errOut, "--loo scores every row") {
		t.Errorf("--loo with --split: status %d, %s", st, errOut)
	}

	// Other data: one value changed is not the training data; every row is
	// scored leave-one-out and the output says why.
	changed := filepath.Join(dir, "changed.csv")
	x := mat.DenseCopyOf(iris.X)
	x.Set(0, 0, x.At(0, 0)+0.1)
	if err := writeCSV(&cmdEnv{}, changed, x, iris.Y, iris.Classes, true); err != nil {
		t.Fatal(err)
	}
	ev = runJSON(t, "eval", "--model", modelPath, "--data", changed)
	if rows, _ := ev["rows"].(string); ev["mode"] != "loo" || ev["data_match"] != "none" || field(t, ev, "n_test") != 150 || !strings.Contains(rows, "not the data the model was trained on (builtin:iris") {
		t.Errorf("eval on other data: %v", ev)
	}
	// The same numbers from a CSV file are the same data.
	same := filepath.Join(dir, "same.csv")
	if err := writeCSV(&cmdEnv{}, same, iris.X, iris.Y, iris.Classes, true); err != nil {
		t.Fatal(err)
	}
	if ev = runJSON(t, "eval", "--model", modelPath, "--data", same); ev["data_match"] != "train" || field(t, ev, "test_error") != wantTest {
		t.Errorf("eval on the training data as CSV: %v", ev)
	}

	// A version 1 file records nothing: leave-one-out, saying so.
	raw, err := os.ReadFile(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	m.Provenance = nil
	v1 := filepath.Join(dir, "v1.json")
	if err := m.SaveFile(v1); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(v1)
	// Version 1: no provenance and no factor (version 3).
	b = regexp.MustCompile(`\],\n    "l": \[\n(      \[[^\]]*\],?\n)*    \]\n`).ReplaceAll(b, []byte("]\n"))
	if err := os.WriteFile(v1, []byte(strings.Replace(string(b), fmt.Sprintf(`"version": %d,`, model.Version), `"version": 1,`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(v1); !strings.Contains(string(b), `"version": 1,`) || strings.Contains(string(b), `"l": [`) {
		t.Fatalf("not a version 1 file:\n%s", b)
	}
	ev = runJSON(t, "eval", "--model", v1, "--data", "builtin:iris")
	if rows, _ := ev["rows"].(string); ev["mode"] != "loo" || ev["data_match"] != "unknown" || !strings.Contains(rows, "records no training data") {
		t.Errorf("eval of a version 1 model: %v", ev)
	}
	if !strings.Contains(string(raw), `"provenance": {`) {
		t.Errorf("model file without provenance:\n%s", raw)
	}
}

// TestEvalRecordedRowsAndTestFile: a rows: split is recorded and reapplied
// as is; a model trained with --test records the test file, so eval on the
// training data scores the recorded validation rows (no test rows there),
// and eval on the test file recognises it.
func TestEvalRecordedRowsAndTestFile(t *testing.T) {
	dir := t.TempDir()
	rowsModel := filepath.Join(dir, "rows.json")
	runJSON(t, "train", "--algo", "identity-test", "--data", "builtin:iris", "--split", "rows:100,20,30", "--out", rowsModel, "--backend", "go")
	ev := runJSON(t, "eval", "--model", rowsModel, "--data", "builtin:iris")
	if rows, _ := ev["rows"].(string); ev["split"] != "rows:100,20,30" || field(t, ev, "n_ref") != 100 || field(t, ev, "n_test") != 30 || !strings.Contains(rows, "30 of the 150 rows") {
		t.Errorf("eval with a recorded rows: split: %v", ev)
	}

	iris, err := datasets.Open("iris")
	if err != nil {
		t.Fatal(err)
	}
	parts, err := data.Split(iris, []float64{0.8, 0.2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	trainCSV, testCSV := filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv")
	if err := writeCSV(&cmdEnv{}, trainCSV, parts[0].X, parts[0].Y, parts[0].Classes, true); err != nil {
		t.Fatal(err)
	}
	if err := writeCSV(&cmdEnv{}, testCSV, parts[1].X, parts[1].Y, parts[1].Classes, true); err != nil {
		t.Fatal(err)
	}
	testModel := filepath.Join(dir, "test.json")
	runJSON(t, "train", "--algo", "identity-test", "--data", trainCSV, "--test", testCSV, "--split", "0.75,0.25", "--out", testModel, "--backend", "go")
	m, err := model.LoadFile(testModel)
	if err != nil {
		t.Fatal(err)
	}
	if p := m.Provenance; p.Split != "0.75,0.25" || p.Data.Name != trainCSV || p.Data.Rows != 120 || p.Test == nil || p.Test.Name != testCSV || p.Test.Rows != 30 {
		t.Fatalf("provenance with --test: %+v %+v %+v", p, p.Data, p.Test)
	}
	ev = runJSON(t, "eval", "--model", testModel, "--data", trainCSV)
	if rows, _ := ev["rows"].(string); ev["mode"] != "split" || field(t, ev, "n_ref") != 90 || field(t, ev, "n_test") != 0 ||
		ev["test_error"] != nil || ev["val_error"] == nil || !strings.Contains(rows, "validation rows") || !strings.Contains(rows, "separate file, "+testCSV) {
		t.Errorf("eval on the training file of a model trained with --test: %v", ev)
	}
	st, out, _ := runCLI(t, "eval", "--model", testModel, "--data", trainCSV)
	if st != 0 || !strings.Contains(out, "validation error (reference 90)") {
		t.Errorf("text output (status %d):\n%s", st, out)
	}
	ev = runJSON(t, "eval", "--model", testModel, "--data", testCSV)
	if ev["mode"] != "loo" || ev["data_match"] != "test" || field(t, ev, "n_test") != 30 {
		t.Errorf("eval on the recorded test file: %v", ev)
	}
}
