package itml

import (
	"fmt"

	"github.com/psdlearn/psdlearn/constraints"
)

// TripletPairs turns triplets (I, J, K) — I closer to J than to K — into
// pair constraints: (I, J) similar and (I, K) dissimilar, each distinct pair
// once, in the order first met. A pair that is similar in one triplet and
// dissimilar in another keeps its first role.
func TripletPairs(ts *constraints.TripletSet) (*constraints.Pairs, error) {
	if ts == nil {
		return nil, fmt.Errorf("%w: nil triplets", ErrInvalid)
	}
	seen := make(map[[2]int]bool, 2*ts.Len())
	list := make([]constraints.LabelledPair, 0, 2*ts.Len())
	add := func(a, b int, same bool) {
		key := [2]int{min(a, b), max(a, b)}
		if a == b || seen[key] {
			return
		}
		seen[key] = true
		list = append(list, constraints.LabelledPair{A: key[0], B: key[1], Same: same})
	}
	for _, t := range ts.Triplets {
		add(t.I, t.J, true)
		add(t.I, t.K, false)
	}
	ps, err := constraints.NewPairs(ts.N, list)
	if err != nil {
		return nil, fmt.Errorf("itml: %w", err)
	}
	return ps, nil
}
