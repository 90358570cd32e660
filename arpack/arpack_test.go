package arpack_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn/arpack"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// symWithSpectrum returns Q·diag(lambda)·Qᵀ for a random orthogonal Q.
func symWithSpectrum(rng *rand.Rand, lambda []float64) *mat.SymDense {
	n := len(lambda)
	g := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q mat.Dense
	qr.QTo(&q)
	a := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			var s float64
			for l := 0; l < n; l++ {
				s += q.At(i, l) * lambda[l] * q.At(j, l)
			}
			a.SetSym(i, j, s)
		}
	}
	return a
}

// wanted returns, ascending, the k values of the spectrum lambda that which selects.
func wanted(lambda []float64, k int, which arpack.Which) []float64 {
	l := append([]float64(nil), lambda...)
	sort.Float64s(l)
	var out []float64
	switch which {
	case arpack.LargestAlgebraic:
		out = l[len(l)-k:]
	case arpack.SmallestAlgebraic:
		out = l[:k]
	case arpack.LargestMagnitude, arpack.SmallestMagnitude:
		sort.SliceStable(l, func(a, b int) bool { return math.Abs(l[a]) > math.Abs(l[b]) })
		if which == arpack.SmallestMagnitude {
			out = l[len(l)-k:]
		} else {
			out = l[:k]
		}
	case arpack.BothEnds:
		out = append(append([]float64(nil), l[:k/2]...), l[len(l)-(k-k/2):]...)
	}
	out = append([]float64(nil), out...)
	sort.Float64s(out)
	return out
}

func TestInvalidArguments(t *testing.T) {
	op := gridOp(t, 4, 5) // n = 20
	ctx := context.Background()
	zero := funcOp{0, func(dst, x []float64) {}}
	for _, tc := range []struct {
		name  string
		op    arpack.Operator
		k     int
		which arpack.Which
		opt   arpack.Options
	}{
		{"nil operator", nil, 1, arpack.LargestAlgebraic, arpack.Options{}},
		{"n = 0", zero, 1, arpack.LargestAlgebraic, arpack.Options{}},
		{"k = 0", op, 0, arpack.LargestAlgebraic, arpack.Options{}},
		{"k < 0", op, -2, arpack.LargestAlgebraic, arpack.Options{}},
		{"k = n", op, 20, arpack.LargestAlgebraic, arpack.Options{}},
		{"k > n", op, 25, arpack.LargestAlgebraic, arpack.Options{}},
		{"which unknown", op, 2, arpack.Which(7), arpack.Options{}},
		{"which negative", op, 2, arpack.Which(-1), arpack.Options{}},
		{"BE with k = 1", op, 1, arpack.BothEnds, arpack.Options{}},
		{"NCV = k", op, 4, arpack.LargestAlgebraic, arpack.Options{NCV: 4}},
		{"NCV < k", op, 4, arpack.LargestAlgebraic, arpack.Options{NCV: 3}},
		{"NCV > n", op, 4, arpack.LargestAlgebraic, arpack.Options{NCV: 21}},
		{"NCV < 0", op, 4, arpack.LargestAlgebraic, arpack.Options{NCV: -1}},
		{"Tol < 0", op, 2, arpack.LargestAlgebraic, arpack.Options{Tol: -1e-8}},
		{"Tol NaN", op, 2, arpack.LargestAlgebraic, arpack.Options{Tol: math.NaN()}},
		{"Tol Inf", op, 2, arpack.LargestAlgebraic, arpack.Options{Tol: math.Inf(1)}},
		{"MaxIter < 0", op, 2, arpack.LargestAlgebraic, arpack.Options{MaxIter: -3}},
		{"Start too short", op, 2, arpack.LargestAlgebraic, arpack.Options{Start: make([]float64, 19)}},
		{"Start zero", op, 2, arpack.LargestAlgebraic, arpack.Options{Start: make([]float64, 20)}},
		{"Start NaN", op, 2, arpack.LargestAlgebraic, arpack.Options{Start: append(make([]float64, 19), math.NaN())}},
	} {
		for _, s := range solvers() {
			res, err := s.s.Eigs(ctx, tc.op, tc.k, tc.which, tc.opt)
			if !errors.Is(err, arpack.ErrInvalidArgument) {
				t.Errorf("%s/%s: err = %v, want ErrInvalidArgument", s.name, tc.name, err)
			}
			if len(res.Values) != 0 || res.Vectors != nil {
				t.Errorf("%s/%s: result not empty", s.name, tc.name)
			}
		}
	}
}

