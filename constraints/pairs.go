package constraints

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/psdlearn/psdlearn/sparse"
)

// seedStream is the PCG stream constant of the package's random choices.
const seedStream = 0xc0_5741_7a17_5eed

// LabelledPair is a pairwise constraint on points A and B (A < B): a
// must-link (Same, T = +1) or a cannot-link (!Same, T = −1).
type LabelledPair struct {
	A, B int
	Same bool
}

// T returns +1 for a must-link and −1 for a cannot-link.
func (p LabelledPair) T() float64 {
	if p.Same {
		return 1
	}
	return -1
}

// Pairs is a set of distinct must-link / cannot-link constraints on N points.
type Pairs struct {
	N    int
	List []LabelledPair
}

// NewPairs validates and normalises a list of pair constraints on n points:
// each pair is stored with A < B; indices must be in range, A ≠ B, and no
// pair may appear twice.
func NewPairs(n int, list []LabelledPair) (*Pairs, error) {
	seen := make(map[[2]int]bool, len(list))
	out := make([]LabelledPair, len(list))
	for r, p := range list {
		if p.A > p.B {
			p.A, p.B = p.B, p.A
		}
		if p.A < 0 || p.B >= n {
			return nil, fmt.Errorf("%w: pair %d = (%d,%d) outside [0,%d)", ErrInvalid, r, p.A, p.B, n)
		}
		if p.A == p.B {
			return nil, fmt.Errorf("%w: pair %d links point %d to itself", ErrInvalid, r, p.A)
		}
		key := [2]int{p.A, p.B}
		if seen[key] {
			return nil, fmt.Errorf("%w: pair %d = (%d,%d) repeated", ErrInvalid, r, p.A, p.B)
		}
		seen[key] = true
		out[r] = p
	}
	return &Pairs{N: n, List: out}, nil
}

// Validate checks p as NewPairs checks its arguments (for a Pairs written
// as a literal).
func (p *Pairs) Validate() error {
	if p == nil {
		return fmt.Errorf("%w: nil pairs", ErrInvalid)
	}
	_, err := NewPairs(p.N, p.List)
	return err
}

// Len returns the number of constraints.
func (p *Pairs) Len() int { return len(p.List) }

// Counts returns the numbers of must-links and cannot-links.
func (p *Pairs) Counts() (mustLink, cannotLink int) {
	for _, q := range p.List {
		if q.Same {
			mustLink++
		} else {
			cannotLink++
		}
	}
	return
}

// Index returns the point pairs, in order, for the engine's pair kernels.
func (p *Pairs) Index() []sparse.Pair {
	out := make([]sparse.Pair, len(p.List))
	for i, q := range p.List {
		out[i] = sparse.Pair{A: q.A, B: q.B}
	}
	return out
}

// T returns the signs T_ab (+1 must-link, −1 cannot-link), in order.
func (p *Pairs) T() []float64 {
	out := make([]float64, len(p.List))
	for i, q := range p.List {
		out[i] = q.T()
	}
	return out
}

// Components returns the number of connected components of the must-link
// graph on the N points (isolated points count as components).
func (p *Pairs) Components() int {
	u := newUnionFind(p.N)
	for _, q := range p.List {
		if q.Same {
			u.union(q.A, q.B)
		}
	}
	return u.count
}

// checkLabels validates labels and returns the number of pairs available.
func checkLabels(y []int) error {
	if len(y) < 2 {
		return fmt.Errorf("%w: pairs need at least two points, have %d", ErrInvalid, len(y))
	}
	for i, c := range y {
		if c < 0 {
			return fmt.Errorf("%w: label %d of point %d is negative", ErrInvalid, c, i)
		}
	}
	return nil
}

// RandomPairs draws m distinct pairs of points uniformly at random among all
// N(N−1)/2 pairs and labels each by y: must-link when the two points share a
// class, else cannot-link. The same seed gives the same pairs, in the same
// order. It is an error to ask for more pairs than exist.
func RandomPairs(y []int, m int, seed uint64) (*Pairs, error) {
	if err := checkLabels(y); err != nil {
		return nil, err
	}
	n := len(y)
	total := n * (n - 1) / 2
	if m < 0 || m > total {
		return nil, fmt.Errorf("%w: %d pairs requested, %d points have %d", ErrInvalid, m, n, total)
	}
	rng := rand.New(rand.NewPCG(seed, seedStream))
	seen := make(map[[2]int]bool, m)
	list := make([]LabelledPair, 0, m)
	for len(list) < m {
		a, b := rng.IntN(n), rng.IntN(n-1)
		if b >= a {
			b++
		}
		if a > b {
			a, b = b, a
		}
		if seen[[2]int{a, b}] {
			continue
		}
		seen[[2]int{a, b}] = true
		list = append(list, LabelledPair{A: a, B: b, Same: y[a] == y[b]})
	}
	return &Pairs{N: n, List: list}, nil
}

