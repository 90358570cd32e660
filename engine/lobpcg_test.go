package engine_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/engine/enginetest"
	"github.com/psdlearn/psdlearn/errs"
	"gonum.org/v1/gonum/mat"
)

// denseOp is a dense symmetric matrix as an Operator.
type denseOp struct{ a *mat.SymDense }

func (o denseOp) Dim() int { return o.a.SymmetricDim() }
func (o denseOp) Apply(dst, x []float64) {
	n := o.Dim()
	mat.NewVecDense(n, dst).MulVec(o.a, mat.NewVecDense(n, x))
}

// withSpectrum returns Q·diag(lam)·Qᵀ for a seeded random orthogonal Q.
func withSpectrum(lam []float64, seed uint64) *mat.SymDense {
	n := len(lam)
	rng := rand.New(rand.NewPCG(seed, 1))
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
	var qd mat.Dense
	qd.Mul(&q, mat.NewDiagDense(n, lam))
	var a mat.Dense
	a.Mul(&qd, q.T())
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			s.SetSym(i, j, 0.5*(a.At(i, j)+a.At(j, i)))
		}
	}
	return s
}

// checkPairs asserts ‖A v − λ v‖ ≤ tol·‖A‖ for every returned pair (with
// fresh products), orthonormal vectors, and the known eigenvalues.
func checkPairs(t *testing.T, op engine.Operator, res engine.BlockEigsResult, want []float64, normA, tol float64) {
	t.Helper()
	n := op.Dim()
	if len(res.Values) != len(want) {
		t.Fatalf("%d values, want %d", len(res.Values), len(want))
	}
	v, av := make([]float64, n), make([]float64, n)
	for j, l := range res.Values {
		if math.Abs(l-want[j]) > tol*normA {
			t.Errorf("λ[%d] = %.15g, want %.15g", j, l, want[j])
		}
		mat.Col(v, j, res.Vectors)
		op.Apply(av, v)
		var r float64
		for i := range v {
			r += (av[i] - l*v[i]) * (av[i] - l*v[i])
		}
		if math.Sqrt(r) > tol*normA {
			t.Errorf("pair %d: residual %.3g > %.3g", j, math.Sqrt(r), tol*normA)
		}
	}
	var g mat.Dense
	g.Mul(res.Vectors.T(), res.Vectors)
	k := len(want)
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			want := 0.0
			if i == j {
				want = 1
			}
			if math.Abs(g.At(i, j)-want) > 1e-10 {
				t.Fatalf("VᵀV[%d,%d] = %g", i, j, g.At(i, j))
			}
		}
	}
}

func TestBlockEigsKnownSpectrum(t *testing.T) {
	const n = 300
	lam := make([]float64, n)
	for i := range lam {
		lam[i] = -5 + 10*float64(i)/float64(n-1) + 0.3*math.Sin(float64(i)) // distinct, both signs
	}
	a := withSpectrum(lam, 3)
	sorted := append([]float64(nil), lam...)
	sortFloats(sorted)
	op := denseOp{a}
	normA := math.Max(math.Abs(sorted[0]), math.Abs(sorted[n-1]))
	for _, b := range enginetest.Backends(t) {
		for _, tc := range []struct {
			which engine.Which
			k     int
			want  []float64
		}{
			{engine.SmallestAlgebraic, 8, sorted[:8]},
			{engine.SmallestAlgebraic, 24, sorted[:24]},
			{engine.LargestAlgebraic, 5, sorted[n-5:]},
		} {
			t.Run(b.Name()+"/"+tc.which.String(), func(t *testing.T) {
				res, err := engine.BlockEigs(context.Background(), b, op, tc.k, tc.which, engine.BlockEigsOptions{Tol: 1e-10, Seed: 1})
				if err != nil {
					t.Fatal(err)
				}
				checkPairs(t, op, res, tc.want, normA, 1e-10)
				t.Logf("%d iterations, %d operator products", res.Iterations, res.OpApplies)
			})
		}
	}
}

// TestBlockEigsWarmStart: after a small perturbation of the operator, the
// previous call's subspace is a start that needs far fewer operator
// products than a cold solve, and reaches the same accuracy.
func TestBlockEigsWarmStart(t *testing.T) {
	const n, k = 400, 10
	lam := make([]float64, n)
	for i := range lam {
		lam[i] = float64(i) + 0.5*math.Cos(float64(3*i)) // gaps about 1
	}
	a := withSpectrum(lam, 5)
	rng := rand.New(rand.NewPCG(9, 9))
	pert := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			pert.SetSym(i, j, a.At(i, j)+1e-3*rng.NormFloat64())
		}
	}
	var es mat.EigenSym
	es.Factorize(pert, false)
	want := es.Values(nil)[:k]
	for _, b := range enginetest.Backends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			first, err := engine.BlockEigs(context.Background(), b, denseOp{a}, k, engine.SmallestAlgebraic, engine.BlockEigsOptions{Tol: 1e-9, Seed: 2})
			if err != nil {
				t.Fatal(err)
			}
			cold, err := engine.BlockEigs(context.Background(), b, denseOp{pert}, k, engine.SmallestAlgebraic, engine.BlockEigsOptions{Tol: 1e-9, Seed: 2})
			if err != nil {
				t.Fatal(err)
			}
			warm, err := engine.BlockEigs(context.Background(), b, denseOp{pert}, k, engine.SmallestAlgebraic, engine.BlockEigsOptions{Tol: 1e-9, Start: first.Subspace})
			if err != nil {
				t.Fatal(err)
			}
			checkPairs(t, denseOp{pert}, warm, want, float64(n), 1e-9)
			t.Logf("operator products: cold %d, warm %d", cold.OpApplies, warm.OpApplies)
			if 2*warm.OpApplies > cold.OpApplies {
				t.Errorf("warm start used %d operator products, cold %d: want at most half", warm.OpApplies, cold.OpApplies)
			}
		})
	}
}

func TestBlockEigsErrors(t *testing.T) {
	op := denseOp{withSpectrum([]float64{1, 2, 3, 4}, 1)}
	b := engine.Default()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		run  func() error
		want error
	}{
		{"k=0", func() error {
			_, err := engine.BlockEigs(context.Background(), b, op, 0, engine.SmallestAlgebraic, engine.BlockEigsOptions{})
			return err
		}, errs.ErrInvalid},
		{"k>n", func() error {
			_, err := engine.BlockEigs(context.Background(), b, op, 5, engine.SmallestAlgebraic, engine.BlockEigsOptions{})
			return err
		}, errs.ErrInvalid},
		{"which", func() error {
			_, err := engine.BlockEigs(context.Background(), b, op, 1, engine.BothEnds, engine.BlockEigsOptions{})
			return err
		}, errs.ErrInvalid},
		{"tol", func() error {
			_, err := engine.BlockEigs(context.Background(), b, op, 1, engine.SmallestAlgebraic, engine.BlockEigsOptions{Tol: math.NaN()})
			return err
		}, errs.ErrInvalid},
		{"start", func() error {
			_, err := engine.BlockEigs(context.Background(), b, op, 1, engine.SmallestAlgebraic, engine.BlockEigsOptions{Start: mat.NewDense(3, 1, nil)})
			return err
		}, errs.ErrInvalid},
		{"cancelled", func() error {
			_, err := engine.BlockEigs(ctx, b, op, 1, engine.SmallestAlgebraic, engine.BlockEigsOptions{})
			return err
		}, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.run(); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func sortFloats(v []float64) {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
}
