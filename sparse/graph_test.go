package sparse_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/psdlearn/psdlearn/lapack"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

func randData(rng *rand.Rand, n, d int) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, rng.NormFloat64())
		}
	}
	return x
}

// denseOf returns a CSR matrix as a dense one.
func denseOf(a *sparse.CSR) *mat.Dense {
	d := mat.NewDense(a.Rows, a.Cols, nil)
	for i := 0; i < a.Rows; i++ {
		for p := a.Indptr[i]; p < a.Indptr[i+1]; p++ {
			d.Set(i, a.Ind[p], a.Data[p])
		}
	}
	return d
}

// bruteNeighbors lists the k nearest other rows of x by squared distance (ties by index).
func bruteNeighbors(x *mat.Dense, k int) ([][]int, [][]float64) {
	n, d := x.Dims()
	idx := make([][]int, n)
	dist := make([][]float64, n)
	for i := 0; i < n; i++ {
		type cand struct {
			d float64
			j int
		}
		var cs []cand
		for j := 0; j < n; j++ {
			if j == i {
				continue
			}
			var s float64
			for l := 0; l < d; l++ {
				e := x.At(i, l) - x.At(j, l)
				s += e * e
			}
			cs = append(cs, cand{s, j})
		}
		sort.Slice(cs, func(a, b int) bool { return cs[a].d < cs[b].d || (cs[a].d == cs[b].d && cs[a].j < cs[b].j) })
		for _, c := range cs[:k] {
			idx[i] = append(idx[i], c.j)
			dist[i] = append(dist[i], c.d)
		}
	}
	return idx, dist
}

func TestKNNGraphMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	const n, d, k = 300, 5, 6
	x := randData(rng, n, d)
	idx, dist := bruteNeighbors(x, k)
	isNb := func(i, j int) (bool, float64) {
		for t, v := range idx[i] {
			if v == j {
				return true, dist[i][t]
			}
		}
		return false, 0
	}
	var sumD float64
	for i := range dist {
		for _, v := range dist[i] {
			sumD += v
		}
	}
	s2 := sumD / float64(n*k)
	for _, impl := range []struct {
		name string
		b    lapack.BLAS
	}{{"go", lapack.GoBLAS}, {"native", lapack.NativeBLAS}} {
		for _, opt := range []sparse.GraphOptions{
			{Symmetrize: sparse.Union},
			{Symmetrize: sparse.Mutual},
			{Symmetrize: sparse.Average},
			{Symmetrize: sparse.Union, Weight: sparse.Heat},
			{Symmetrize: sparse.Average, Weight: sparse.Heat, Sigma: 0.7},
		} {
			name := fmt.Sprintf("%s/%+v", impl.name, opt)
			s, err := sparse.KNNGraphBLAS(impl.b, x, k, opt)
			if err != nil {
				t.Fatal(err)
			}
			got := denseOf(s)
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					a, dij := isNb(i, j)
					b, dji := isNb(j, i)
					if a && b && dij != dji {
						t.Fatalf("distance not symmetric")
					}
					dd := math.Max(dij, dji)
					w := 1.0
					if opt.Weight == sparse.Heat {
						sig2 := s2
						if opt.Sigma != 0 {
							sig2 = opt.Sigma * opt.Sigma
						}
						w = math.Exp(-dd / (2 * sig2))
					}
					var want float64
					switch opt.Symmetrize {
					case sparse.Union:
						if a || b {
							want = w
						}
					case sparse.Mutual:
						if a && b {
							want = w
						}
					case sparse.Average:
						if a {
							want += w / 2
						}
						if b {
							want += w / 2
						}
					}
					if g := got.At(i, j); math.Abs(g-want) > 1e-12 {
						t.Fatalf("%s: S[%d,%d] = %g, want %g", name, i, j, g, want)
					}
				}
			}
			if _, err := sparse.NewSymCSR(s); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
}

