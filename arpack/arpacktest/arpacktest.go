// Package arpacktest is the conformance suite of sparse symmetric
// eigensolvers, in the manner of gonum's testlapack: arpack's native and
// pure-Go Lanczos solvers run it, and so does every engine backend (through
// engine/enginetest). It checks eigenvalues against analytic spectra (grid
// Laplacians) and matrices of known spectrum, residuals ‖Av − λv‖ against
// the requested tolerance, every part of the spectrum (largest, smallest,
// both ends, magnitudes), tiny dimensions and operators with invariant
// Krylov spaces, the matrix-free Gram operator of the boosting pricers
// against a dense reference, the normalised Laplacian of a real k-NN graph
// (letters), invalid arguments, non-convergence with the converged pairs,
// cancellation between operator products, NaN from the operator, and
// bitwise reproducibility for a seed and under concurrent use.
package arpacktest

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"

	"github.com/psdlearn/psdlearn/arpack"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// Tolerances of the sparse eigensolver suite.
const (
	eigsTol = 1e-10 // Options.Tol of every solve: residuals must be ≤ eigsTol·‖A‖
	eigsRel = 1e-8  // eigenvalues: relative error against analytic values and between backends
)

// GridLaplacian returns the combinatorial Laplacian of the n1×n2 grid graph
// (Cartesian product of two paths) and its exact spectrum, ascending:
// (2 − 2cos(πa/n1)) + (2 − 2cos(πb/n2)), 0 ≤ a < n1, 0 ≤ b < n2.
func GridLaplacian(n1, n2 int) (*sparse.CSR, []float64) {
	var is, js []int
	var vs []float64
	id := func(a, b int) int { return a*n2 + b }
	for a := 0; a < n1; a++ {
		for b := 0; b < n2; b++ {
			if a+1 < n1 {
				is, js, vs = append(is, id(a, b), id(a+1, b)), append(js, id(a+1, b), id(a, b)), append(vs, 1, 1)
			}
			if b+1 < n2 {
				is, js, vs = append(is, id(a, b), id(a, b+1)), append(js, id(a, b+1), id(a, b)), append(vs, 1, 1)
			}
		}
	}
	s, err := sparse.NewCSRFromTriplets(n1*n2, n1*n2, is, js, vs)
	if err != nil {
		panic(err)
	}
	l, err := sparse.Laplacian(s)
	if err != nil {
		panic(err)
	}
	spec := make([]float64, 0, n1*n2)
	for a := 0; a < n1; a++ {
		for b := 0; b < n2; b++ {
			spec = append(spec, (2-2*math.Cos(math.Pi*float64(a)/float64(n1)))+(2-2*math.Cos(math.Pi*float64(b)/float64(n2))))
		}
	}
	sort.Float64s(spec)
	return l, spec
}

// GridOp returns the operator of the n1×n2 grid Laplacian and its exact
// spectrum, ascending (see GridLaplacian).
func GridOp(tb testing.TB, n1, n2 int) (*sparse.SymCSR, []float64) {
	tb.Helper()
	l, spec := GridLaplacian(n1, n2)
	op, err := sparse.NewSymCSR(l)
	if err != nil {
		tb.Fatal(err)
	}
	return op, spec
}

// EigsResidual returns max_j ‖A v_j − λ_j v_j‖₂ and max |VᵀV − I|.
func EigsResidual(op engine.Operator, res engine.EigsResult) (resid, orth float64) {
	m := len(res.Values)
	if m == 0 {
		return 0, 0
	}
	n := op.Dim()
	x, y := make([]float64, n), make([]float64, n)
	for j := 0; j < m; j++ {
		mat.Col(x, j, res.Vectors)
		op.Apply(y, x)
		var s float64
		for i := range y {
			d := y[i] - res.Values[j]*x[i]
			s += d * d
		}
		resid = math.Max(resid, math.Sqrt(s))
	}
	var g mat.Dense
	g.Mul(res.Vectors.T(), res.Vectors)
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			d := g.At(i, j)
			if i == j {
				d--
			}
			orth = math.Max(orth, math.Abs(d))
		}
	}
	return resid, orth
}

