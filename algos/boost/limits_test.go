package boost

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine/enginetest"
)

// TestPSDBoostHugeC runs the reproducer of a huge C (psdboost on iris with
// C = 1e25, which aborted the process inside CLP) on every backend: each C
// beyond MaxC is an ErrInvalid before any LP is built, and the largest
// accepted C still trains.
func TestPSDBoostHugeC(t *testing.T) {
	x, y := standardized(t, "iris")
	ts, err := constraints.Triplets(x, y, 3)
	if err != nil {
		t.Fatal(err)
	}
	ts = subsample(t, ts, 60, 1)
	for _, b := range enginetest.Backends(t) {
		for _, c := range []float64{1e25, -1e25, 1e300, math.Inf(1), math.NaN(), MaxC * 1.0001} {
			res, err := PSDBoost(context.Background(), x, ts, Options{C: c, Backend: b, Iters: 3})
			if !errors.Is(err, ErrInvalid) || res != nil {
				t.Errorf("%s: C = %g: result %v, error %v; want ErrInvalid", b.Name(), c, res, err)
			}
			res, err = Train(context.Background(), x, ts, Options{Loss: Hinge, C: c, Backend: b, Iters: 3})
			if !errors.Is(err, ErrInvalid) || res != nil {
				t.Errorf("%s: Train hinge C = %g: error %v; want ErrInvalid", b.Name(), c, err)
			}
		}
		res, err := PSDBoost(context.Background(), x, ts, Options{C: MaxC, Backend: b, Iters: 3})
		if err != nil || res == nil || len(res.W) == 0 {
			t.Errorf("%s: C = MaxC: %v", b.Name(), err)
		}
	}
}
