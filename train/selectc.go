package train

import "math"

// SelectC is the one model-selection loop over a list of C values (the
// trainers of FrobMetric and PSDBoost use it): it fits every value of cs in
// the given order and keeps the fit with the lowest validation error, the
// first of equal errors. Without a validation set the errors are NaN and
// the first fit is kept, which is how a single C is handled. On an error
// SelectC stops and returns the best fit so far, or, when there is none
// yet, whatever the failed call returned (a cancelled solve's best iterate,
// or nil), with that call's C and the error.
func SelectC[R any](cs []float64, fit func(c float64) (r R, valErr float64, err error)) (best R, bestC, bestErr float64, err error) {
	bestC, bestErr = math.NaN(), math.NaN()
	found := false
	for _, c := range cs {
		r, valErr, ferr := fit(c)
		if ferr != nil {
			if !found {
				return r, c, math.NaN(), ferr
			}
			return best, bestC, bestErr, ferr
		}
		if !found || valErr < bestErr {
			best, bestC, bestErr, found = r, c, valErr, true
		}
	}
	return best, bestC, bestErr, nil
}