// eigsCheck compares computed eigenvalues with exact ones (relative eigsRel,
// or 1e-12·‖A‖ absolute for an exact zero) and checks residuals and orthogonality.
func eigsCheck(t *testing.T, name string, op engine.Operator, res engine.EigsResult, want []float64, norm float64) {
	t.Helper()
	if len(res.Values) != len(want) {
		t.Errorf("%s: %d eigenvalues, want %d", name, len(res.Values), len(want))
		return
	}
	if r, c := res.Vectors.Dims(); r != op.Dim() || c != len(want) {
		t.Errorf("%s: eigenvectors are %d×%d, want %d×%d", name, r, c, op.Dim(), len(want))
		return
	}
	for i, v := range res.Values {
		if want[i] == 0 {
			if math.Abs(v) > 1e-12*norm {
				t.Errorf("%s: λ[%d] = %g, want 0", name, i, v)
			}
		} else if rel := math.Abs(v-want[i]) / math.Abs(want[i]); rel > eigsRel {
			t.Errorf("%s: λ[%d] = %.15g, want %.15g (relative error %.2g)", name, i, v, want[i], rel)
		}
	}
	if r, o := EigsResidual(op, res); r > eigsTol*norm || o > 1e-10 {
		t.Errorf("%s: residual %.3g (limit %.3g), orthogonality %.3g", name, r, eigsTol*norm, o)
	}
}

// eigsGram returns random data x (n×d) and a signed pair graph with random weights.
func eigsGram(rng *rand.Rand, n, d, m int) (*mat.Dense, *sparse.PairGraph) {
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, rng.NormFloat64())
		}
	}
	pairs, w := RandPairs(rng, n, m)
	g, err := sparse.NewPairGraph(n, pairs)
	if err != nil {
		panic(err)
	}
	if err := g.SetWeights(w); err != nil {
		panic(err)
	}
	return x, g
}

