package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/algos/meg"
	"github.com/psdlearn/psdlearn/internal/npy"
	"github.com/psdlearn/psdlearn/model"
	"gonum.org/v1/gonum/mat"
)

// wineTarget builds, as `kernel` does from --data builtin:wine, the target
// of `objects` objects and returns it with the raw RBF kernel (K_ii = 1,
// before the trace normalisation).
func wineTarget(t *testing.T, objects int) (*meg.Target, *mat.SymDense) {
	t.Helper()
	ds, err := loadData("builtin:wine", "")
	if err != nil {
		t.Fatal(err)
	}
	tg, err := meg.NewTarget(ds.X, ds.Y, meg.TargetOptions{Objects: objects, Standardize: true, GammaScale: 1, Splits: 10, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	k, err := meg.RBFKernel(tg.X, tg.Gamma)
	if err != nil {
		t.Fatal(err)
	}
	return tg, k
}

func writeTestFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// matrixCSV writes k as CSV without header, exactly (shortest round-trip
// formatting).
func matrixCSV(k mat.Matrix) string {
	r, c := k.Dims()
	var b strings.Builder
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatFloat(k.At(i, j), 'g', -1, 64))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func labelsText(y []int) string {
	var b strings.Builder
	for _, v := range y {
		fmt.Fprintf(&b, "%d\n", v)
	}
	return b.String()
}

// TestKernelTargetFile: the RBF target of wine written to .npy or CSV and
// given with --target and --labels gives the same MEG and DefiniteBoost
// results as `kernel --data builtin:wine` building it.
func TestKernelTargetFile(t *testing.T) {
	dir := t.TempDir()
	tg, k := wineTarget(t, 12)
	npyPath := filepath.Join(dir, "k.npy")
	if err := npy.WriteFile(npyPath, k); err != nil {
		t.Fatal(err)
	}
	csvPath := writeTestFile(t, dir, "k.csv", matrixCSV(k))
	labels := writeTestFile(t, dir, "y.txt", labelsText(tg.Y))
	megArgs := []string{"--algo", "meg", "--steps", "1500", "--checkpoints", "0"}
	boostArgs := []string{"--algo", "definiteboost", "--projection", "approx"}
	megKeys := []string{"total_loss", "eta", "r", "comparator_loss", "divergence_initial", "divergence_final", "nn_error", "nn_error_loo", "target_nn_error", "target_nn_error_loo"}
	boostKeys := []string{"constraints", "epsilon", "iterations", "objective", "nn_error", "target_nn_error"}
	for _, c := range []struct {
		name string
		base []string
		keys []string
	}{
		{"meg", megArgs, megKeys},
		{"definiteboost", boostArgs, boostKeys},
	} {
		want := runKernelJSON(t, append(c.base, "--objects", "12")...)
		for _, file := range []string{npyPath, csvPath} {
			t.Run(c.name+"/"+filepath.Ext(file), func(t *testing.T) {
				got := runKernelJSON(t, append(c.base, "--target", file, "--labels", labels)...)
				for _, key := range c.keys {
					if g, w := num(t, got, key), num(t, want, key); g != w {
						t.Errorf("%s: --target %g, --data %g", key, g, w)
					}
				}
				if got["target"] != file || num(t, got, "target_trace") != 12 || got["nn_evaluation_skipped"] != nil {
					t.Errorf("target %v, trace %v, skipped %v", got["target"], got["target_trace"], got["nn_evaluation_skipped"])
				}
			})
		}
	}
	t.Run("no labels", func(t *testing.T) {
		got := runKernelJSON(t, append(megArgs, "--target", npyPath)...)
		if got["nn_error"] != nil || got["target_nn_error"] != nil || !strings.Contains(fmt.Sprint(got["nn_evaluation_skipped"]), "--labels") {
			t.Errorf("nn_error %v, target_nn_error %v, skipped %v", got["nn_error"], got["target_nn_error"], got["nn_evaluation_skipped"])
		}
		if num(t, got, "total_loss") <= 0 {
			t.Errorf("total loss %v", got["total_loss"])
		}
	})
}

// TestKernelDistancesFile: the distance examples MEG samples from the
// target, written as a distances file (d of the raw kernel), reproduce the
// sampled run; without a target the file alone is learned from.
func TestKernelDistancesFile(t *testing.T) {
	dir := t.TempDir()
	const n, steps = 12, 1500
	tg, k := wineTarget(t, n)
	npyPath := filepath.Join(dir, "k.npy")
	if err := npy.WriteFile(npyPath, k); err != nil {
		t.Fatal(err)
	}
	labels := writeTestFile(t, dir, "y.txt", labelsText(tg.Y))
	seq, err := meg.SampleDistances(tg.U, steps, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("i,j,d\n")
	for i, p := range seq.Pairs {
		fmt.Fprintf(&b, "%d,%d,%s\n", p.A, p.B, strconv.FormatFloat(2*meg.HalfSqDist(k, p.A, p.B), 'g', -1, 64))
		_ = i
	}
	dist := writeTestFile(t, dir, "d.csv", b.String())
	want := runKernelJSON(t, "--algo", "meg", "--target", npyPath, "--labels", labels, "--steps", strconv.Itoa(steps), "--checkpoints", "0")
	for _, c := range []struct {
		name    string
		args    []string
		objects float64
		target  bool
	}{
		{"with target", []string{"--target", npyPath, "--labels", labels}, n, true},
		{"with data", []string{"--data", "builtin:wine", "--objects", "12"}, n, true},
		{"no target", []string{"--labels", labels}, n, false},
		{"no target, objects", []string{"--objects", "20"}, 20, false},
		{"no target, max index", nil, -1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := runKernelJSON(t, append([]string{"--algo", "meg", "--distances", dist, "--checkpoints", "0"}, c.args...)...)
			if num(t, got, "steps") != steps || got["distances"] != dist {
				t.Fatalf("steps %v, distances %v", got["steps"], got["distances"])
			}
			if c.objects > 0 && num(t, got, "objects") != c.objects {
				t.Fatalf("objects %v, want %v", got["objects"], c.objects)
			}
			if c.target {
				for _, key := range []string{"total_loss", "comparator_loss", "divergence_final", "nn_error"} {
					g, w := num(t, got, key), num(t, want, key)
					if math.Abs(g-w) > 1e-9*math.Max(1, math.Abs(w)) {
						t.Errorf("%s: from the file %g, sampled %g", key, g, w)
					}
				}
				return
			}
			if got["comparator_loss"] != nil || got["loss_bound"] != nil || num(t, got, "total_loss") <= 0 {
				t.Errorf("comparator %v, bound %v, total %v", got["comparator_loss"], got["loss_bound"], got["total_loss"])
			}
		})
	}
	t.Run("passes", func(t *testing.T) {
		one := runKernelJSON(t, "--algo", "meg", "--distances", dist, "--target", npyPath, "--checkpoints", "0")
		three := runKernelJSON(t, "--algo", "meg", "--distances", dist, "--target", npyPath, "--checkpoints", "0", "--passes", "3")
		if num(t, three, "steps") != 3*steps || num(t, three, "passes") != 3 {
			t.Fatalf("steps %v, passes %v", three["steps"], three["passes"])
		}
		// Noiseless examples of the target: more passes bring W closer to it.
		if num(t, three, "divergence_final") >= num(t, one, "divergence_final") || num(t, three, "total_loss") < num(t, one, "total_loss") {
			t.Errorf("3 passes: divergence %v, loss %v; 1 pass: %v, %v", three["divergence_final"], three["total_loss"], one["divergence_final"], one["total_loss"])
		}
	})
}

// TestKernelPairsFile: DefiniteBoost with must-links and cannot-links from a
// pairs file learns a kernel (saved with --out) that satisfies both kinds.
func TestKernelPairsFile(t *testing.T) {
	dir := t.TempDir()
	const n = 12
	tg, k := wineTarget(t, n)
	npyPath := filepath.Join(dir, "k.npy")
	if err := npy.WriteFile(npyPath, k); err != nil {
		t.Fatal(err)
	}
	labels := writeTestFile(t, dir, "y.txt", labelsText(tg.Y))
	var b strings.Builder
	b.WriteString("i,j,y\n")
	type pair struct {
		a, b int
		same bool
	}
	var pairs []pair
	for a := 0; a < n; a++ {
		for c := a + 1; c < n; c += 3 {
			same := tg.Y[a] == tg.Y[c]
			pairs = append(pairs, pair{a, c, same})
			y := -1
			if same {
				y = 1
			}
			fmt.Fprintf(&b, "%d,%d,%+d\n", a, c, y)
		}
	}
	pf := writeTestFile(t, dir, "p.csv", b.String())
	for _, c := range []struct {
		name string
		args []string
	}{
		{"target", []string{"--target", npyPath, "--labels", labels}},
		{"data", []string{"--objects", "12"}},
		{"no target", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".npy")
			for _, proj := range []string{"approx", "exact"} {
				got := runKernelJSON(t, append([]string{"--algo", "definiteboost", "--pairs", pf, "--projection", proj, "--eps-far", "1.5", "--out", out}, c.args...)...)
				if num(t, got, "constraints") != float64(len(pairs)) || num(t, got, "must_links")+num(t, got, "cannot_links") != float64(len(pairs)) {
					t.Fatalf("constraints %v, must %v, cannot %v, want %d", got["constraints"], got["must_links"], got["cannot_links"], len(pairs))
				}
				run := got["runs"].([]any)[0].(map[string]any)
				if run["converged"] != true {
					t.Fatalf("%s: not converged: %v", proj, run)
				}
				w, err := npy.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				eps, far, tol := num(t, got, "epsilon"), num(t, got, "epsilon_far"), num(t, got, "tol")
				for _, p := range pairs {
					h := 0.5*(w.At(p.a, p.a)+w.At(p.b, p.b)) - w.At(p.a, p.b)
					if p.same && h > eps+2*tol || !p.same && h < far-2*tol {
						t.Errorf("%s: pair (%d,%d) same %v: ½|x_a-x_b|^2 = %g, epsilon %g, epsilon_far %g", proj, p.a, p.b, p.same, h, eps, far)
					}
				}
			}
		})
	}
}

