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

// mapContradiction is the definition contradiction must meet: the first
// triplet whose reverse was seen at an earlier index, with the last such
// index (a map from triplet to its last index, in input order).
func mapContradiction(ts []Triplet) (r, q int) {
	seen := make(map[Triplet]int, len(ts))
	for r, t := range ts {
		if q, ok := seen[Triplet{I: t.I, J: t.K, K: t.J}]; ok {
			return r, q
		}
		seen[t] = r
	}
	return -1, -1
}

// TestContradiction compares the sorted check with the map definition on
// generated lists: few points (many repeats and reverses), planted
// reverses late or early in the list, duplicates of the reversed triplet
// before the reverse (which must name the last of them), and none at all.
func TestContradiction(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	random := func(n int) Triplet {
		for {
			i, j, k := rng.IntN(n), rng.IntN(n), rng.IntN(n)
			if i != j && i != k && j != k {
				return Triplet{i, j, k}
			}
		}
	}
	found := 0
	for c := 0; c < 400; c++ {
		n := 3 + rng.IntN(40)
		m := 1 + rng.IntN(60)
		ts := make([]Triplet, m)
		for i := range ts {
			ts[i] = random(n)
		}
		switch c % 4 {
		case 0: // no reverses at all: orient every triplet J < K
			for i, t := range ts {
				if t.J > t.K {
					ts[i].J, ts[i].K = t.K, t.J
				}
			}
		case 1: // a reverse planted at the end, after duplicates
			a := ts[rng.IntN(m)]
			ts = append(ts, a, a, Triplet{a.I, a.K, a.J})
		case 2: // a reverse planted at the front
			a := random(n)
			ts = append([]Triplet{a, {a.I, a.K, a.J}}, ts...)
		}
		r, q := contradiction(n, ts)
		wr, wq := mapContradiction(ts)
		if r != wr || q != wq {
			t.Fatalf("case %d (n %d, %d triplets): (%d, %d), want (%d, %d)", c, n, len(ts), r, q, wr, wq)
		}
		if r >= 0 {
			found++
			if _, err := NewTripletSet(n, ts); err == nil {
				t.Fatalf("case %d: NewTripletSet accepted a contradiction", c)
			}
		} else if _, err := NewTripletSet(n, ts); err != nil {
			t.Fatalf("case %d: %v", c, err)
		}
	}
	if found < 200 || found == 400 {
		t.Fatalf("%d of 400 cases contradict: the generator does not cover both outcomes", found)
	}
}
