package sparse

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/psdlearn/psdlearn/lapack"
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
	impls := map[string]lapack.BLAS{"go": lapack.GoBLAS, "native": lapack.NativeBLAS}
	for _, tc := range []struct {
		name       string
		nq, nr, d  int
		k          int
		self, dups bool
	}{
		{"self-small", 50, 50, 3, 5, true, false},
		{"self-blocks", 700, 700, 7, 9, true, false},
		{"cross-blocks", 300, 2500, 16, 3, false, false},
		{"duplicates-ties", 400, 400, 2, 6, true, true},
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
	for name, impl := range map[string]lapack.BLAS{"go": lapack.GoBLAS, "native": lapack.NativeBLAS} {
		b.Run("backend="+name+"/N=10000/D=16/k=10", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := KNNBLAS(impl, x, x, 10, true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
