package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	npyio "codeberg.org/sbinet/npyio/npy"
	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/internal/npy"
	"github.com/psdlearn/psdlearn/model"
	"gonum.org/v1/gonum/mat"
)

// mustRun runs a command line, fails the test on a non-zero status and
// returns its single JSON object (the command line must have --json).
func mustRun(t *testing.T, args ...string) map[string]any {
	t.Helper()
	st, out, errs := runIO(args, "")
	if st != 0 {
		t.Fatalf("psdlearn %s: status %d: %s %s", strings.Join(args, " "), st, out, errs)
	}
	return decodeJSON(t, out)
}

// sameBits fails unless a and b have the same shape and bit-identical
// entries.
func sameBits(t *testing.T, what string, a, b mat.Matrix) {
	t.Helper()
	ar, ac := a.Dims()
	if br, bc := b.Dims(); ar != br || ac != bc {
		t.Fatalf("%s: %d×%d, want %d×%d", what, ar, ac, br, bc)
	}
	for i := 0; i < ar; i++ {
		for j := 0; j < ac; j++ {
			if math.Float64bits(a.At(i, j)) != math.Float64bits(b.At(i, j)) {
				t.Fatalf("%s[%d,%d] = %v, want %v", what, i, j, a.At(i, j), b.At(i, j))
			}
		}
	}
}

// TestClusterOutReloads: a kernel
// saved by cluster --out reloads in eval and gives the same clustering
// accuracy, for the linear and squared-hinge losses and a selection, with
// non-default restarts (which eval takes from the model).
func TestClusterOutReloads(t *testing.T) {
	dir := t.TempDir()
	for i, extra := range [][]string{
		{"--loss", "linear", "--save-run", "2"},
		{"--loss", "sqhinge", "--iters", "3", "--select", "active", "--save-run", "3", "--restarts", "4"},
		{"--loss", "linear", "--C", "0.25,1"}, // the first run, C chosen per run
	} {
		path := filepath.Join(dir, "k"+string(rune('0'+i))+".json")
		args := append([]string{"cluster", "--data", "builtin:iris", "--runs", "3", "--seed", "5", "--backend", "go", "--quiet", "--json", "--out", path}, extra...)
		sum := mustRun(t, args...)
		saved := int(field(t, sum, "saved_run"))
		accs := sum["cluster_accuracies"].([]any)
		want := accs[saved-1].(float64)
		if got := field(t, sum, "saved_accuracy"); got != want {
			t.Errorf("%v: saved_accuracy %v, run %d scored %v", extra, got, saved, want)
		}
		m, err := model.LoadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if m.Kind != model.KindKernel || m.Algo != "simplenpkl" || m.Kernel.N() != 150 || m.Certificate == nil || m.Provenance == nil {
			t.Fatalf("%v: model %+v", extra, m)
		}
		if p := m.Provenance; p.Data == nil || p.Data.Name != "builtin:iris" || p.Data.Rows != 150 || p.Data.SHA256 == "" || p.Seed != psdlearn.ClusterRunSeed(5, saved) {
			t.Errorf("%v: provenance %+v data %+v", extra, p, p.Data)
		}
		if r := m.Info["run"].(float64); int(r) != saved {
			t.Errorf("%v: info.run %v, want %d", extra, r, saved)
		}
		ev := mustRun(t, "eval", "--model", path, "--data", "builtin:iris", "--backend", "go", "--json")
		if got := field(t, ev, "cluster_accuracy"); got != want {
			t.Errorf("%v: eval of the saved kernel: accuracy %v, cluster reported %v for run %d", extra, got, want, saved)
		}
		if ev["mode"] != "cluster" || field(t, ev, "n_test") != 150 {
			t.Errorf("%v: eval %v", extra, ev)
		}
	}
}

