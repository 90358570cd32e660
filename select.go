package psdlearn

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/progress"
	"github.com/psdlearn/psdlearn/train"
)

// defaultFolds is the number of cross-validation folds when Common.Folds is 0.
const defaultFolds = 3

// selection is the outcome of choosing C: the value, the mean validation
// k-NN error of every value offered (ascending C) and the number of folds
// (0 when the errors are on Common.Validation).
type selection struct {
	c       float64
	meanErr []float64
	folds   int
}

// chooseC returns the C of cs (ascending) with the lowest mean validation
// k-NN error: on c.Validation after fitting on all rows when it is set,
// and otherwise over the stratified folds of the rows (each fitted on the
// other folds). Equal means choose the smaller C. Every split fits its
// preprocessing and builds its triplets on its own training rows, once for
// all values of C; the error is eval.FactorKNNError's (the one the trainers
// use), with K neighbours.
func chooseC(ctx context.Context, c Common, trainer train.Trainer, algo string, opt train.Options, full *data.Dataset, ts *constraints.TripletSet, k int, b engine.Backend, cs []float64) (*selection, error) {
	type split struct{ tr, val *data.Dataset }
	var splits []split
	sel := &selection{}
	if c.Validation != nil {
		splits = []split{{full, c.Validation}}
	} else {
		if ts != nil {
			return nil, fmt.Errorf("%w: several C values with given triplets need Validation (folds cannot be cut from triplets)", ErrInvalid)
		}
		sel.folds = c.Folds
		if sel.folds == 0 {
			sel.folds = defaultFolds
		}
		folds, err := stratifiedFolds(full.Y, sel.folds, c.Seed)
		if err != nil {
			return nil, err
		}
		for _, val := range folds {
			splits = append(splits, split{full.Subset(complement(full.Len(), val)), full.Subset(val)})
		}
	}
	cur, p := -1, (*prepared)(nil)
	best, meanErr, err := train.SelectCFolds(cs, len(splits), func(f int, cv float64) (float64, error) {
		if f != cur {
			var err error
			if p, err = prepare(c, splits[f].tr, splits[f].val, ts, k, b); err != nil {
				return 0, err
			}
			cur = f
		}
		prog := c.Progress
		if sel.folds > 0 {
			prog = progress.Prefix(prog, fmt.Sprintf("fold %d of %d: ", f+1, sel.folds))
		}
		out, err := p.solve(ctx, trainer, algo, opt, k, b, c.Seed, prog, []float64{cv})
		if err != nil {
			return 0, err
		}
		met, err := model.NewMetric(out.M)
		if err != nil {
			return 0, fmt.Errorf("psdlearn: %s C=%g: learned matrix: %w", algo, cv, err)
		}
		e, err := eval.FactorKNNError(b, met.L, p.tr.X, p.tr.Y, p.val.X, p.val.Y, k)
		if err != nil {
			return 0, fmt.Errorf("psdlearn: %s C=%g: validation: %w", algo, cv, err)
		}
		return e, nil
	})
	if err != nil {
		return nil, err
	}
	sel.c, sel.meanErr = best, meanErr
	return sel, nil
}

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
