package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/model"
)

// wineFiles writes wine's features as an unlabelled CSV (a header of
// feature names, no label column) and, from its labels, a triplet file of m
// triplets and a pair file of m pairs drawn by a seeded sampler: i and j of
// one class, k of another; pairs uniform, y = +1 within a class. The labels
// appear in no file the CLI reads.
func wineFiles(t *testing.T, m int) (csvPath, tripletPath, pairPath string) {
	t.Helper()
	d, err := data.Load("builtin:wine", data.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	n, dim := d.X.Dims()
	var b strings.Builder
	for c := 0; c < dim; c++ {
		if c > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "f%d", c)
	}
	b.WriteByte('\n')
	for i := 0; i < n; i++ {
		for c := 0; c < dim; c++ {
			if c > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatFloat(d.X.At(i, c), 'g', -1, 64))
		}
		b.WriteByte('\n')
	}
	csvPath = filepath.Join(dir, "wine.csv")
	if err := os.WriteFile(csvPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(23, 1))
	seen := map[constraints.Triplet]bool{}
	var ts []constraints.Triplet
	for len(ts) < m {
		i, j, k := rng.IntN(n), rng.IntN(n), rng.IntN(n)
		tr := constraints.Triplet{I: i, J: j, K: k}
		if i == j || d.Y[i] != d.Y[j] || d.Y[i] == d.Y[k] || seen[tr] {
			continue
		}
		seen[tr] = true
		ts = append(ts, tr)
	}
	pairSeen := map[[2]int]bool{}
	var ps []constraints.LabelledPair
	for len(ps) < m {
		a, c := rng.IntN(n), rng.IntN(n)
		if a == c || pairSeen[[2]int{min(a, c), max(a, c)}] {
			continue
		}
		pairSeen[[2]int{min(a, c), max(a, c)}] = true
		ps = append(ps, constraints.LabelledPair{A: a, B: c, Same: d.Y[a] == d.Y[c]})
	}
	write := func(name string, w func(*os.File) error) string {
		p := filepath.Join(dir, name)
		fh, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := w(fh); err != nil {
			t.Fatal(err)
		}
		if err := fh.Close(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tripletPath = write("triplets.csv", func(f *os.File) error { return constraints.WriteTriplets(f, ts) })
	pairPath = write("pairs.csv", func(f *os.File) error { return constraints.WritePairs(f, ps) })
	return csvPath, tripletPath, pairPath
}

// TestTrainTripletsWine: a metric
// learned from a triplet file alone (the data file has no labels) satisfies
// more of the held-out triplets than the Euclidean metric does.
func TestTrainTripletsWine(t *testing.T) {
	csvPath, tripletPath, _ := wineFiles(t, 1500)
	modelPath := filepath.Join(t.TempDir(), "m.json")
	for _, algo := range []string{"frobmetric", "boostmetric"} {
		t.Run(algo, func(t *testing.T) {
			args := []string{"train", "--algo", algo, "--data", csvPath, "--triplets", tripletPath, "--standardize", "--seed", "3"}
			if algo == "frobmetric" {
				args = append(args, "--C", "1,10", "--out", modelPath)
			}
			m := runJSON(t, args...)
			sat, euc := field(t, m, "triplet_satisfaction"), field(t, m, "triplet_satisfaction_euclidean")
			held := field(t, m, "heldout_triplets")
			t.Logf("%s: %v held-out triplets: satisfaction %.4f learned, %.4f Euclidean (%v training, %v validation triplets, C %v)",
				algo, held, sat, euc, m["triplets"], m["val_triplets"], m["chosen_c"])
			if held != 300 {
				t.Errorf("heldout_triplets = %v, want 20%% of 1500", held)
			}
			if n := field(t, m, "n_train"); n != 178 || field(t, m, "input_dim") != 13 {
				t.Errorf("n_train %v, input_dim %v: the data file was not read as 178 unlabelled rows of 13 features", n, m["input_dim"])
			}
			if !(sat > euc) {
				t.Errorf("learned metric satisfies %.4f of the held-out triplets, Euclidean %.4f", sat, euc)
			}
			if m["test_error"] != nil || m["constraint_kind"] != "triplets" {
				t.Errorf("test_error %v, constraint_kind %v", m["test_error"], m["constraint_kind"])
			}
			if algo == "frobmetric" {
				if c := m["candidates"].([]any); len(c) != 2 || field(t, m, "val_triplets") != 240 {
					t.Errorf("candidates %v, val_triplets %v: want two C chosen on 20%% of the 1200 non-held-out triplets", c, m["val_triplets"])
				}
			}
		})
	}
	// The model file describes the learned metric and the constraint file.
	mod, err := model.LoadFile(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	if mod.Metric.Dim() != 13 || mod.Info["triplets"] == nil || mod.Info["triplet_satisfaction"] == nil {
		t.Errorf("model: dim %d, info %v", mod.Metric.Dim(), mod.Info)
	}
}

// TestTrainPairsWine learns from a pair file: the pairs become triplets
// (similar (i,j) with dissimilar (i,k)) and the held-out pairs give the
// held-out triplets.
func TestTrainPairsWine(t *testing.T) {
	csvPath, _, pairPath := wineFiles(t, 1500)
	m := runJSON(t, "train", "--algo", "boostmetric", "--data", csvPath, "--pairs", pairPath, "--standardize", "--seed", "3")
	sat, euc := field(t, m, "triplet_satisfaction"), field(t, m, "triplet_satisfaction_euclidean")
	t.Logf("boostmetric --pairs: %v training, %v held-out triplets: satisfaction %.4f learned, %.4f Euclidean", m["triplets"], m["heldout_triplets"], sat, euc)
	if m["constraint_kind"] != "pairs" || field(t, m, "constraint_count") != 1500 {
		t.Errorf("constraint_kind %v, constraint_count %v", m["constraint_kind"], m["constraint_count"])
	}
	if !(sat > euc) {
		t.Errorf("learned metric satisfies %.4f of the held-out triplets, Euclidean %.4f", sat, euc)
	}
}

// TestTrainConstraintsOptions: --holdout 0 trains on every triplet and
// scores nothing; the labels of a labelled data set are ignored; the text
// output names the rates.
func TestTrainConstraintsOptions(t *testing.T) {
	dir := t.TempDir()
	trip := filepath.Join(dir, "t.csv")
	if err := os.WriteFile(trip, []byte("i,j,k\n0,1,2\n3,4,5\n6,7,8\n9,10,11\n12,13,14\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := runJSON(t, "train", "--algo", "identity-test", "--data", "builtin:iris", "--triplets", trip, "--holdout", "0")
	if field(t, m, "triplets") != 5 || field(t, m, "heldout_triplets") != 0 || m["triplet_satisfaction"] != nil {
		t.Errorf("--holdout 0: triplets %v, held out %v, satisfaction %v", m["triplets"], m["heldout_triplets"], m["triplet_satisfaction"])
	}
	m = runJSON(t, "train", "--algo", "identity-test", "--data", "builtin:iris", "--triplets", trip)
	if field(t, m, "triplets") != 4 || field(t, m, "heldout_triplets") != 1 {
		t.Errorf("default hold-out: triplets %v, held out %v", m["triplets"], m["heldout_triplets"])
	}
	// The identity metric is the Euclidean one: equal rates.
	if m["triplet_satisfaction"] != m["triplet_satisfaction_euclidean"] {
		t.Errorf("identity: %v vs Euclidean %v", m["triplet_satisfaction"], m["triplet_satisfaction_euclidean"])
	}
	st, out, errs := runCLI(t, "train", "--algo", "identity-test", "--data", "builtin:iris", "--triplets", trip)
	if st != 0 || !strings.Contains(out, "held-out triplets satisfied") {
		t.Errorf("text output: status %d\n%s%s", st, out, errs)
	}
	// Triplets on standard input, with the data in a file.
	st, out, errs = runIO([]string{"train", "--algo", "identity-test", "--data", "builtin:iris", "--triplets", "-", "--json"}, "i,j,k\n0,1,2\n3,4,5\n")
	if st != 0 || field(t, decodeJSON(t, out), "heldout_triplets") != 1 {
		t.Errorf("triplets on stdin: status %d\n%s%s", st, out, errs)
	}
}

// TestTrainConstraintRefusals: every bad constraint file or flag
// combination exits non-zero with one line on stderr naming the problem
// (and, for a bad file, the line).
func TestTrainConstraintRefusals(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.csv", "i,j,k\n0,1,2\n3,4,5\n6,7,8\n9,10,11\n12,13,14\n")
	goodPairs := write("goodp.csv", "i,j,y\n0,1,1\n0,2,-1\n")
	base := []string{"train", "--algo", "identity-test", "--data", "builtin:iris"}
	for _, c := range []struct {
		name   string
		args   []string
		status int
		want   string
	}{
		{"empty file", []string{"--triplets", write("e.csv", "")}, 1, "empty file"},
		{"header only", []string{"--triplets", write("h.csv", "i,j,k\n")}, 1, "line 1: no triplet after the header"},
		{"wrong header", []string{"--triplets", write("wh.csv", "a,b,c\n0,1,2\n")}, 1, "line 1: header"},
		{"pairs header for triplets", []string{"--triplets", goodPairs}, 1, "line 1: header"},
		{"column count", []string{"--triplets", write("cc.csv", "i,j,k\n0,1,2\n0,1\n")}, 1, "line 3: 2 fields, want 3"},
		{"non-integer", []string{"--triplets", write("ni.csv", "i,j,k\n0,1,2.5\n")}, 1, `line 2: column k: "2.5" is not an integer`},
		{"out of range", []string{"--triplets", write("or.csv", "i,j,k\n0,1,2\n0,150,2\n")}, 1, "line 3: column j: row 150 outside [0,150)"},
		{"negative", []string{"--triplets", write("neg.csv", "i,j,k\n-1,1,2\n")}, 1, "line 2: column i: row -1 outside [0,150)"},
		{"i==j", []string{"--triplets", write("ij.csv", "i,j,k\n4,4,2\n")}, 1, "line 2: triplet (4,4,2) repeats a point"},
		{"j==k", []string{"--triplets", write("jk.csv", "i,j,k\n4,2,2\n")}, 1, "line 2: triplet (4,2,2) repeats a point"},
		{"duplicate", []string{"--triplets", write("dup.csv", "i,j,k\n0,1,2\n0,1,2\n")}, 1, "line 3: triplet (0,1,2) repeats line 2"},
		{"reverse", []string{"--triplets", write("rev.csv", "i,j,k\n0,1,2\n5,6,7\n0,2,1\n")}, 1, "line 4: triplet (0,2,1) contradicts line 2"},
		{"long line", []string{"--triplets", write("long.csv", "i,j,k\n"+strings.Repeat("1", 300)+",1,2\n")}, 1, "line 2: longer than 256 bytes"},
		{"binary", []string{"--triplets", write("bin.csv", "\x00\x01\x02")}, 1, "line 1: a NUL byte at byte 0: this is binary data, not text"},
		{"missing file", []string{"--triplets", filepath.Join(dir, "none.csv")}, 1, "none.csv"},
		{"pairs y", []string{"--pairs", write("py.csv", "i,j,y\n0,1,1\n0,2,0\n")}, 1, `line 3: column y: "0" is not +1`},
		{"pairs self", []string{"--pairs", write("ps.csv", "i,j,y\n7,7,1\n")}, 1, "line 2: pair (7,7) links a point to itself"},
		{"pairs duplicate", []string{"--pairs", write("pd.csv", "i,j,y\n0,1,1\n1,0,1\n")}, 1, "line 3: pair (1,0) repeats line 2"},
		{"pairs contradiction", []string{"--pairs", write("pc.csv", "i,j,y\n0,1,1\n1,0,-1\n")}, 1, "line 3: pair (1,0) is dissimilar here and similar on line 2"},
		{"pairs without triplets", []string{"--pairs", write("pn.csv", "i,j,y\n0,1,1\n2,3,-1\n")}, 1, "give no triplet"},
		{"pairs empty", []string{"--pairs", write("pe.csv", "")}, 1, "empty file"},
		{"both files", []string{"--triplets", good, "--pairs", goodPairs}, 2, "not both"},
		{"holdout 1", []string{"--triplets", good, "--holdout", "1"}, 2, "--holdout 1"},
		{"holdout without file", []string{"--holdout", "0.3"}, 2, "--holdout does not apply"},
		{"split with triplets", []string{"--triplets", good, "--split", "0.5,0.5"}, 2, "--split does not apply"},
		{"test with triplets", []string{"--triplets", good, "--test", "builtin:iris"}, 2, "--test does not apply"},
		{"k with triplets", []string{"--triplets", good, "--k", "5"}, 2, "--k does not apply"},
		{"no-labels without file", []string{"--no-labels"}, 2, "--no-labels does not apply"},
		{"too few held out", []string{"--triplets", write("one.csv", "i,j,k\n0,1,2\n")}, 1, "no training triplet"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, out, errs := runCLI(t, append(append([]string(nil), base...), c.args...)...)
			if st != c.status {
				t.Fatalf("status %d, want %d\nstdout %s\nstderr %s", st, c.status, out, errs)
			}
			if !strings.Contains(errs, c.want) {
				t.Fatalf("stderr %q, want it to contain %q", errs, c.want)
			}
			if lines := strings.Count(strings.TrimRight(errs, "\n"), "\n"); lines != 0 {
				t.Fatalf("stderr has %d lines: %q", lines+1, errs)
			}
		})
	}
	// Several C need a validation part; passes regenerate from labels.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "--algo", "frobmetric", "--data", "builtin:iris", "--triplets", good, "--C", "1,10", "--holdout", "0"}, "choosing among 2 values of C needs held-out constraints"},
		{[]string{"train", "--algo", "boostmetric", "--data", "builtin:iris", "--triplets", good, "--passes", "2"}, "--passes 2"},
	} {
		st, _, errs := runCLI(t, c.args...)
		if st == 0 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimRight(errs, "\n"), "\n") != 0 {
			t.Errorf("%v: status %d, stderr %q, want %q", c.args, st, errs, c.want)
		}
	}
}

// TestClusterPairsWine: cluster --pairs learns the SimpleNPKL kernel from a
// pair file on unlabelled data and its clustering respects more held-out
// pairs than plain k-means does.
func TestClusterPairsWine(t *testing.T) {
	csvPath, _, pairPath := wineFiles(t, 400)
	m := runJSON(t, "cluster", "--data", csvPath, "--pairs", pairPath, "--clusters", "3", "--standardize", "--seed", "2")
	sat, km := field(t, m, "pair_satisfaction"), field(t, m, "kmeans_pair_satisfaction")
	t.Logf("cluster --pairs: %v held-out pairs respected %.4f (k-means %.4f); pairs learned from %.4f", m["heldout_pairs"], sat, km, field(t, m, "pair_satisfaction_train"))
	if field(t, m, "constraints") != 400 || field(t, m, "constraints_used") != 320 || field(t, m, "heldout_pairs") != 80 || field(t, m, "n_train") != 178 {
		t.Errorf("counts: %v", m)
	}
	if !(sat >= km) {
		t.Errorf("held-out pairs respected: %.4f learned, %.4f k-means", sat, km)
	}
	// Refusals: no --clusters on unlabelled data, sampling flags, a C list,
	// a bad file (with its line).
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"cluster", "--data", csvPath, "--pairs", pairPath}, "needs --clusters"},
		{[]string{"cluster", "--data", csvPath, "--pairs", pairPath, "--clusters", "3", "--runs", "2"}, "--runs does not apply"},
		{[]string{"cluster", "--data", csvPath, "--pairs", pairPath, "--clusters", "3", "--ratio", "0.5"}, "--ratio does not apply"},
		{[]string{"cluster", "--data", csvPath, "--pairs", pairPath, "--clusters", "3", "--C", "1,2"}, "give one --C"},
		{[]string{"cluster", "--data", "builtin:iris", "--pairs", "-"}, "line 2: column y"},
	} {
		st, _, errs := runIO(c.args, "i,j,y\n0,1,3\n")
		if st == 0 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimRight(errs, "\n"), "\n") != 0 {
			t.Errorf("%v: status %d, stderr %q, want %q", c.args, st, errs, c.want)
		}
	}
}
