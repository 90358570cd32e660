// Package constraints holds the side information metric and kernel learners
// train on: triplets (a_i closer to a_j than to a_k) and labelled pairs, as
// index tuples into a data matrix — never as vectors or matrices — together
// with their generation from labelled data.
package constraints

import (
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/internal/countsort"
	"github.com/psdlearn/psdlearn/sparse"
)

// Triplet (I, J, K) says point I should be closer to its target J (same class)
// than to its impostor K (another class).
type Triplet struct{ I, J, K int }

// ErrInvalid is wrapped by errors about malformed constraints.
var ErrInvalid = errs.New("constraints: invalid", errs.ErrInvalid)

// TripletSet is a list of triplets on N points with the distinct pairs they
// use. With p_r = a_I − a_K and q_r = a_I − a_J, A_r = p_r p_rᵀ − q_r q_rᵀ and
//
//	⟨A_r, M⟩ = d_M(I,K) − d_M(I,J) = pairValue[Imp[r]] − pairValue[Tgt[r]],
//	Σ_r u_r A_r = Xᵀ L_W X with W from PairWeights(u).
//
// so every per-triplet quantity is computed once per distinct pair.
type TripletSet struct {
	N        int
	Triplets []Triplet
	Pairs    []sparse.Pair // distinct pairs (A < B) in locality order (see NewTripletSet)
	Imp, Tgt []int         // per triplet: index into Pairs of (I,K) and of (I,J)
	graph    *sparse.PairGraph
}

// NewTripletSet indexes triplets on n points. It rejects an empty list,
// indices out of range, degenerate triplets (I = J, I = K or J = K) and
// contradictory ones ((I, J, K) and (I, K, J) both), as ReadTriplets does.
func NewTripletSet(n int, ts []Triplet) (*TripletSet, error) {
	if err := checkTriplets(n, ts); err != nil {
		return nil, err
	}
	if r, q := contradiction(n, ts); r >= 0 {
		return nil, fmt.Errorf("%w: triplet %d = %v contradicts triplet %d", ErrInvalid, r, ts[r], q)
	}
	return buildTripletSet(n, ts)
}

// newTripletSet is NewTripletSet without the contradiction check, for
// triplets that cannot contradict one another: built from labels (a target
// shares the anchor's class, an impostor does not), or renamed or taken
// from a set that was checked (Relabel, Restrict).
func newTripletSet(n int, ts []Triplet) (*TripletSet, error) {
	if err := checkTriplets(n, ts); err != nil {
		return nil, err
	}
	return buildTripletSet(n, ts)
}

// checkTriplets rejects an empty list, more triplets or points than the
// index holds, indices out of range and degenerate triplets.
func checkTriplets(n int, ts []Triplet) error {
	if len(ts) == 0 {
		return fmt.Errorf("%w: empty triplet set", ErrInvalid)
	}
	if n > math.MaxInt32 || len(ts) > math.MaxInt32/2 {
		return fmt.Errorf("%w: %d triplets on %d points: at most %d of each", ErrInvalid, len(ts), n, math.MaxInt32/2)
	}
	for r, t := range ts {
		if t.I < 0 || t.I >= n || t.J < 0 || t.J >= n || t.K < 0 || t.K >= n {
			return fmt.Errorf("%w: triplet %d = %v outside [0,%d)", ErrInvalid, r, t, n)
		}
		if t.I == t.J || t.I == t.K || t.J == t.K {
			return fmt.Errorf("%w: triplet %d = %v repeats a point", ErrInvalid, r, t)
		}
	}
	return nil
}

