package dualsolve

import (
	"fmt"
	"math"
)

// certificateText formats the dual value du, the primal value pr (NaN: not
// shown) and their relative gap g for a progress line, saying in words what
// is not available rather than printing +Inf or NaN: while the primal point
// built from the dual iterate is infeasible its value is +Inf and the gap
// undefined.
func certificateText(du, pr, g float64) string {
	s := "dual " + num(du)
	switch {
	case math.IsNaN(pr):
	case math.IsInf(pr, 0):
		s += ", primal not yet available (no feasible primal point)"
	default:
		s += " primal " + num(pr)
	}
	if !math.IsNaN(g) && !math.IsInf(g, 0) {
		s += fmt.Sprintf(" rel.gap %.3g", g)
	}
	return s
}

// num formats a value with ten significant digits, "n/a" when not finite.
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.10g", v)
}