// TestWhich checks every part of the spectrum against a dense matrix of known eigenvalues.
func TestWhich(t *testing.T) {
	const n = 150
	rng := rand.New(rand.NewPCG(1, 2))
	lambda := make([]float64, n)
	for i := range lambda {
		// −7 … 11, denser near −7, with distinct magnitudes.
		lambda[i] = -7 + 18*math.Pow(float64(i)/(n-1), 1.3)
	}
	a := symWithSpectrum(rng, lambda)
	op := sparse.NewDenseSym(a, nil)
	const norm, tol = 11.0, 1e-10
	for _, tc := range []struct {
		which arpack.Which
		k     int
	}{
		{arpack.LargestAlgebraic, 6},
		{arpack.SmallestAlgebraic, 6},
		{arpack.LargestMagnitude, 5},
		{arpack.SmallestMagnitude, 4},
		{arpack.BothEnds, 5},
		{arpack.BothEnds, 6},
		{arpack.LargestAlgebraic, 1},
	} {
		want := wanted(lambda, tc.k, tc.which)
		for _, s := range solvers() {
			res, err := s.s.Eigs(context.Background(), op, tc.k, tc.which, arpack.Options{NCV: 40, Tol: tol, Seed: 3})
			if err != nil {
				t.Errorf("%s %v k=%d: %v", s.name, tc.which, tc.k, err)
				continue
			}
			if len(res.Values) != tc.k {
				t.Errorf("%s %v k=%d: %d values", s.name, tc.which, tc.k, len(res.Values))
				continue
			}
			for i, v := range res.Values {
				if math.Abs(v-want[i]) > 1e-9*norm {
					t.Errorf("%s %v k=%d: λ[%d] = %.15g, want %.15g", s.name, tc.which, tc.k, i, v, want[i])
				}
			}
			if r, o := maxResidual(op, res); r > tol*norm || o > 1e-12 {
				t.Errorf("%s %v k=%d: residual %.3g (limit %.3g), orthogonality %.3g", s.name, tc.which, tc.k, r, tol*norm, o)
			}
		}
	}
}

// TestGridAnalytic checks the grid Laplacian spectrum (2−2cos(πa/n1)) + (2−2cos(πb/n2)).
func TestGridAnalytic(t *testing.T) {
	const n1, n2, k, tol = 40, 57, 10, 1e-10
	op := gridOp(t, n1, n2)
	exact := gridSpectrum(n1, n2)
	norm := exact[len(exact)-1]
	for _, which := range []arpack.Which{arpack.SmallestAlgebraic, arpack.LargestAlgebraic} {
		want := exact[:k]
		if which == arpack.LargestAlgebraic {
			want = exact[len(exact)-k:]
		}
		for _, s := range solvers() {
			res, err := s.s.Eigs(context.Background(), op, k, which, arpack.Options{NCV: 30, Tol: tol, Seed: 1})
			if err != nil {
				t.Fatalf("%s %v: %v", s.name, which, err)
			}
			checkGrid(t, s.name+" "+which.String(), op, res, want, norm, tol)
		}
	}
}

