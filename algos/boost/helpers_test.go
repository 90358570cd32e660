package boost

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/lapack"
	"gonum.org/v1/gonum/mat"
)

// goBackend returns the pure-Go backend.
func goBackend(t testing.TB) engine.Backend {
	b, err := engine.Get("go")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// standardized returns the embedded data set name, standardised.
func standardized(t testing.TB, name string) (*mat.Dense, []int) {
	t.Helper()
	d, err := datasets.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := data.Standardize(d)
	if err != nil {
		t.Fatal(err)
	}
	return ds[0].X, d.Y
}

// subsample returns count triplets of ts drawn without replacement (seeded).
func subsample(t testing.TB, ts *constraints.TripletSet, count int, seed uint64) *constraints.TripletSet {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 11))
	perm := rng.Perm(ts.Len())[:count]
	tr := make([]constraints.Triplet, count)
	for k, i := range perm {
		tr[k] = ts.Triplets[i]
	}
	out, err := constraints.NewTripletSet(ts.N, tr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// circles is the JMLR 2012 toy: four classes on concentric circles of radii
// 1..4 (radial jitter 0.1) in the first two coordinates, Gaussian noise of
// standard deviation noise in the other eight.
func circles(seed uint64, perClass int, noise float64) (*mat.Dense, []int) {
	rng := rand.New(rand.NewPCG(seed, 7))
	n := 4 * perClass
	x := mat.NewDense(n, 10, nil)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		c := i % 4
		r := float64(c+1) + 0.1*rng.NormFloat64()
		th := 2 * math.Pi * rng.Float64()
		x.Set(i, 0, r*math.Cos(th))
		x.Set(i, 1, r*math.Sin(th))
		for j := 2; j < 10; j++ {
			x.Set(i, j, noise*rng.NormFloat64())
		}
		y[i] = c
	}
	return x, y
}

// naiveMargins computes ⟨A_r, M⟩ = (a_i−a_k)ᵀM(a_i−a_k) − (a_i−a_j)ᵀM(a_i−a_j)
// directly from the points, for checking the pair-graph computations.
func naiveMargins(x *mat.Dense, ts *constraints.TripletSet, m mat.Symmetric) []float64 {
	_, d := x.Dims()
	quad := func(a, b int) float64 {
		diff := make([]float64, d)
		for c := 0; c < d; c++ {
			diff[c] = x.At(a, c) - x.At(b, c)
		}
		v := mat.NewVecDense(d, diff)
		return mat.Inner(v, m, v)
	}
	out := make([]float64, ts.Len())
	for r, tr := range ts.Triplets {
		out[r] = quad(tr.I, tr.K) - quad(tr.I, tr.J)
	}
	return out
}

// spectrum returns all eigenvalues of s, ascending.
func spectrum(t testing.TB, s mat.Symmetric) []float64 {
	t.Helper()
	e, err := lapack.Go.SymEig(s, lapack.AllRange(), false)
	if err != nil {
		t.Fatal(err)
	}
	return e.Values
}

// testError is the 3-NN error on (xte, yte) among (xtr, ytr) in the metric of res
// (Euclidean when res is nil).
func testError(t testing.TB, b engine.Backend, res *Result, xtr *mat.Dense, ytr []int, xte *mat.Dense, yte []int) float64 {
	t.Helper()
	zt, zs := xtr, xte
	if res != nil {
		l := res.Factor()
		var a, c mat.Dense
		a.Mul(xtr, l)
		c.Mul(xte, l)
		zt, zs = &a, &c
	}
	e, err := eval.KNNError(b, zt, ytr, zs, yte, 3)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// classTriplets returns n points in d dimensions of the given number of
// classes (point i in class i mod classes: unit Gaussian noise plus
// shift·class on every feature j with j mod 3 = 1 and twice that with
// j mod 3 = 2), drawn from rng, with their 3×3 nearest-neighbour triplets
// on the default backend.
func classTriplets(t testing.TB, rng *rand.Rand, n, d, classes int, shift float64) (*mat.Dense, *constraints.TripletSet) {
	t.Helper()
	x := mat.NewDense(n, d, nil)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		y[i] = i % classes
		for j := 0; j < d; j++ {
			x.Set(i, j, rng.NormFloat64()+shift*float64(y[i]*(j%3)))
		}
	}
	ts, err := makeTriplets(engine.Default(), x, y, 3)
	if err != nil {
		t.Fatal(err)
	}
	return x, ts
}
