package lapack

import "gonum.org/v1/gonum/mat"

// PartialSymEig runs the pure-Go solver's partial path alone (no fallback
// to the whole decomposition). taken reports whether r is a range the
// solver sends to it, ok whether it converged.
func PartialSymEig(a mat.Symmetric, r Range) (e Eigen, taken, ok bool) {
	n := a.SymmetricDim()
	which, taken := partialWhich(n, r)
	if !taken {
		return Eigen{}, false, false
	}
	e, ok = partialSymEig(upperCopy(a, n), n, r, which)
	return e, true, ok
}
