package engine_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/engine/enginetest"
	"gonum.org/v1/gonum/mat"
)

// tridiagOp is tridiag(−1, d_i, −1) with seeded random d_i in [0, 8)
// (Anderson's model): a sparse operator whose spectrum, [−2, 10], has
// moderately separated ends. It is a BlockOperator.
type tridiagOp struct{ d []float64 }

func newTridiag(n int, seed uint64) tridiagOp {
	rng := rand.New(rand.NewPCG(seed, 7))
	d := make([]float64, n)
	for i := range d {
		d[i] = 8 * rng.Float64()
	}
	return tridiagOp{d}
}

func (o tridiagOp) Dim() int { return len(o.d) }
func (o tridiagOp) Apply(dst, x []float64) {
	n := len(o.d)
	for i := range dst {
		v := o.d[i] * x[i]
		if i > 0 {
			v -= x[i-1]
		}
		if i+1 < n {
			v -= x[i+1]
		}
		dst[i] = v
	}
}
func (o tridiagOp) ApplyBlock(dst, x *mat.Dense) {
	n, c := x.Dims()
	col, out := make([]float64, n), make([]float64, n)
	for j := 0; j < c; j++ {
		mat.Col(col, j, x)
		o.Apply(out, col)
		dst.SetCol(j, out)
	}
}

// spectrum returns the eigenvalues of o, ascending, from a dense
// decomposition.
func (o tridiagOp) spectrum(t *testing.T) []float64 {
	n := len(o.d)
	a := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		a.SetSym(i, i, o.d[i])
		if i+1 < n {
			a.SetSym(i, i+1, -1)
		}
	}
	var es mat.EigenSym
	if !es.Factorize(a, false) {
		t.Fatal("dense eigendecomposition failed")
	}
	return es.Values(nil)
}

// TestKrylovSchurKnownSpectrum checks KrylovSchur on every backend, both
// ends of the spectrum, several block sizes and k up to 60, against known
// eigenvalues: each pair's residual, recomputed here, is at most
// Tol·max(|λ|, ε^(2/3)) (ARPACK's test), the eigenvalues are within that
// of the true ones, and the vectors are orthonormal.
func TestKrylovSchurKnownSpectrum(t *testing.T) {
	const n = 300
	lam := make([]float64, n)
	for i := range lam {
		lam[i] = -5 + 10*float64(i)/float64(n-1) + 0.3*math.Sin(float64(i))
	}
	a := withSpectrum(lam, 3)
	sorted := append([]float64(nil), lam...)
	sortFloats(sorted)
	dense := denseOp{a}
	tri := newTridiag(1500, 4)
	tl := tri.spectrum(t)
	const tol = 1e-10
	for _, b := range enginetest.Backends(t) {
		for _, tc := range []struct {
			name  string
			op    engine.Operator
			which engine.Which
			k, bs int
			want  []float64
		}{
			{"dense/SA/k=8", dense, engine.SmallestAlgebraic, 8, 4, sorted[:8]},
			{"dense/LA/k=24", dense, engine.LargestAlgebraic, 24, 8, sorted[n-24:]},
			{"dense/LA/k=5/b=1", dense, engine.LargestAlgebraic, 5, 1, sorted[n-5:]},
			{"tridiagonal/LA/k=60", tri, engine.LargestAlgebraic, 60, 8, tl[1500-60:]},
			{"tridiagonal/SA/k=10/b=3", tri, engine.SmallestAlgebraic, 10, 3, tl[:10]},
		} {
			t.Run(b.Name()+"/"+tc.name, func(t *testing.T) {
				res, err := engine.KrylovSchur(context.Background(), b, tc.op, tc.k, tc.which, engine.KrylovSchurOptions{Block: tc.bs, Tol: tol, Seed: 1})
				if err != nil {
					t.Fatal(err)
				}
				checkARPACKTest(t, tc.op, res, tc.want, tol)
				t.Logf("%d restarts, %d operator products", res.Iterations, res.OpApplies)
			})
		}
	}
}

// checkARPACKTest asserts ‖A v − λ v‖ ≤ tol·max(|λ|, ε^(2/3)) with fresh
// products, |λ − want| within the same bound, and orthonormal vectors.
func checkARPACKTest(t *testing.T, op engine.Operator, res engine.EigsResult, want []float64, tol float64) {
	t.Helper()
	n := op.Dim()
	if len(res.Values) != len(want) {
		t.Fatalf("%d values, want %d", len(res.Values), len(want))
	}
	eps23 := math.Pow(0x1p-53, 2.0/3)
	v, av := make([]float64, n), make([]float64, n)
	for j, l := range res.Values {
		bound := tol * math.Max(math.Abs(l), eps23)
		mat.Col(v, j, res.Vectors)
		op.Apply(av, v)
		var r float64
		for i := range v {
			r += (av[i] - l*v[i]) * (av[i] - l*v[i])
		}
		if math.Sqrt(r) > bound {
			t.Errorf("pair %d: residual %.3g > %.3g", j, math.Sqrt(r), bound)
		}
		// |λ − λ_true| ≤ ‖r‖ for a unit vector.
		if math.Abs(l-want[j]) > bound*(1+1e-6) {
			t.Errorf("λ[%d] = %.15g, want %.15g", j, l, want[j])
		}
	}
	var g mat.Dense
	g.Mul(res.Vectors.T(), res.Vectors)
	for i := range want {
		for j := range want {
			w := 0.0
			if i == j {
				w = 1
			}
			if math.Abs(g.At(i, j)-w) > 1e-10 {
				t.Fatalf("VᵀV[%d,%d] = %g", i, j, g.At(i, j))
			}
		}
	}
}

