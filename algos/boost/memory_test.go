package boost

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine/enginetest"
	"github.com/psdlearn/psdlearn/limits"
	"gonum.org/v1/gonum/mat"
)

// TestMemoryLimit is the memory limit for boosting: BoostMetric and PSDBoost
// on a few points with a far-out feature index grew past 3 GB (ARPACK and
// the stored terms). Both refuse before the pricer allocates.
func TestMemoryLimit(t *testing.T) {
	defer limits.SetMaxMemory(limits.SetMaxMemory(64 << 20))
	const n, d = 30, 20000
	rng := rand.New(rand.NewPCG(2, 3))
	x := mat.NewDense(n, d, nil)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		y[i] = i % 3
		x.Set(i, 0, rng.Float64())
		x.Set(i, d-1, rng.Float64())
	}
	ts, err := constraints.Triplets(x, y, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range enginetest.Backends(t) {
		for _, loss := range []Loss{Exp, Logistic, Hinge} {
			before := allocated()
			res, err := Train(context.Background(), x, ts, Options{Loss: loss, Backend: b})
			spent := allocated() - before
			if !errors.Is(err, limits.ErrMemory) || res != nil {
				t.Errorf("%s %v: error %v, want ErrMemory", b.Name(), loss, err)
			}
			if spent > 64<<20 {
				t.Errorf("%s %v: the refusal allocated %d MiB", b.Name(), loss, spent>>20)
			}
		}
	}
	// A few terms on few features fit.
	if _, err := Train(context.Background(), x.Slice(0, n, 0, 3).(*mat.Dense), ts, Options{Loss: Exp, Iters: 5}); err != nil {
		t.Fatal(err)
	}
}

// TestPSDBoostTermBudget: multiple pricing adds several terms per
// iteration, beyond the one per iteration the check before the run counts;
// PSDBoost adds only the terms the memory limit leaves room for and stops
// with StopMemory, its last master solved and certified by SDPGap, when
// there is none.
func TestPSDBoostTermBudget(t *testing.T) {
	x, y := standardized(t, "wine")
	ts, err := constraints.Triplets(x, y, 3)
	if err != nil {
		t.Fatal(err)
	}
	n, d := x.Dims()
	m := ts.Len()
	// Room for exactly 5 terms: what the check before the run needs for
	// Iters = 5, while pricing offers up to 16 per iteration.
	lim := Memory(n, d, m, 5, true)
	defer limits.SetMaxMemory(limits.SetMaxMemory(int64(lim)))
	// Iters = 50 is refused before the run: 50 terms do not fit.
	if _, err := PSDBoost(context.Background(), x, ts, Options{Iters: 50, Columns: 16, Backend: goBackend(t)}); !errors.Is(err, limits.ErrMemory) {
		t.Fatalf("Iters 50: error %v, want ErrMemory", err)
	}
	res, err := PSDBoost(context.Background(), x, ts, Options{Iters: 5, Columns: 16, Backend: goBackend(t)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != StopMemory || len(res.W) > 5 || !(res.SDPGap >= 0) {
		t.Errorf("stop %v with %d terms, SDPGap %v; want %v, at most 5 terms, a certificate", res.Stop, len(res.W), res.SDPGap, StopMemory)
	}
	t.Logf("%v after %d iterations, %d terms, λmax − π = %.3g", res.Stop, res.Iterations, len(res.W), res.SDPGap)
}

// allocated returns the bytes the process has allocated so far: a refusal
// "before allocating" is measured by what it allocated, not by how long it
// took on a machine that may be loaded.
func allocated() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}
