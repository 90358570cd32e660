package constraints

import (
	"errors"
	"slices"
	"testing"

	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// TestLocalityOrderRelabel checks that LocalityOrder is a permutation, that
// it is deterministic, and that the relabelled set on the permuted rows has
// the same margins, triplet for triplet, bit for bit.
func TestLocalityOrderRelabel(t *testing.T) {
	x, y := randPoints(3, 300, 5, 4)
	ts, err := Triplets(x, y, 3)
	if err != nil {
		t.Fatal(err)
	}
	perm := ts.LocalityOrder()
	if len(perm) != ts.N {
		t.Fatalf("order has %d entries for %d points", len(perm), ts.N)
	}
	seen := make([]bool, ts.N)
	for _, p := range perm {
		if p < 0 || p >= ts.N || seen[p] {
			t.Fatalf("not a permutation: %d", p)
		}
		seen[p] = true
	}
	if again := ts.LocalityOrder(); !slices.Equal(again, perm) {
		t.Fatal("LocalityOrder is not deterministic")
	}
	rts, err := ts.Relabel(perm)
	if err != nil {
		t.Fatal(err)
	}
	n, d := x.Dims()
	xp := mat.NewDense(n, d, nil)
	for k, p := range perm {
		xp.SetRow(k, x.RawRowView(p))
	}
	margins := func(x *mat.Dense, s *TripletSet) []float64 {
		pv := make([]float64, len(s.Pairs))
		for k, p := range s.Pairs {
			var sq float64
			for j := 0; j < d; j++ {
				e := x.At(p.A, j) - x.At(p.B, j)
				sq += e * e
			}
			pv[k] = sq
		}
		h := make([]float64, s.Len())
		s.Margins(h, pv)
		return h
	}
	h0, h1 := margins(x, ts), margins(xp, rts)
	for r := range h0 {
		if h0[r] != h1[r] {
			t.Fatalf("triplet %d: margin %v after relabelling, %v before", r, h1[r], h0[r])
		}
	}
	// The renumbering gathers pairs: the mean index distance of a pair drops.
	spread := func(ps []sparse.Pair) float64 {
		var s float64
		for _, p := range ps {
			s += float64(p.B - p.A)
		}
		return s / float64(len(ps))
	}
	if before, after := spread(ts.Pairs), spread(rts.Pairs); !(after < before/2) {
		t.Errorf("mean pair index distance %.1f after renumbering, %.1f before: want less than half", after, before)
	}
}

func TestRelabelErrors(t *testing.T) {
	ts, err := NewTripletSet(4, []Triplet{{0, 1, 2}, {3, 2, 1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, perm := range [][]int{{0, 1, 2}, {0, 1, 2, 2}, {0, 1, 2, 4}, {-1, 0, 1, 2}} {
		if _, err := ts.Relabel(perm); !errors.Is(err, ErrInvalid) {
			t.Errorf("Relabel(%v) = %v, want ErrInvalid", perm, err)
		}
	}
}

// TestRestrict checks Restrict against its definition: the chosen triplets
// in order, on the points they touch renumbered increasingly, and a
// refusal of an index out of range.
func TestRestrict(t *testing.T) {
	ts := []Triplet{{0, 5, 9}, {3, 1, 7}, {9, 0, 5}, {2, 4, 6}, {7, 8, 3}}
	s, err := NewTripletSet(10, ts)
	if err != nil {
		t.Fatal(err)
	}
	idx := []int{4, 0, 2}
	rows, sub, err := s.Restrict(idx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 3, 5, 7, 8, 9}; !slices.Equal(rows, want) {
		t.Fatalf("rows %v, want %v", rows, want)
	}
	if sub.N != len(rows) || len(sub.Triplets) != len(idx) {
		t.Fatalf("sub has %d points and %d triplets", sub.N, len(sub.Triplets))
	}
	for k, r := range idx {
		got, want := sub.Triplets[k], ts[r]
		if rows[got.I] != want.I || rows[got.J] != want.J || rows[got.K] != want.K {
			t.Fatalf("triplet %d: %v on rows %v, want %v", k, got, rows, want)
		}
	}
	if err := sub.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Restrict([]int{1, 5}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("index out of range: %v", err)
	}
}