// TestKrylovSchurAgreesWithEigs: on a 5,000×5,000 tridiagonal operator
// with 100 wanted pairs, KrylovSchur and the backend's Eigs (ARPACK or its pure-Go twin)
// return the same eigenvalues and need operator products of the same order.
func TestKrylovSchurAgreesWithEigs(t *testing.T) {
	op := newTridiag(5000, 8)
	for _, b := range enginetest.Backends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			ks, err := engine.KrylovSchur(context.Background(), b, op, 100, engine.LargestAlgebraic, engine.KrylovSchurOptions{Tol: 1e-10, Seed: 2})
			if err != nil {
				t.Fatal(err)
			}
			ar, err := b.Eigs(context.Background(), op, 100, engine.LargestAlgebraic, engine.EigsOptions{Tol: 1e-10, Seed: 2})
			if err != nil {
				t.Fatal(err)
			}
			for j, l := range ks.Values {
				if math.Abs(l-ar.Values[j]) > 1e-9*math.Abs(l) {
					t.Errorf("λ[%d]: KrylovSchur %.15g, Eigs %.15g", j, l, ar.Values[j])
				}
			}
			t.Logf("products: KrylovSchur %d (%d restarts), Eigs %d", ks.OpApplies, ks.Iterations, ar.OpApplies)
			if ks.OpApplies > 3*ar.OpApplies {
				t.Errorf("KrylovSchur used %d products, Eigs %d", ks.OpApplies, ar.OpApplies)
			}
		})
	}
}

