package train

import (
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/grid"
)

// SelectC is the one model-selection loop over a list of C values (the
// trainers of FrobMetric and PSDBoost use it): it fits every value of cs in
// the given order and keeps the fit with the lowest validation error, the
// smallest C of equal errors (the more regularised model), whatever the
// order. Without a validation set the errors are NaN and
// the first fit is kept, which is how a single C is handled. On an error
// SelectC stops and returns the best fit so far, or, when there is none
// yet, whatever the failed call returned (a cancelled solve's best iterate,
// or nil), with that call's C and the error.
func SelectC[R any](cs []float64, fit func(c float64) (r R, valErr float64, err error)) (best R, bestC, bestErr float64, err error) {
	best, bestC, bestErr, _, err = selectC(cs, nil, fit)
	return best, bestC, bestErr, err
}

// SelectCGrid is SelectC over the candidates of a policy: it fits the
// policy's initial values in ascending order, then every value
// p.Next proposes (an extension beyond an edge where the validation optimum
// sits), and chooses by SelectC's rule. It also returns every value tried,
// in the order tried. A policy that fails grid's validation is an error
// before any fit.
func SelectCGrid[R any](p grid.Policy, fit func(c float64) (r R, valErr float64, err error)) (best R, bestC, bestErr float64, tried []float64, err error) {
	if err := p.Validate(); err != nil {
		return best, math.NaN(), math.NaN(), nil, fmt.Errorf("train: %w", err)
	}
	return selectC(p.Initial(), p.Next, fit)
}

// selectC fits cs in order and then, when next is non-nil, the values it
// proposes given the points so far.
func selectC[R any](cs []float64, next func([]grid.Point) (float64, bool), fit func(c float64) (r R, valErr float64, err error)) (best R, bestC, bestErr float64, tried []float64, err error) {
	bestC, bestErr = math.NaN(), math.NaN()
	found := false
	var pts []grid.Point
	for i := 0; ; i++ {
		var c float64
		switch {
		case i < len(cs):
			c = cs[i]
		case next != nil:
			var ok bool
			if c, ok = next(pts); !ok {
				return best, bestC, bestErr, tried, nil
			}
		default:
			return best, bestC, bestErr, tried, nil
		}
		tried = append(tried, c)
		r, valErr, ferr := fit(c)
		if ferr != nil {
			if !found {
				return r, c, math.NaN(), tried, ferr
			}
			return best, bestC, bestErr, tried, ferr
		}
		pts = append(pts, grid.Point{C: c, Err: valErr})
		if !found || valErr < bestErr || (valErr == bestErr && c < bestC) {
			best, bestC, bestErr, found = r, c, valErr, true
		}
	}
}

// SelectCFolds is SelectC over validation folds, for cross-validation (or a
// single validation set, folds = 1): valErr(fold, c) fits with c on the
// training part of the fold and returns the validation error on its
// held-out part. It is called fold by fold — fold 0 with every value of cs
// in order, then fold 1, and so on — so that a caller can prepare each fold
// once. SelectCFolds averages the errors of every value over the folds and
// chooses by SelectC's rule: the lowest mean error, the smallest C of equal
// means. It returns
// the chosen value and the mean errors in the order of cs. An error from
// valErr, or an error that is NaN (not evaluated), stops it.
func SelectCFolds(cs []float64, folds int, valErr func(fold int, c float64) (float64, error)) (bestC float64, meanErr []float64, err error) {
	if len(cs) == 0 || folds < 1 {
		return math.NaN(), nil, fmt.Errorf("train: choosing among %d values of C on %d folds", len(cs), folds)
	}
	meanErr = make([]float64, len(cs))
	for f := 0; f < folds; f++ {
		for i, c := range cs {
			e, err := valErr(f, c)
			if err != nil {
				return math.NaN(), nil, err
			}
			if math.IsNaN(e) {
				return math.NaN(), nil, fmt.Errorf("train: fold %d, C = %g: no validation error", f, c)
			}
			meanErr[i] += e
		}
	}
	for i := range meanErr {
		meanErr[i] /= float64(folds)
	}
	i := 0
	_, bestC, _, err = SelectC(cs, func(float64) (struct{}, float64, error) {
		i++
		return struct{}{}, meanErr[i-1], nil
	})
	return bestC, meanErr, err
}
