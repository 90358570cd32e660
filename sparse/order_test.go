package sparse_test

import (
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/psdlearn/psdlearn/sparse"
)

// TestCuthillMcKee checks the ordering on known graphs: a path whose
// points were shuffled comes back with bandwidth 1 (every edge joins
// consecutive numbers), two components are numbered one after the other,
// and the result is always a permutation; PermuteSym moves every entry
// (i, j) to (inv[i], inv[j]) with sorted rows; bad input gives errors.
func TestCuthillMcKee(t *testing.T) {
	const n = 200
	rng := rand.New(rand.NewPCG(1, 2))
	shuffle := rng.Perm(n)
	// A path 0–1–…–(n−1) on shuffled labels, plus a diagonal, and a
	// second component: two points joined to each other.
	rows := make([]map[int]float64, n+2)
	for i := range rows {
		rows[i] = map[int]float64{}
	}
	for k := 0; k+1 < n; k++ {
		a, b := shuffle[k], shuffle[k+1]
		rows[a][b], rows[b][a] = 1, 1
	}
	for i := 0; i < n; i++ {
		rows[i][i] = 2
	}
	rows[n][n+1], rows[n+1][n] = 3, 3
	a := &sparse.CSR{Rows: n + 2, Cols: n + 2, Indptr: make([]int, n+3)}
	for i, r := range rows {
		for _, j := range slices.Sorted(maps.Keys(r)) {
			a.Ind = append(a.Ind, j)
			a.Data = append(a.Data, r[j])
		}
		a.Indptr[i+1] = len(a.Ind)
	}
	perm, err := sparse.CuthillMcKee(a)
	if err != nil {
		t.Fatal(err)
	}
	if s := slices.Sorted(slices.Values(perm)); !slices.Equal(s, seq(n+2)) {
		t.Fatal("not a permutation")
	}
	p, err := sparse.PermuteSym(a, perm)
	if err != nil {
		t.Fatal(err)
	}
	inv := make([]int, n+2)
	for k, i := range perm {
		inv[i] = k
	}
	for i := 0; i < n+2; i++ {
		ind := p.Ind[p.Indptr[i]:p.Indptr[i+1]]
		if !slices.IsSorted(ind) {
			t.Fatalf("row %d not sorted: %v", i, ind)
		}
		for q, j := range ind {
			if j < i-1 || j > i+1 {
				t.Errorf("entry (%d, %d): bandwidth above 1", i, j)
			}
			if v, want := p.Data[p.Indptr[i]+q], a.At(perm[i], perm[j]); v != want {
				t.Errorf("entry (%d, %d) = %v, a has %v at (%d, %d)", i, j, v, want, perm[i], perm[j])
			}
		}
	}
	if p.NNZ() != a.NNZ() {
		t.Errorf("%d entries after permuting, %d before", p.NNZ(), a.NNZ())
	}
	if _, err := sparse.CuthillMcKee(&sparse.CSR{Rows: 2, Cols: 3, Indptr: []int{0, 0, 0}}); !errors.Is(err, sparse.ErrInvalidMatrix) {
		t.Errorf("not square: %v", err)
	}
	if _, err := sparse.CuthillMcKee(&sparse.CSR{Rows: 2, Cols: 2, Indptr: []int{0, 1, 1}, Ind: []int{5}, Data: []float64{1}}); !errors.Is(err, sparse.ErrInvalidMatrix) {
		t.Errorf("column out of range: %v", err)
	}
	if _, err := sparse.PermuteSym(a, append(perm[:n+1:n+1], perm[0])); !errors.Is(err, sparse.ErrInvalidMatrix) {
		t.Errorf("repeated index: %v", err)
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
