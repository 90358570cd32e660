package enginetest

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn/arpack/arpacktest"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/lapack/lapacktest"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

const eps = 0x1p-52

// RandSym, SymWithSpectrum and EigResidual are lapacktest's (the dense
// eigensolver suite lives there).
var (
	RandSym         = lapacktest.RandSym
	SymWithSpectrum = lapacktest.SymWithSpectrum
	EigResidual     = lapacktest.EigResidual
)

func randSlice(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = rng.NormFloat64()
	}
	return s
}

func testDense(t *testing.T, b engine.Backend) {
	rng := rand.New(rand.NewPCG(11, 12))
	t.Run("SymEig", func(t *testing.T) { lapacktest.TestEigensolver(t, b) })
	t.Run("WeightedGram", func(t *testing.T) {
		// zeroFrac of the weights are set to zero: with most of them zero
		// (as in a sparse FrobMetric dual) the Gram runs over the rows of
		// L_W that hold a nonzero entry only; with all of them zero it is 0.
		for _, tc := range []struct {
			n, d, pairs int
			zeroFrac    float64
		}{{2, 1, 1, 0}, {30, 5, 80, 0}, {500, 20, 3000, 0}, {500, 20, 3000, 0.98}, {2000, 12, 4000, 0.995}, {40, 3, 60, 1}} {
			x := mat.NewDense(tc.n, tc.d, randSlice(rng, tc.n*tc.d))
			pairs, w := arpacktest.RandPairs(rng, tc.n, tc.pairs)
			for k := range w {
				if rng.Float64() < tc.zeroFrac {
					w[k] = 0
				}
			}
			g, err := sparse.NewPairGraph(tc.n, pairs)
			if err != nil {
				t.Fatal(err)
			}
			if err := g.SetWeights(w); err != nil {
				t.Fatal(err)
			}
			got := mat.NewSymDense(tc.d, nil)
			for i := 0; i < tc.d; i++ {
				for j := i; j < tc.d; j++ {
					got.SetSym(i, j, 7) // WeightedGram must overwrite dst
				}
			}
			if err := b.WeightedGram(got, x, g); err != nil {
				t.Fatal(err)
			}
			want := naiveGram(x, pairs, w)
			scale := 0.0
			for k := range pairs {
				scale += math.Abs(w[k]) * sqDist(x, pairs[k].A, pairs[k].B)
			}
			for i := 0; i < tc.d; i++ {
				for j := 0; j < tc.d; j++ {
					if d := math.Abs(got.At(i, j) - want.At(i, j)); d > 1e3*eps*scale || (scale == 0 && got.At(i, j) != 0) {
						t.Fatalf("n=%d d=%d zero=%g: (%d,%d) = %v, want %v", tc.n, tc.d, tc.zeroFrac, i, j, got.At(i, j), want.At(i, j))
					}
				}
			}
		}
		x := mat.NewDense(3, 2, nil)
		g, _ := sparse.NewPairGraph(4, []sparse.Pair{{A: 0, B: 1}})
		if err := b.WeightedGram(mat.NewSymDense(2, nil), x, g); !errors.Is(err, engine.ErrDimension) {
			t.Errorf("row mismatch: error %v, want ErrDimension", err)
		}
	})
	t.Run("PairQuadForms", func(t *testing.T) {
		n, d := 200, 9
		x := mat.NewDense(n, d, randSlice(rng, n*d))
		pairs, _ := arpacktest.RandPairs(rng, n, 500)
		m := RandSym(rng, d)
		got := make([]float64, len(pairs))
		if err := b.PairQuadForms(got, x, m, pairs); err != nil {
			t.Fatal(err)
		}
		diff := mat.NewVecDense(d, nil)
		var tmp mat.VecDense
		for k, p := range pairs {
			diff.SubVec(x.RowView(p.A), x.RowView(p.B))
			tmp.MulVec(m, diff)
			want := mat.Dot(diff, &tmp)
			if math.Abs(got[k]-want) > 1e-12*(1+math.Abs(want))*float64(d) {
				t.Fatalf("pair %d: %v, want %v", k, got[k], want)
			}
		}
		// With z = X·L the squared distances equal the forms of M = L Lᵀ.
		l := mat.NewDense(d, 3, randSlice(rng, d*3))
		var llt mat.Dense
		llt.Mul(l, l.T())
		msym := mat.NewSymDense(d, nil)
		for i := 0; i < d; i++ {
			for j := i; j < d; j++ {
				msym.SetSym(i, j, llt.At(i, j))
			}
		}
		var z mat.Dense
		z.Mul(x, l)
		sq := make([]float64, len(pairs))
		if err := b.PairSqDists(sq, &z, pairs); err != nil {
			t.Fatal(err)
		}
		if err := b.PairQuadForms(got, x, msym, pairs); err != nil {
			t.Fatal(err)
		}
		for k := range pairs {
			if math.Abs(sq[k]-got[k]) > 1e-11*(1+got[k]) {
				t.Fatalf("pair %d: PairSqDists %v, PairQuadForms %v", k, sq[k], got[k])
			}
		}
		if err := b.PairQuadForms(got[:1], x, m, pairs); !errors.Is(err, engine.ErrDimension) {
			t.Errorf("short dst: error %v, want ErrDimension", err)
		}
		bad := []sparse.Pair{{A: 0, B: n}}
		if err := b.PairSqDists(make([]float64, 1), &z, bad); !errors.Is(err, engine.ErrDimension) {
			t.Errorf("pair out of range: error %v, want ErrDimension", err)
		}
	})
}

func agreeDense(t *testing.T, a, b engine.Backend) {
	t.Run("SymEig", func(t *testing.T) { lapacktest.TestAgree(t, a, b) })
	rng := rand.New(rand.NewPCG(21, 22))
	n, d := 400, 12
	x := mat.NewDense(n, d, randSlice(rng, n*d))
	pairs, w := arpacktest.RandPairs(rng, n, 2000)
	g, _ := sparse.NewPairGraph(n, pairs)
	_ = g.SetWeights(w)
	ga, gb := mat.NewSymDense(d, nil), mat.NewSymDense(d, nil)
	if err := a.WeightedGram(ga, x, g); err != nil {
		t.Fatal(err)
	}
	if err := b.WeightedGram(gb, x, g); err != nil {
		t.Fatal(err)
	}
	var diff mat.Dense
	diff.Sub(ga, gb)
	if r := mat.Norm(&diff, 2) / mat.Norm(ga, 2); r > 1e-13 {
		t.Errorf("WeightedGram: relative difference %g between %s and %s", r, a.Name(), b.Name())
	}
}

func sqDist(x *mat.Dense, a, b int) float64 {
	_, d := x.Dims()
	s := 0.0
	for j := 0; j < d; j++ {
		e := x.At(a, j) - x.At(b, j)
		s += e * e
	}
	return s
}

// naiveGram forms Σ_k w_k (x_a − x_b)(x_a − x_b)ᵀ directly: the definition the fast kernel must match.
func naiveGram(x *mat.Dense, pairs []sparse.Pair, w []float64) *mat.Dense {
	_, d := x.Dims()
	out := mat.NewDense(d, d, nil)
	diff := make([]float64, d)
	for k, p := range pairs {
		for j := range diff {
			diff[j] = x.At(p.A, j) - x.At(p.B, j)
		}
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				out.Set(i, j, out.At(i, j)+w[k]*diff[i]*diff[j])
			}
		}
	}
	return out
}