// TestEigsSolver runs the suite on s; impl is the BLAS of the operators
// (nil: gonum's).
func TestEigsSolver(t *testing.T, s engine.EigsSolver, impl blas.Float64) {
	ctx := context.Background()
	opt := engine.EigsOptions{NCV: 30, Tol: eigsTol, Seed: 1}

	t.Run("grid-100x137-smallest", func(t *testing.T) {
		op, spec := GridOp(t, 100, 137)
		res, err := s.Eigs(ctx, op, 10, arpack.SmallestAlgebraic, opt)
		if err != nil {
			t.Fatal(err)
		}
		eigsCheck(t, "SA", op, res, spec[:10], spec[len(spec)-1])
	})

	t.Run("grid-largest-and-both-ends", func(t *testing.T) {
		op, spec := GridOp(t, 30, 43)
		norm := spec[len(spec)-1]
		res, err := s.Eigs(ctx, op, 10, arpack.LargestAlgebraic, opt)
		if err != nil {
			t.Fatal(err)
		}
		eigsCheck(t, "LA", op, res, spec[len(spec)-10:], norm)
		res, err = s.Eigs(ctx, op, 7, arpack.BothEnds, opt)
		if err != nil {
			t.Fatal(err)
		}
		eigsCheck(t, "BE", op, res, append(append([]float64(nil), spec[:3]...), spec[len(spec)-4:]...), norm)
	})

	t.Run("which", func(t *testing.T) { testWhich(t, s, impl) })

	t.Run("matrix-free-gram", func(t *testing.T) {
		// The pricing step of BoostMetric/PSDBoost: the top eigenpairs of
		// Xᵀ L_W X from v ↦ Xᵀ(L_W(X v)), checked against the dense matrix.
		rng := rand.New(rand.NewPCG(23, 24))
		x, g := eigsGram(rng, 400, 60, 3000)
		op, err := sparse.NewGramOperator(x, g, impl)
		if err != nil {
			t.Fatal(err)
		}
		full := gramSpectrum(x, g)
		norm := math.Max(math.Abs(full[0]), math.Abs(full[59]))
		for _, k := range []int{1, 3} {
			res, err := s.Eigs(ctx, op, k, arpack.LargestAlgebraic, engine.EigsOptions{Tol: eigsTol, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			eigsCheck(t, "gram", op, res, full[60-k:], norm)
		}
	})

	t.Run("errors", func(t *testing.T) { testErrors(t, s) })
	t.Run("small-and-degenerate", func(t *testing.T) { testSmall(t, s, impl, false) })
	t.Run("not-converged", func(t *testing.T) { testNotConverged(t, s) })
	t.Run("cancel", func(t *testing.T) { testCancel(t, s) })
	t.Run("not-finite", func(t *testing.T) { testNotFinite(t, s) })
	t.Run("deterministic", func(t *testing.T) { testDeterministic(t, s) })
	t.Run("letters", func(t *testing.T) { testLetters(t, s) })
	t.Run("grid-400x613-largest", func(t *testing.T) { testGridLarge(t, s) })

	t.Run("concurrent", func(t *testing.T) {
		// 8 goroutines solving different problems get exactly the sequential answers.
		testConcurrent(t, []engine.EigsSolver{s}, 14, 19, engine.EigsOptions{NCV: 20, Tol: eigsTol, Seed: 5})
	})
}

// TestAgree checks that two solvers give the same eigenpairs (vectors up to
// sign) on a grid Laplacian and a Gram operator.
func TestAgree(t *testing.T, a, b engine.EigsSolver) {
	ctx := context.Background()
	compare := func(t *testing.T, name string, ra, rb engine.EigsResult, norm float64) {
		t.Helper()
		if len(ra.Values) != len(rb.Values) {
			t.Fatalf("%s: %d vs %d eigenvalues", name, len(ra.Values), len(rb.Values))
		}
		for i := range ra.Values {
			scale := math.Max(math.Abs(ra.Values[i]), 1e-4*norm)
			if math.Abs(ra.Values[i]-rb.Values[i]) > eigsRel*scale {
				t.Errorf("%s: λ[%d]: %.15g vs %.15g", name, i, ra.Values[i], rb.Values[i])
			}
		}
		// Eigenvectors of well-separated eigenvalues agree up to sign.
		n, m := ra.Vectors.Dims()
		for j := 0; j < m; j++ {
			gap := math.Inf(1)
			for i := range ra.Values {
				if i != j {
					gap = math.Min(gap, math.Abs(ra.Values[i]-ra.Values[j]))
				}
			}
			if gap < 1e-6*norm {
				continue
			}
			var dot float64
			for i := 0; i < n; i++ {
				dot += ra.Vectors.At(i, j) * rb.Vectors.At(i, j)
			}
			if math.Abs(math.Abs(dot)-1) > 1e-8 {
				t.Errorf("%s: eigenvector %d: |cos| between backends = %.12f", name, j, math.Abs(dot))
			}
		}
	}
	t.Run("grid-100x137-smallest", func(t *testing.T) {
		op, spec := GridOp(t, 100, 137)
		opt := engine.EigsOptions{NCV: 30, Tol: eigsTol, Seed: 8}
		ra, err := a.Eigs(ctx, op, 10, arpack.SmallestAlgebraic, opt)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := b.Eigs(ctx, op, 10, arpack.SmallestAlgebraic, opt)
		if err != nil {
			t.Fatal(err)
		}
		compare(t, "grid SA", ra, rb, spec[len(spec)-1])
	})
	t.Run("grid-50x67", func(t *testing.T) {
		op, spec := GridOp(t, 50, 67)
		for _, which := range []engine.Which{arpack.SmallestAlgebraic, arpack.LargestAlgebraic, arpack.BothEnds} {
			opt := engine.EigsOptions{NCV: 30, Tol: eigsTol, Seed: 2}
			ra, err := a.Eigs(ctx, op, 6, which, opt)
			if err != nil {
				t.Fatal(err)
			}
			rb, err := b.Eigs(ctx, op, 6, which, opt)
			if err != nil {
				t.Fatal(err)
			}
			compare(t, "grid "+which.String(), ra, rb, spec[len(spec)-1])
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		// Both solvers at once, 8 problems each.
		testConcurrent(t, []engine.EigsSolver{a, b}, 12, 17, engine.EigsOptions{NCV: 20, Tol: eigsTol, Seed: 7})
	})
	t.Run("letters", func(t *testing.T) {
		ra, _ := lettersSolve(t, a)
		rb, _ := lettersSolve(t, b)
		if len(ra.Values) != len(rb.Values) {
			t.Fatalf("%d vs %d eigenvalues", len(ra.Values), len(rb.Values))
		}
		var worst float64
		for i := range ra.Values {
			rel := math.Abs(ra.Values[i]-rb.Values[i]) / math.Abs(ra.Values[i])
			worst = math.Max(worst, rel)
			if rel > eigsRel {
				t.Errorf("λ[%d]: %.15g vs %.15g (relative difference %.2g)", i, ra.Values[i], rb.Values[i], rel)
			}
		}
		t.Logf("largest relative difference: %.2g", worst)
	})
	t.Run("matrix-free-gram", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(25, 26))
		x, g := eigsGram(rng, 500, 80, 4000)
		opa, err := sparse.NewGramOperator(x, g, nil)
		if err != nil {
			t.Fatal(err)
		}
		opb, err := sparse.NewGramOperator(x, g, nil)
		if err != nil {
			t.Fatal(err)
		}
		opt := engine.EigsOptions{Tol: eigsTol, Seed: 9}
		ra, err := a.Eigs(ctx, opa, 3, arpack.LargestAlgebraic, opt)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := b.Eigs(ctx, opb, 3, arpack.LargestAlgebraic, opt)
		if err != nil {
			t.Fatal(err)
		}
		compare(t, "gram LA", ra, rb, math.Abs(ra.Values[2]))
	})
}

// RandPairs returns m random pairs of distinct points among n (repeats
// allowed) with N(0,1) weights.
func RandPairs(rng *rand.Rand, n, m int) ([]sparse.Pair, []float64) {
	pairs := make([]sparse.Pair, 0, m)
	w := make([]float64, 0, m)
	for len(pairs) < m {
		a, b := rng.IntN(n), rng.IntN(n)
		if a == b {
			continue
		}
		pairs = append(pairs, sparse.Pair{A: a, B: b})
		w = append(w, rng.NormFloat64())
	}
	return pairs, w
}

// gramSpectrum returns the eigenvalues of Xᵀ L_W X, ascending, formed
// densely with gonum: the reference of the matrix-free operator.
func gramSpectrum(x *mat.Dense, g *sparse.PairGraph) []float64 {
	n, d := x.Dims()
	lx := mat.NewDense(n, d, nil)
	g.LaplacianMulDense(lx, x)
	var m mat.Dense
	m.Mul(x.T(), lx)
	sym := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			sym.SetSym(i, j, 0.5*(m.At(i, j)+m.At(j, i)))
		}
	}
	var es mat.EigenSym
	if !es.Factorize(sym, false) {
		panic("arpacktest: reference eigendecomposition failed")
	}
	return es.Values(nil)
}