func TestLaplacians(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	x := randData(rng, 120, 3)
	s, err := sparse.KNNGraph(x, 4, sparse.GraphOptions{Weight: sparse.Heat})
	if err != nil {
		t.Fatal(err)
	}
	// Add an isolated point (row/column of zeros) by building a bigger matrix.
	n := s.Rows + 1
	var is, js []int
	var vs []float64
	for i := 0; i < s.Rows; i++ {
		for p := s.Indptr[i]; p < s.Indptr[i+1]; p++ {
			is, js, vs = append(is, i), append(js, s.Ind[p]), append(vs, s.Data[p])
		}
	}
	s2, err := sparse.NewCSRFromTriplets(n, n, is, js, vs)
	if err != nil {
		t.Fatal(err)
	}
	deg := sparse.Degrees(s2)
	sd := denseOf(s2)

	l, err := sparse.Laplacian(s2)
	if err != nil {
		t.Fatal(err)
	}
	ld := denseOf(l)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			want := -sd.At(i, j)
			if i == j {
				want = deg[i]
			}
			if math.Abs(ld.At(i, j)-want) > 1e-14 {
				t.Fatalf("Laplacian[%d,%d] = %g, want %g", i, j, ld.At(i, j), want)
			}
		}
	}

	nl, err := sparse.NormalizedLaplacian(s2)
	if err != nil {
		t.Fatal(err)
	}
	op, err := sparse.NewSymCSR(nl) // exactly symmetric
	if err != nil {
		t.Fatal(err)
	}
	nd := denseOf(nl)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			var want float64
			switch {
			case i == j:
				want = 1
			case deg[i] > 0 && deg[j] > 0:
				want = -sd.At(i, j) / math.Sqrt(deg[i]*deg[j])
			}
			if math.Abs(nd.At(i, j)-want) > 1e-14 {
				t.Fatalf("normalised Laplacian[%d,%d] = %g, want %g", i, j, nd.At(i, j), want)
			}
		}
	}
	// D^{1/2}·1 on each component is in the null space; the spectrum lies in [0, 2].
	labels, nc := sparse.ConnectedComponents(s2)
	if labels[n-1] != nc-1 {
		t.Errorf("isolated point has label %d of %d components", labels[n-1], nc)
	}
	for c := 0; c < nc; c++ {
		u := make([]float64, n)
		for i, lab := range labels {
			if lab == c {
				u[i] = math.Sqrt(deg[i])
			}
		}
		lu := make([]float64, n)
		op.Apply(lu, u)
		for i, v := range lu {
			if math.Abs(v) > 1e-13 {
				t.Fatalf("component %d: (L·D^{1/2}1)[%d] = %g", c, i, v)
			}
		}
	}
	sym := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			sym.SetSym(i, j, nd.At(i, j))
		}
	}
	var es mat.EigenSym
	if !es.Factorize(sym, false) {
		t.Fatal("eigendecomposition failed")
	}
	vals := es.Values(nil)
	zeros := 0
	for _, v := range vals {
		if v < -1e-12 || v > 2+1e-12 {
			t.Errorf("normalised Laplacian eigenvalue %g outside [0, 2]", v)
		}
		if math.Abs(v) < 1e-10 {
			zeros++
		}
	}
	if zeros != nc-1 { // the isolated point's row is the identity's: eigenvalue 1
		t.Errorf("%d zero eigenvalues, want %d (components without isolated points)", zeros, nc-1)
	}
}

func TestGraphErrors(t *testing.T) {
	if _, err := sparse.NormalizedLaplacian(&sparse.CSR{Rows: 2, Cols: 2, Indptr: []int{0, 1, 1}, Ind: []int{1}, Data: []float64{1}}); !errors.Is(err, sparse.ErrNotSymmetric) {
		t.Errorf("non-symmetric similarity: err = %v", err)
	}
	neg := &sparse.CSR{Rows: 2, Cols: 2, Indptr: []int{0, 1, 2}, Ind: []int{1, 0}, Data: []float64{-1, -1}}
	if _, err := sparse.NormalizedLaplacian(neg); !errors.Is(err, sparse.ErrInvalidMatrix) {
		t.Errorf("negative similarity: err = %v", err)
	}
	if _, err := sparse.Laplacian(&sparse.CSR{Rows: 2, Cols: 3, Indptr: []int{0, 0, 0}}); err == nil {
		t.Error("non-square similarity: no error")
	}
	bad := &sparse.CSR{Rows: 2, Cols: 2, Indptr: []int{0, 2, 2}, Ind: []int{1, 0}, Data: []float64{1, 1}}
	if _, err := sparse.Laplacian(bad); err == nil {
		t.Error("unsorted columns: no error")
	}
	if _, err := sparse.KNNGraph(mat.NewDense(5, 2, nil), 5, sparse.GraphOptions{}); err == nil {
		t.Error("k = n: no error")
	}
	if _, err := sparse.KNNGraph(mat.NewDense(5, 2, nil), 2, sparse.GraphOptions{Weight: sparse.Heat}); !errors.Is(err, sparse.ErrInvalidMatrix) {
		t.Errorf("heat kernel on identical points (σ = 0): err = %v", err)
	}
	if _, err := sparse.KNNGraph(mat.NewDense(5, 2, nil), 2, sparse.GraphOptions{Symmetrize: 9}); !errors.Is(err, sparse.ErrInvalidMatrix) {
		t.Errorf("unknown symmetrization: err = %v", err)
	}
	if _, err := sparse.NewCSRFromTriplets(2, 2, []int{0, 2}, []int{0, 0}, []float64{1, 1}); !errors.Is(err, sparse.ErrInvalidMatrix) {
		t.Errorf("out-of-range triplet: err = %v", err)
	}
	if _, err := sparse.NewCSRFromTriplets(2, 2, []int{0}, []int{0}, []float64{math.NaN()}); !errors.Is(err, sparse.ErrInvalidMatrix) {
		t.Errorf("NaN triplet: err = %v", err)
	}
}