// TestKernelOut: kernel --out saves MEG and DefiniteBoost kernels on the
// sampled objects; eval and transform pick those rows out of the full data
// set; an .npy --out holds the learned matrix itself.
func TestKernelOut(t *testing.T) {
	dir := t.TempDir()
	megPath := filepath.Join(dir, "meg.json")
	sum := mustRun(t, "kernel", "--algo", "meg", "--steps", "300", "--objects", "20", "--checkpoints", "0", "--backend", "go", "--quiet", "--json", "--out", megPath)
	if sum["out"] != megPath {
		t.Errorf("summary out %v", sum["out"])
	}
	m, err := model.LoadFile(megPath)
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind != model.KindKernel || m.Algo != "meg" || m.Kernel.N() != 20 || m.Kernel.Rank() != 20 || len(kernelObjectRows(m)) != 20 {
		t.Fatalf("meg model: kind %s algo %s n %d rank %d rows %v", m.Kind, m.Algo, m.Kernel.N(), m.Kernel.Rank(), m.Info["object_rows"])
	}
	if m.Info["nn_error"].(float64) != field(t, sum, "nn_error") {
		t.Errorf("re-learned kernel 1-NN error %v, reported %v", m.Info["nn_error"], sum["nn_error"])
	}
	if !sort.Float64sAreSorted(reversed(m.Kernel.Lambda)) {
		t.Errorf("eigenvalues not descending: %v", m.Kernel.Lambda)
	}
	ev := mustRun(t, "eval", "--model", megPath, "--data", "builtin:wine", "--json")
	if field(t, ev, "n_test") != 20 || !strings.Contains(ev["rows"].(string), "objects") {
		t.Errorf("eval of the meg kernel on wine: %v", ev)
	}
	fPath := filepath.Join(dir, "f.npy")
	mustRun(t, "transform", "--model", megPath, "--data", "builtin:wine", "--out", fPath, "--json")
	f, err := npy.ReadFile(fPath)
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "transform of the meg kernel", f, m.Kernel.Factor())

	// DefiniteBoost, the second run (exact projection), as the matrix itself
	// and as a model: both hold the same kernel.
	npyPath, jsonPath := filepath.Join(dir, "db.npy"), filepath.Join(dir, "db.json")
	base := []string{"kernel", "--algo", "definiteboost", "--objects", "30", "--projection", "both", "--save-run", "2", "--backend", "go", "--quiet", "--json"}
	sum = mustRun(t, append(base, "--out", npyPath)...)
	if field(t, sum, "saved_run") != 2 {
		t.Errorf("saved_run %v", sum["saved_run"])
	}
	mustRun(t, append(base, "--out", jsonPath)...)
	w, err := npy.ReadFile(npyPath)
	if err != nil {
		t.Fatal(err)
	}
	dm, err := model.LoadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if dm.Info["projection"] != "exact" || dm.Certificate == nil || !dm.Certificate.Converged {
		t.Errorf("definiteboost model info %v certificate %+v", dm.Info, dm.Certificate)
	}
	g := kernelGram(dm.Kernel)
	if r, c := w.Dims(); r != 30 || c != 30 {
		t.Fatalf("db.npy is %d×%d", r, c)
	}
	for i := 0; i < 30; i++ {
		for j := 0; j < 30; j++ {
			if w.At(i, j) != w.At(j, i) || math.Abs(w.At(i, j)-g.At(i, j)) > 1e-12 {
				t.Fatalf("W[%d,%d] = %v (W[%d,%d] = %v), model kernel %v", i, j, w.At(i, j), j, i, w.At(j, i), g.At(i, j))
			}
		}
	}
}

func reversed(x []float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[len(x)-1-i] = v
	}
	return out
}

