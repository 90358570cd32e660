package lp_test

import (
	"testing"

	"github.com/psdlearn/psdlearn/lp"
	"github.com/psdlearn/psdlearn/lp/lptest"
)

// TestConformance runs the linear-programming suite on every solver, and
// checks that the native and pure-Go solvers agree.
func TestConformance(t *testing.T) {
	solvers := map[string]lp.Solver{"go": lp.Go}
	if lp.HaveNative {
		solvers["native"] = lp.Native
	}
	for name, s := range solvers {
		t.Run(name, func(t *testing.T) { lptest.TestSolver(t, s) })
	}
	if lp.HaveNative {
		t.Run("agree", func(t *testing.T) { lptest.TestAgree(t, lp.Native, lp.Go) })
	}
}
