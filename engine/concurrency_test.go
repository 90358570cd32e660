package engine_test

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/engine/enginetest"
	"github.com/psdlearn/psdlearn/lapack"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// TestConcurrentRace runs different dense problems on 8 goroutines per backend
// and requires exactly (bitwise) the results of sequential runs. Run it with
// -race to check the backends share no mutable state.
func TestConcurrentRace(t *testing.T) {
	type problem struct {
		a     *mat.SymDense
		x     *mat.Dense
		g     *sparse.PairGraph
		pairs []sparse.Pair
	}
	type answer struct {
		vals, vec0, gram, forms []float64
	}
	const workers = 8
	rng := rand.New(rand.NewPCG(5, 6))
	probs := make([]problem, workers)
	for i := range probs {
		n, d := 60+10*i, 8+i
		a := enginetest.RandSym(rng, d+20)
		x := mat.NewDense(n, d, nil)
		for r := 0; r < n; r++ {
			for c := 0; c < d; c++ {
				x.Set(r, c, rng.NormFloat64())
			}
		}
		pairs := make([]sparse.Pair, 3*n)
		w := make([]float64, 3*n)
		for k := range pairs {
			a := rng.IntN(n)
			b := (a + 1 + rng.IntN(n-1)) % n
			pairs[k], w[k] = sparse.Pair{A: a, B: b}, rng.NormFloat64()
		}
		g, err := sparse.NewPairGraph(n, pairs)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.SetWeights(w); err != nil {
			t.Fatal(err)
		}
		probs[i] = problem{a, x, g, pairs}
	}
	solve := func(b engine.Backend, p problem) (answer, error) {
		e, err := b.SymEig(p.a, lapack.NegativePart(0), true)
		if err != nil {
			return answer{}, err
		}
		_, d := p.x.Dims()
		gram := mat.NewSymDense(d, nil)
		if err := b.WeightedGram(gram, p.x, p.g); err != nil {
			return answer{}, err
		}
		forms := make([]float64, len(p.pairs))
		if err := b.PairQuadForms(forms, p.x, gram, p.pairs); err != nil {
			return answer{}, err
		}
		return answer{e.Values, mat.Col(nil, 0, e.Vectors), gram.RawSymmetric().Data, forms}, nil
	}
	for _, name := range engine.Names() {
		b, _ := engine.Get(name)
		t.Run(name, func(t *testing.T) {
			want := make([]answer, workers)
			for i, p := range probs {
				var err error
				if want[i], err = solve(b, p); err != nil {
					t.Fatal(err)
				}
			}
			got := make([]answer, workers)
			errs := make([]error, workers)
			var wg sync.WaitGroup
			for i := range probs {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					got[i], errs[i] = solve(b, probs[i])
				}(i)
			}
			wg.Wait()
			for i := range probs {
				if errs[i] != nil {
					t.Fatal(errs[i])
				}
				for _, c := range []struct {
					what    string
					got, wt []float64
				}{{"eigenvalues", got[i].vals, want[i].vals}, {"eigenvector", got[i].vec0, want[i].vec0}, {"gram", got[i].gram, want[i].gram}, {"pair forms", got[i].forms, want[i].forms}} {
					if len(c.got) != len(c.wt) {
						t.Fatalf("problem %d %s: length %d, sequential %d", i, c.what, len(c.got), len(c.wt))
					}
					for k := range c.got {
						if c.got[k] != c.wt[k] {
							t.Fatalf("problem %d %s[%d]: concurrent %v, sequential %v", i, c.what, k, c.got[k], c.wt[k])
						}
					}
				}
			}
		})
	}
}