// TestKernelOutUserInputs: --out writes a kernel model from --target and
// --distances that reloads.
func TestKernelOutUserInputs(t *testing.T) {
	dir := t.TempDir()
	tg, k := wineTarget(t, 10)
	npyPath := filepath.Join(dir, "k.npy")
	if err := npy.WriteFile(npyPath, k); err != nil {
		t.Fatal(err)
	}
	labels := writeTestFile(t, dir, "y.txt", labelsText(tg.Y))
	dist := writeTestFile(t, dir, "d.csv", "i,j,d\n0,1,0.5\n2,3,1.2\n1,2,0.9\n")
	for _, c := range []struct {
		name string
		args []string
		n    int
	}{
		{"meg target", []string{"--algo", "meg", "--target", npyPath, "--labels", labels, "--steps", "300"}, 10},
		{"meg distances", []string{"--algo", "meg", "--distances", dist}, 4},
		{"boost target", []string{"--algo", "definiteboost", "--target", npyPath}, 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".json")
			got := runKernelJSON(t, append(c.args, "--out", out)...)
			if got["out"] != out {
				t.Fatalf("out %v", got["out"])
			}
			m, err := model.LoadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if m.Kernel == nil || m.Kernel.N() != c.n {
				t.Fatalf("kernel model %+v, want %d objects", m.Kernel, c.n)
			}
		})
	}
}

