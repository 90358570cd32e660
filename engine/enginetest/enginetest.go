// Package enginetest is the conformance suite every engine.Backend passes.
// Run checks one backend against analytic answers and invariants (eigen
// residuals ‖AV − VΛ‖/(‖A‖·n·ε), orthogonality, known spectra, KKT
// conditions); Agree checks that two backends give the same numbers to the
// stated tolerances.
//
// The suite is split by capability: dense.go (SymEig, WeightedGram, pair
// forms), eigs.go (sparse partial eigensolver), minimize.go (L-BFGS-B),
// lp.go (linear programs).
package enginetest

import (
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/lbfgsb/lbfgsbtest"
	"github.com/psdlearn/psdlearn/lp/lptest"
)

// Run runs the whole conformance suite against b.
func Run(t *testing.T, b engine.Backend) {
	t.Run("dense", func(t *testing.T) { testDense(t, b) })
	t.Run("eigs", func(t *testing.T) { testEigs(t, b) })
	t.Run("minimize", func(t *testing.T) { lbfgsbtest.TestMinimizer(t, b) })
	t.Run("lp", func(t *testing.T) { lptest.TestSolver(t, b.LP()) })
}

// Agree checks that backends a and b agree on the same problems.
func Agree(t *testing.T, a, b engine.Backend) {
	t.Run("dense", func(t *testing.T) { agreeDense(t, a, b) })
	t.Run("eigs", func(t *testing.T) { agreeEigs(t, a, b) })
	t.Run("minimize", func(t *testing.T) { lbfgsbtest.TestAgree(t, a, b) })
	t.Run("lp", func(t *testing.T) { lptest.TestAgree(t, a.LP(), b.LP()) })
}