// TestTransformNPY: transform writes the same numbers to .npy as it
// computes (bitwise, read back with npyio), for a metric and a kernel
// model, and --matrix exports M, L, K and F.
func TestTransformNPY(t *testing.T) {
	dir := t.TempDir()
	metricPath := filepath.Join(dir, "metric.json")
	mustRun(t, "train", "--algo", "frobmetric", "--C", "1", "--data", "builtin:iris", "--quiet", "--json", "--out", metricPath)
	mm, err := model.LoadFile(metricPath)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := datasets.Open("iris")
	if err != nil {
		t.Fatal(err)
	}
	zPath := filepath.Join(dir, "z.npy")
	sum := mustRun(t, "transform", "--model", metricPath, "--data", "builtin:iris", "--out", zPath, "--json")
	if sum["format"] != "npy" {
		t.Errorf("format %v", sum["format"])
	}
	z, err := npy.ReadFile(zPath)
	if err != nil {
		t.Fatal(err)
	}
	want, err := mm.Transform(ds.X)
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "transform --out z.npy", z, want)
	for name, want := range map[string]mat.Matrix{"M": mm.Metric.M, "L": mm.Metric.L} {
		p := filepath.Join(dir, name+".npy")
		sum := mustRun(t, "transform", "--model", metricPath, "--matrix", name, "--out", p, "--json")
		if sum["matrix"] != name {
			t.Errorf("summary %v", sum)
		}
		got, err := npy.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sameBits(t, "--matrix "+name, got, want)
	}

	kernelPath := filepath.Join(dir, "k.json")
	mustRun(t, "cluster", "--data", "builtin:iris", "--runs", "1", "--backend", "go", "--quiet", "--json", "--out", kernelPath)
	km, err := model.LoadFile(kernelPath)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]mat.Matrix{"K": kernelGram(km.Kernel), "F": km.Kernel.Factor()} {
		p := filepath.Join(dir, name+".npy")
		mustRun(t, "transform", "--model", kernelPath, "--matrix", name, "--out", p, "--json")
		got, err := npy.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sameBits(t, "--matrix "+name, got, want)
	}
	// cluster --out K.npy writes the same kernel matrix as the model's K.
	kPath := filepath.Join(dir, "cluster.npy")
	mustRun(t, "cluster", "--data", "builtin:iris", "--runs", "1", "--backend", "go", "--quiet", "--json", "--out", kPath)
	got, err := npy.ReadFile(kPath)
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "cluster --out K.npy", got, kernelGram(km.Kernel))
}

// TestSaveErrors: the mistakes around the new output flags are usage
// errors, and a kernel on other data says it is transductive.
func TestSaveErrors(t *testing.T) {
	dir := t.TempDir()
	kernelPath := filepath.Join(dir, "k.json")
	mustRun(t, "cluster", "--data", "builtin:iris", "--runs", "1", "--backend", "go", "--quiet", "--json", "--out", kernelPath)
	metricPath := filepath.Join(dir, "m.json")
	mustRun(t, "train", "--algo", "frobmetric", "--C", "1", "--data", "builtin:iris", "--quiet", "--json", "--out", metricPath)
	for _, tc := range []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"cluster", "--data", "builtin:iris", "--save-run", "2"}, 2, "give --out"},
		{[]string{"cluster", "--data", "builtin:iris", "--runs", "2", "--save-run", "3", "--out", "x.json"}, 2, "--save-run 3"},
		{[]string{"kernel", "--algo", "meg", "--save-run", "2", "--out", "x.json"}, 2, "does not apply"},
		{[]string{"kernel", "--algo", "definiteboost", "--projection", "exact", "--save-run", "2", "--out", "x.json"}, 2, "makes 1 run"},
		{[]string{"transform", "--model", kernelPath, "--matrix", "M", "--out", "x.npy"}, 2, "K or F"},
		{[]string{"transform", "--model", metricPath, "--matrix", "K", "--out", "x.npy"}, 2, "M or L"},
		{[]string{"transform", "--model", metricPath, "--matrix", "M", "--out", "x.csv"}, 2, "FILE.npy"},
		{[]string{"transform", "--model", metricPath, "--matrix", "M", "--data", "builtin:iris", "--out", "x.npy"}, 2, "without --data"},
		{[]string{"transform", "--model", kernelPath, "--data", "builtin:wine", "--out", filepath.Join(dir, "z.csv")}, 1, "out-of-sample"},
		{[]string{"eval", "--model", kernelPath, "--data", "builtin:wine"}, 1, "transductive"},
	} {
		st, _, errs := runIO(tc.args, "")
		if st != tc.status || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: status %d, stderr %q; want status %d and %q", tc.args, st, errs, tc.status, tc.want)
		}
	}
}

