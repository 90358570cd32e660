package enginetest

import (
	"os"
	"testing"

	"github.com/psdlearn/psdlearn/engine"
)

// Backends returns the registered backends in the order of engine.Names
// ("go" before "native") and fails the test when none is registered: a
// test package that forgot to import engine/backends would otherwise run
// its comparisons over no backend at all and pass.
//
// When $PSDLEARN_BACKEND names a registered backend, Backends returns that
// one alone: a suite run on one backend (make test-perturbed) then runs
// every per-backend case on it once, not again on the backends the main
// run has covered, and the cases that compare two backends skip.
func Backends(tb testing.TB) []engine.Backend {
	tb.Helper()
	if name := os.Getenv(engine.EnvBackend); name != "" {
		if b, err := engine.Get(name); err == nil {
			return []engine.Backend{b}
		}
	}
	bs := engine.All()
	if len(bs) == 0 {
		tb.Fatal("no engine backend registered: import github.com/psdlearn/psdlearn/engine/backends")
	}
	return bs
}
