package arpack_test

import (
	"context"
	"errors"
	"testing"

	"github.com/psdlearn/psdlearn/arpack"
)

// dimOp is an operator of dimension n that is never applied.
type dimOp int

func (n dimOp) Dim() int             { return int(n) }
func (dimOp) Apply(dst, x []float64) { panic("applied") }

// named records that it was called.
type named struct {
	name   string
	called *string
}

func (s named) Eigs(context.Context, arpack.Operator, int, arpack.Which, arpack.Options) (arpack.Result, error) {
	*s.called = s.name
	return arpack.Result{Iterations: len(s.name)}, errors.New(s.name)
}

// TestBySizeChooses: BySize sends a solve to Large exactly when its basis,
// n × NCV × 8 bytes (NCV from Options or DefaultNCV), exceeds
// MaxBasisBytes, and arguments its solvers refuse to Small; it returns the
// chosen solver's result and error.
func TestBySizeChooses(t *testing.T) {
	var called string
	s := arpack.BySize{Small: named{"small", &called}, Large: named{"large", &called}, MaxBasisBytes: 8 * 1000 * 40}
	for _, c := range []struct {
		n, k, ncv int
		want      string
	}{
		{1000, 10, 0, "small"},  // 1000 × 40: at the limit
		{1001, 10, 0, "large"},  // one row more
		{1000, 11, 0, "large"},  // NCV = 41 by default
		{2000, 10, 20, "small"}, // NCV given: 2000 × 20
		{2000, 10, 21, "large"},
		{2000, 10, 5, "large"},   // NCV ≤ k: refused by either, sized by the default
		{2000, 0, 0, "small"},    // k refused: Small reports it
		{2000, 2000, 0, "small"}, // k = n refused
		{100000, 1, 0, "large"},  // 100,000 × 31
		{20, 5, 0, "small"},      // NCV = n
		{1000000, 1, 0, "large"}, // large n, default NCV
		{40 * 1000 / 31, 1, 0, "small"},
	} {
		called = ""
		res, err := s.Eigs(context.Background(), dimOp(c.n), c.k, arpack.LargestAlgebraic, arpack.Options{NCV: c.ncv})
		if called != c.want || res.Iterations != len(called) || err == nil || err.Error() != called {
			t.Errorf("n %d, k %d, NCV %d: ran %q, want %q", c.n, c.k, c.ncv, called, c.want)
		}
	}
	called = ""
	s.Eigs(context.Background(), nil, 1, arpack.LargestAlgebraic, arpack.Options{})
	if called != "small" {
		t.Errorf("nil operator: ran %q, want small", called)
	}
}