// checkGrid compares computed eigenpairs with the analytic values: 1e-8
// relative, or 1e-12·‖A‖ absolute for the zero eigenvalue; residuals ≤ tol·‖A‖.
func checkGrid(t *testing.T, name string, op arpack.Operator, res arpack.Result, want []float64, norm, tol float64) {
	t.Helper()
	if len(res.Values) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(res.Values), len(want))
	}
	for i, v := range res.Values {
		if want[i] == 0 {
			if math.Abs(v) > 1e-12*norm {
				t.Errorf("%s: λ[%d] = %g, want 0", name, i, v)
			}
		} else if rel := math.Abs(v-want[i]) / want[i]; rel > 1e-8 {
			t.Errorf("%s: λ[%d] = %.15g, want %.15g (relative error %.2g)", name, i, v, want[i], rel)
		}
	}
	if r, o := maxResidual(op, res); r > tol*norm || o > 1e-10 {
		t.Errorf("%s: residual %.3g (limit %.3g), orthogonality %.3g", name, r, tol*norm, o)
	}
}

// TestGridLarge is the 400×613 (N = 245,200) acceptance case: the 10 largest
// eigenvalues, which are clustered (relative gaps ~1e-5) so each solve takes
// minutes. Set PSDLEARN_LONG=1 to run it.
func TestGridLarge(t *testing.T) {
	if os.Getenv("PSDLEARN_LONG") == "" {
		t.Skip("set PSDLEARN_LONG=1 to run the N = 245,200 grid case")
	}
	const n1, n2, k, tol = 400, 613, 10, 1e-10
	op := gridOp(t, n1, n2)
	exact := gridSpectrum(n1, n2)
	for _, s := range solvers() {
		start := time.Now()
		res, err := s.s.Eigs(context.Background(), op, k, arpack.LargestAlgebraic, arpack.Options{NCV: 40, Tol: tol, Seed: 1})
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		t.Logf("%s: %v, %d restarts, %d products", s.name, time.Since(start), res.Iterations, res.OpApplies)
		checkGrid(t, s.name, op, res, exact[len(exact)-k:], exact[len(exact)-1], tol)
	}
}

// TestSmallAndDegenerate covers tiny dimensions (NCV = n, the whole space)
// and operators whose Krylov spaces become invariant at once.
func TestSmallAndDegenerate(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	type problem struct {
		name   string
		lambda []float64
		// nativeFails: arpack-ng's known limits. It applies the operator to
		// the start vector first (dgetv0), so the zero operator gives info =
		// −9; and it may not find every copy of an exactly multiple
		// eigenvalue within the iteration limit.
		nativeFails bool
	}
	problems := []problem{
		{"n=2", []float64{-1, 3}, false},
		{"n=3", []float64{0.5, 1, 2}, false},
		{"n=6", []float64{-2, -1, 0, 1, 2, 3}, false},
		{"identity n=12", []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, false},
		{"two values n=30", append(make([]float64, 15), 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), true},
		{"zero n=8", make([]float64, 8), true},
	}
	for _, p := range problems {
		n := len(p.lambda)
		a := symWithSpectrum(rng, p.lambda)
		op := sparse.NewDenseSym(a, nil)
		for _, which := range []arpack.Which{arpack.LargestAlgebraic, arpack.SmallestAlgebraic, arpack.LargestMagnitude, arpack.SmallestMagnitude, arpack.BothEnds} {
			for k := 1; k < n && k <= 4; k++ {
				if which == arpack.BothEnds && k == 1 {
					continue
				}
				want := wanted(p.lambda, k, which)
				for _, s := range solvers() {
					res, err := s.s.Eigs(context.Background(), op, k, which, arpack.Options{Tol: 1e-12, Seed: 9})
					if err != nil && p.nativeFails && s.name == "native" {
						var ae *arpack.Error
						if p.name == "zero n=8" && !(errors.As(err, &ae) && ae.Info == -9 && ae.Routine == "dsaupd") {
							t.Errorf("%s %s %v k=%d: err = %v, want *arpack.Error with info −9", s.name, p.name, which, k, err)
						}
						t.Logf("%s %s %v k=%d: %v (known arpack-ng limitation)", s.name, p.name, which, k, err)
						if r, _ := maxResidual(op, res); r > 1e-10 {
							t.Errorf("%s %s %v k=%d: returned pairs have residual %.3g", s.name, p.name, which, k, r)
						}
						continue
					}
					if err != nil {
						t.Errorf("%s %s %v k=%d: %v", s.name, p.name, which, k, err)
						continue
					}
					if len(res.Values) != k {
						t.Errorf("%s %s %v k=%d: %d values", s.name, p.name, which, k, len(res.Values))
						continue
					}
					ok := true
					for i, v := range res.Values {
						if math.Abs(v-want[i]) > 1e-10 {
							ok = false
						}
					}
					if !ok && !(which == arpack.LargestMagnitude || which == arpack.SmallestMagnitude) {
						t.Errorf("%s %s %v k=%d: values %v, want %v", s.name, p.name, which, k, res.Values, want)
					}
					if !ok {
						// LM/SM with ties in |λ| (n=6 has ±1, ±2) may pick either sign: check magnitudes.
						for i := range res.Values {
							g := sortedAbs(res.Values)
							w := sortedAbs(want)
							if math.Abs(g[i]-w[i]) > 1e-10 {
								t.Errorf("%s %s %v k=%d: values %v, want magnitudes of %v", s.name, p.name, which, k, res.Values, want)
								break
							}
						}
					}
					if r, o := maxResidual(op, res); r > 1e-10 || o > 1e-10 {
						t.Errorf("%s %s %v k=%d: residual %.3g, orthogonality %.3g", s.name, p.name, which, k, r, o)
					}
				}
			}
		}
	}
}

