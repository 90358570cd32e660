package frob

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine/enginetest"
	"github.com/psdlearn/psdlearn/limits"
	"gonum.org/v1/gonum/mat"
)

// wide returns n points with d features (a few non-zero), 3 classes.
func wide(n, d int) (*mat.Dense, []int) {
	rng := rand.New(rand.NewPCG(2, 3))
	x := mat.NewDense(n, d, nil)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		y[i] = i % 3
		x.Set(i, 0, rng.Float64())
		x.Set(i, 1, rng.Float64())
		x.Set(i, d-1, rng.Float64())
	}
	return x, y
}

// TestMemoryLimit is the memory limit at the library level: FrobMetric on 30
// points with one feature index far out (20,000 here, 4,194,304 in the
// report) allocated D×D matrices — 3.3 GB and 140 TB — before anything
// else. It must now refuse before allocating, naming the estimate and how to
// raise the limit, and a run within the limit must still train.
func TestMemoryLimit(t *testing.T) {
	defer limits.SetMaxMemory(limits.SetMaxMemory(1 << 30))
	x, y := wide(30, 20000)
	ts, err := constraints.Triplets(x, y, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range enginetest.Backends(t) {
		before := allocated()
		res, err := Learn(context.Background(), x, ts, MetricOptions{C: 1, Backend: b})
		spent := allocated() - before
		if !errors.Is(err, limits.ErrMemory) || res != nil {
			t.Fatalf("%s: error %v, want ErrMemory", b.Name(), err)
		}
		if msg := err.Error(); !strings.Contains(msg, "20000 features") || !strings.Contains(msg, "--max-memory") {
			t.Errorf("message %q names neither the size nor the flag", msg)
		}
		if spent > 64<<20 {
			t.Errorf("%s: the refusal allocated %d MiB", b.Name(), spent>>20)
		}
		if _, err := Learn(context.Background(), x, ts, MetricOptions{C: 1, Backend: b, MaxIter: -1}); !errors.Is(err, ErrInput) {
			t.Errorf("%s: MaxIter -1: error %v, want ErrInput", b.Name(), err)
		}
	}
	// The same shape with 200 features is well within the limit.
	x, y = wide(30, 200)
	ts, err = constraints.Triplets(x, y, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Learn(context.Background(), x, ts, MetricOptions{C: 1, MaxIter: 50}); err != nil {
		t.Fatal(err)
	}
	// The estimate never overflows, even for the reported 4,194,304 features.
	if est := MetricMemory(30, 4194304, 30); !(est > 140e12) {
		t.Errorf("estimate %g for D = 4194304", est)
	}
}

// allocated returns the bytes the process has allocated so far: a refusal
// "before allocating" is measured by what it allocated, not by how long it
// took on a machine that may be loaded.
func allocated() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}
