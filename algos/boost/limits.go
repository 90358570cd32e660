package boost

import (
	"fmt"

	"github.com/psdlearn/psdlearn/lp"
)

// MaxC is the largest PSDBoost trade-off C accepted. C is the cost of every
// slack variable of the restricted master LP, and the LP solvers take
// coefficients up to lp.MaxValue only (CLP aborts the process on an
// objective coefficient of 1e25 or more).
const MaxC = lp.MaxValue

// checkC rejects a PSDBoost C beyond MaxC (NaN and infinities included),
// before any LP is built.
func checkC(c float64) error {
	if !(c <= MaxC) {
		return fmt.Errorf("%w: C = %g exceeds the largest value the LP solvers accept, %g (boost.MaxC)", ErrInvalid, c, float64(MaxC))
	}
	return nil
}
