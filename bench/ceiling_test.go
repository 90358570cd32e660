package bench

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestMeasureCeilingRunsTwoAtOnce: in a two-worker trial both workers are
// inside their work at the same moment (the first to arrive waits, up to
// a quarter of a second, for the other), and one-worker trials run one; the rates are
// the units over the wall time, their ratio the speed-up.
func TestMeasureCeilingRunsTwoAtOnce(t *testing.T) {
	var inside, calls, met atomic.Int32
	newWork := func(int) func() {
		return func() {
			calls.Add(1)
			if inside.Add(1) == 2 {
				met.Add(1) // the partner is waiting and resets the count
				return
			}
			defer inside.Store(0)
			for deadline := time.Now().Add(250 * time.Millisecond); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				if inside.Load() == 2 {
					met.Add(1)
					return
				}
			}
		}
	}
	c := measureCeiling("k", "d", 10, newWork)
	// 3 trials of one worker, 3 of two.
	if got := calls.Load(); got != 9 {
		t.Fatalf("%d calls of the work, want 9", got)
	}
	if got := met.Load(); got != 6 {
		t.Fatalf("workers met %d times, want 6 (both workers of each two-worker trial)", got)
	}
	if !(c.One > 0 && c.Two > 0) || c.Speedup != c.Two/c.One || c.Kernel != "k" || c.Detail != "d" {
		t.Fatalf("ceiling %+v", c)
	}
	// One alone waits a quarter of a second: at most 40 units a second.
	if c.One > 40 {
		t.Fatalf("one worker alone did %g units a second, want ≤ 40 (it waited a quarter of a second for a partner)", c.One)
	}
}
