package eval

import (
	"fmt"
	"math"
	"sort"

	"github.com/psdlearn/psdlearn/constraints"
)

// VerificationAccuracy is the pair-verification accuracy of a distance: a
// pair is predicted must-link when its (squared) distance is ≤ threshold and
// cannot-link otherwise; the result is the fraction of pairs predicted right.
// dist[r] belongs to pairs.List[r] (for example from Metric.PairSqDistances
// on pairs.Index()).
func VerificationAccuracy(dist []float64, pairs *constraints.Pairs, threshold float64) (float64, error) {
	if err := checkVerify(dist, pairs); err != nil {
		return 0, err
	}
	right := 0
	for r, p := range pairs.List {
		if (dist[r] <= threshold) == p.Same {
			right++
		}
	}
	return float64(right) / float64(len(dist)), nil
}

// BestThreshold returns the threshold that maximises VerificationAccuracy on
// the given pairs, and that accuracy: the sweep over every cut between
// consecutive distinct distances (midpoints), below all and above all. Among
// equally good thresholds the smallest is returned. Choose the threshold on
// training or validation pairs and report VerificationAccuracy on test pairs.
func BestThreshold(dist []float64, pairs *constraints.Pairs) (threshold, accuracy float64, err error) {
	if err := checkVerify(dist, pairs); err != nil {
		return 0, 0, err
	}
	m := len(dist)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return dist[order[a]] < dist[order[b]] })
	// Threshold below every distance: all pairs predicted cannot-link.
	right := 0
	for _, p := range pairs.List {
		if !p.Same {
			right++
		}
	}
	best, bestRight := math.Inf(-1), right
	if m > 0 {
		best = dist[order[0]] - 1
		if d0 := dist[order[0]]; d0 > 0 {
			best = d0 / 2
		}
	}
	for a := 0; a < m; {
		// Move every pair at this distance to "must-link".
		v := dist[order[a]]
		for a < m && dist[order[a]] == v {
			if pairs.List[order[a]].Same {
				right++
			} else {
				right--
			}
			a++
		}
		if right > bestRight {
			bestRight = right
			if a < m {
				best = v + (dist[order[a]]-v)/2
			} else {
				best = v
			}
		}
	}
	return best, float64(bestRight) / float64(m), nil
}

func checkVerify(dist []float64, pairs *constraints.Pairs) error {
	if pairs == nil || len(pairs.List) == 0 {
		return fmt.Errorf("%w: no pairs", ErrInvalid)
	}
	if len(dist) != len(pairs.List) {
		return fmt.Errorf("%w: %d distances for %d pairs", ErrInvalid, len(dist), len(pairs.List))
	}
	for r, v := range dist {
		if math.IsNaN(v) {
			return fmt.Errorf("%w: distance %d is NaN", ErrInvalid, r)
		}
	}
	return nil
}
