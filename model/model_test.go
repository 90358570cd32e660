package model

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine/enginetest"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

func randDense(seed uint64, r, c int) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 5))
	m := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			m.Set(i, j, rng.NormFloat64())
		}
	}
	return m
}

// lowRankPSD returns A Aᵀ for a random d×r A.
func lowRankPSD(seed uint64, d, r int) *mat.SymDense {
	a := randDense(seed, d, r)
	m := mat.NewSymDense(d, nil)
	m.SymOuterK(1, a)
	return m
}

func TestNewMetric(t *testing.T) {
	for _, b := range enginetest.Backends(t) {
		for _, tc := range []struct{ d, r int }{{5, 5}, {6, 2}, {1, 1}} {
			m := lowRankPSD(uint64(tc.d*10+tc.r), tc.d, tc.r)
			met, err := NewMetric(m)
			if err != nil {
				t.Fatal(err)
			}
			if met.Rank() != tc.r {
				t.Errorf("%s d=%d: rank %d, want %d", b.Name(), tc.d, met.Rank(), tc.r)
			}
			var llt mat.Dense
			llt.Mul(met.L, met.L.T())
			if !mat.EqualApprox(&llt, m, 1e-10*mat.Norm(m, math.Inf(1))) {
				t.Errorf("%s d=%d: L Lᵀ ≠ M", b.Name(), tc.d)
			}
			// The sign convention: each column's entry of largest
			// magnitude is positive.
			for c := 0; c < met.Rank(); c++ {
				col := mat.Col(nil, c, met.L)
				big := 0
				for i, v := range col {
					if math.Abs(v) > math.Abs(col[big]) {
						big = i
					}
				}
				if col[big] < 0 {
					t.Errorf("%s d=%d: column %d has its largest entry %v negative", b.Name(), tc.d, c, col[big])
				}
			}
			// Columns by descending eigenvalue: squared column norms descend.
			for c := 1; c < met.Rank(); c++ {
				if mat.Norm(met.L.ColView(c), 2) > mat.Norm(met.L.ColView(c-1), 2)*(1+1e-12) {
					t.Errorf("%s: columns of L not by descending eigenvalue", b.Name())
				}
			}
			// Distance, Transform and PairSqDistances agree with (x−y)ᵀM(x−y).
			x := randDense(3, 7, tc.d)
			z, err := met.TransformBLAS(b.BLAS(), x)
			if err != nil {
				t.Fatal(err)
			}
			pairs := []sparse.Pair{{A: 0, B: 1}, {A: 2, B: 6}, {A: 5, B: 3}}
			dst := make([]float64, len(pairs))
			if err := met.PairSqDistances(dst, x, pairs); err != nil {
				t.Fatal(err)
			}
			for r, p := range pairs {
				diff := mat.NewVecDense(tc.d, nil)
				diff.SubVec(x.RowView(p.A), x.RowView(p.B))
				want := mat.Inner(diff, m, diff)
				zd := 0.0
				for j := 0; j < met.Rank(); j++ {
					e := z.At(p.A, j) - z.At(p.B, j)
					zd += e * e
				}
				for name, got := range map[string]float64{
					"SqDistance": met.SqDistance(x.RawRowView(p.A), x.RawRowView(p.B)),
					"Distance²":  math.Pow(met.Distance(x.RawRowView(p.A), x.RawRowView(p.B)), 2),
					"Transform":  zd,
					"PairSq":     dst[r],
				} {
					if math.Abs(got-want) > 1e-10*math.Max(1, want) {
						t.Errorf("%s %s pair %v: %v, want %v", b.Name(), name, p, got, want)
					}
				}
			}
		}
	}
}