func sortedAbs(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Abs(x)
	}
	sort.Float64s(out)
	return out
}

// TestNotConverged checks that an iteration limit too small returns the pairs
// that did converge, with a *NotConvergedError.
func TestNotConverged(t *testing.T) {
	const tol = 1e-10
	op := gridOp(t, 40, 57)
	exact := gridSpectrum(40, 57)[:10]
	for _, maxIter := range []int{2, 60} {
		for _, s := range solvers() {
			res, err := s.s.Eigs(context.Background(), op, 10, arpack.SmallestAlgebraic, arpack.Options{NCV: 21, MaxIter: maxIter, Tol: tol, Seed: 1})
			var nc *arpack.NotConvergedError
			if !errors.As(err, &nc) {
				t.Fatalf("%s MaxIter=%d: err = %v, want *NotConvergedError", s.name, maxIter, err)
			}
			t.Logf("%s MaxIter=%d: %v", s.name, maxIter, err)
			if nc.Requested != 10 || nc.Converged >= 10 || nc.Converged != len(res.Values) || nc.Iterations != maxIter+1 {
				t.Errorf("%s MaxIter=%d: %+v with %d values returned", s.name, maxIter, *nc, len(res.Values))
			}
			if maxIter == 60 && nc.Converged == 0 {
				t.Errorf("%s MaxIter=60: no converged pairs returned", s.name)
			}
			if len(res.Values) == 0 {
				continue
			}
			if r, _ := maxResidual(op, res); r > tol*8 {
				t.Errorf("%s MaxIter=%d: converged pairs have residual %.3g", s.name, maxIter, r)
			}
			for _, v := range res.Values {
				found := false
				for _, e := range exact {
					found = found || math.Abs(v-e) <= 1e-8*math.Max(e, 1e-4)
				}
				if !found {
					t.Errorf("%s MaxIter=%d: converged value %.15g is not among the 10 smallest", s.name, maxIter, v)
				}
			}
		}
	}
}

