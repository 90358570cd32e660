package sparse

import (
	"fmt"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// bruteKNN is the reference: all distances, exact, sorted by (dist, index).
func bruteKNN(q, ref *mat.Dense, k int, self bool) ([]int, []float64) {
	nq, d := q.Dims()
	nr, _ := ref.Dims()
	idx := make([]int, 0, nq*k)
	dist := make([]float64, 0, nq*k)
	for i := 0; i < nq; i++ {
		type c struct {
			d float64
			j int
		}
		var cs []c
		for j := 0; j < nr; j++ {
			if self && i == j {
				continue
			}
			var s float64
			for l := 0; l < d; l++ {
				e := q.At(i, l) - ref.At(j, l)
				s += e * e
			}
			cs = append(cs, c{s, j})
		}
		sort.Slice(cs, func(a, b int) bool { return cs[a].d < cs[b].d || (cs[a].d == cs[b].d && cs[a].j < cs[b].j) })
		for t := 0; t < k; t++ {
			idx = append(idx, cs[t].j)
			dist = append(dist, cs[t].d)
		}
	}
	return idx, dist
}

func randDense(rng *rand.Rand, r, c int) *mat.Dense {
	m := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			m.Set(i, j, rng.NormFloat64())
		}
	}
	return m
}

func TestKNNMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	impls := map[string]blas.Float64{"go": gonum.Implementation{}, "native": nativeBLAS}
	for _, tc := range []struct {
		name       string
		nq, nr, d  int
		k          int
		self, dups bool
	}{
		{"self-small", 50, 50, 3, 5, true, false},
		{"self-blocks", 700, 700, 7, 9, true, false},
		{"self-panels", 1300, 1300, 5, 4, true, false},
		{"cross-blocks", 300, 2500, 16, 3, false, false},
		{"duplicates-ties", 400, 400, 2, 6, true, true},
		// Candidate lists past sortedMax are heaps.
		{"self-long-lists", 900, 900, 6, 40, true, false},
		{"cross-long-lists", 200, 1500, 5, 35, false, false},
		{"duplicates-ties-long-lists", 600, 600, 2, 30, true, true},
	} {
		for iname, impl := range impls {
			t.Run(tc.name+"/"+iname, func(t *testing.T) {
				ref := randDense(rng, tc.nr, tc.d)
				if tc.dups {
					// Round to a coarse grid so that many distances tie exactly.
					for i := 0; i < tc.nr; i++ {
						for j := 0; j < tc.d; j++ {
							ref.Set(i, j, float64(int(ref.At(i, j)*2)))
						}
					}
				}
				q := ref
				if !tc.self {
					q = randDense(rng, tc.nq, tc.d)
				}
				got, err := KNNBLAS(impl, q, ref, tc.k, tc.self)
				if err != nil {
					t.Fatal(err)
				}
				wi, wd := bruteKNN(q, ref, tc.k, tc.self)
				for p := range wi {
					if got.Index[p] != wi[p] || got.Dist[p] != wd[p] {
						t.Fatalf("query %d rank %d: got (%d, %g), want (%d, %g)", p/tc.k, p%tc.k, got.Index[p], got.Dist[p], wi[p], wd[p])
					}
				}
			})
		}
	}
}