// TestKrylovSchurWarmStart solves a sequence of two nearby problems (the
// diagonal perturbed by up to 1e-3), the second from the first's
// eigenvectors, on every backend: the warm solve passes the same checks
// as a cold one (ARPACK's test on residuals recomputed here, orthonormal
// vectors) and finds the cold solve's eigenvalues.
func TestKrylovSchurWarmStart(t *testing.T) {
	const k, tol = 40, 1e-10
	op := newTridiag(3000, 5)
	next := tridiagOp{append([]float64(nil), op.d...)}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range next.d {
		next.d[i] += 1e-3 * rng.Float64()
	}
	for _, b := range enginetest.Backends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			ctx := context.Background()
			first, err := engine.KrylovSchur(ctx, b, op, k, engine.LargestAlgebraic, engine.KrylovSchurOptions{Tol: tol, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			cold, err := engine.KrylovSchur(ctx, b, next, k, engine.LargestAlgebraic, engine.KrylovSchurOptions{Tol: tol, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			warm, err := engine.KrylovSchur(ctx, b, next, k, engine.LargestAlgebraic, engine.KrylovSchurOptions{Tol: tol, Seed: 1, Start: first.Vectors})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("products: cold %d, warm %d", cold.OpApplies, warm.OpApplies)
			checkARPACKTest(t, next, warm, cold.Values, tol)
		})
	}
}

// TestKrylovSchurMachinePrecision: with Tol 0 (machine precision, the
// default) the solve converges on every backend, each recomputed residual
// within the rounding floor 256·ε·‖A‖ and each value within it of the
// dense decomposition's. (Before the floor, the recomputed residuals could
// never pass a test at ε·|λ| and the solve ran to its restart cap.)
func TestKrylovSchurMachinePrecision(t *testing.T) {
	op := newTridiag(2000, 12)
	spec := op.spectrum(t)
	norm := math.Max(math.Abs(spec[0]), math.Abs(spec[len(spec)-1]))
	floor := 256 * 0x1p-53 * norm
	for _, b := range enginetest.Backends(t) {
		res, err := engine.KrylovSchur(context.Background(), b, op, 15, engine.LargestAlgebraic, engine.KrylovSchurOptions{Seed: 1})
		if err != nil {
			t.Fatalf("%s: %v", b.Name(), err)
		}
		n := op.Dim()
		v, av := make([]float64, n), make([]float64, n)
		for j, l := range res.Values {
			mat.Col(v, j, res.Vectors)
			op.Apply(av, v)
			var ss float64
			for i := range v {
				d := av[i] - l*v[i]
				ss += d * d
			}
			if r := math.Sqrt(ss); r > floor {
				t.Errorf("%s: pair %d: residual %.3g above the floor %.3g", b.Name(), j, r, floor)
			}
			if want := spec[len(spec)-15+j]; math.Abs(l-want) > floor {
				t.Errorf("%s: λ[%d] = %.17g, dense %.17g", b.Name(), j, l, want)
			}
		}
		t.Logf("%s: %d products", b.Name(), res.OpApplies)
	}
}

// TestKrylovSchurErrors checks argument errors, cancellation and a
// non-finite operator.
func TestKrylovSchurErrors(t *testing.T) {
	b := enginetest.Backends(t)[0]
	op := newTridiag(500, 1)
	for _, tc := range []struct {
		k   int
		opt engine.KrylovSchurOptions
	}{
		{0, engine.KrylovSchurOptions{}},
		{501, engine.KrylovSchurOptions{}},
		{10, engine.KrylovSchurOptions{Block: -1}},
		{10, engine.KrylovSchurOptions{Keep: 5}},
		{10, engine.KrylovSchurOptions{Keep: 20, MaxBasis: 25, Block: 4}},
		{10, engine.KrylovSchurOptions{Tol: math.NaN()}},
		{10, engine.KrylovSchurOptions{MaxRestarts: -1}},
		{10, engine.KrylovSchurOptions{Start: mat.NewDense(499, 3, nil)}},
		{10, engine.KrylovSchurOptions{Start: mat.NewDense(500, 1, []float64{499: math.Inf(1)})}},
	} {
		t.Run(fmt.Sprintf("k=%d/%+v", tc.k, tc.opt), func(t *testing.T) {
			if _, err := engine.KrylovSchur(context.Background(), b, op, tc.k, engine.LargestAlgebraic, tc.opt); !errors.Is(err, engine.ErrDimension) && !errors.Is(err, engine.ErrNotFinite) {
				t.Errorf("error %v", err)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := engine.KrylovSchur(ctx, b, op, 10, engine.LargestAlgebraic, engine.KrylovSchurOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	nan := nanOp{500}
	if _, err := engine.KrylovSchur(context.Background(), b, nan, 10, engine.LargestAlgebraic, engine.KrylovSchurOptions{}); !errors.Is(err, engine.ErrNotFinite) {
		t.Errorf("NaN operator: %v", err)
	}
}

type nanOp struct{ n int }

func (o nanOp) Dim() int { return o.n }
func (o nanOp) Apply(dst, x []float64) {
	for i := range dst {
		dst[i] = math.NaN()
	}
}

// ExampleKrylovSchur computes the 3 largest eigenvalues of the path
// Laplacian tridiag(−1, 2, −1) of order 200, known to be
// 2 − 2cos(πj/201) for j = 198, 199, 200.
func ExampleKrylovSchur() {
	b, err := engine.Get("go")
	if err != nil {
		panic(err)
	}
	op := pathLaplacian(200)
	res, err := engine.KrylovSchur(context.Background(), b, op, 3, engine.LargestAlgebraic, engine.KrylovSchurOptions{Tol: 1e-12, Seed: 1})
	if err != nil {
		panic(err)
	}
	for j, v := range res.Values {
		fmt.Printf("%.10f (exact %.10f)\n", v, 2-2*math.Cos(math.Pi*float64(198+j)/201))
	}
	// Output:
	// 3.9978017830 (exact 3.9978017830)
	// 3.9990229152 (exact 3.9990229152)
	// 3.9997557139 (exact 3.9997557139)
}

// pathLaplacian is tridiag(−1, 2, −1) of order n.
type pathLaplacian int

func (o pathLaplacian) Dim() int { return int(o) }
func (o pathLaplacian) Apply(dst, x []float64) {
	for i := range dst {
		v := 2 * x[i]
		if i > 0 {
			v -= x[i-1]
		}
		if i+1 < len(dst) {
			v -= x[i+1]
		}
		dst[i] = v
	}
}

// TestKrylovSchurConcurrentRace runs KrylovSchur on 4 goroutines per
// backend, all sharing one operator and one Start matrix, and requires the
// bits of a sequential run (run with -race: the solves share no mutable
// state, and the shared inputs are only read).
func TestKrylovSchurConcurrentRace(t *testing.T) {
	op := newTridiag(1500, 11)
	start := mat.NewDense(1500, 6, nil)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range start.RawMatrix().Data {
		start.RawMatrix().Data[i] = rng.NormFloat64()
	}
	before := mat.DenseCopyOf(start)
	for _, b := range enginetest.Backends(t) {
		opt := engine.KrylovSchurOptions{Tol: 1e-9, Seed: 3, Start: start}
		want, err := engine.KrylovSchur(context.Background(), b, op, 12, engine.LargestAlgebraic, opt)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		got := make([]engine.EigsResult, 4)
		errs := make([]error, 4)
		for g := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[g], errs[g] = engine.KrylovSchur(context.Background(), b, op, 12, engine.LargestAlgebraic, opt)
			}()
		}
		wg.Wait()
		for g := range got {
			if errs[g] != nil {
				t.Fatalf("%s: goroutine %d: %v", b.Name(), g, errs[g])
			}
			if !slices.Equal(got[g].Values, want.Values) || !mat.Equal(got[g].Vectors, want.Vectors) {
				t.Errorf("%s: goroutine %d differs from the sequential run", b.Name(), g)
			}
		}
	}
	if !mat.Equal(start, before) {
		t.Error("Start was modified")
	}
}