func TestNewMetricRejects(t *testing.T) {
	indef := mat.NewSymDense(2, []float64{1, 0, 0, -0.5})
	nan := mat.NewSymDense(2, []float64{1, math.NaN(), math.NaN(), 1})
	// Within tolerance: an eigenvalue of −1e-12 next to 1 is clipped to zero.
	tiny := mat.NewSymDense(2, []float64{1, 0, 0, -1e-12})
	if met, err := NewMetric(tiny); err != nil || met.Rank() != 1 {
		t.Errorf("eigenvalue −1e-12: %v, %v", met, err)
	}
	for name, m := range map[string]*mat.SymDense{"indefinite": indef, "NaN": nan, "beyond tolerance": mat.NewSymDense(2, []float64{1, 0, 0, -1e-7})} {
		if _, err := NewMetric(m); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	zero, err := NewMetric(mat.NewSymDense(3, nil))
	if err != nil || zero.Rank() != 1 || zero.SqDistance([]float64{1, 2, 3}, []float64{0, 0, 0}) != 0 {
		t.Errorf("zero metric: %v %v", zero, err)
	}
}

func TestKernel(t *testing.T) {
	v := randDense(4, 6, 3)
	lam := []float64{2, 0.5, 0}
	k, err := NewKernel(v, lam)
	if err != nil {
		t.Fatal(err)
	}
	var vl, full mat.Dense
	vl.Mul(v, mat.NewDiagDense(3, lam))
	full.Mul(&vl, v.T())
	f := k.Factor()
	var ff mat.Dense
	ff.Mul(f, f.T())
	if !mat.EqualApprox(&ff, &full, 1e-12) {
		t.Error("F Fᵀ ≠ V diag(λ) Vᵀ")
	}
	pairs := []sparse.Pair{{A: 0, B: 5}, {A: 1, B: 2}}
	dst := make([]float64, 2)
	if err := k.PairSqDistances(dst, pairs); err != nil {
		t.Fatal(err)
	}
	for r, p := range pairs {
		want := full.At(p.A, p.A) + full.At(p.B, p.B) - 2*full.At(p.A, p.B)
		if math.Abs(k.At(p.A, p.B)-full.At(p.A, p.B)) > 1e-12 || math.Abs(k.SqDistance(p.A, p.B)-want) > 1e-12 || math.Abs(dst[r]-want) > 1e-12 {
			t.Errorf("pair %v: K %v / %v, distance %v %v / %v", p, k.At(p.A, p.B), full.At(p.A, p.B), k.SqDistance(p.A, p.B), dst[r], want)
		}
	}
	for name, l := range map[string][]float64{"negative": {1, -0.1, 0}, "NaN": {1, math.NaN(), 0}, "short": {1, 2}} {
		if _, err := NewKernel(v, l); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	x := randDense(9, 30, 4)
	pipe, err := data.FitPipeline(nil, x, true, 3)
	if err != nil {
		t.Fatal(err)
	}
	met, err := NewMetric(lowRankPSD(2, 3, 2))
	if err != nil {
		t.Fatal(err)
	}
	m := &Model{Kind: KindMetric, Algo: "test", Preprocess: pipe, Metric: met, Classes: []string{"a", "b"},
		Info: map[string]any{"gap": math.NaN(), "c": []float64{1, math.Inf(1)}, "k": 3}}
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "{\n  \"format\": \"psdlearn-model\",\n  \"version\": 3,") {
		t.Errorf("file starts %q", buf.String()[:60])
	}
	got, err := Load(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(got.Metric.M, met.M) || !mat.Equal(got.Metric.L, met.L) {
		t.Error("M or L changed by save/load")
	}
	z1, err := m.Transform(x)
	if err != nil {
		t.Fatal(err)
	}
	z2, err := got.Transform(x)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(z1, z2) { // the file holds L: the same bits
		t.Error("Transform changed by save/load")
	}
	if got.Algo != "test" || got.Info["gap"] != nil || got.InputDim() != 4 || len(got.Classes) != 2 {
		t.Errorf("loaded %+v", got)
	}

	// A kernel model.
	kern, _ := NewKernel(randDense(1, 5, 2), []float64{3, 1})
	km := &Model{Kind: KindKernel, Algo: "npkl", Kernel: kern}
	buf.Reset()
	if err := km.Save(&buf); err != nil {
		t.Fatal(err)
	}
	kg, err := Load(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(kg.Kernel.V, kern.V) || kg.Kernel.Lambda[0] != 3 {
		t.Error("kernel changed by save/load")
	}
}

func TestLoadRejects(t *testing.T) {
	const head = `{"format":"psdlearn-model","version":1,`
	const v3 = `{"format":"psdlearn-model","version":3,"kind":"metric",`
	for _, tc := range []struct{ name, in, want string }{
		{"not JSON", `hello`, "decode"},
		{"format", `{"format":"other","version":1,"kind":"metric","metric":{"dim":1,"m":[[1]]}}`, `format "other"`},
		{"version 4", `{"format":"psdlearn-model","version":4,"kind":"metric","metric":{"dim":1,"m":[[1]]}}`, "unsupported model file version 4 (written by a newer psdlearn?): this psdlearn reads versions 1 to 3"},
		{"factor rows", v3 + `"metric":{"dim":2,"m":[[4,0],[0,1]],"l":[[2,0]]}}`, "metric factor 1×2 for dim 2"},
		{"factor columns", v3 + `"metric":{"dim":1,"m":[[4]],"l":[[2,0]]}}`, "metric factor 1×2 for dim 1"},
		{"factor ragged", v3 + `"metric":{"dim":2,"m":[[4,0],[0,1]],"l":[[2,0],[0]]}}`, "factor row 1 has 1 entries"},
		{"factor empty", v3 + `"metric":{"dim":1,"m":[[4]],"l":[[]]}}`, "metric factor 1×0"},
		{"factor of another M", v3 + `"metric":{"dim":2,"m":[[4,0],[0,1]],"l":[[2,0],[0,2]]}}`, "does not reproduce M"},
		{"factor ascending", v3 + `"metric":{"dim":2,"m":[[4,0],[0,1]],"l":[[0,2],[1,0]]}}`, "column 1 is longer than column 0"},
		{"factor sign", v3 + `"metric":{"dim":2,"m":[[4,0],[0,1]],"l":[[-2,0],[0,1]]}}`, "negative entry of largest magnitude"},
		{"factor clipped column", v3 + `"metric":{"dim":2,"m":[[4,0],[0,0]],"l":[[2,0],[0,1e-9]]}}`, "below the clipping threshold"},
		{"factor of a non-PSD M", v3 + `"metric":{"dim":2,"m":[[4,0],[0,-1]],"l":[[2],[0]]}}`, "does not reproduce M"},
		{"factor in version 2", `{"format":"psdlearn-model","version":2,"kind":"metric","metric":{"dim":1,"m":[[1]],"l":[[1]]}}`, "no metric factor (it appeared in version 3)"},
		{"version 0", `{"format":"psdlearn-model","version":0,"kind":"metric","metric":{"dim":1,"m":[[1]]}}`, "unsupported model file version 0"},
		{"no version", `{"format":"psdlearn-model","kind":"metric","metric":{"dim":1,"m":[[1]]}}`, "unsupported model file version 0"},
		{"unknown field", head + `"kind":"metric","metric":{"dim":1,"m":[[1]]},"extra":1}`, "unknown field"},
		{"kind", head + `"kind":"tensor","metric":{"dim":1,"m":[[1]]}}`, `unknown model kind "tensor"`},
		{"no metric", head + `"kind":"metric"}`, "needs a metric"},
		{"non-symmetric", head + `"kind":"metric","metric":{"dim":2,"m":[[1,0.5],[0.4,1]]}}`, "not symmetric"},
		{"not PSD", head + `"kind":"metric","metric":{"dim":2,"m":[[1,2],[2,1]]}}`, "not positive semidefinite"},
		{"ragged", head + `"kind":"metric","metric":{"dim":2,"m":[[1,0],[0]]}}`, "row 1 has 1 entries"},
		{"dim", head + `"kind":"metric","metric":{"dim":3,"m":[[1,0],[0,1]]}}`, "2 rows, dim 3"},
		{"overflow", head + `"kind":"metric","metric":{"dim":1,"m":[[1e999]]}}`, "decode"},
		{"kernel negative", head + `"kind":"kernel","kernel":{"n":2,"rank":1,"lambda":[-1],"v":[[1],[0]]}}`, "not positive semidefinite"},
		{"kernel ragged", head + `"kind":"kernel","kernel":{"n":2,"rank":1,"lambda":[1],"v":[[1],[0,2]]}}`, "row 1 has 2 entries"},
		{"preprocess dims", head + `"kind":"metric","preprocess":{"standardize":{"mean":[0,0,0],"scale":[1,1,1]}},"metric":{"dim":2,"m":[[1,0],[0,1]]}}`, "preprocessing yields 3 features"},
		{"bad scale", head + `"kind":"metric","preprocess":{"standardize":{"mean":[0,0],"scale":[1,0]}},"metric":{"dim":2,"m":[[1,0],[0,1]]}}`, "scale 0"},
	} {
		_, err := Load(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestCollapseNumberArrays(t *testing.T) {
	in := "{\n  \"s\": \"a [1,  2] \\\"[3,\\n 4]\",\n  \"m\": [\n    [\n      1,\n      -2.5e-3\n    ],\n    [\n      3,\n      4\n    ]\n  ],\n  \"t\": [\n    \"x\"\n  ]\n}"
	want := "{\n  \"s\": \"a [1,  2] \\\"[3,\\n 4]\",\n  \"m\": [\n    [1, -2.5e-3],\n    [3, 4]\n  ],\n  \"t\": [\n    \"x\"\n  ]\n}"
	if got := string(collapseNumberArrays([]byte(in))); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