// TestKernelInputRefusals: every bad file is refused with a non-zero status
// and one line naming the file (and the line, for line-based files); flags
// out of scope are usage errors (status 2).
func TestKernelInputRefusals(t *testing.T) {
	dir := t.TempDir()
	f := func(name, text string) string { return writeTestFile(t, dir, name, text) }
	good := f("good.csv", "1,0.5,0\n0.5,1,0\n0,0,1\n")
	asym := f("asym.csv", "1,0.5,0\n0.4,1,0\n0,0,1\n")
	notPSD := f("notpsd.csv", "1,2,0\n2,1,0\n0,0,1\n")
	notSquare := f("rect.csv", "1,0\n0,1\n0,0\n")
	nanCSV := f("nan.csv", "1,0,0\n0,NaN,0\n0,0,1\n")
	word := f("word.csv", "a,b,c\n1,0,0\n0,1,0\n")
	ragged := f("ragged.csv", "1,0,0\n0,1\n0,0,1\n")
	rectNPY := filepath.Join(dir, "rect.npy")
	if err := npy.WriteFile(rectNPY, mat.NewDense(2, 3, nil)); err != nil {
		t.Fatal(err)
	}
	labels2 := f("y2.txt", "a\nb\n")
	labelsGap := f("ygap.txt", "a\n\nb\nc\n")
	dist := f("d.csv", "i,j,d\n0,1,0.5\n")
	pairs := f("p.csv", "i,j,y\n0,1,1\n")
	for _, c := range []struct {
		name   string
		args   []string
		status int
		want   []string // substrings of the one-line message
	}{
		{"distances header", []string{"--algo", "meg", "--distances", f("d1.csv", "a,b,d\n0,1,1\n")}, 1, []string{"d1.csv", "line 1", "header"}},
		{"distances index", []string{"--algo", "meg", "--distances", f("d2.csv", "i,j,d\n0,1,1\nx,1,2\n")}, 1, []string{"d2.csv", "line 3", "not an integer"}},
		{"distances negative d", []string{"--algo", "meg", "--distances", f("d3.csv", "i,j,d\n0,1,1\n\n1,2,-1\n")}, 1, []string{"d3.csv", "line 4", "non-negative"}},
		{"distances NaN d", []string{"--algo", "meg", "--distances", f("d4.csv", "i,j,d\n0,1,NaN\n")}, 1, []string{"d4.csv", "line 2", "non-negative"}},
		{"distances out of range", []string{"--algo", "meg", "--objects", "3", "--distances", f("d5.csv", "i,j,d\n0,1,1\n0,3,1\n")}, 1, []string{"d5.csv", "line 3", "outside [0,3)"}},
		{"distances out of target", []string{"--algo", "meg", "--target", good, "--distances", f("d6.csv", "i,j,d\n0,5,1\n")}, 1, []string{"d6.csv", "line 2", "outside [0,3)"}},
		{"distances i == j", []string{"--algo", "meg", "--distances", f("d7.csv", "i,j,d\n2,2,1\n")}, 1, []string{"d7.csv", "line 2", "itself"}},
		{"distances negative index", []string{"--algo", "meg", "--distances", f("d8.csv", "i,j,d\n0,1,1\n-1,1,1\n")}, 1, []string{"d8.csv", "line 3", "negative"}},
		{"distances fields", []string{"--algo", "meg", "--distances", f("d9.csv", "i,j,d\n0,1\n")}, 1, []string{"d9.csv", "line 2", "fields"}},
		{"distances empty", []string{"--algo", "meg", "--distances", f("d10.csv", "i,j,d\n")}, 1, []string{"d10.csv", "no distance"}},
		{"pairs bad y", []string{"--algo", "definiteboost", "--pairs", f("p1.csv", "i,j,y\n0,1,1\n1,2,0\n")}, 1, []string{"p1.csv", "line 3", "column y"}},
		{"pairs header", []string{"--algo", "definiteboost", "--pairs", f("p2.csv", "i,j,d\n0,1,1\n")}, 1, []string{"p2.csv", "line 1", "header"}},
		{"pairs out of target", []string{"--algo", "definiteboost", "--target", good, "--pairs", f("p3.csv", "i,j,y\n0,1,1\n1,7,-1\n")}, 1, []string{"p3.csv", "line 3", "outside [0,3)"}},
		{"pairs eps-far", []string{"--algo", "definiteboost", "--pairs", pairs, "--objects", "3", "--eps-far", "3"}, 2, []string{"--eps-far"}},
		{"target not symmetric", []string{"--algo", "meg", "--target", asym}, 1, []string{"asym.csv", "not symmetric", "(0,1)"}},
		{"target not PSD", []string{"--algo", "meg", "--target", notPSD}, 1, []string{"notpsd.csv", "not positive semidefinite"}},
		{"target not square", []string{"--algo", "meg", "--target", notSquare}, 1, []string{"rect.csv", "square"}},
		{"target NaN", []string{"--algo", "meg", "--target", nanCSV}, 1, []string{"nan.csv:2:2", "NaN is not allowed"}},
		{"target header", []string{"--algo", "meg", "--target", word}, 1, []string{"word.csv:1:1", "without header", "invalid number"}},
		{"target ragged", []string{"--algo", "meg", "--target", ragged}, 1, []string{"ragged.csv:2", "2 fields"}},
		{"target npy not square", []string{"--algo", "meg", "--target", rectNPY}, 1, []string{"rect.npy", "square"}},
		{"target missing", []string{"--algo", "meg", "--target", filepath.Join(dir, "none.npy")}, 1, []string{"none.npy"}},
		{"labels count", []string{"--algo", "meg", "--target", good, "--labels", labels2}, 1, []string{"y2.txt", "2 labels", "3 objects"}},
		{"labels gap", []string{"--algo", "meg", "--target", good, "--labels", labelsGap}, 1, []string{"ygap.txt:2", "empty label"}},
		{"distances with definiteboost", []string{"--algo", "definiteboost", "--distances", dist}, 2, []string{"--distances", "meg"}},
		{"pairs with meg", []string{"--algo", "meg", "--pairs", pairs}, 2, []string{"--pairs", "definiteboost"}},
		{"target with gamma", []string{"--algo", "meg", "--target", good, "--gamma", "0.5"}, 2, []string{"--gamma"}},
		{"target with gamma-scale", []string{"--algo", "meg", "--target", good, "--gamma-scale", "2"}, 2, []string{"--gamma-scale"}},
		{"target with standardize", []string{"--algo", "meg", "--target", good, "--standardize=false"}, 2, []string{"--standardize"}},
		{"target with data", []string{"--algo", "meg", "--target", good, "--data", "builtin:iris"}, 2, []string{"--data"}},
		{"target with objects", []string{"--algo", "meg", "--target", good, "--objects", "3"}, 2, []string{"--objects"}},
		{"labels with data", []string{"--algo", "meg", "--labels", labels2}, 2, []string{"--labels"}},
		{"distances with steps", []string{"--algo", "meg", "--distances", dist, "--steps", "10"}, 2, []string{"--steps"}},
		{"distances with noise", []string{"--algo", "meg", "--distances", dist, "--noise", "0.1"}, 2, []string{"--noise"}},
		{"target with plot", []string{"--algo", "meg", "--target", good, "--plot", dir}, 2, []string{"--plot"}},
		{"eps-far without pairs", []string{"--algo", "definiteboost", "--eps-far", "3"}, 2, []string{"--eps-far"}},
		{"passes without distances", []string{"--algo", "meg", "--passes", "2"}, 2, []string{"--passes"}},
		{"passes zero", []string{"--algo", "meg", "--distances", dist, "--passes", "0"}, 2, []string{"--passes"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, _, stderr := runIO(append([]string{"kernel"}, c.args...), "")
			if st != c.status {
				t.Fatalf("status %d, want %d (stderr %q)", st, c.status, stderr)
			}
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			msg := lines[0]
			if c.status == 1 && len(lines) != 1 {
				t.Fatalf("stderr has %d lines, want one: %q", len(lines), stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
		})
	}
}

// TestKernelInputHelp: kernel --help lists the input flags.
func TestKernelInputHelp(t *testing.T) {
	st, stdout, stderr := runIO([]string{"kernel", "--help"}, "")
	if st != 0 {
		t.Fatalf("status %d", st)
	}
	for _, fl := range []string{"-target", "-labels", "-distances", "-pairs", "-eps-far", "-passes", "i,j,d", "i,j,y"} {
		if !strings.Contains(stdout+stderr, fl) {
			t.Errorf("help lacks %s", fl)
		}
	}
}
