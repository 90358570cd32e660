package enginetest

import (
	"testing"

	"github.com/psdlearn/psdlearn/engine"
)

// Backends returns the registered backends in the order of engine.Names
// ("go" before "native") and fails the test when none is registered: a
// test package that forgot to import engine/backends would otherwise run
// its comparisons over no backend at all and pass.
func Backends(tb testing.TB) []engine.Backend {
	tb.Helper()
	bs := engine.All()
	if len(bs) == 0 {
		tb.Fatal("no engine backend registered: import github.com/psdlearn/psdlearn/engine/backends")
	}
	return bs
}
