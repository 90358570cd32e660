package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/model"
	"gonum.org/v1/gonum/mat"
)

// Test-only learners: the identity metric (so the learned test error must
// equal the Euclidean one), a fixed diagonal metric, and a broken learner
// that returns an indefinite matrix. The real learners register from the
// root package.
func init() {
	for name, sol := range map[string]func(p *psdlearn.Problem) (*psdlearn.Solution, error){
		"identity-test": func(p *psdlearn.Problem) (*psdlearn.Solution, error) {
			_, d := p.X.Dims()
			m := mat.NewSymDense(d, nil)
			for i := 0; i < d; i++ {
				m.SetSym(i, i, 1)
			}
			if p.Triplets == nil || p.Triplets.N != p.X.RawMatrix().Rows {
				return nil, errTest("triplets not on the training rows")
			}
			return &psdlearn.Solution{M: m, Iterations: 1, Objective: 0, DualityGap: math.NaN(), GapTol: math.NaN()}, nil
		},
		"diag-test": func(p *psdlearn.Problem) (*psdlearn.Solution, error) {
			_, d := p.X.Dims()
			m := mat.NewSymDense(d, nil)
			for i := 0; i < d; i++ {
				m.SetSym(i, i, float64(i+1))
			}
			return &psdlearn.Solution{M: m, Iterations: 2, Objective: 1.5, DualityGap: 1e-9, GapTol: math.NaN()}, nil
		},
		"indefinite-test": func(p *psdlearn.Problem) (*psdlearn.Solution, error) {
			_, d := p.X.Dims()
			m := mat.NewSymDense(d, nil)
			m.SetSym(0, 0, -1)
			return &psdlearn.Solution{M: m}, nil
		},
	} {
		cs := []float64(nil)
		if name == "diag-test" {
			cs = []float64{10}
		}
		if err := psdlearn.Register(psdlearn.Algorithm{Name: name, New: func() psdlearn.Learner { return &testLearner{name: name, cs: cs, solve: sol} }}); err != nil {
			panic(err)
		}
	}
}

// testLearner is a learner whose solve is a function of the problem.
type testLearner struct {
	psdlearn.Common
	name  string
	cs    []float64
	solve func(p *psdlearn.Problem) (*psdlearn.Solution, error)
}

func (l *testLearner) Name() string          { return l.name }
func (l *testLearner) Candidates() []float64 { return l.cs }
func (l *testLearner) NewSolver(p *psdlearn.Problem) (psdlearn.Solver, error) {
	return testSolver{l, p}, nil
}

type testSolver struct {
	l *testLearner
	p *psdlearn.Problem
}

func (s testSolver) Solve(context.Context, float64) (*psdlearn.Solution, error) {
	return s.l.solve(s.p)
}

type errTest string

func (e errTest) Error() string { return string(e) }

// runCLI runs one command line in-process.
func runCLI(t *testing.T, args ...string) (status int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	st := runMain(context.Background(), args, &out, &errb)
	return st, out.String(), errb.String()
}

// runJSON runs a command with --json, requires success and exactly one JSON object.
func runJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	st, out, errs := runCLI(t, append(args, "--json")...)
	if st != 0 {
		t.Fatalf("psdlearn %s: status %d\nstdout %s\nstderr %s", strings.Join(args, " "), st, out, errs)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decoding %q: %v", out, err)
	}
	if dec.More() {
		t.Fatalf("more than one JSON value: %q", out)
	}
	return m
}

func field(t *testing.T, m map[string]any, key string) float64 {
	t.Helper()
	v, ok := m[key].(float64)
	if !ok {
		t.Fatalf("field %q missing or not a number in %v", key, m)
	}
	return v
}

// irisReference recomputes train's protocol independently: seeded split,
// standardisation on the training part, triplets, Euclidean 3-NN errors.
func irisReference(t *testing.T, seed uint64) (triplets int, valErr, testErr float64) {
	d, err := datasets.Open("iris")
	if err != nil {
		t.Fatal(err)
	}
	parts, err := data.Split(d, []float64{0.7, 0.15, 0.15}, seed)
	if err != nil {
		t.Fatal(err)
	}
	s, err := data.FitStandardizer(parts[0].X)
	if err != nil {
		t.Fatal(err)
	}
	var x [3]*mat.Dense
	for i, p := range parts {
		x[i], _ = s.Apply(p.X)
	}
	ts, err := constraints.Triplets(x[0], parts[0].Y, 3)
	if err != nil {
		t.Fatal(err)
	}
	valErr, _ = eval.KNNError(nil, x[0], parts[0].Y, x[1], parts[1].Y, 3)
	testErr, _ = eval.KNNError(nil, x[0], parts[0].Y, x[2], parts[2].Y, 3)
	return ts.Len(), valErr, testErr
}