// TestCancel checks that a cancelled solve stops at once and that the next
// solve (which for the native solver reuses ARPACK's saved state) is unaffected.
func TestCancel(t *testing.T) {
	grid := gridOp(t, 30, 41)
	for _, s := range solvers() {
		opt := arpack.Options{NCV: 25, Tol: 1e-10, Seed: 4}
		ref, err := s.s.Eigs(context.Background(), grid, 6, arpack.SmallestAlgebraic, opt)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var applies atomic.Int64
		op := funcOp{grid.Dim(), func(dst, x []float64) {
			if applies.Add(1) == 30 {
				cancel()
			}
			grid.Apply(dst, x)
		}}
		_, err = s.s.Eigs(ctx, op, 6, arpack.SmallestAlgebraic, opt)
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: err = %v, want context.Canceled", s.name, err)
		}
		if got := applies.Load(); got != 30 {
			t.Errorf("%s: %d products after cancelling at the 30th", s.name, got)
		}
		// Already cancelled: no product at all.
		applies.Store(100)
		if _, err := s.s.Eigs(ctx, op, 6, arpack.SmallestAlgebraic, opt); !errors.Is(err, context.Canceled) || applies.Load() != 100 {
			t.Errorf("%s: cancelled context: err = %v after %d products", s.name, err, applies.Load()-100)
		}
		again, err := s.s.Eigs(context.Background(), grid, 6, arpack.SmallestAlgebraic, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !sameResult(ref, again) {
			t.Errorf("%s: solve after a cancelled one differs from the reference", s.name)
		}
	}
}

// TestNotFinite checks that NaN from the operator is an error, not a hang.
func TestNotFinite(t *testing.T) {
	grid := gridOp(t, 10, 11)
	var count atomic.Int64
	op := funcOp{grid.Dim(), func(dst, x []float64) {
		grid.Apply(dst, x)
		if count.Add(1) == 5 {
			dst[3] = math.NaN()
		}
	}}
	for _, s := range solvers() {
		count.Store(0)
		_, err := s.s.Eigs(context.Background(), op, 3, arpack.LargestAlgebraic, arpack.Options{})
		if !errors.Is(err, arpack.ErrNotFinite) {
			t.Errorf("%s: err = %v, want ErrNotFinite", s.name, err)
		}
	}
}

