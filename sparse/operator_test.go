package sparse_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/psdlearn/psdlearn/lapack"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

func randVec(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

func maxDiff(a []float64, b *mat.VecDense) float64 {
	var m float64
	for i, v := range a {
		m = math.Max(m, math.Abs(v-b.AtVec(i)))
	}
	return m
}

var blasImpls = []struct {
	name string
	b    lapack.BLAS
}{{"go", lapack.GoBLAS}, {"native", lapack.NativeBLAS}, {"nil", nil}}

func TestDenseSym(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	const n = 57
	a := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			a.SetSym(i, j, rng.NormFloat64())
		}
	}
	x := randVec(rng, n)
	var want mat.VecDense
	want.MulVec(a, mat.NewVecDense(n, x))
	for _, impl := range blasImpls {
		op := sparse.NewDenseSym(a, impl.b)
		got := make([]float64, n)
		for i := range got {
			got[i] = math.NaN() // overwrite semantics
		}
		op.Apply(got, x)
		if op.Dim() != n || maxDiff(got, &want) > 1e-12 {
			t.Errorf("%s: DenseSym differs from mat.MulVec by %g", impl.name, maxDiff(got, &want))
		}
	}
}

func TestSymCSR(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	s, err := sparse.KNNGraph(randData(rng, 5000, 4), 7, sparse.GraphOptions{Weight: sparse.Heat})
	if err != nil {
		t.Fatal(err)
	}
	l, err := sparse.NormalizedLaplacian(s)
	if err != nil {
		t.Fatal(err)
	}
	op, err := sparse.NewSymCSR(l)
	if err != nil {
		t.Fatal(err)
	}
	x := randVec(rng, l.Rows)
	got := make([]float64, l.Rows)
	op.Apply(got, x) // parallel rows (nnz large enough)
	d := denseOf(l)
	var want mat.VecDense
	want.MulVec(d, mat.NewVecDense(l.Rows, x))
	if e := maxDiff(got, &want); e > 1e-13 {
		t.Errorf("SymCSR differs from dense product by %g", e)
	}
	if op.Matrix() != l || op.Dim() != l.Rows {
		t.Error("SymCSR does not wrap its matrix")
	}
	// Rejections.
	for _, tc := range []struct {
		name string
		a    *sparse.CSR
	}{
		{"nil", nil},
		{"not square", &sparse.CSR{Rows: 1, Cols: 2, Indptr: []int{0, 1}, Ind: []int{1}, Data: []float64{1}}},
		{"not symmetric", &sparse.CSR{Rows: 2, Cols: 2, Indptr: []int{0, 1, 2}, Ind: []int{1, 0}, Data: []float64{1, 2}}},
		{"missing transpose", &sparse.CSR{Rows: 2, Cols: 2, Indptr: []int{0, 1, 1}, Ind: []int{1}, Data: []float64{1}}},
		{"column out of range", &sparse.CSR{Rows: 2, Cols: 2, Indptr: []int{0, 1, 1}, Ind: []int{2}, Data: []float64{1}}},
		{"short indptr", &sparse.CSR{Rows: 2, Cols: 2, Indptr: []int{0, 0}}},
		{"NaN", &sparse.CSR{Rows: 1, Cols: 1, Indptr: []int{0, 1}, Ind: []int{0}, Data: []float64{math.NaN()}}},
	} {
		if _, err := sparse.NewSymCSR(tc.a); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	_, err = sparse.NewSymCSR(&sparse.CSR{Rows: 2, Cols: 2, Indptr: []int{0, 1, 2}, Ind: []int{1, 0}, Data: []float64{1, 2}})
	if !errors.Is(err, sparse.ErrNotSymmetric) {
		t.Errorf("non-symmetric: err = %v, want ErrNotSymmetric", err)
	}
}

func TestShiftedAndNormInf(t *testing.T) {
	a, err := sparse.NewCSRFromTriplets(3, 3, []int{0, 0, 1, 1, 2}, []int{0, 1, 0, 1, 2}, []float64{2, -3, -3, 1, 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if got := sparse.NormInf(a); got != 5 {
		t.Errorf("NormInf = %g, want 5", got)
	}
	op, err := sparse.NewSymCSR(a)
	if err != nil {
		t.Fatal(err)
	}
	sh := sparse.Shifted{Sigma: 5, A: op}
	x := []float64{1, 2, 3}
	got := make([]float64, 3)
	sh.Apply(got, x)
	want := []float64{5 - (2 - 6), 10 - (-3 + 2), 15 - 1.5}
	for i := range want {
		if got[i] != want[i] || sh.Dim() != 3 {
			t.Fatalf("Shifted: got %v, want %v", got, want)
		}
	}
}

func TestGramOperator(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	const n, d, m = 300, 23, 2000
	x := randData(rng, n, d)
	pairs := make([]sparse.Pair, 0, m)
	w := make([]float64, 0, m)
	for len(pairs) < m {
		a, b := rng.IntN(n), rng.IntN(n)
		if a != b {
			pairs = append(pairs, sparse.Pair{A: a, B: b})
			w = append(w, rng.NormFloat64())
		}
	}
	g, err := sparse.NewPairGraph(n, pairs)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.SetWeights(w); err != nil {
		t.Fatal(err)
	}
	// Reference: Σ_pairs w (x_a − x_b)(x_a − x_b)ᵀ, formed densely.
	ref := mat.NewDense(d, d, nil)
	diff := make([]float64, d)
	for k, p := range pairs {
		for j := range diff {
			diff[j] = x.At(p.A, j) - x.At(p.B, j)
		}
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				ref.Set(i, j, ref.At(i, j)+w[k]*diff[i]*diff[j])
			}
		}
	}
	v := randVec(rng, d)
	var want mat.VecDense
	want.MulVec(ref, mat.NewVecDense(d, v))
	scale := mat.Norm(ref, math.Inf(1)) * mat.Norm(mat.NewVecDense(d, v), math.Inf(1))
	for _, impl := range blasImpls {
		op, err := sparse.NewGramOperator(x, g, impl.b)
		if err != nil {
			t.Fatal(err)
		}
		if op.Dim() != d {
			t.Fatalf("Dim = %d, want %d", op.Dim(), d)
		}
		// Concurrent applies share the operator's scratch pool.
		var wg sync.WaitGroup
		results := make([][]float64, 4)
		for r := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[r] = make([]float64, d)
				op.Apply(results[r], v)
			}()
		}
		wg.Wait()
		for r, got := range results {
			if e := maxDiff(got, &want); e > 1e-12*scale {
				t.Errorf("%s: apply %d differs from dense Xᵀ L_W X v by %g (scale %g)", impl.name, r, e, scale)
			}
		}
	}
	if _, err := sparse.NewGramOperator(randData(rng, n+1, d), g, nil); err == nil {
		t.Error("row mismatch: no error")
	}
	if _, err := sparse.NewGramOperator(nil, g, nil); err == nil {
		t.Error("nil data: no error")
	}
}
