package boost

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine/enginetest"
	"github.com/psdlearn/psdlearn/limits"
	"gonum.org/v1/gonum/mat"
)

// TestMemoryLimit is issue 21 item 2 for boosting: BoostMetric and PSDBoost
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
			start := time.Now()
			res, err := Train(context.Background(), x, ts, Options{Loss: loss, Backend: b})
			if !errors.Is(err, limits.ErrMemory) || res != nil {
				t.Errorf("%s %v: error %v, want ErrMemory", b.Name(), loss, err)
			}
			if took := time.Since(start); took > time.Second {
				t.Errorf("%s %v: refusal took %v", b.Name(), loss, took)
			}
		}
	}
	// A few terms on few features fit.
	if _, err := Train(context.Background(), x.Slice(0, n, 0, 3).(*mat.Dense), ts, Options{Loss: Exp, Iters: 5}); err != nil {
		t.Fatal(err)
	}
}
