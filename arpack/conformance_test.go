package arpack_test

import (
	"testing"

	"github.com/psdlearn/psdlearn/arpack"
	"github.com/psdlearn/psdlearn/arpack/arpacktest"
)

// solvers returns the eigensolvers compiled into this build.
func solvers() map[string]arpack.Solver {
	s := map[string]arpack.Solver{"go": arpack.Go}
	if arpack.HaveNative {
		s["native"] = arpack.Native
	}
	return s
}

// TestConformance runs the sparse eigensolver suite on every solver, and
// checks that the native and pure-Go solvers agree.
func TestConformance(t *testing.T) {
	for name, s := range solvers() {
		t.Run(name, func(t *testing.T) { arpacktest.TestEigsSolver(t, s, nil) })
	}
	if arpack.HaveNative {
		t.Run("agree", func(t *testing.T) { arpacktest.TestAgree(t, arpack.Native, arpack.Go) })
	}
}
