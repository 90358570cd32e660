package eval

import (
	"sort"

	"gonum.org/v1/gonum/stat"
)

// Spearman returns Spearman's rank correlation of a and b (equal lengths of
// at least two): the Pearson correlation of their ranks, with tied values
// given their average rank. It is NaN when either has all values equal, and
// it panics if the lengths differ, as stat.Correlation does.
func Spearman(a, b []float64) float64 {
	if len(a) != len(b) {
		panic("eval: Spearman of slices of different lengths")
	}
	return stat.Correlation(ranks(a), ranks(b), nil)
}

// ranks returns the 0-based ranks of v, ties averaged.
func ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool { return v[idx[i]] < v[idx[j]] })
	r := make([]float64, len(v))
	for lo := 0; lo < len(idx); {
		hi := lo + 1
		for hi < len(idx) && v[idx[hi]] == v[idx[lo]] {
			hi++
		}
		avg := float64(lo+hi-1) / 2
		for _, i := range idx[lo:hi] {
			r[i] = avg
		}
		lo = hi
	}
	return r
}
