package sparse

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"
)

// TestKNNByClassMatchesBruteForce compares the class-grouped search with
// sorting every distance, on continuous data and on small integers (many
// exact ties, broken by the identifiers), with classes of one, two and many
// rows, both BLAS implementations, and several query blocks.
func TestKNNByClassMatchesBruteForce(t *testing.T) {
	impls := map[string]blas.Float64{"go": gonum.Implementation{}, "native": nativeBLAS}
	for _, tc := range []struct {
		name          string
		sizes         []int
		d             int
		kSame, kOther int
		integer       bool
	}{
		{"continuous", []int{120, 1, 2, 300, 77}, 5, 3, 3, false},
		{"integer ties", []int{200, 150, 3, 260}, 4, 3, 5, true},
		{"more wanted than there are", []int{2, 1, 3}, 2, 4, 5, true},
		{"one class", []int{40}, 3, 2, 2, false},
		{"impostors only", []int{300, 280}, 6, 0, 2, false},
		// Classes across several blocks and GEMM panels: the symmetric
		// screen's row and column scans, and its merged worker lists.
		{"panels", []int{700, 3, 460, 300}, 6, 3, 3, false},
		{"panels integer ties", []int{530, 520}, 3, 3, 4, true},
	} {
		rng := rand.New(rand.NewPCG(uint64(len(tc.sizes)), uint64(tc.d)))
		start := []int{0}
		for _, s := range tc.sizes {
			start = append(start, start[len(start)-1]+s)
		}
		n := start[len(start)-1]
		x := mat.NewDense(n, tc.d, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < tc.d; j++ {
				if tc.integer {
					x.Set(i, j, float64(rng.IntN(4)))
				} else {
					x.Set(i, j, rng.NormFloat64())
				}
			}
		}
		id := rng.Perm(n)
		for name, impl := range impls {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				same, other, err := KNNByClass(impl, x, start, id, tc.kSame, tc.kOther)
				if err != nil {
					t.Fatal(err)
				}
				for c := 0; c+1 < len(start); c++ {
					for i := start[c]; i < start[c+1]; i++ {
						wantS, wantO := bruteByClass(x, start[c], start[c+1], i, id)
						check := func(what string, nb *Neighbors, want []cand2, k int) {
							idx, dist := nb.Row(i)
							for s := 0; s < k; s++ {
								if s >= len(want) {
									if idx[s] != -1 || !math.IsInf(dist[s], 1) {
										t.Fatalf("row %d %s[%d] = %d (%v), want padding", i, what, s, idx[s], dist[s])
									}
									continue
								}
								if idx[s] != want[s].idx || dist[s] != want[s].dist {
									t.Fatalf("row %d %s[%d] = %d (%v), brute force %d (%v)", i, what, s, idx[s], dist[s], want[s].idx, want[s].dist)
								}
							}
						}
						check("same", same, wantS, tc.kSame)
						check("other", other, wantO, tc.kOther)
					}
				}
			})
		}
	}
}

// bruteByClass sorts row i's exact distances to its class [lo, hi) and to
// the other rows by (distance, identifier).
func bruteByClass(x *mat.Dense, lo, hi, i int, id []int) (same, other []cand2) {
	n, _ := x.Dims()
	for j := 0; j < n; j++ {
		if j == i {
			continue
		}
		c := cand2{exactSqDist(x.RawRowView(i), x.RawRowView(j)), id[j]}
		if j >= lo && j < hi {
			same = append(same, c)
		} else {
			other = append(other, c)
		}
	}
	slices.SortFunc(same, cand2.compare)
	slices.SortFunc(other, cand2.compare)
	return same, other
}

func TestKNNByClassErrors(t *testing.T) {
	x := mat.NewDense(4, 1, []float64{0, 1, 2, 3})
	for _, tc := range []struct {
		name  string
		start []int
		id    []int
		k     int
	}{
		{"boundaries short", []int{0, 3}, nil, 1},
		{"boundaries decrease", []int{0, 3, 2, 4}, nil, 1},
		{"boundaries not from 0", []int{1, 4}, nil, 1},
		{"identifiers", []int{0, 2, 4}, []int{0, 1}, 1},
		{"negative k", []int{0, 2, 4}, nil, -1},
	} {
		if _, _, err := KNNByClass(nil, x, tc.start, tc.id, tc.k, 1); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	x.Set(2, 0, math.NaN())
	if _, _, err := KNNByClass(nil, x, []int{0, 2, 4}, nil, 1, 1); err == nil {
		t.Error("NaN: no error")
	}
}

// TestKNNSplitMatchesBruteForce checks a split search of separate queries
// and references (ranges of any position and size, empty ones included)
// against sorting every distance, with integer data (ties) and identifiers.
func TestKNNSplitMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const nq, nr, d = 300, 700, 3
	q, ref := mat.NewDense(nq, d, nil), mat.NewDense(nr, d, nil)
	for _, m := range []*mat.Dense{q, ref} {
		r, c := m.Dims()
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				m.Set(i, j, float64(rng.IntN(5)))
			}
		}
	}
	ranges := make([][2]int, nq)
	for i := range ranges {
		lo := rng.IntN(nr + 1)
		ranges[i] = [2]int{lo, lo + rng.IntN(min(nr-lo, 60)+1)}
	}
	id := rng.Perm(nr)
	for name, impl := range map[string]blas.Float64{"go": gonum.Implementation{}, "native": nativeBLAS} {
		in, out, err := KNNSplit(impl, q, ref, ranges, id, 3, 4, false)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < nq; i++ {
			var wantIn, wantOut []cand2
			for j := 0; j < nr; j++ {
				c := cand2{exactSqDist(q.RawRowView(i), ref.RawRowView(j)), id[j]}
				if j >= ranges[i][0] && j < ranges[i][1] {
					wantIn = append(wantIn, c)
				} else {
					wantOut = append(wantOut, c)
				}
			}
			slices.SortFunc(wantIn, cand2.compare)
			slices.SortFunc(wantOut, cand2.compare)
			for _, side := range []struct {
				nb   *Neighbors
				want []cand2
			}{{in, wantIn}, {out, wantOut}} {
				idx, dist := side.nb.Row(i)
				for s := range idx {
					if s >= len(side.want) {
						if idx[s] != -1 || !math.IsInf(dist[s], 1) {
							t.Fatalf("%s: query %d entry %d = %d, want padding", name, i, s, idx[s])
						}
					} else if idx[s] != side.want[s].idx || dist[s] != side.want[s].dist {
						t.Fatalf("%s: query %d entry %d = %d (%v), brute force %d (%v)", name, i, s, idx[s], dist[s], side.want[s].idx, side.want[s].dist)
					}
				}
			}
		}
	}
}