func sameResult(a, b arpack.Result) bool {
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

// TestDeterministic checks that the same seed gives the same bits, that Start
// overrides Seed, and (pure Go) that GOMAXPROCS does not change the result.
func TestDeterministic(t *testing.T) {
	op := gridOp(t, 60, 81) // n = 4860: more than one parallel chunk
	opt := arpack.Options{NCV: 20, Tol: 1e-10, Seed: 11}
	for _, s := range solvers() {
		a, err := s.s.Eigs(context.Background(), op, 4, arpack.LargestAlgebraic, opt)
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.s.Eigs(context.Background(), op, 4, arpack.LargestAlgebraic, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !sameResult(a, b) {
			t.Errorf("%s: two solves with the same seed differ", s.name)
		}
		start := make([]float64, op.Dim())
		for i := range start {
			start[i] = math.Sin(float64(i))
		}
		c, err1 := s.s.Eigs(context.Background(), op, 4, arpack.LargestAlgebraic, arpack.Options{NCV: 20, Tol: 1e-10, Seed: 1, Start: start})
		d, err2 := s.s.Eigs(context.Background(), op, 4, arpack.LargestAlgebraic, arpack.Options{NCV: 20, Tol: 1e-10, Seed: 2, Start: start})
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if !sameResult(c, d) {
			t.Errorf("%s: Start does not override Seed", s.name)
		}
	}
	prev := runtime.GOMAXPROCS(1)
	one, err := arpack.Go.Eigs(context.Background(), op, 4, arpack.LargestAlgebraic, opt)
	runtime.GOMAXPROCS(max(prev, 2))
	two, err2 := arpack.Go.Eigs(context.Background(), op, 4, arpack.LargestAlgebraic, opt)
	runtime.GOMAXPROCS(prev)
	if err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	if !sameResult(one, two) {
		t.Errorf("go: GOMAXPROCS=1 and GOMAXPROCS=%d give different results", max(prev, 2))
	}
}

// TestConcurrent runs 8 different problems at once on every solver (and both
// solvers at once) and checks that each gets exactly its sequential answer.
func TestConcurrent(t *testing.T) {
	type job struct {
		op    arpack.Operator
		which arpack.Which
		s     namedSolver
	}
	var jobs []job
	for _, s := range solvers() {
		for i := 0; i < 8; i++ {
			which := arpack.SmallestAlgebraic
			if i%2 == 1 {
				which = arpack.LargestAlgebraic
			}
			jobs = append(jobs, job{gridOp(t, 12+i, 17+2*i), which, s})
		}
	}
	opt := arpack.Options{NCV: 20, Tol: 1e-10, Seed: 7}
	want := make([]arpack.Result, len(jobs))
	for i, j := range jobs {
		var err error
		if want[i], err = j.s.s.Eigs(context.Background(), j.op, 4, j.which, opt); err != nil {
			t.Fatal(err)
		}
	}
	got := make([]arpack.Result, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = j.s.s.Eigs(context.Background(), j.op, 4, j.which, opt)
		}()
	}
	wg.Wait()
	for i, j := range jobs {
		if errs[i] != nil {
			t.Errorf("job %d (%s): %v", i, j.s.name, errs[i])
		} else if !sameResult(want[i], got[i]) {
			t.Errorf("job %d (%s): concurrent result differs from the sequential one", i, j.s.name)
		}
	}
}

// TestAgree checks that the native and pure-Go solvers give the same
// eigenvalues (to 1e-8 relative) and eigenvectors (up to sign).
func TestAgree(t *testing.T) {
	if !arpack.HaveNative {
		t.Skip("native solver not compiled in")
	}
	const tol = 1e-10
	op := gridOp(t, 50, 67)
	for _, which := range []arpack.Which{arpack.SmallestAlgebraic, arpack.LargestAlgebraic, arpack.BothEnds} {
		opt := arpack.Options{NCV: 30, Tol: tol, Seed: 2}
		a, err := arpack.Native.Eigs(context.Background(), op, 6, which, opt)
		if err != nil {
			t.Fatal(err)
		}
		b, err := arpack.Go.Eigs(context.Background(), op, 6, which, opt)
		if err != nil {
			t.Fatal(err)
		}
		agree(t, which.String(), a, b, 1e-8, 8)
	}
}

// agree compares two results: eigenvalues to rel relative (absolute rel·norm
// near zero), eigenvectors of well-separated eigenvalues up to sign.
func agree(t *testing.T, name string, a, b arpack.Result, rel, norm float64) {
	t.Helper()
	if len(a.Values) != len(b.Values) {
		t.Fatalf("%s: %d vs %d values", name, len(a.Values), len(b.Values))
	}
	for i := range a.Values {
		scale := math.Max(math.Abs(a.Values[i]), 1e-4*norm)
		if d := math.Abs(a.Values[i] - b.Values[i]); d > rel*scale {
			t.Errorf("%s: λ[%d]: native %.15g, go %.15g", name, i, a.Values[i], b.Values[i])
		}
	}
	n, m := a.Vectors.Dims()
	for j := 0; j < m; j++ {
		gap := math.Inf(1)
		for i := range a.Values {
			if i != j {
				gap = math.Min(gap, math.Abs(a.Values[i]-a.Values[j]))
			}
		}
		if gap < 1e-6*norm {
			continue
		}
		var dot float64
		for i := 0; i < n; i++ {
			dot += a.Vectors.At(i, j) * b.Vectors.At(i, j)
		}
		if math.Abs(math.Abs(dot)-1) > 1e-8 {
			t.Errorf("%s: eigenvector %d: |cos| = %.12f", name, j, math.Abs(dot))
		}
	}
}