// testConcurrent solves, with each solver, the 4 largest or smallest
// eigenpairs (alternately) of 8 grid Laplacians of sizes (n1+i)×(n2+2i),
// first one after the other, then all at once, and requires every
// concurrent result to be the sequential one, bit for bit.
func testConcurrent(t *testing.T, solvers []engine.EigsSolver, n1, n2 int, opt engine.EigsOptions) {
	type job struct {
		s     engine.EigsSolver
		op    engine.Operator
		which engine.Which
	}
	var jobs []job
	for _, s := range solvers {
		for i := 0; i < 8; i++ {
			op, _ := GridOp(t, n1+i, n2+2*i)
			jobs = append(jobs, job{s, op, engine.Which(i % 2)}) // LA, SA alternately
		}
	}
	ctx := context.Background()
	want := make([]engine.EigsResult, len(jobs))
	for i, j := range jobs {
		var err error
		if want[i], err = j.s.Eigs(ctx, j.op, 4, j.which, opt); err != nil {
			t.Fatal(err)
		}
	}
	got := make([]engine.EigsResult, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = j.s.Eigs(ctx, j.op, 4, j.which, opt)
		}()
	}
	wg.Wait()
	for i := range jobs {
		if errs[i] != nil {
			t.Errorf("job %d: %v", i, errs[i])
		} else if !SameResult(want[i], got[i]) {
			t.Errorf("job %d: concurrent result differs from the sequential one", i)
		}
	}
}
