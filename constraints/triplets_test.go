package constraints

import (
	"math/rand/v2"
	"testing"
)

// TestTripletSetIndex checks the pair index of a triplet set built on
// enough points to span several locality blocks: every triplet's Imp and
// Tgt name its own pairs, the pairs are distinct with A < B, they are in
// block order, and PairWeights/Margins agree with a per-triplet computation.
func TestTripletSetIndex(t *testing.T) {
	const n = 3*pairBlockRows + 17
	rng := rand.New(rand.NewPCG(3, 5))
	ts := make([]Triplet, 0, 20000)
	for len(ts) < cap(ts) {
		i, j, k := rng.IntN(n), rng.IntN(n), rng.IntN(n)
		if i == j || i == k || j == k {
			continue
		}
		ts = append(ts, Triplet{I: i, J: j, K: k})
		if rng.IntN(4) == 0 && len(ts) < cap(ts) { // repeated pairs
			ts = append(ts, Triplet{I: j, J: i, K: k})
		}
	}
	s, err := NewTripletSet(n, ts)
	if err != nil {
		t.Fatal(err)
	}
	norm := func(a, b int) [2]int {
		if a > b {
			a, b = b, a
		}
		return [2]int{a, b}
	}
	seen := make(map[[2]int]bool, len(s.Pairs))
	for k, p := range s.Pairs {
		if p.A >= p.B {
			t.Fatalf("pair %d = %v: want A < B", k, p)
		}
		if seen[[2]int{p.A, p.B}] {
			t.Fatalf("pair %v listed twice", p)
		}
		seen[[2]int{p.A, p.B}] = true
		if k > 0 {
			q := s.Pairs[k-1]
			bq, bp := q.A/pairBlockRows, p.A/pairBlockRows
			if bq > bp || (bq == bp && (q.B > p.B || (q.B == p.B && q.A > p.A))) {
				t.Fatalf("pairs %d, %d = %v, %v out of block order", k-1, k, q, p)
			}
		}
	}
	for r, tr := range ts {
		if got := s.Pairs[s.Imp[r]]; [2]int{got.A, got.B} != norm(tr.I, tr.K) {
			t.Fatalf("triplet %d %v: impostor pair %v", r, tr, got)
		}
		if got := s.Pairs[s.Tgt[r]]; [2]int{got.A, got.B} != norm(tr.I, tr.J) {
			t.Fatalf("triplet %d %v: target pair %v", r, tr, got)
		}
	}
	// Margins from arbitrary per-pair values: value(I,K) − value(I,J).
	value := func(a, b int) float64 { p := norm(a, b); return float64(p[0]*7+p[1]*3) / 11 }
	pv := make([]float64, len(s.Pairs))
	for k, p := range s.Pairs {
		pv[k] = value(p.A, p.B)
	}
	h := make([]float64, len(ts))
	s.Margins(h, pv)
	for r, tr := range ts {
		if want := value(tr.I, tr.K) - value(tr.I, tr.J); h[r] != want {
			t.Fatalf("margin %d = %v, want %v", r, h[r], want)
		}
	}
}