func TestTrainEvalTransformIris(t *testing.T) {
	dir := t.TempDir()
	modelPath := filepath.Join(dir, "iris.json")
	sum := runJSON(t, "train", "--algo", "identity-test", "--data", "builtin:iris", "--standardize", "--seed", "7", "--out", modelPath, "--backend", "go")
	wantTrip, wantVal, wantTest := irisReference(t, 7)
	for key, want := range map[string]float64{
		"n_train": 105, "n_val": 23, "n_test": 22, "dim": 4, "input_dim": 4, "rank": 4, "k": 3,
		"triplets": float64(wantTrip), "iterations": 1, "objective": 0,
		"test_error": wantTest, "euclidean_test_error": wantTest, "val_error": wantVal, "euclidean_val_error": wantVal,
	} {
		if got := field(t, sum, key); got != want {
			t.Errorf("%s = %v, want %v", key, got, want)
		}
	}
	if wantTrip != 105*9 {
		t.Errorf("iris training part: %d triplets, want 945", wantTrip)
	}
	if sum["duality_gap"] != nil || sum["chosen_c"] != nil {
		t.Errorf("NaN fields must be null: duality_gap %v chosen_c %v", sum["duality_gap"], sum["chosen_c"])
	}
	if sum["algo"] != "identity-test" || sum["backend"] != "go" || sum["model"] != modelPath || !(field(t, sum, "peak_rss_mb") > 0) {
		t.Errorf("summary %v", sum)
	}
	for _, key := range []string{"train_seconds", "total_seconds"} {
		if v := field(t, sum, key); !(v >= 0) {
			t.Errorf("%s = %v", key, v)
		}
	}

	// eval with the same split reproduces train's errors from the raw data.
	ev := runJSON(t, "eval", "--model", modelPath, "--data", "builtin:iris", "--split", "0.7,0.15,0.15", "--seed", "7")
	if field(t, ev, "test_error") != wantTest || field(t, ev, "val_error") != wantVal || field(t, ev, "euclidean_test_error") != wantTest {
		t.Errorf("eval --split: %v, want test %v val %v", ev, wantTest, wantVal)
	}
	if ev["mode"] != "split" || field(t, ev, "n_ref") != 105 || field(t, ev, "n_test") != 22 {
		t.Errorf("eval --split summary %v", ev)
	}
	// Leave-one-out mode.
	loo := runJSON(t, "eval", "--model", modelPath, "--data", "builtin:iris", "--loo")
	if loo["mode"] != "loo" || field(t, loo, "n_test") != 150 || field(t, loo, "test_error") != field(t, loo, "euclidean_test_error") {
		t.Errorf("eval loo: %v", loo)
	}
	// --ref mode: reference and test from files.
	d, _ := datasets.Open("iris")
	parts, _ := data.Split(d, []float64{0.7, 0.15, 0.15}, 7)
	refCSV, testCSV := filepath.Join(dir, "ref.csv"), filepath.Join(dir, "test.csv")
	writeCSV(&cmdEnv{}, refCSV, parts[0].X, parts[0].Y, parts[0].Classes, true)
	writeCSV(&cmdEnv{}, testCSV, parts[2].X, parts[2].Y, parts[2].Classes, true)
	rf := runJSON(t, "eval", "--model", modelPath, "--data", testCSV, "--ref", refCSV)
	if rf["mode"] != "ref" || field(t, rf, "test_error") != wantTest {
		t.Errorf("eval --ref: %v, want test error %v", rf, wantTest)
	}

	// transform: Euclidean distances of the output are the metric's
	// distances of the preprocessed data (here: standardised).
	outCSV := filepath.Join(dir, "z.csv")
	tr := runJSON(t, "transform", "--model", modelPath, "--data", "builtin:iris", "--out", outCSV)
	if field(t, tr, "rows") != 150 || field(t, tr, "cols") != 4 {
		t.Errorf("transform summary %v", tr)
	}
	z, err := data.Load(outCSV, data.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := data.FitStandardizer(parts[0].X)
	xs, _ := s.Apply(d.X)
	for _, p := range [][2]int{{0, 1}, {3, 77}, {10, 149}, {50, 100}} {
		dz, dx := rowDist(z.X, p[0], p[1]), rowDist(xs, p[0], p[1])
		if math.Abs(dz-dx) > 1e-12*math.Max(1, dx) {
			t.Errorf("pair %v: transformed distance %v, standardised %v", p, dz, dx)
		}
	}
	if z.Y[0] != d.Y[0] || z.Classes[z.Y[149]] != d.Classes[d.Y[149]] {
		t.Error("transform lost the labels")
	}
}

func rowDist(x *mat.Dense, a, b int) float64 {
	var s float64
	for j, v := range x.RawRowView(a) {
		e := v - x.At(b, j)
		s += e * e
	}
	return s
}

func TestTrainPCAAndTestFile(t *testing.T) {
	dir := t.TempDir()
	d, _ := datasets.Open("wine")
	parts, _ := data.Split(d, []float64{0.8, 0.2}, 3)
	trainCSV, testCSV := filepath.Join(dir, "tr.csv"), filepath.Join(dir, "te.csv")
	writeCSV(&cmdEnv{}, trainCSV, parts[0].X, parts[0].Y, parts[0].Classes, true)
	writeCSV(&cmdEnv{}, testCSV, parts[1].X, parts[1].Y, parts[1].Classes, true)
	modelPath := filepath.Join(dir, "m.json")
	sum := runJSON(t, "train", "--algo", "diag-test", "--data", trainCSV, "--test", testCSV, "--split", "0.8,0.2",
		"--standardize", "--pca", "5", "--out", modelPath)
	if field(t, sum, "dim") != 5 || field(t, sum, "input_dim") != 13 || field(t, sum, "n_test") != float64(parts[1].Len()) {
		t.Errorf("summary %v", sum)
	}
	if field(t, sum, "chosen_c") != 10 || field(t, sum, "duality_gap") != 1e-9 || field(t, sum, "objective") != 1.5 {
		t.Errorf("trainer outputs not passed through: %v", sum)
	}
	// The reported test error is the diagonal metric's 3-NN error on the
	// PCA-projected test file, recomputed here from the saved model's parts.
	ev := runJSON(t, "eval", "--model", modelPath, "--data", testCSV, "--ref", trainCSV)
	if field(t, ev, "dim") != 5 {
		t.Errorf("eval dim %v", ev["dim"])
	}
	// eval's reference is the whole training file, train's only its 80% part,
	// so compare with an independent computation on the same reference.
	tr, _ := data.Load(trainCSV, data.LoadOptions{})
	te, _ := data.Load(testCSV, data.LoadOptions{})
	data.UnifyClasses(tr, te)
	trParts, _ := data.Split(tr, []float64{0.8, 0.2}, 1)
	pipe, _ := data.FitPipeline(nil, trParts[0].X, true, 5)
	scale := func(x *mat.Dense) *mat.Dense {
		z, _ := pipe.Apply(x)
		z.Apply(func(_, j int, v float64) float64 { return v * math.Sqrt(float64(j+1)) }, z)
		return z
	}
	want, _ := eval.KNNError(nil, scale(tr.X), tr.Y, scale(te.X), te.Y, 3)
	if got := field(t, ev, "test_error"); math.Abs(got-want) > 0 {
		t.Errorf("eval --ref test error %v, independent %v", got, want)
	}
	wantTrain, _ := eval.KNNError(nil, scale(trParts[0].X), trParts[0].Y, scale(te.X), te.Y, 3)
	if got := field(t, sum, "test_error"); got != wantTrain {
		t.Errorf("train test error %v, independent %v", got, wantTrain)
	}
	// A 3-part split with --test is refused.
	if st, _, errs := runCLI(t, "train", "--algo", "diag-test", "--data", trainCSV, "--test", testCSV, "--split", "0.7,0.15,0.15"); st == 0 || !strings.Contains(errs, "needs 2 parts") {
		t.Errorf("status %d, stderr %s", st, errs)
	}
}

// TestTrainLettersEuclidean runs the protocol's letters set-up through the
// command line with the identity metric: the 94,500 triplets and the
// Euclidean 3-NN test error (6.30% with nearest-neighbour vote ties, see
// eval) must come out of train as they do out of the library.
func TestTrainLettersEuclidean(t *testing.T) {
	sum := runJSON(t, "train", "--algo", "identity-test", "--data", "builtin:letters", "--split", "rows:10500,4500,5000", "--standardize")
	if field(t, sum, "triplets") != 94500 || field(t, sum, "n_train") != 10500 || field(t, sum, "n_test") != 5000 {
		t.Errorf("summary %v", sum)
	}
	d, _ := datasets.Open("letters")
	parts, _ := data.SplitRows(d, []int{10500, 4500, 5000})
	s, _ := data.FitStandardizer(parts[0].X)
	a, _ := s.Apply(parts[0].X)
	b, _ := s.Apply(parts[2].X)
	want, _ := eval.KNNError(nil, a, parts[0].Y, b, parts[2].Y, 3)
	if got := field(t, sum, "euclidean_test_error"); got != want || field(t, sum, "test_error") != want {
		t.Errorf("euclidean_test_error %v, test_error %v, library %v", got, sum["test_error"], want)
	}
	t.Logf("letters Euclidean 3-NN test error %.2f%%", 100*want)
}

func TestTrainErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		env  string
		want string
	}{
		{"unknown algo", []string{"--algo", "nope", "--data", "builtin:iris"}, "", `unknown algorithm "nope"`},
		{"no data", []string{"--algo", "identity-test"}, "", "train: --data is required"},
		{"bad split", []string{"--algo", "identity-test", "--data", "builtin:iris", "--split", "0.5,0.2"}, "", "sum to"},
		{"too many rows", []string{"--algo", "identity-test", "--data", "builtin:iris", "--split", "rows:100,100"}, "", "200 rows requested"},
		{"bad backend", []string{"--algo", "identity-test", "--data", "builtin:iris", "--backend", "cuda"}, "", `--backend "cuda": unknown backend`},
		{"bad env backend", []string{"--algo", "identity-test", "--data", "builtin:iris"}, "fortran", `$PSDLEARN_BACKEND="fortran": unknown backend`},
		{"missing file", []string{"--algo", "identity-test", "--data", filepath.Join(dir, "none.csv")}, "", "no such file"},
		{"bad C", []string{"--algo", "identity-test", "--data", "builtin:iris", "--C", "1,x"}, "", `--C: "x" is not a finite number`},
		{"pca too big", []string{"--algo", "identity-test", "--data", "builtin:iris", "--pca", "9"}, "", "PCA = 9"},
		{"indefinite", []string{"--algo", "indefinite-test", "--data", "builtin:iris"}, "", "not positive semidefinite"},
		{"bad flag", []string{"--algo", "identity-test", "--bogus"}, "", "flag provided but not defined"},
		{"negative iters", []string{"--algo", "frobmetric", "--data", "builtin:iris", "--iters", "-1"}, "", "--iters -1: the iteration limit must be > 0"},
		{"zero iters", []string{"--algo", "boostmetric", "--data", "builtin:iris", "--iters", "0"}, "", "--iters 0: the iteration limit must be > 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("PSDLEARN_BACKEND", tc.env)
			}
			st, _, errs := runCLI(t, append([]string{"train"}, tc.args...)...)
			if st == 0 || !strings.Contains(errs, tc.want) {
				t.Errorf("status %d, stderr %q, want %q", st, errs, tc.want)
			}
			// Under --json the error is one JSON object on stdout.
			st, out, _ := runCLI(t, append([]string{"train", "--json"}, tc.args...)...)
			var m map[string]any
			if st == 0 || json.Unmarshal([]byte(out), &m) != nil || !strings.Contains(m["error"].(string), tc.want) {
				t.Errorf("--json: status %d, stdout %q", st, out)
			}
		})
	}
}

