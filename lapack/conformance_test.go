package lapack_test

import (
	"testing"

	"github.com/psdlearn/psdlearn/lapack"
	"github.com/psdlearn/psdlearn/lapack/lapacktest"
)

// solvers returns the eigensolvers compiled into this build.
func solvers() map[string]lapack.Eigensolver {
	s := map[string]lapack.Eigensolver{"go": lapack.Go}
	if lapack.HaveNative {
		s["native"] = lapack.Native
	}
	return s
}

// TestConformance runs the dense eigensolver suite on every solver, and
// checks that the native and pure-Go solvers agree.
func TestConformance(t *testing.T) {
	for name, s := range solvers() {
		t.Run(name, func(t *testing.T) { lapacktest.TestEigensolver(t, s) })
	}
	if lapack.HaveNative {
		t.Run("agree", func(t *testing.T) { lapacktest.TestAgree(t, lapack.Native, lapack.Go) })
	}
}
