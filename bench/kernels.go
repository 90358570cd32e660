package bench

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/lapack"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// KernelCases returns the cases of the "kernels" suite: the engine
// operations the algorithms spend their time in, each at several sizes.
func KernelCases(seed uint64) []Case {
	var cases []Case
	for _, n := range []int{100, 400, 1000} {
		for _, rc := range []struct {
			name string
			r    func(n int) engine.EigRange
		}{
			{"symeig_all", func(int) engine.EigRange { return lapack.AllRange() }},
			{"symeig_negative", func(int) engine.EigRange { return lapack.NegativePart(0) }},
			{"symeig_top1", func(n int) engine.EigRange { return lapack.TopK(n, 1) }},
		} {
			n, rc := n, rc
			cases = append(cases, Case{Name: rc.name, Size: n, Detail: "random symmetric D×D, vectors", Setup: func(b engine.Backend) (func(context.Context) (Outcome, error), error) {
				a := randSym(rand.New(rand.NewPCG(seed, uint64(n))), n)
				return func(context.Context) (Outcome, error) {
					_, err := b.SymEig(a, rc.r(n), true)
					return Outcome{}, err
				}, nil
			}})
		}
	}
	for _, n := range []int{10000, 50000} {
		const d, perPoint = 64, 6
		n := n
		setup := func(seed uint64) (*mat.Dense, *sparse.PairGraph, []sparse.Pair, error) {
			rng := rand.New(rand.NewPCG(seed, uint64(n)))
			x := randDense(rng, n, d)
			pairs := make([]sparse.Pair, 0, perPoint*n)
			w := make([]float64, 0, perPoint*n)
			for a := 0; a < n; a++ {
				for t := 0; t < perPoint; t++ {
					b := rng.IntN(n - 1)
					if b >= a {
						b++
					}
					pairs = append(pairs, sparse.Pair{A: a, B: b})
					w = append(w, rng.NormFloat64())
				}
			}
			g, err := sparse.NewPairGraph(n, pairs)
			if err != nil {
				return nil, nil, nil, err
			}
			return x, g, pairs, g.SetWeights(w)
		}
		detail := fmt.Sprintf("N×%d data, %d pairs per point", d, perPoint)
		cases = append(cases,
			Case{Name: "weighted_gram", Size: n, Detail: detail, Setup: func(b engine.Backend) (func(context.Context) (Outcome, error), error) {
				x, g, _, err := setup(seed)
				if err != nil {
					return nil, err
				}
				dst := mat.NewSymDense(d, nil)
				return func(context.Context) (Outcome, error) { return Outcome{}, b.WeightedGram(dst, x, g) }, nil
			}},
			Case{Name: "pair_quadforms", Size: n, Detail: detail, Setup: func(b engine.Backend) (func(context.Context) (Outcome, error), error) {
				x, _, pairs, err := setup(seed)
				if err != nil {
					return nil, err
				}
				m := randSym(rand.New(rand.NewPCG(seed, 7)), d)
				dst := make([]float64, len(pairs))
				return func(context.Context) (Outcome, error) { return Outcome{}, b.PairQuadForms(dst, x, m, pairs) }, nil
			}},
		)
	}
	for _, n := range []int{5000, 20000} {
		n := n
		cases = append(cases, Case{Name: "knn_graph", Size: n, Detail: "exact 10-NN union graph + normalised Laplacian, D=16", Setup: func(b engine.Backend) (func(context.Context) (Outcome, error), error) {
			x := randDense(rand.New(rand.NewPCG(seed, uint64(n))), n, 16)
			return func(context.Context) (Outcome, error) {
				s, err := sparse.KNNGraphBLAS(b.BLAS(), x, 10, sparse.GraphOptions{})
				if err != nil {
					return Outcome{}, err
				}
				_, err = sparse.NormalizedLaplacian(s)
				return Outcome{}, err
			}, nil
		}})
	}
	for _, side := range []int{100, 316} {
		n1, n2 := side, side+37
		n := n1 * n2
		cases = append(cases, Case{Name: "eigs_sparse", Size: n, Detail: fmt.Sprintf("%d×%d grid Laplacian, 10 largest", n1, n2), Setup: func(b engine.Backend) (func(context.Context) (Outcome, error), error) {
			op, err := sparse.NewSymCSR(gridLaplacian(n1, n2))
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context) (Outcome, error) {
				r, err := b.Eigs(ctx, op, 10, engine.LargestAlgebraic, engine.EigsOptions{Seed: seed, Tol: 1e-10})
				return Outcome{Iterations: r.Iterations}, err
			}, nil
		}})
	}
	for _, n := range []int{100, 1000, 10000} {
		n := n
		cases = append(cases, Case{Name: "lbfgsb", Size: n, Detail: "extended Rosenbrock, unbounded", Setup: func(b engine.Backend) (func(context.Context) (Outcome, error), error) {
			return func(ctx context.Context) (Outcome, error) {
				x0 := make([]float64, n)
				for i := range x0 {
					x0[i] = -1.2
					if i%2 == 1 {
						x0[i] = 1
					}
				}
				r, err := b.Minimize(ctx, engine.Problem{Func: rosenbrock}, x0, engine.MinimizeSettings{Pgtol: 1e-8})
				return Outcome{Iterations: r.Iterations}, err
			}, nil
		}})
	}
	return cases
}

// rosenbrock is the extended Rosenbrock function and its gradient.
func rosenbrock(x, g []float64) float64 {
	f := 0.0
	for i := range g {
		g[i] = 0
	}
	for i := 0; i+1 < len(x); i += 2 {
		t1 := 1 - x[i]
		t2 := 10 * (x[i+1] - x[i]*x[i])
		f += t1*t1 + t2*t2
		g[i+1] = 20 * t2
		g[i] = -2 * (x[i]*g[i+1] + t1)
	}
	return f
}

// gridLaplacian returns the graph Laplacian of the n1×n2 grid, whose
// eigenvalues are (2−2cos(πa/n1)) + (2−2cos(πb/n2)).
func gridLaplacian(n1, n2 int) *sparse.CSR {
	n := n1 * n2
	a := &sparse.CSR{Rows: n, Cols: n, Indptr: make([]int, n+1)}
	for i := 0; i < n1; i++ {
		for j := 0; j < n2; j++ {
			v := i*n2 + j
			var nb []int
			if i > 0 {
				nb = append(nb, v-n2)
			}
			if j > 0 {
				nb = append(nb, v-1)
			}
			diagAt := len(nb)
			if j+1 < n2 {
				nb = append(nb, v+1)
			}
			if i+1 < n1 {
				nb = append(nb, v+n2)
			}
			deg := float64(len(nb))
			for k, c := range nb {
				if k == diagAt {
					a.Ind = append(a.Ind, v)
					a.Data = append(a.Data, deg)
				}
				a.Ind = append(a.Ind, c)
				a.Data = append(a.Data, -1)
			}
			if diagAt == len(nb) {
				a.Ind = append(a.Ind, v)
				a.Data = append(a.Data, deg)
			}
			a.Indptr[v+1] = len(a.Ind)
		}
	}
	return a
}

func randSym(rng *rand.Rand, n int) *mat.SymDense {
	a := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			a.SetSym(i, j, rng.NormFloat64())
		}
	}
	return a
}

func randDense(rng *rand.Rand, r, c int) *mat.Dense {
	d := make([]float64, r*c)
	for i := range d {
		d[i] = rng.NormFloat64()
	}
	return mat.NewDense(r, c, d)
}
