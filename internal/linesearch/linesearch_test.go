package linesearch

import (
	"errors"
	"math"
	"testing"
)

func TestRoot(t *testing.T) {
	for _, tc := range []struct{ a, b float64 }{{1, 3}, {1e-7, 1}, {2, 2.000001}, {0.5, 1e6}} {
		// f(w) = a − b·e^(−w): increasing, f(0) < 0, root log(b/a).
		deriv := func(w float64) (float64, float64, float64, error) {
			e := tc.b * math.Exp(-w)
			return tc.a - e, e, -e, nil
		}
		w, unbounded, err := Root(deriv, 1, 200)
		want := math.Log(tc.b / tc.a)
		f0, _, _, _ := deriv(0)
		fw, _, _, _ := deriv(w)
		// The contract: |f(w)| ≤ 1e-12·|f(0)|, so |w − w*| ≤ that over f′(w*) = a.
		if err != nil || unbounded || math.Abs(fw) > 1e-12*math.Abs(f0) || math.Abs(w-want) > 2e-12*math.Abs(f0)/tc.a {
			t.Errorf("a=%g b=%g: Root = %v, %v, %v (f = %g); want %v", tc.a, tc.b, w, unbounded, err, fw, want)
		}
	}
	// No descent at 0.
	if w, _, _ := Root(func(float64) (float64, float64, float64, error) { return 1, 1, 0, nil }, 1, 200); w != 0 {
		t.Errorf("f(0) > 0: Root = %v, want 0", w)
	}
	// No root: f = −1 everywhere.
	if _, unbounded, _ := Root(func(float64) (float64, float64, float64, error) { return -1, 0, 0, nil }, 1, 2000); !unbounded {
		t.Error("f < 0 everywhere: want unbounded")
	}
	// A failed evaluation ends the search with its error.
	boom := errors.New("boom")
	calls := 0
	_, _, err := Root(func(w float64) (float64, float64, float64, error) {
		calls++
		if calls == 3 {
			return 0, 0, 0, boom
		}
		return -1 + w, 1, 0, nil
	}, 1, 200)
	if calls == 3 && !errors.Is(err, boom) {
		t.Errorf("error = %v, want boom", err)
	}
}
