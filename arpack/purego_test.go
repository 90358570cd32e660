package arpack_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/psdlearn/psdlearn/arpack"
	"github.com/psdlearn/psdlearn/arpack/arpacktest"
)

// What the pure-Go solver promises beyond the suite, which arpack-ng does
// not: it has none of arpack-ng's limits on tiny and degenerate problems,
// and its parallel products do not make its results depend on GOMAXPROCS.

// TestGoSmallExact: the pure-Go solver solves every small and degenerate
// problem of the suite, the zero operator and every copy of a multiple
// eigenvalue included.
func TestGoSmallExact(t *testing.T) {
	arpacktest.TestSmallExact(t, arpack.Go, nil)
}

// TestGoGOMAXPROCS: GOMAXPROCS does not change the bits of a result.
func TestGoGOMAXPROCS(t *testing.T) {
	op, _ := arpacktest.GridOp(t, 60, 81) // n = 4860: more than one parallel chunk
	opt := arpack.Options{NCV: 20, Tol: 1e-10, Seed: 11}
	prev := runtime.GOMAXPROCS(1)
	one, err := arpack.Go.Eigs(context.Background(), op, 4, arpack.LargestAlgebraic, opt)
	runtime.GOMAXPROCS(max(prev, 2))
	two, err2 := arpack.Go.Eigs(context.Background(), op, 4, arpack.LargestAlgebraic, opt)
	runtime.GOMAXPROCS(prev)
	if err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	if !arpacktest.SameResult(one, two) {
		t.Errorf("GOMAXPROCS=1 and GOMAXPROCS=%d give different results", max(prev, 2))
	}
}
