// Package enginetest is the conformance suite every engine.Backend passes.
// Run checks one backend against analytic answers and invariants (eigen
// residuals ‖AV − VΛ‖/(‖A‖·n·ε), orthogonality, known spectra, KKT
// conditions, LP duality); Agree checks that two backends give the same
// numbers to the stated tolerances.
//
// It composes the binding suites — lapack/lapacktest (dense eigensolvers),
// arpack/arpacktest (sparse eigensolvers), lbfgsb/lbfgsbtest (bounded
// minimisation), lp/lptest (linear programs), each of which the binding's
// native and pure-Go twins also run — with the engine's own kernels
// (dense.go: the weighted Gram, pair quadratic forms and distances).
package enginetest

import (
	"testing"

	"github.com/psdlearn/psdlearn/arpack/arpacktest"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/lbfgsb/lbfgsbtest"
	"github.com/psdlearn/psdlearn/lp/lptest"
)

// GridLaplacian and EigsResidual are arpacktest's (the sparse eigensolver
// suite lives there).
var (
	GridLaplacian = arpacktest.GridLaplacian
	EigsResidual  = arpacktest.EigsResidual
)

// Run runs the whole conformance suite against b.
func Run(t *testing.T, b engine.Backend) {
	t.Run("dense", func(t *testing.T) { testDense(t, b) })
	t.Run("eigs", func(t *testing.T) { arpacktest.TestEigsSolver(t, b, b.BLAS()) })
	t.Run("minimize", func(t *testing.T) { lbfgsbtest.TestMinimizer(t, b) })
	t.Run("lp", func(t *testing.T) { lptest.TestSolver(t, b.LP()) })
}

// Agree checks that backends a and b agree on the same problems.
func Agree(t *testing.T, a, b engine.Backend) {
	t.Run("dense", func(t *testing.T) { agreeDense(t, a, b) })
	t.Run("eigs", func(t *testing.T) { arpacktest.TestAgree(t, a, b) })
	t.Run("minimize", func(t *testing.T) { lbfgsbtest.TestAgree(t, a, b) })
	t.Run("lp", func(t *testing.T) { lptest.TestAgree(t, a.LP(), b.LP()) })
}