// contradiction returns the first triplet r whose reverse (I, K, J) occurs
// at an earlier index, and the last such index q; r = −1 if none does.
// The triplets (checked by checkTriplets) are sorted by (I, min(J, K),
// max(J, K)) with stable counting sorts, so a triplet and its reverse
// become neighbours in index order: O(len(ts) + n) per pass, where a hash
// map of 450,000 triplets took 0.3 s.
func contradiction(n int, ts []Triplet) (r, q int) {
	src := make([]int32, len(ts))
	for i := range src {
		src[i] = int32(i)
	}
	dst := make([]int32, len(ts))
	var count []int
	for _, digit := range []func(int32) int{
		func(i int32) int { return max(ts[i].J, ts[i].K) },
		func(i int32) int { return min(ts[i].J, ts[i].K) },
		func(i int32) int { return ts[i].I },
	} {
		count = countsort.Stable(dst, src, n, digit, count)
		src, dst = dst, src
	}
	r, q = -1, -1
	for g := 0; g < len(src); {
		t0 := ts[src[g]]
		last := [2]int{-1, -1} // the last index of each orientation (J < K, J > K)
		for ; g < len(src); g++ {
			i := int(src[g])
			t := ts[i]
			if t.I != t0.I || min(t.J, t.K) != min(t0.J, t0.K) || max(t.J, t.K) != max(t0.J, t0.K) {
				break
			}
			o := 0
			if t.J > t.K {
				o = 1
			}
			if p := last[1-o]; p >= 0 && (r < 0 || i < r) {
				r, q = i, p
			}
			last[o] = i
		}
	}
	return r, q
}

// buildTripletSet indexes triplets that passed checkTriplets.
func buildTripletSet(n int, ts []Triplet) (*TripletSet, error) {
	s := &TripletSet{N: n, Triplets: ts, Imp: make([]int, len(ts)), Tgt: make([]int, len(ts))}
	s.indexPairs()
	g, err := sparse.NewPairGraph(n, s.Pairs)
	if err != nil {
		return nil, fmt.Errorf("constraints: %w", err)
	}
	s.graph = g
	return s, nil
}

// pairBlockRows is the number of consecutive points whose pairs are grouped
// together by orderPairs: 4096 rows of a 164-column embedding are 5 MiB,
// well inside a last-level cache.
const pairBlockRows = 4096

// indexPairs lists the distinct pairs of the triplets in Pairs, ordered by
// the block of their first point (pairBlockRows points per block), then by
// their second point, then by their first, and points every triplet at its
// two pairs (Imp, Tgt). Per-pair kernels (squared distances, quadratic
// forms) read two data rows per pair; in this order the first rows of a
// stretch of pairs stay in cache and the second rows are read in increasing
// address order. At N = 50,000, D = 164 with 600,000 random pairs this
// halves the time of a pass over the pairs, which is memory-bound in
// first-use order. Every per-pair result is computed independently, so the
// order changes no number.
//
// The two pair references of every triplet are sorted by (block, B, A)
// with a least-significant-digit radix sort (stable counting sorts by A,
// then B, then block: O(triplets + N) per pass), so repeated pairs end up
// adjacent; a hash map and a comparison sort took two thirds of building
// letters' triplet set.
func (s *TripletSet) indexPairs() {
	type ref struct{ a, b, slot int32 } // slot 2r: the impostor pair of triplet r, 2r+1 its target pair
	src := make([]ref, 2*len(s.Triplets))
	for r, t := range s.Triplets {
		src[2*r] = ref{int32(min(t.I, t.K)), int32(max(t.I, t.K)), int32(2 * r)}
		src[2*r+1] = ref{int32(min(t.I, t.J)), int32(max(t.I, t.J)), int32(2*r + 1)}
	}
	dst := make([]ref, len(src))
	var count []int
	for _, digit := range []func(p ref) int{
		func(p ref) int { return int(p.a) },
		func(p ref) int { return int(p.b) },
		func(p ref) int { return int(p.a) / pairBlockRows },
	} {
		count = countsort.Stable(dst, src, s.N, digit, count)
		src, dst = dst, src
	}
	s.Pairs = s.Pairs[:0]
	for t, p := range src {
		if t == 0 || p.a != src[t-1].a || p.b != src[t-1].b {
			s.Pairs = append(s.Pairs, sparse.Pair{A: int(p.a), B: int(p.b)})
		}
		k := len(s.Pairs) - 1
		if p.slot%2 == 0 {
			s.Imp[p.slot/2] = k
		} else {
			s.Tgt[p.slot/2] = k
		}
	}
}

