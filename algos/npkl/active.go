package npkl

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/psdlearn/psdlearn/constraints"
)

// Margins returns the margin of every point under the kernel of res (the
// paper's §3.2.4): |(1/l_i) Σ_{j: T_ij ≠ 0} T_ij K_ij|, where l_i counts the
// constraints involving point i. Points without constraints get NaN.
// A small margin marks a point whose constraints the kernel satisfies least
// confidently.
func Margins(res *Result, pairs *constraints.Pairs) []float64 {
	n := res.N()
	kij := make([]float64, pairs.Len())
	res.Entries(kij, pairs)
	sum := make([]float64, n)
	cnt := make([]int, n)
	for c, q := range pairs.List {
		v := q.T() * kij[c]
		sum[q.A] += v
		sum[q.B] += v
		cnt[q.A]++
		cnt[q.B]++
	}
	out := make([]float64, n)
	for i := range out {
		if cnt[i] == 0 {
			out[i] = math.NaN()
			continue
		}
		out[i] = math.Abs(sum[i] / float64(cnt[i]))
	}
	return out
}

// SelectActive returns the constraints of the most uncertain points: points
// are taken in order of increasing margin (ties by index) and all constraints
// involving a taken point are kept, until at least target constraints are
// kept (or all are). The constraints keep their original order. res must be a
// kernel learned on the points the constraints index (typically the
// linear-loss kernel from all constraints).
func SelectActive(res *Result, pairs *constraints.Pairs, target int) (*constraints.Pairs, error) {
	if res == nil || res.V == nil {
		return nil, fmt.Errorf("npkl: SelectActive: no kernel")
	}
	if err := checkPairs(res.N(), pairs); err != nil {
		return nil, err
	}
	if target <= 0 {
		return nil, fmt.Errorf("npkl: SelectActive: target %d must be positive", target)
	}
	if target >= pairs.Len() {
		return subset(pairs, nil), nil
	}
	_, keep := activePoints(Margins(res, pairs), pairs, target)
	return subset(pairs, keep), nil
}

// subset returns the pairs with keep[c] (all of them when keep is nil), in order.
func subset(p *constraints.Pairs, keep []bool) *constraints.Pairs {
	out := &constraints.Pairs{N: p.N}
	for c, q := range p.List {
		if keep == nil || keep[c] {
			out.List = append(out.List, q)
		}
	}
	return out
}

// activePoints takes the points with constraints in order of increasing
// margin (ties by index) until the constraints involving them number at least
// target. It returns the points taken and which constraints involve them.
func activePoints(marg []float64, pairs *constraints.Pairs, target int) ([]int, []bool) {
	pts := make([]int, 0, len(marg))
	for i, v := range marg {
		if !math.IsNaN(v) {
			pts = append(pts, i)
		}
	}
	sort.SliceStable(pts, func(a, b int) bool { return marg[pts[a]] < marg[pts[b]] })
	byPoint := make([][]int, len(marg))
	for c, q := range pairs.List {
		byPoint[q.A] = append(byPoint[q.A], c)
		byPoint[q.B] = append(byPoint[q.B], c)
	}
	keep := make([]bool, pairs.Len())
	kept, taken := 0, 0
	for _, i := range pts {
		if kept >= target {
			break
		}
		taken++
		for _, c := range byPoint[i] {
			if !keep[c] {
				keep[c] = true
				kept++
			}
		}
	}
	return pts[:taken], keep
}

// SelectRandom returns target constraints chosen uniformly at random without
// replacement (seeded), in their original order.
func SelectRandom(pairs *constraints.Pairs, target int, seed uint64) (*constraints.Pairs, error) {
	if pairs == nil {
		return nil, fmt.Errorf("%w: no constraints", ErrInvalidConstraint)
	}
	if target <= 0 {
		return nil, fmt.Errorf("npkl: SelectRandom: target %d must be positive", target)
	}
	if target >= pairs.Len() {
		return subset(pairs, nil), nil
	}
	rng := rand.New(rand.NewPCG(seed, 0x6e706b6c72616e64))
	keep := make([]bool, pairs.Len())
	for _, c := range rng.Perm(pairs.Len())[:target] {
		keep[c] = true
	}
	return subset(pairs, keep), nil
}
