// Package arpacktest is the conformance suite of sparse symmetric
// eigensolvers, in the manner of gonum's testlapack: arpack's native and
// pure-Go Lanczos solvers run it, and so does every engine backend (through
// engine/enginetest). It checks eigenvalues against analytic spectra (grid
// Laplacians), residuals ‖Av − λv‖ against the requested tolerance, every
// part of the spectrum (largest, smallest, both ends, magnitudes), the
// matrix-free Gram operator of the boosting pricers against a dense
// reference, invalid arguments, cancellation, and bitwise reproducibility
// under concurrent use.
package arpacktest

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"

	"github.com/psdlearn/psdlearn/arpack"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/lapack/lapacktest"
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
		l, spec := GridLaplacian(100, 137)
		op, err := sparse.NewSymCSR(l)
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Eigs(ctx, op, 10, arpack.SmallestAlgebraic, opt)
		if err != nil {
			t.Fatal(err)
		}
		eigsCheck(t, "SA", op, res, spec[:10], spec[len(spec)-1])
	})

	t.Run("grid-largest-and-both-ends", func(t *testing.T) {
		l, spec := GridLaplacian(30, 43)
		op, err := sparse.NewSymCSR(l)
		if err != nil {
			t.Fatal(err)
		}
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

	t.Run("dense-magnitude", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(21, 22))
		lambda := make([]float64, 120)
		for i := range lambda {
			lambda[i] = -9 + 15*math.Pow(float64(i)/119, 1.2) // −9 … 6, distinct magnitudes
		}
		a := lapacktest.SymWithSpectrum(rng, lambda)
		op := sparse.NewDenseSym(a, impl)
		byMag := append([]float64(nil), lambda...)
		sort.Slice(byMag, func(i, j int) bool { return math.Abs(byMag[i]) > math.Abs(byMag[j]) })
		for _, tc := range []struct {
			which arpack.Which
			want  []float64
		}{
			{arpack.LargestMagnitude, append([]float64(nil), byMag[:4]...)},
			{arpack.SmallestMagnitude, append([]float64(nil), byMag[len(byMag)-3:]...)},
		} {
			sort.Float64s(tc.want)
			res, err := s.Eigs(ctx, op, len(tc.want), tc.which, engine.EigsOptions{NCV: 60, Tol: eigsTol, Seed: 2})
			if err != nil {
				t.Fatalf("%v: %v", tc.which, err)
			}
			eigsCheck(t, tc.which.String(), op, res, tc.want, 9)
		}
	})

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

	t.Run("errors", func(t *testing.T) {
		l, _ := GridLaplacian(4, 5)
		op, err := sparse.NewSymCSR(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			k    int
			w    arpack.Which
			opt  engine.EigsOptions
		}{
			{"k=0", 0, arpack.LargestAlgebraic, engine.EigsOptions{}},
			{"k=n", 20, arpack.LargestAlgebraic, engine.EigsOptions{}},
			{"NCV=k", 5, arpack.LargestAlgebraic, engine.EigsOptions{NCV: 5}},
			{"NCV>n", 5, arpack.LargestAlgebraic, engine.EigsOptions{NCV: 21}},
			{"BE k=1", 1, arpack.BothEnds, engine.EigsOptions{}},
			{"Tol<0", 2, arpack.SmallestAlgebraic, engine.EigsOptions{Tol: -1}},
			{"Start length", 2, arpack.SmallestAlgebraic, engine.EigsOptions{Start: []float64{1}}},
		} {
			if _, err := s.Eigs(ctx, op, tc.k, tc.w, tc.opt); !errors.Is(err, arpack.ErrInvalidArgument) {
				t.Errorf("%s: err = %v, want arpack.ErrInvalidArgument", tc.name, err)
			}
		}
		if _, err := s.Eigs(ctx, nil, 1, arpack.LargestAlgebraic, engine.EigsOptions{}); !errors.Is(err, arpack.ErrInvalidArgument) {
			t.Errorf("nil operator: err = %v", err)
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := s.Eigs(cctx, op, 2, arpack.LargestAlgebraic, engine.EigsOptions{}); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled context: err = %v", err)
		}
	})

	t.Run("concurrent", func(t *testing.T) {
		// 8 goroutines solving different problems get exactly the sequential answers.
		type job struct {
			op    engine.Operator
			which arpack.Which
		}
		jobs := make([]job, 8)
		for i := range jobs {
			l, _ := GridLaplacian(14+i, 19+2*i)
			op, err := sparse.NewSymCSR(l)
			if err != nil {
				t.Fatal(err)
			}
			jobs[i] = job{op, arpack.Which(i % 2)} // LA, SA alternately
		}
		o := engine.EigsOptions{NCV: 20, Tol: eigsTol, Seed: 5}
		want := make([]engine.EigsResult, len(jobs))
		for i, j := range jobs {
			var err error
			if want[i], err = s.Eigs(ctx, j.op, 4, j.which, o); err != nil {
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
				got[i], errs[i] = s.Eigs(ctx, j.op, 4, j.which, o)
			}()
		}
		wg.Wait()
		for i := range jobs {
			if errs[i] != nil {
				t.Errorf("job %d: %v", i, errs[i])
				continue
			}
			same := len(got[i].Values) == len(want[i].Values) && mat.Equal(got[i].Vectors, want[i].Vectors)
			for k := range want[i].Values {
				same = same && got[i].Values[k] == want[i].Values[k]
			}
			if !same {
				t.Errorf("job %d: concurrent result differs from the sequential one", i)
			}
		}
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
		l, spec := GridLaplacian(100, 137)
		op, err := sparse.NewSymCSR(l)
		if err != nil {
			t.Fatal(err)
		}
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