// Validate checks that s is a set NewTripletSet built (and that its
// exported fields still agree with one another): a TripletSet written as a
// literal has no pair index, and every method that needs one refuses it.
func (s *TripletSet) Validate() error {
	switch {
	case s == nil:
		return fmt.Errorf("%w: nil triplet set", ErrInvalid)
	case s.graph == nil:
		return fmt.Errorf("%w: a triplet set must be built by NewTripletSet (this one has no pair index)", ErrInvalid)
	case s.graph.N() != s.N || len(s.graph.Pairs()) != len(s.Pairs) || len(s.Imp) != len(s.Triplets) || len(s.Tgt) != len(s.Triplets):
		return fmt.Errorf("%w: the triplet set's fields were changed after NewTripletSet built it", ErrInvalid)
	}
	for r := range s.Triplets {
		if uint(s.Imp[r]) >= uint(len(s.Pairs)) || uint(s.Tgt[r]) >= uint(len(s.Pairs)) {
			return fmt.Errorf("%w: triplet %d points at a pair outside the set's %d", ErrInvalid, r, len(s.Pairs))
		}
	}
	return nil
}

// Len returns the number of triplets.
func (s *TripletSet) Len() int { return len(s.Triplets) }

// PairWeights writes into w (len(w) == len(Pairs)) the pair weights whose
// graph Laplacian gives Σ_r u_r A_r: +u_r on the impostor pair, −u_r on the
// target pair.
func (s *TripletSet) PairWeights(w, u []float64) {
	if len(u) != len(s.Triplets) || len(w) != len(s.Pairs) {
		panic(fmt.Sprintf("constraints: PairWeights: %d weights for %d triplets, %d outputs for %d pairs", len(u), len(s.Triplets), len(w), len(s.Pairs)))
	}
	for i := range w {
		w[i] = 0
	}
	for r, ur := range u {
		w[s.Imp[r]] += ur
		w[s.Tgt[r]] -= ur
	}
}

// Margins writes ⟨A_r, M⟩ = pairValue[Imp[r]] − pairValue[Tgt[r]] into h for
// every triplet, from per-pair squared distances pairValue.
func (s *TripletSet) Margins(h, pairValue []float64) {
	if len(h) != len(s.Triplets) || len(pairValue) != len(s.Pairs) {
		panic(fmt.Sprintf("constraints: Margins: %d outputs for %d triplets, %d values for %d pairs", len(h), len(s.Triplets), len(pairValue), len(s.Pairs)))
	}
	for r := range h {
		h[r] = pairValue[s.Imp[r]] - pairValue[s.Tgt[r]]
	}
}

// Graph returns a new pair graph of the set with weights from u: its
// Laplacian L_W satisfies Σ_r u_r A_r = Xᵀ L_W X. The graph belongs to the
// caller; iterative solvers reuse it through GraphInto.
func (s *TripletSet) Graph(u []float64) (*sparse.PairGraph, error) {
	return s.GraphInto(nil, u)
}

// GraphInto sets the weights of g, a graph returned by Graph or GraphInto
// for this set, from u and returns it; with g nil it returns a new graph.
// The set itself is never modified, so one TripletSet can be shared by any
// number of concurrent solvers, each with its own graph.
func (s *TripletSet) GraphInto(g *sparse.PairGraph, u []float64) (*sparse.PairGraph, error) {
	if s.graph == nil {
		return nil, s.Validate()
	}
	if g == nil {
		g = s.graph.Clone()
	} else if g.N() != s.N || len(g.Pairs()) != len(s.Pairs) {
		return nil, fmt.Errorf("%w: graph of %d points and %d pairs for a set of %d points and %d pairs", ErrInvalid, g.N(), len(g.Pairs()), s.N, len(s.Pairs))
	}
	w := make([]float64, len(s.Pairs))
	s.PairWeights(w, u)
	if err := g.SetWeights(w); err != nil {
		return nil, err
	}
	return g, nil
}
