package train

import (
	"fmt"
	"math"
)

// WorseThanEuclidean returns the warning for a learned metric whose
// validation error valErr is above the Euclidean metric's euclidErr on the
// same validation rows (errors are fractions in [0, 1]), or "" when it is
// not (or when either error is NaN: nothing was validated). nVal is the
// number of validation rows, for the message.
func WorseThanEuclidean(algo string, valErr, euclidErr float64, nVal int) string {
	if math.IsNaN(valErr) || math.IsNaN(euclidErr) || !(valErr > euclidErr) {
		return ""
	}
	return fmt.Sprintf("%s: the chosen model's validation error %.2f%% is above the Euclidean metric's %.2f%% on the same %d validation rows: the learned metric is worse than no metric learning here",
		algo, 100*valErr, 100*euclidErr, nVal)
}
