package datasets

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/limits"
	"gonum.org/v1/gonum/mat"
)

// TestSubspaceShape: the sizes, the labels i mod 10, the seed fixing the
// sample, a shorter sample being a prefix of a longer one, and the scheme.
func TestSubspaceShape(t *testing.T) {
	for _, c := range []struct{ n, dim int }{{10, 16}, {57, 64}, {300, 200}} {
		x, y, err := Subspace(c.n, c.dim, 3)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if r, d := x.Dims(); r != c.n || d != c.dim || len(y) != c.n {
			t.Fatalf("%+v: %d×%d data, %d labels", c, r, d, len(y))
		}
		for i, v := range y {
			if v != i%SubspaceClasses {
				t.Fatalf("%+v: point %d labelled %d", c, i, v)
			}
		}
	}
	a, _, _ := Subspace(80, 64, 7)
	b, _, _ := Subspace(80, 64, 7)
	d, _, _ := Subspace(80, 64, 8)
	if !mat.Equal(a, b) || mat.Equal(a, d) {
		t.Error("the seed does not fix the sample")
	}
	p, _, _ := Subspace(50, 64, 7)
	if !mat.Equal(p, a.Slice(0, 50, 0, 64)) {
		t.Error("Subspace(50, …) is not the first 50 rows of Subspace(80, …)")
	}
	ds, err := data.Load("subspace:80:64:7", data.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(ds.X, a) || len(ds.Classes) != SubspaceClasses || ds.Classes[9] != "9" || ds.Y[13] != 3 {
		t.Errorf("subspace:80:64:7: classes %v, y[13] = %d, same points %v", ds.Classes, ds.Y[13], mat.Equal(ds.X, a))
	}
	one, err := data.Load("subspace:20:16", data.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want, _, _ := Subspace(20, 16, 1); !mat.Equal(one.X, want) {
		t.Error("subspace:N:D is not seed 1")
	}
}

// TestSubspaceInvalid: bad sizes and specs are refused with one-line
// errors, before any allocation; data over the memory limit too.
func TestSubspaceInvalid(t *testing.T) {
	for _, c := range []struct{ n, dim int }{{9, 64}, {0, 64}, {-5, 64}, {100, 15}, {100, -1}, {100, SubspaceMaxDim + 1}, {1 << 20, 1 << 9}, {math.MaxInt, 1 << 16}} {
		if _, _, err := Subspace(c.n, c.dim, 1); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: error %v", c, err)
		}
	}
	for _, spec := range []string{"subspace:100", "subspace:", "subspace:x:64", "subspace:100:y", "subspace:100:8", "subspace:5:64",
		"subspace:100:64:1:2", "subspace:100:64:-1", "subspace:1000000:65536", "subspace:100:100000", "subspace:99999999999999999999:64"} {
		_, err := data.Load(spec, data.LoadOptions{})
		if err == nil || !errors.Is(err, data.ErrFormat) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v", spec, err)
		}
	}
	prev := limits.SetMaxMemory(1 << 20)
	defer limits.SetMaxMemory(prev)
	if _, _, err := Subspace(1000, 256, 1); !errors.Is(err, limits.ErrMemory) {
		t.Errorf("2 MB of data under a 1 MiB limit: %v", err)
	}
}

// TestSubspaceConstruction checks the documented distribution on 2,000
// points in 256 dimensions: U orthonormal to rounding; outside span(U)
// unit isotropic noise (mean square 1 per dimension); inside, the class
// mean plus within-class spread and noise (mean 0, mean square 2 per
// dimension about the mean); the class means of scale a, which is 2 at
// D = 2,048. Each statistic is within five standard errors.
func TestSubspaceConstruction(t *testing.T) {
	const n, dim, r, seed = 2000, 256, SubspaceRank, 5
	x, y, err := Subspace(n, dim, seed)
	if err != nil {
		t.Fatal(err)
	}
	u, means := subspaceModel(subspaceRNG(seed), dim)
	um := mat.NewDense(dim, r, u)
	var gram mat.Dense
	gram.Mul(um.T(), um)
	for i := 0; i < r; i++ {
		for j := 0; j < r; j++ {
			want := 0.0
			if i == j {
				want = 1
			}
			if e := math.Abs(gram.At(i, j) - want); e > 4*dim*0x1p-52 {
				t.Fatalf("UᵀU(%d, %d) off by %g", i, j, e)
			}
		}
	}
	var p, back mat.Dense
	p.Mul(x, um) // n×16 coordinates in span(U)
	back.Mul(&p, um.T())
	var outSq, inSq, inSum float64
	for i := 0; i < n; i++ {
		for j := 0; j < dim; j++ {
			q := x.At(i, j) - back.At(i, j)
			outSq += q * q
		}
		for k := 0; k < r; k++ {
			w := p.At(i, k) - means[y[i]*r+k]
			inSq += w * w
			inSum += w
		}
	}
	mOut, mIn := float64(n*(dim-r)), float64(n*r)
	if v := outSq / mOut; math.Abs(v-1) > 5*math.Sqrt(2/mOut) {
		t.Errorf("mean square outside span(U) %v, want 1", v)
	}
	if v := inSq / mIn; math.Abs(v-2) > 5*2*math.Sqrt(2/mIn) {
		t.Errorf("mean square about the class means inside span(U) %v, want 2", v)
	}
	if v := inSum / mIn; math.Abs(v) > 5*math.Sqrt(2/mIn) {
		t.Errorf("mean inside span(U) about the class means %v, want 0", v)
	}
	a := subspaceScale(dim)
	sq := 0.0
	for _, v := range means {
		sq += v * v
	}
	if v, m := sq/(a*a), float64(len(means)); math.Abs(v/m-1) > 5*math.Sqrt(2/m) {
		t.Errorf("class means' mean square %v a², want a²", v/m)
	}
	if a := subspaceScale(2048); math.Abs(a-2) > 1e-15 {
		t.Errorf("a = %v at D = 2048, want 2", a)
	}
}

// TestSubspaceNoiseDominates: at D = 512 Euclidean 3-NN errs on far more
// test points than 3-NN after the projection onto U, the metric a learner
// should find.
func TestSubspaceNoiseDominates(t *testing.T) {
	const train, test, dim, seed = 1000, 1000, 512, 1
	x, y, err := Subspace(train+test, dim, seed)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := subspaceModel(subspaceRNG(seed), dim)
	tr, te := x.Slice(0, train, 0, dim).(*mat.Dense), x.Slice(train, train+test, 0, dim).(*mat.Dense)
	b := engine.Default()
	euclid, err := eval.KNNError(b, tr, y[:train], te, y[train:], 3)
	if err != nil {
		t.Fatal(err)
	}
	var ptr, pte mat.Dense
	ptr.Mul(tr, mat.NewDense(dim, SubspaceRank, u))
	pte.Mul(te, mat.NewDense(dim, SubspaceRank, u))
	proj, err := eval.KNNError(b, &ptr, y[:train], &pte, y[train:], 3)
	if err != nil {
		t.Fatal(err)
	}
	if !(euclid > 0.2 && proj < euclid/3) {
		t.Errorf("3-NN test error: Euclidean %.3f, projected onto U %.3f", euclid, proj)
	}
}
