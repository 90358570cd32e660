package arpacktest

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"testing"

	"github.com/psdlearn/psdlearn/arpack"
	"github.com/psdlearn/psdlearn/engine"
	"gonum.org/v1/gonum/mat"
)

// FuncOp is an operator from a function.
type FuncOp struct {
	N int
	F func(dst, x []float64)
}

// Dim returns the dimension.
func (o FuncOp) Dim() int { return o.N }

// Apply sets dst to A·x.
func (o FuncOp) Apply(dst, x []float64) { o.F(dst, x) }

// SameResult reports whether two results are identical, bit for bit,
// counters included.
func SameResult(a, b engine.EigsResult) bool {
	if len(a.Values) != len(b.Values) || a.OpApplies != b.OpApplies || a.Iterations != b.Iterations {
		return false
	}
	for i := range a.Values {
		if a.Values[i] != b.Values[i] {
			return false
		}
	}
	return mat.Equal(a.Vectors, b.Vectors)
}

// testErrors checks that invalid arguments are refused before any work,
// with an empty result.
func testErrors(t *testing.T, s engine.EigsSolver) {
	op, _ := GridOp(t, 4, 5) // n = 20
	zero := FuncOp{0, func(dst, x []float64) {}}
	for _, tc := range []struct {
		name  string
		op    engine.Operator
		k     int
		which engine.Which
		opt   engine.EigsOptions
	}{
		{"nil operator", nil, 1, arpack.LargestAlgebraic, engine.EigsOptions{}},
		{"n = 0", zero, 1, arpack.LargestAlgebraic, engine.EigsOptions{}},
		{"k = 0", op, 0, arpack.LargestAlgebraic, engine.EigsOptions{}},
		{"k < 0", op, -2, arpack.LargestAlgebraic, engine.EigsOptions{}},
		{"k = n", op, 20, arpack.LargestAlgebraic, engine.EigsOptions{}},
		{"k > n", op, 25, arpack.LargestAlgebraic, engine.EigsOptions{}},
		{"which unknown", op, 2, engine.Which(7), engine.EigsOptions{}},
		{"which negative", op, 2, engine.Which(-1), engine.EigsOptions{}},
		{"BE with k = 1", op, 1, arpack.BothEnds, engine.EigsOptions{}},
		{"NCV = k", op, 4, arpack.LargestAlgebraic, engine.EigsOptions{NCV: 4}},
		{"NCV < k", op, 4, arpack.LargestAlgebraic, engine.EigsOptions{NCV: 3}},
		{"NCV > n", op, 4, arpack.LargestAlgebraic, engine.EigsOptions{NCV: 21}},
		{"NCV < 0", op, 4, arpack.LargestAlgebraic, engine.EigsOptions{NCV: -1}},
		{"Tol < 0", op, 2, arpack.LargestAlgebraic, engine.EigsOptions{Tol: -1e-8}},
		{"Tol NaN", op, 2, arpack.LargestAlgebraic, engine.EigsOptions{Tol: math.NaN()}},
		{"Tol Inf", op, 2, arpack.LargestAlgebraic, engine.EigsOptions{Tol: math.Inf(1)}},
		{"MaxIter < 0", op, 2, arpack.LargestAlgebraic, engine.EigsOptions{MaxIter: -3}},
		{"Start too short", op, 2, arpack.LargestAlgebraic, engine.EigsOptions{Start: make([]float64, 19)}},
		{"Start zero", op, 2, arpack.LargestAlgebraic, engine.EigsOptions{Start: make([]float64, 20)}},
		{"Start NaN", op, 2, arpack.LargestAlgebraic, engine.EigsOptions{Start: append(make([]float64, 19), math.NaN())}},
	} {
		res, err := s.Eigs(context.Background(), tc.op, tc.k, tc.which, tc.opt)
		if !errors.Is(err, arpack.ErrInvalidArgument) {
			t.Errorf("%s: err = %v, want arpack.ErrInvalidArgument", tc.name, err)
		}
		if len(res.Values) != 0 || res.Vectors != nil {
			t.Errorf("%s: result not empty", tc.name)
		}
	}
}

