package lbfgsb

import (
	"math"
	"testing"
)

// TestBoundType checks the nbd codes the driver hands the solvers, and that
// prepare zeroes the unused bound entries, so that no Inf reaches them.
func TestBoundType(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		lo, hi float64
		want   int
	}{
		{-inf, inf, nbdFree},
		{0, inf, nbdLower},
		{-inf, 0, nbdUpper},
		{-1, 1, nbdBoth},
		{2, 2, nbdBoth},
		{-1e308, 1e308, nbdBoth},
	} {
		if got := boundType(c.lo, c.hi); got != c.want {
			t.Errorf("boundType(%v, %v) = %d, want %d", c.lo, c.hi, got, c.want)
		}
	}
	sum := func(x, g []float64) float64 {
		var f float64
		for i, v := range x {
			g[i] = 1
			f += v
		}
		return f
	}
	st, err := prepare(Problem{Func: sum, Lower: []float64{-inf, 0, -inf, 1}, Upper: []float64{inf, inf, 3, 4}},
		make([]float64, 4), Settings{})
	if err != nil {
		t.Fatal(err)
	}
	wantNbd := []int{nbdFree, nbdLower, nbdUpper, nbdBoth}
	for i := range wantNbd {
		if st.nbd[i] != wantNbd[i] || math.IsInf(st.l[i], 0) || math.IsInf(st.u[i], 0) {
			t.Errorf("variable %d: nbd %d l %v u %v", i, st.nbd[i], st.l[i], st.u[i])
		}
	}
}