// BalancedPairs draws mustLink distinct same-class pairs, uniform among all
// same-class pairs, and cannotLink distinct different-class pairs, uniform
// among all such pairs (must-links first in the list). The same seed gives
// the same pairs. It is an error to ask for more pairs of a kind than exist.
func BalancedPairs(y []int, mustLink, cannotLink int, seed uint64) (*Pairs, error) {
	if err := checkLabels(y); err != nil {
		return nil, err
	}
	if mustLink < 0 || cannotLink < 0 {
		return nil, fmt.Errorf("%w: negative pair counts %d, %d", ErrInvalid, mustLink, cannotLink)
	}
	n := len(y)
	members, _ := classMembers(y)
	sameTotal := 0
	weights := make([]int, len(members))
	for c, m := range members {
		weights[c] = len(m) * (len(m) - 1) / 2
		sameTotal += weights[c]
	}
	diffTotal := n*(n-1)/2 - sameTotal
	if mustLink > sameTotal || cannotLink > diffTotal {
		return nil, fmt.Errorf("%w: %d must-links and %d cannot-links requested, the labels allow %d and %d", ErrInvalid, mustLink, cannotLink, sameTotal, diffTotal)
	}
	rng := rand.New(rand.NewPCG(seed, seedStream+1))
	seen := make(map[[2]int]bool, mustLink+cannotLink)
	list := make([]LabelledPair, 0, mustLink+cannotLink)
	add := func(a, b int) bool {
		if a > b {
			a, b = b, a
		}
		if seen[[2]int{a, b}] {
			return false
		}
		seen[[2]int{a, b}] = true
		list = append(list, LabelledPair{A: a, B: b, Same: y[a] == y[b]})
		return true
	}
	for got := 0; got < mustLink; {
		// A class with probability ∝ its number of pairs, then a uniform pair in it.
		r := rng.IntN(sameTotal)
		c := 0
		for r >= weights[c] {
			r -= weights[c]
			c++
		}
		m := members[c]
		i, j := rng.IntN(len(m)), rng.IntN(len(m)-1)
		if j >= i {
			j++
		}
		if add(m[i], m[j]) {
			got++
		}
	}
	for got := 0; got < cannotLink; {
		a, b := rng.IntN(n), rng.IntN(n-1)
		if b >= a {
			b++
		}
		if y[a] != y[b] && add(a, b) {
			got++
		}
	}
	return &Pairs{N: n, List: list}, nil
}

// XingPairs generates pair constraints by the protocol of Xing et al. (2002)
// that SimpleNPKL and NPKL use: random pairs of points (uniform among all
// pairs, without repetition) are labelled by y — must-link for the same
// class, cannot-link otherwise — and added until the must-link graph (the
// transitive closure of the must-links) has round(ratio·N) connected
// components. Smaller ratios mean more side information; the papers use
// ratio = 0.7. Cannot-links drawn along the way are kept. The same seed gives
// the same pairs.
//
// ratio must lie in (0, 1]; since must-links never join two classes, the
// number of components cannot go below the number of classes present, and a
// ratio asking for fewer is an error. ratio = 1 gives an empty set.
func XingPairs(y []int, ratio float64, seed uint64) (*Pairs, error) {
	if err := checkLabels(y); err != nil {
		return nil, err
	}
	if !(ratio > 0 && ratio <= 1) {
		return nil, fmt.Errorf("%w: component ratio %v outside (0, 1]", ErrInvalid, ratio)
	}
	n := len(y)
	target := int(math.Round(ratio * float64(n)))
	members, _ := classMembers(y)
	if target < len(members) {
		return nil, fmt.Errorf("%w: %d components (ratio %v of %d points) requested, but must-links cannot join the %d classes", ErrInvalid, target, ratio, n, len(members))
	}
	rng := rand.New(rand.NewPCG(seed, seedStream+2))
	u := newUnionFind(n)
	seen := map[[2]int]bool{}
	var list []LabelledPair
	total := n * (n - 1) / 2
	for u.count > target && len(seen) < total {
		a, b := rng.IntN(n), rng.IntN(n-1)
		if b >= a {
			b++
		}
		if a > b {
			a, b = b, a
		}
		if seen[[2]int{a, b}] {
			continue
		}
		seen[[2]int{a, b}] = true
		same := y[a] == y[b]
		list = append(list, LabelledPair{A: a, B: b, Same: same})
		if same {
			u.union(a, b)
		}
	}
	return &Pairs{N: n, List: list}, nil
}

// unionFind is a disjoint-set forest with path halving and union by size.
type unionFind struct {
	parent, size []int
	count        int
}

func newUnionFind(n int) *unionFind {
	u := &unionFind{parent: make([]int, n), size: make([]int, n), count: n}
	for i := range u.parent {
		u.parent[i] = i
		u.size[i] = 1
	}
	return u
}

func (u *unionFind) find(i int) int {
	for u.parent[i] != i {
		u.parent[i] = u.parent[u.parent[i]]
		i = u.parent[i]
	}
	return i
}

func (u *unionFind) union(a, b int) {
	a, b = u.find(a), u.find(b)
	if a == b {
		return
	}
	if u.size[a] < u.size[b] {
		a, b = b, a
	}
	u.parent[b] = a
	u.size[a] += u.size[b]
	u.count--
}