// testNotConverged checks that an iteration limit too small returns the
// pairs that did converge, accurate and among the wanted ones, with a
// *NotConvergedError that counts them.
func testNotConverged(t *testing.T, s engine.EigsSolver) {
	const tol = 1e-10
	op, spec := GridOp(t, 40, 57)
	exact := spec[:10]
	for _, maxIter := range []int{2, 60} {
		res, err := s.Eigs(context.Background(), op, 10, arpack.SmallestAlgebraic, engine.EigsOptions{NCV: 21, MaxIter: maxIter, Tol: tol, Seed: 1})
		var nc *engine.EigsNotConvergedError
		if !errors.As(err, &nc) {
			t.Fatalf("MaxIter=%d: err = %v, want *NotConvergedError", maxIter, err)
		}
		t.Logf("MaxIter=%d: %v", maxIter, err)
		if nc.Requested != 10 || nc.Converged >= 10 || nc.Converged != len(res.Values) || nc.Iterations != maxIter+1 {
			t.Errorf("MaxIter=%d: %+v with %d values returned", maxIter, *nc, len(res.Values))
		}
		if maxIter == 60 && nc.Converged == 0 {
			t.Errorf("MaxIter=60: no converged pairs returned")
		}
		if len(res.Values) == 0 {
			continue
		}
		if r, _ := EigsResidual(op, res); r > tol*8 {
			t.Errorf("MaxIter=%d: converged pairs have residual %.3g", maxIter, r)
		}
		for _, v := range res.Values {
			found := false
			for _, e := range exact {
				found = found || math.Abs(v-e) <= 1e-8*math.Max(e, 1e-4)
			}
			if !found {
				t.Errorf("MaxIter=%d: converged value %.15g is not among the 10 smallest", maxIter, v)
			}
		}
	}
}

// testCancel checks that a solve cancelled between operator products stops
// at once, that an already cancelled context costs no product, and that the
// next solve (which for the native solver reuses ARPACK's saved state) is
// unaffected.
func testCancel(t *testing.T, s engine.EigsSolver) {
	grid, _ := GridOp(t, 30, 41)
	opt := engine.EigsOptions{NCV: 25, Tol: 1e-10, Seed: 4}
	ref, err := s.Eigs(context.Background(), grid, 6, arpack.SmallestAlgebraic, opt)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var applies atomic.Int64
	op := FuncOp{grid.Dim(), func(dst, x []float64) {
		if applies.Add(1) == 30 {
			cancel()
		}
		grid.Apply(dst, x)
	}}
	_, err = s.Eigs(ctx, op, 6, arpack.SmallestAlgebraic, opt)
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if got := applies.Load(); got != 30 {
		t.Errorf("%d products after cancelling at the 30th", got)
	}
	// Already cancelled: no product at all.
	applies.Store(100)
	if _, err := s.Eigs(ctx, op, 6, arpack.SmallestAlgebraic, opt); !errors.Is(err, context.Canceled) || applies.Load() != 100 {
		t.Errorf("cancelled context: err = %v after %d products", err, applies.Load()-100)
	}
	again, err := s.Eigs(context.Background(), grid, 6, arpack.SmallestAlgebraic, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !SameResult(ref, again) {
		t.Errorf("solve after a cancelled one differs from the reference")
	}
}

// testNotFinite checks that NaN from the operator is an error, not a hang.
func testNotFinite(t *testing.T, s engine.EigsSolver) {
	grid, _ := GridOp(t, 10, 11)
	var count atomic.Int64
	op := FuncOp{grid.Dim(), func(dst, x []float64) {
		grid.Apply(dst, x)
		if count.Add(1) == 5 {
			dst[3] = math.NaN()
		}
	}}
	if _, err := s.Eigs(context.Background(), op, 3, arpack.LargestAlgebraic, engine.EigsOptions{}); !errors.Is(err, arpack.ErrNotFinite) {
		t.Errorf("err = %v, want ErrNotFinite", err)
	}
}

// testDeterministic checks that the same seed gives the same bits and that
// Start overrides Seed.
func testDeterministic(t *testing.T, s engine.EigsSolver) {
	op, _ := GridOp(t, 60, 81) // n = 4860: more than one parallel chunk
	opt := engine.EigsOptions{NCV: 20, Tol: 1e-10, Seed: 11}
	a, err := s.Eigs(context.Background(), op, 4, arpack.LargestAlgebraic, opt)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Eigs(context.Background(), op, 4, arpack.LargestAlgebraic, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !SameResult(a, b) {
		t.Errorf("two solves with the same seed differ")
	}
	start := make([]float64, op.Dim())
	for i := range start {
		start[i] = math.Sin(float64(i))
	}
	c, err1 := s.Eigs(context.Background(), op, 4, arpack.LargestAlgebraic, engine.EigsOptions{NCV: 20, Tol: 1e-10, Seed: 1, Start: start})
	d, err2 := s.Eigs(context.Background(), op, 4, arpack.LargestAlgebraic, engine.EigsOptions{NCV: 20, Tol: 1e-10, Seed: 2, Start: start})
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if !SameResult(c, d) {
		t.Errorf("Start does not override Seed")
	}
}
