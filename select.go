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
	"github.com/psdlearn/psdlearn/grid"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/progress"
	"github.com/psdlearn/psdlearn/train"
)

// defaultFolds is the number of cross-validation folds when Common.Folds is 0.
const defaultFolds = 3

// selection is the outcome of choosing C: the value, the values tried (in
// order) with the mean validation k-NN error of each, the mean Euclidean
// error on the same rows, the policy and the number of folds (0 when the
// errors are on Common.Validation).
type selection struct {
	c         float64
	tried     []float64
	meanErr   []float64
	euclidErr float64
	policy    string
	folds     int
	nVal      int // validation rows (with folds: every row, once)
}

// chooseC returns the C with the lowest mean validation k-NN error among
// the candidates of the policy (grid.Policy: its initial values, then the
// extensions it proposes from the mean errors so far): on c.Validation
// after fitting on all rows when it is set, and otherwise over the
// stratified folds of the rows (each fitted on the other folds). Equal
// means choose the smaller C. Every split fits its preprocessing and
// builds its triplets on its own training rows, once for all values of C;
// the error is eval.FactorKNNError's (the one the trainers use), with K
// neighbours. policy, if non-nil, makes the policy from the first split's
// prepared rows (the default C policy needs them); else the values are
// fixed.
func chooseC(ctx context.Context, c Common, trainer train.Trainer, algo string, opt train.Options, full *data.Dataset, ts *constraints.TripletSet, k int, b engine.Backend, fixed []float64, policy func(tr, val *data.Dataset) (grid.Policy, error)) (*selection, error) {
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
	preps := make([]*prepared, len(splits))
	prep := func(f int) (*prepared, error) {
		if preps[f] == nil {
			p, err := prepare(c, splits[f].tr, splits[f].val, ts, k, b)
			if err != nil {
				return nil, err
			}
			preps[f] = p
		}
		return preps[f], nil
	}
	pol := grid.Fixed(fixed)
	if policy != nil {
		p0, err := prep(0)
		if err != nil {
			return nil, err
		}
		if pol, err = policy(p0.tr, p0.val); err != nil {
			return nil, err
		}
	}
	sel.policy = pol.String()
	// The mean error of the Euclidean metric on the same validation rows.
	for f := range splits {
		p, err := prep(f)
		if err != nil {
			return nil, err
		}
		sel.nVal += p.val.Len()
		e, err := eval.FactorKNNErrors(b, nil, p.tr.X, p.tr.Y, k, eval.Queries{X: p.val.X, Y: p.val.Y})
		if err != nil {
			return nil, fmt.Errorf("psdlearn: Euclidean validation: %w", err)
		}
		sel.euclidErr += e[0] / float64(len(splits))
	}
	// The mean validation error of one value of C over the splits.
	meanErr := func(cv float64) (float64, error) {
		var sum float64
		for f := range splits {
			p, err := prep(f)
			if err != nil {
				return 0, err
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
			sum += e
		}
		return sum / float64(len(splits)), nil
	}
	_, bestC, _, tried, err := train.SelectCGrid(pol, func(cv float64) (struct{}, float64, error) {
		e, err := meanErr(cv)
		if err == nil {
			sel.meanErr = append(sel.meanErr, e)
		}
		return struct{}{}, e, err
	})
	if err != nil {
		return nil, err
	}
	sel.c, sel.tried = bestC, tried
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
