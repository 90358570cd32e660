package lbfgsb_test

import (
	"testing"

	"github.com/psdlearn/psdlearn/lbfgsb"
	"github.com/psdlearn/psdlearn/lbfgsb/lbfgsbtest"
)

// solvers returns the minimisers compiled into this build.
func solvers() map[string]lbfgsb.Solver {
	s := map[string]lbfgsb.Solver{"go": lbfgsb.Go}
	if lbfgsb.HaveNative {
		s["native"] = lbfgsb.Native
	}
	return s
}

// TestConformance runs the minimiser suite on every solver, and checks
// that the Fortran and pure-Go solvers agree.
func TestConformance(t *testing.T) {
	for name, s := range solvers() {
		t.Run(name, func(t *testing.T) { lbfgsbtest.TestMinimizer(t, s) })
	}
	if lbfgsb.HaveNative {
		t.Run("agree", func(t *testing.T) { lbfgsbtest.TestAgree(t, lbfgsb.Native, lbfgsb.Go) })
	}
}
