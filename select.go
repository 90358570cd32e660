package psdlearn

import (
	"fmt"
	"math/rand/v2"
	"sort"
)

// stratifiedFolds divides the rows into k folds of the labels y, class by
// class: the rows of every class (classes in ascending order), in a seeded
// random order, are dealt to the folds in turn, each class starting at the
// fold after the one where the previous class stopped. Every fold thus
// holds ⌊n_c/k⌋ or ⌈n_c/k⌉ rows of class c, and fold sizes differ by at
// most one. It returns the rows of every fold, ascending. Every class needs
// at least k rows (each fold must hold every class).
func stratifiedFolds(y []int, k int, seed uint64) ([][]int, error) {
	if k < 2 {
		return nil, fmt.Errorf("%w: %d folds, want at least 2", ErrInvalid, k)
	}
	byClass := map[int][]int{}
	for i, c := range y {
		byClass[c] = append(byClass[c], i)
	}
	labels := make([]int, 0, len(byClass))
	for c, rows := range byClass {
		if len(rows) < k {
			return nil, fmt.Errorf("%w: %d folds, but class %d has %d rows (each fold needs every class; lower Folds or give Validation)", ErrInvalid, k, c, len(rows))
		}
		labels = append(labels, c)
	}
	sort.Ints(labels)
	rng := rand.New(rand.NewPCG(seed, 0x666f6c6473)) // "folds"
	folds := make([][]int, k)
	f := 0
	for _, c := range labels {
		rows := byClass[c]
		for _, j := range rng.Perm(len(rows)) {
			folds[f] = append(folds[f], rows[j])
			f = (f + 1) % k
		}
	}
	for _, rows := range folds {
		sort.Ints(rows)
	}
	return folds, nil
}

// complement returns the rows of 0..n−1 not in the ascending list rows.
func complement(n int, rows []int) []int {
	out := make([]int, 0, n-len(rows))
	j := 0
	for i := 0; i < n; i++ {
		if j < len(rows) && rows[j] == i {
			j++
			continue
		}
		out = append(out, i)
	}
	return out
}