func TestEvalTransformErrors(t *testing.T) {
	dir := t.TempDir()
	modelPath := filepath.Join(dir, "m.json")
	runJSON(t, "train", "--algo", "identity-test", "--data", "builtin:iris", "--out", modelPath)
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"format":"psdlearn-model","version":1,"kind":"metric","metric":{"dim":2,"m":[[1,2],[2,1]]}}`), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", "--model", modelPath}, "eval: --data is required"},
		{[]string{"eval", "--model", filepath.Join(dir, "none.json"), "--data", "builtin:iris"}, "no such file"},
		{[]string{"eval", "--model", bad, "--data", "builtin:iris"}, "not positive semidefinite"},
		{[]string{"eval", "--model", modelPath, "--data", "builtin:wine"}, "has 13 features, the model expects 4"},
		{[]string{"eval", "--model", modelPath, "--data", "builtin:iris", "--split", "1"}, "at least 2 parts"},
		{[]string{"eval", "--model", modelPath, "--data", "builtin:iris", "--split", "0.5,0.5", "--ref", "builtin:iris"}, "not both"},
		{[]string{"transform", "--model", modelPath}, "transform: --data is required"},
		{[]string{"transform", "--model", modelPath, "--data", "builtin:wine", "--out", filepath.Join(dir, "o.csv")}, "the model expects 4"},
	} {
		st, _, errs := runCLI(t, tc.args...)
		if st == 0 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: status %d, stderr %q, want %q", tc.args, st, errs, tc.want)
		}
	}
}

// TestEmitJSONNonFinite: the typed output fields write NaN and ±Inf as
// null; a raw float64 that is not a number is an error, not a silent
// rewrite (every command's summary types its floats).
func TestEmitJSONNonFinite(t *testing.T) {
	var out bytes.Buffer
	env := &cmdEnv{stdout: &out, stderr: &out}
	type inner struct {
		V jsonFloat `json:"v"`
	}
	v := struct {
		A jsonFloat            `json:"a"`
		B []jsonFloat          `json:"b"`
		C map[string]jsonFloat `json:"c"`
		D *inner               `json:"d"`
		E string               `json:"e,omitempty"`
		F int                  `json:"-"`
		G *jsonFloat           `json:"g,omitempty"`
		H *jsonFloat           `json:"h"`
		I jsonFloat            `json:"i"`
	}{jsonFloat(math.NaN()), jsonFloats([]float64{1, math.Inf(1)}), map[string]jsonFloat{"x": jsonFloat(math.Inf(-1))}, &inner{jsonFloat(math.NaN())}, "", 3,
		optFloat(math.NaN()), ptrFloat(math.NaN()), 0.25}
	if err := emitJSON(env, v); err != nil {
		t.Fatal(err)
	}
	want := `{"a":null,"b":[1,null],"c":{"x":null},"d":{"v":null},"h":null,"i":0.25}` + "\n"
	if out.String() != want {
		t.Errorf("got %s want %s", out.String(), want)
	}
	if err := emitJSON(env, struct{ X float64 }{math.NaN()}); err == nil {
		t.Error("a raw NaN float64 was encoded")
	}
}

func TestPeakRSS(t *testing.T) {
	if v := peakRSSMB(); !(v > 1 && v < 1<<20) {
		t.Errorf("peak RSS %v MiB", v)
	}
}

// TestTrainLMNNFlags: --mu and --rank reach the LMNN trainer. The rank-r
// model has a metric of rank at most r (the summary's "rank", the
// numerical rank of M), the model file records both flags, and --mu
// changes the learned metric.
func TestTrainLMNNFlags(t *testing.T) {
	dir := t.TempDir()
	base := []string{"train", "--algo", "lmnn", "--data", "builtin:wine", "--standardize", "--iters", "60"}
	objective := map[string]float64{}
	for _, tc := range []struct {
		name    string
		args    []string
		mu      float64
		rank    int
		maxRank int
	}{
		{"defaults", nil, 0.5, 0, 13}, // the model records the effective μ
		{"mu 0.2", []string{"--mu", "0.2"}, 0.2, 0, 13},
		{"rank 2", []string{"--rank", "2"}, 0.5, 2, 2},
		{"rank 3 mu 0.8", []string{"--rank", "3", "--mu", "0.8"}, 0.8, 3, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".json")
			args := append(append(append([]string{}, base...), tc.args...), "--out", out)
			sum := runJSON(t, args...)
			if r := int(field(t, sum, "rank")); r < 1 || r > tc.maxRank {
				t.Errorf("metric rank %d, want 1 … %d", r, tc.maxRank)
			}
			objective[tc.name] = field(t, sum, "objective")
			m, err := model.LoadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if mu, _ := m.Info["mu"].(float64); mu != tc.mu {
				t.Errorf("model info mu %v, want %v", m.Info["mu"], tc.mu)
			}
			if r, _ := m.Info["rank"].(float64); int(r) != tc.rank {
				t.Errorf("model info rank %v, want %v", m.Info["rank"], tc.rank)
			}
		})
	}
	if objective["defaults"] == objective["mu 0.2"] {
		t.Errorf("--mu 0.2 left the objective at %v", objective["defaults"])
	}
}
