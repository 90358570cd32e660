package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"gonum.org/v1/gonum/mat"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/progress"
)

// TestHostileReproducers runs the reproducers of hostile input in-process
// (the generator, TestAdversarial, runs the classes on the built binaries):
// each is a one-line error of the right status or a warning, never a
// crash, a silent answer or an error found after the run.
func TestHostileReproducers(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	iris := filepath.Join(dir, "iris.json")
	if st, _, errs := runCLI(t, "train", "--algo", "frobmetric", "--data", "builtin:iris", "--quiet", "--out", iris); st != 0 {
		t.Fatalf("training: %s", errs)
	}
	rows := "a,b,y\n1,2,x\n3,4,y\n5,6,x\n7,8,y\n"
	for _, tc := range []struct {
		name   string
		args   []string
		status int
		want   string
	}{
		{"/dev/zero as CSV", []string{"train", "--algo", "frobmetric", "--data", "csv:/dev/zero"}, 1, "a NUL byte at byte 0: this is binary data"},
		{"/dev/zero as LIBSVM", []string{"train", "--algo", "frobmetric", "--data", "libsvm:/dev/zero"}, 1, "binary data"},
		{"/dev/zero pairs", []string{"predict", "--model", iris, "--data", "builtin:iris", "--pairs", "/dev/zero", "--threshold", "1"}, 1, "binary data"},
		{"/dev/zero target", []string{"kernel", "--algo", "meg", "--target", "/dev/zero"}, 1, "binary data"},
		{"NaN label", []string{"train", "--algo", "frobmetric", "--data", write("nan.csv", rows+"9,9,NaN\n")}, 1, `"NaN" marks a missing value (the label column is the last column: choose it with --label-col`},
		{"long label", []string{"train", "--algo", "frobmetric", "--data", write("long.csv", rows+"9,9,"+strings.Repeat("L", 10<<20)+"\n")}, 1, "a label of 10485760 bytes"},
		{"CR line endings", []string{"train", "--algo", "frobmetric", "--data", write("cr.csv", strings.ReplaceAll(rows, "\n", "\r"))}, 1, "carriage return"},
		{"C subnormal", []string{"train", "--algo", "frobmetric", "--data", "builtin:iris", "--C", "1e-320"}, 2, "subnormal"},
		{"C at the tolerance", []string{"train", "--algo", "frobmetric", "--data", "builtin:iris", "--C", "1e-10"}, 2, "not above the duality-gap tolerance"},
		{"C negative", []string{"train", "--algo", "frobmetric", "--data", "builtin:iris", "--C", "-1"}, 2, "C = -1"},
		{"psdboost C", []string{"train", "--algo", "psdboost", "--data", "builtin:iris", "--C", "0.5"}, 2, "want C ≥ 1"},
		{"nu", []string{"train", "--algo", "boostmetric", "--data", "builtin:iris", "--nu", "-1"}, 2, "Nu = -1"},
		{"gamma", []string{"kernel", "--algo", "meg", "--gamma", "-1"}, 2, "RBF gamma -1"},
		{"split abc", []string{"train", "--algo", "frobmetric", "--data", "builtin:iris", "--split", "abc"}, 2, `fraction "abc"`},
		{"split beyond the rows", []string{"train", "--algo", "frobmetric", "--data", "builtin:wine", "--split", "rows:100,38,400"}, 2, "538 rows requested"},
		{"iters overflowing", []string{"train", "--algo", "frobmetric", "--data", "builtin:iris", "--iters", "9223372036854775807"}, 2, "--iters 9223372036854775807: beyond the largest value"},
		{"out not writable", []string{"train", "--algo", "frobmetric", "--data", "builtin:iris", "--out", "/nonexistent/x.json"}, 1, `"/nonexistent" does not exist (nothing was run)`},
		{"no --algo", []string{"train", "--data", "builtin:wine"}, 2, "train: --algo is required"},
	} {
		st, _, errs := runCLI(t, tc.args...)
		line := strings.TrimRight(errs, "\n")
		if i := strings.LastIndexByte(line, '\n'); i >= 0 {
			line = line[i+1:]
		}
		if st != tc.status || !strings.Contains(line, tc.want) || len(line) > maxErrorLine || !strings.HasPrefix(line, "psdlearn: ") {
			t.Errorf("%s: status %d (want %d), last stderr line %q, want %q", tc.name, st, tc.status, line, tc.want)
		}
	}
}