func TestKNNErrors(t *testing.T) {
	a := mat.NewDense(5, 2, nil)
	b := mat.NewDense(5, 3, nil)
	nan := mat.NewDense(5, 2, nil)
	nan.Set(2, 1, math.NaN())
	for _, tc := range []struct {
		name   string
		q, ref *mat.Dense
		k      int
		self   bool
	}{
		{"k too large self", a, a, 5, true},
		{"k zero", a, a, 0, true},
		{"dims", a, b, 1, false},
		{"self with different matrices", a, mat.DenseCopyOf(a), 1, true},
		{"nan", nan, nan, 1, true},
		{"nil", nil, a, 1, false},
	} {
		if _, err := KNN(tc.q, tc.ref, tc.k, tc.self); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func BenchmarkKNN(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	x := randDense(rng, 10000, 16)
	for name, impl := range map[string]blas.Float64{"go": gonum.Implementation{}, "native": nativeBLAS} {
		b.Run("backend="+name+"/N=10000/D=16/k=10", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := KNNBLAS(impl, x, x, 10, true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkKNNSelfWide is the self-search of LMNN's impostor refresh and of
// triplet generation at MNIST's 164 principal components: the GEMM screen
// with a short (k = 6) and a long (k = 80) candidate list.
func BenchmarkKNNSelfWide(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := randDense(rng, 20000, 164)
	for _, k := range []int{6, 41, 80} {
		b.Run(fmt.Sprintf("N=20000/D=164/k=%d", k), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := KNNBLAS(nativeBLAS, x, x, k, true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// lowDimData returns n points on a gently curved 2-D sheet in d dimensions
// (plus small noise), the kind of data on which the k-d tree prunes; with
// grid true the sheet coordinates are rounded so that many distances tie.
func lowDimData(rng *rand.Rand, n, d int, grid bool) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		u, v := rng.Float64()*4, rng.Float64()*4
		if grid {
			u, v = math.Round(u*8)/8, math.Round(v*8)/8
		}
		for j := 0; j < d; j++ {
			fj := float64(j)
			val := math.Cos(fj)*u + math.Sin(fj)*v + 0.2*math.Sin(u+v+fj)
			if !grid {
				val += 1e-3 * rng.NormFloat64()
			}
			x.Set(i, j, val)
		}
	}
	return x
}

// TestKNNTreeMatchesScreen checks the k-d tree against the brute-force
// reference and the GEMM screen, bit for bit, on data where the pilot picks
// the tree, including exact ties, and that the pilot declines the tree on
// isotropic 32-dimensional noise (where it would examine most rows).
func TestKNNTreeMatchesScreen(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		name      string
		nq, nr, d int
		k         int
		self      bool
		grid      bool
	}{
		{"self-sheet16", 3000, 3000, 16, 7, true, false},
		{"cross-sheet8", 2500, 4000, 8, 3, false, false},
		{"self-grid-ties", 2500, 2500, 5, 9, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref := lowDimData(rng, tc.nr, tc.d, tc.grid)
			q := ref
			if !tc.self {
				q = lowDimData(rng, tc.nq, tc.d, tc.grid)
			}
			rr, qr := ref.RawMatrix(), q.RawMatrix()
			probe := &Neighbors{K: tc.k, Index: make([]int, tc.nq*tc.k), Dist: make([]float64, tc.nq*tc.k)}
			if !tryKDTree(qr, rr, tc.nq, tc.nr, tc.d, tc.k, tc.self, probe) {
				t.Fatal("the pilot declined the tree on low-dimensional data")
			}
			screen, err := knnBLAS(gonum.Implementation{}, q, ref, tc.k, tc.self, false)
			if err != nil {
				t.Fatal(err)
			}
			wi, wd := bruteKNN(q, ref, tc.k, tc.self)
			for p := range wi {
				if probe.Index[p] != wi[p] || probe.Dist[p] != wd[p] {
					t.Fatalf("tree: query %d rank %d: got (%d, %g), want (%d, %g)", p/tc.k, p%tc.k, probe.Index[p], probe.Dist[p], wi[p], wd[p])
				}
				if screen.Index[p] != wi[p] || screen.Dist[p] != wd[p] {
					t.Fatalf("screen: query %d rank %d: got (%d, %g), want (%d, %g)", p/tc.k, p%tc.k, screen.Index[p], screen.Dist[p], wi[p], wd[p])
				}
			}
		})
	}
	t.Run("declines-noise32", func(t *testing.T) {
		x := randDense(rng, 3000, 32)
		r := x.RawMatrix()
		nb := &Neighbors{K: 5, Index: make([]int, 3000*5), Dist: make([]float64, 3000*5)}
		if tryKDTree(r, r, 3000, 3000, 32, 5, true, nb) {
			t.Fatal("the pilot chose the tree on 32-dimensional noise")
		}
	})
}

// TestKNNScreenFallback checks the single-precision screen's certificate on
// data where it must fail: points on an integer grid, so that many
// candidates tie exactly with references the screen left out. Those queries
// are answered by the exact pass, and every answer matches brute force.
func TestKNNScreenFallback(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	x := mat.NewDense(1500, 3, nil)
	for i := 0; i < 1500; i++ {
		for j := 0; j < 3; j++ {
			x.Set(i, j, float64(rng.IntN(6)))
		}
	}
	before := screenFallbacks.Load()
	got, err := knnBLAS(nativeBLAS, x, x, 4, true, false)
	if err != nil {
		t.Fatal(err)
	}
	if screenFallbacks.Load() == before {
		t.Fatal("no query fell back to the exact pass on exact ties")
	}
	wi, wd := bruteKNN(x, x, 4, true)
	for p := range wi {
		if got.Index[p] != wi[p] || got.Dist[p] != wd[p] {
			t.Fatalf("query %d rank %d: got (%d, %g), want (%d, %g)", p/4, p%4, got.Index[p], got.Dist[p], wi[p], wd[p])
		}
	}
}

// TestKNNScreenOutlierNorms checks the screen on data whose references have
// very different norms, the shape of standardised raw pixels: most features
// are noise of unit scale, and a few are zero except in one row, where they
// are hundreds. The uniform error bound, which grows with the largest
// reference norm, could certify hardly any query of such data, and every
// uncertified query costs an exact pass over all references. Every answer
// must match brute force, and at most 1% of the queries may fall back.
func TestKNNScreenOutlierNorms(t *testing.T) {
	for _, tc := range []struct {
		n, d, outliers int
		scale          float64
		seed           uint64
	}{
		{1000, 64, 10, 300, 1},
		{1000, 128, 40, 1000, 2},
		{1200, 200, 5, 3000, 3},
	} {
		t.Run(fmt.Sprintf("n%d-d%d-x%g", tc.n, tc.d, tc.scale), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(tc.seed, 11))
			x := randDense(rng, tc.n, tc.d)
			for o := 0; o < tc.outliers; o++ {
				x.Set(rng.IntN(tc.n), rng.IntN(tc.d), tc.scale*(1+rng.Float64()))
			}
			before := screenFallbacks.Load()
			got, err := knnBLAS(nativeBLAS, x, x, 3, true, false)
			if err != nil {
				t.Fatal(err)
			}
			if fb := screenFallbacks.Load() - before; fb > int64(tc.n/100) {
				t.Errorf("%d of %d queries fell back to the exact pass", fb, tc.n)
			}
			wi, wd := bruteKNN(x, x, 3, true)
			for p := range wi {
				if got.Index[p] != wi[p] || got.Dist[p] != wd[p] {
					t.Fatalf("query %d rank %d: got (%d, %g), want (%d, %g)", p/3, p%3, got.Index[p], got.Dist[p], wi[p], wd[p])
				}
			}
		})
	}
}