// TestEmbedModel: embed --model saves the learned Gram matrix as a kernel
// model whose eigenvalues are the embedding's and whose transform starts
// with the embedding's coordinates (up to the sign of each column).
func TestEmbedModel(t *testing.T) {
	dir := t.TempDir()
	modelPath, coordsPath := filepath.Join(dir, "e.json"), filepath.Join(dir, "e.npy")
	sum := mustRun(t, "embed", "--data", "swissroll:80:3", "--iters", "200", "--dims", "2", "--quiet", "--json", "--out", coordsPath, "--model", modelPath)
	m, err := model.LoadFile(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind != model.KindKernel || m.Algo != "mvu" || m.Kernel.N() != 80 || m.Kernel.Rank() != int(field(t, sum, "gram_rank")) || m.Provenance == nil || m.Certificate == nil {
		t.Fatalf("embed model: %+v", m)
	}
	eig := sum["eigenvalues"].([]any)
	for i, e := range eig[:min(len(eig), m.Kernel.Rank())] {
		if l := m.Kernel.Lambda[i]; math.Abs(l-e.(float64)) > 1e-6*math.Abs(e.(float64)) {
			t.Errorf("eigenvalue %d: model %v, embed %v", i, l, e)
		}
	}
	y, err := npy.ReadFile(coordsPath)
	if err != nil {
		t.Fatal(err)
	}
	f := m.Kernel.Factor()
	for j := 0; j < 2; j++ {
		sign := 1.0
		if f.At(0, j)*y.At(0, j) < 0 {
			sign = -1
		}
		for i := 0; i < 80; i++ {
			if d := math.Abs(sign*f.At(i, j) - y.At(i, j)); d > 1e-6*(1+math.Sqrt(m.Kernel.Lambda[0])) {
				t.Fatalf("coordinate (%d,%d): model factor %v, embed %v", i, j, f.At(i, j), y.At(i, j))
			}
		}
	}
}

// TestNPYInput: the data spec npy:X.npy:LABELS.npy reads what NumPy would
// write, and cluster gives the same result as on the same data from CSV
// or builtin:.
func TestNPYInput(t *testing.T) {
	ds, err := datasets.Open("iris")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	xPath, yPath := filepath.Join(dir, "x.npy"), filepath.Join(dir, "y.npy")
	if err := npy.WriteFile(xPath, ds.X); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	labels := make([]int64, len(ds.Y))
	for i, y := range ds.Y {
		labels[i] = int64(y)
	}
	if err := npyio.Write(&buf, labels); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(yPath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"cluster", "--runs", "2", "--backend", "go", "--quiet", "--json", "--data"}
	a := mustRun(t, append(args, "builtin:iris")...)
	b := mustRun(t, append(args, "npy:"+xPath+":"+yPath)...)
	if fmt.Sprint(a["cluster_accuracies"]) != fmt.Sprint(b["cluster_accuracies"]) {
		t.Errorf("cluster on builtin:iris %v, on npy %v", a["cluster_accuracies"], b["cluster_accuracies"])
	}
	if st, _, errs := runIO([]string{"cluster", "--data", "npy:" + filepath.Join(dir, "missing.npy")}, ""); st != 1 || !strings.Contains(errs, "missing.npy") {
		t.Errorf("missing file: status %d, %s", st, errs)
	}
}