// TestWarningsPath checks the one warning path: stderr, the "warnings"
// array of the JSON output (added after "schema" when the summary has no
// such field), and the certificate of a written model.
func TestWarningsPath(t *testing.T) {
	dir := t.TempDir()
	// A model whose metric is zero.
	met, err := model.NewMetric(mat.NewSymDense(4, nil))
	if err != nil {
		t.Fatal(err)
	}
	m := &model.Model{Kind: model.KindMetric, Metric: met, Classes: []string{"0", "1", "2"}}
	zero := filepath.Join(dir, "zero.json")
	if err := m.SaveFile(zero); err != nil {
		t.Fatal(err)
	}
	st, out, errs := runCLI(t, "transform", "--model", zero, "--data", "builtin:iris", "--out", filepath.Join(dir, "t.csv"), "--json")
	var obj map[string]any
	if st != 0 || json.Unmarshal([]byte(out), &obj) != nil {
		t.Fatalf("transform: status %d, %s %s", st, out, errs)
	}
	w, _ := obj["warnings"].([]any)
	if !strings.HasPrefix(out, `{"schema":"psdlearn/transform/v1","warnings":[`) || len(w) != 1 || !strings.Contains(w[0].(string), "is zero (rank 0)") ||
		!strings.Contains(errs, "psdlearn: warning: the metric M (4×4) is zero") {
		t.Errorf("zero metric: stdout %s, stderr %s", out, errs)
	}
	// Resubstitution, on stderr and in predict's JSON.
	iris := filepath.Join(dir, "iris.json")
	if st, _, errs := runCLI(t, "train", "--algo", "frobmetric", "--data", "builtin:iris", "--quiet", "--out", iris); st != 0 {
		t.Fatalf("training: %s", errs)
	}
	st, out, errs = runCLI(t, "predict", "--model", iris, "--data", "builtin:iris", "--ref", "builtin:iris", "--out", filepath.Join(dir, "p.csv"), "--json")
	if st != 0 || !strings.Contains(out, "150 of the 150 evaluated rows are also rows of the k-NN reference") || !strings.Contains(errs, "resubstitution") {
		t.Errorf("predict --ref = --data: status %d, %s %s", st, out, errs)
	}
	// A split that leaves a class out of training: train's own warnings,
	// and the model's certificate.
	wine := filepath.Join(dir, "wine.json")
	st, out, errs = runCLI(t, "train", "--algo", "frobmetric", "--data", "builtin:wine", "--split", "rows:100,38,40", "--quiet", "--json", "--out", wine)
	if st != 0 || !strings.Contains(errs, "test rows have classes the training rows never have (class 2)") {
		t.Fatalf("rows split of sorted wine: status %d, %s", st, errs)
	}
	saved, err := model.LoadFile(wine)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fmt.Sprint(saved.Certificate.Warnings), "never have") || !strings.Contains(out, "never have") {
		t.Errorf("the warning is not in the certificate (%v) or the JSON (%s)", saved.Certificate.Warnings, out)
	}
}

// TestErrorLine checks the one-line rule: control characters become
// spaces, a long message is cut at a rune boundary and marked.
func TestErrorLine(t *testing.T) {
	if got := errorLine("a\nb\x00c", 100); got != "a b c" {
		t.Errorf("errorLine = %q", got)
	}
	long := strings.Repeat("é", 400)
	got := errorLine(long, 290)
	if len(got) > 290 || !utf8.ValidString(got) || !strings.HasSuffix(got, "…[cut: 800 bytes]") {
		t.Errorf("errorLine of 800 bytes: %d bytes %q", len(got), got)
	}
	// Through the command: a JSON error starts with "schema".
	st, out, _ := runCLI(t, "train", "--algo", "frobmetric", "--data", "builtin:iris", "--C", "-1", "--json")
	if st != 2 || !strings.HasPrefix(out, `{"schema":"psdlearn/error/v1","error":`) {
		t.Errorf("JSON error: status %d, %s", st, out)
	}
}

// TestCheckWritable checks the output-path check of every command line.
func TestCheckWritable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		dir  bool
		want string // "" : writable
	}{
		{filepath.Join(dir, "new.json"), false, ""},
		{file, false, ""},
		{filepath.Join(dir, "a", "b", "plots"), true, ""},
		{dir, true, ""},
		{dir, false, "is a directory"},
		{file, true, "not a directory"},
		{filepath.Join(dir, "missing", "x.json"), false, "does not exist"},
		{filepath.Join(file, "x.json"), false, "not a directory"},
	} {
		err := checkWritable(tc.path, tc.dir)
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("checkWritable(%s, %v) = %v, want %q", tc.path, tc.dir, err, tc.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the check left files behind: %v", entries)
	}
}

// TestProgressTruth checks that progress lines are truthful: a cap shows its
// share and the rate but no time left, a line never shows NaN or Inf, and
// a run that printed lines ends with one marked done.
func TestProgressTruth(t *testing.T) {
	var now time.Time
	oldNow := progressNow
	progressNow = func() time.Time { return now }
	defer func() { progressNow = oldNow }()
	t0 := time.Unix(2_000_000, 0)
	var errb bytes.Buffer
	now = t0
	p := newProgress(&cmdEnv{stderr: &errb}).withCap(200)
	for ms, it := 100, 1; ms <= 2500; ms, it = ms+100, it+1 {
		now = t0.Add(time.Duration(ms) * time.Millisecond)
		p.event(progress.Event{Iteration: it, Objective: math.NaN(), Gap: math.NaN(), Message: fmt.Sprintf("eval %d dual 1.5 primal +Inf rel.gap NaN", it)})
	}
	now = t0.Add(2600 * time.Millisecond) // within a second of the last line: not printed
	p.event(progress.Event{Objective: math.NaN(), Gap: math.NaN(), Message: "stopped: converged"})
	p.finish()
	lines := strings.Split(strings.TrimRight(errb.String(), "\n"), "\n")
	if len(lines) < 2 {
		t.Fatalf("lines %q", lines)
	}
	for _, l := range lines[:len(lines)-1] {
		if !strings.Contains(l, "of at most 200 (") || strings.Contains(l, "ETA") || strings.Contains(l, "NaN") || strings.Contains(l, "Inf") || !strings.Contains(l, "primal n/a rel.gap n/a") {
			t.Errorf("capped line %q", l)
		}
	}
	if last := lines[len(lines)-1]; last != "psdlearn [2.6s] done: stopped: converged" {
		t.Errorf("last line %q", last)
	}
	// A run that printed nothing prints no done line.
	errb.Reset()
	now = t0
	q := newProgress(&cmdEnv{stderr: &errb})
	q.event(progress.Event{Message: "early"})
	q.finish()
	if errb.Len() != 0 {
		t.Errorf("a quiet start printed %q", errb.String())
	}
}