func TestNewCSRFromTriplets(t *testing.T) {
	a, err := sparse.NewCSRFromTriplets(3, 4,
		[]int{2, 0, 2, 0, 1, 2},
		[]int{3, 1, 0, 1, 2, 3},
		[]float64{1, 2, 3, 4, 5, 6})
	if err != nil {
		t.Fatal(err)
	}
	want := mat.NewDense(3, 4, []float64{
		0, 6, 0, 0,
		0, 0, 5, 0,
		3, 0, 0, 7,
	})
	if !mat.Equal(denseOf(a), want) || a.NNZ() != 4 {
		t.Errorf("got\n%v\nwant\n%v", mat.Formatted(denseOf(a)), mat.Formatted(want))
	}
}

func TestConnectedComponents(t *testing.T) {
	// 0-1-2 path, 3 alone, 4-5 edge.
	a, err := sparse.NewCSRFromTriplets(6, 6, []int{0, 1, 1, 2, 4, 5}, []int{1, 0, 2, 1, 5, 4}, []float64{1, 1, 1, 1, 1, 1})
	if err != nil {
		t.Fatal(err)
	}
	labels, n := sparse.ConnectedComponents(a)
	want := []int{0, 0, 0, 1, 2, 2}
	if n != 3 || fmt.Sprint(labels) != fmt.Sprint(want) {
		t.Errorf("labels %v (%d components), want %v (3)", labels, n, want)
	}
}

// BenchmarkKNNGraph times the binary union k = 10 kNN similarity graph of
// random 16-dimensional data (the size of letters.csv at N = 20000).
func BenchmarkKNNGraph(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{5000, 20000} {
		x := randData(rng, n, 16)
		for _, impl := range []struct {
			name string
			b    lapack.BLAS
		}{{"go", lapack.GoBLAS}, {"native", lapack.NativeBLAS}} {
			b.Run(fmt.Sprintf("backend=%s/N=%d", impl.name, n), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, err := sparse.KNNGraphBLAS(impl.b, x, 10, sparse.GraphOptions{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// KNNGraph and NormalizedLaplacian build the sparse graph Laplacian used by
// SimpleNPKL and the MVU embedding.
func ExampleNormalizedLaplacian() {
	// Six points on a line, in two well-separated groups.
	x := mat.NewDense(6, 1, []float64{0, 1, 2, 10, 11, 12})
	s, err := sparse.KNNGraph(x, 1, sparse.GraphOptions{Symmetrize: sparse.Union})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, nc := sparse.ConnectedComponents(s)
	l, err := sparse.NormalizedLaplacian(s)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("components:", nc)
	fmt.Printf("%.4f\n", mat.Formatted(denseOf(l)))
	// Output:
	// components: 2
	// ⎡ 1.0000  -0.7071   0.0000   0.0000   0.0000   0.0000⎤
	// ⎢-0.7071   1.0000  -0.7071   0.0000   0.0000   0.0000⎥
	// ⎢ 0.0000  -0.7071   1.0000   0.0000   0.0000   0.0000⎥
	// ⎢ 0.0000   0.0000   0.0000   1.0000  -0.7071   0.0000⎥
	// ⎢ 0.0000   0.0000   0.0000  -0.7071   1.0000  -0.7071⎥
	// ⎣ 0.0000   0.0000   0.0000   0.0000  -0.7071   1.0000⎦
}
