package psdlearn

import (
	"context"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/algos/mvu"
	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/progress"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// SimpleNPKL is the non-parametric kernel learner of Zhuang, Tsang and Hoi
// (ICML 2009): a low-rank PSD kernel on the given points from must-link and
// cannot-link pairs, regularised by the Laplacian of a k-nearest-neighbour
// graph of the points.
type SimpleNPKL struct {
	// Standardize standardises the features before the kNN graph is built.
	Standardize bool
	// Neighbors is the k of the kNN graph (0: 5).
	Neighbors int
	// Graph configures the graph (the zero value: a binary union graph).
	Graph sparse.GraphOptions
	// Loss is npkl.Linear (the zero value: the closed form) or
	// npkl.SquaredHinge.
	Loss npkl.Loss
	// C weighs the loss and B bounds tr(K²) (0: 1 each).
	C, B float64
	// Iters is the number of squared-hinge iterations (0: 10).
	Iters int
	// Seed fixes the eigensolver's start vectors.
	Seed uint64
	// Backend runs the numerical kernels (nil: engine.Default()).
	Backend engine.Backend
	// Progress, if set, receives the progress events of the run.
	Progress progress.Func
}

// FitPairs learns a kernel on the rows of x from labelled pairs on them. The
// model's Kernel holds K = V diag(λ) Vᵀ over those rows (a transductive
// kernel: it has no Transform for new points).
func (e SimpleNPKL) FitPairs(ctx context.Context, x *mat.Dense, pairs *constraints.Pairs) (*model.Model, error) {
	if x == nil || pairs == nil {
		return nil, fmt.Errorf("%w: nil data or pairs", ErrInvalid)
	}
	n, _ := x.Dims()
	if pairs.N != n {
		return nil, fmt.Errorf("%w: pairs on %d points for %d rows", ErrInvalid, pairs.N, n)
	}
	k := e.Neighbors
	if k == 0 {
		k = 5
	}
	if k < 0 || k >= n {
		return nil, fmt.Errorf("%w: %d neighbours for %d points", ErrInvalid, k, n)
	}
	b := engine.Or(e.Backend)
	if e.Standardize {
		st, err := data.FitStandardizer(x)
		if err != nil {
			return nil, fmt.Errorf("psdlearn: %w", err)
		}
		if x, err = st.Apply(x); err != nil {
			return nil, fmt.Errorf("psdlearn: %w", err)
		}
	}
	lap, err := npkl.Laplacian(x, k, e.Graph, b)
	if err != nil {
		return nil, fmt.Errorf("psdlearn: simplenpkl: %w", err)
	}
	res, err := npkl.Learn(ctx, lap, pairs, npkl.Options{Loss: e.Loss, C: e.C, B: e.B, Iters: e.Iters, Seed: e.Seed, Backend: b, Progress: e.Progress})
	if err != nil {
		return nil, fmt.Errorf("psdlearn: simplenpkl: %w", err)
	}
	ml, cl := pairs.Counts()
	return &model.Model{
		Kind: model.KindKernel, Algo: "simplenpkl", Kernel: res.Kernel,
		Info: map[string]any{
			"standardize": e.Standardize, "neighbors": k, "loss": e.Loss.String(), "C": e.C, "B": e.B,
			"iters": e.Iters, "seed": e.Seed, "backend": b.Name(), "must_link": ml, "cannot_link": cl,
			"rank": len(res.Lambda), "covered": res.Covered,
		},
		Certificate: kernelCertificate(e.Loss, res.Covered),
		Provenance:  provenance(b, e.Seed, x),
	}, nil
}

// kernelCertificate records what SimpleNPKL can claim: the linear loss's
// closed form is exact when the whole positive spectrum was computed; the
// squared-hinge algorithm runs a fixed number of steps without a gap.
func kernelCertificate(loss npkl.Loss, covered bool) *model.Certificate {
	c := &model.Certificate{Gap: math.NaN(), Tolerance: math.NaN()}
	switch {
	case !covered:
		c.Reason = "rank cap reached before the positive spectrum was covered (best low-rank approximation)"
		c.Warnings = []string{"simplenpkl: " + c.Reason}
	case loss == npkl.Linear:
		c.Converged, c.Reason = true, "closed form over the whole positive spectrum"
	default:
		c.Reason = "squared hinge: fixed number of iterations, no duality certificate"
	}
	return c
}

// MVU is approximate maximum variance unfolding (the Frobenius-perturbed
// SDP of Shen et al., solved in the dual): an embedding that keeps the
// squared distances of every k-nearest-neighbour pair and maximises the
// variance. The zero value embeds in two dimensions with k = 6.
type MVU struct {
	mvu.Options
}

// Embed returns the embedding of the rows of x: its Coords (n×Dims), the
// learned Gram matrix's spectrum and the certificate of the solve.
func (e MVU) Embed(ctx context.Context, x *mat.Dense) (*mvu.Embedding, error) {
	if x == nil {
		return nil, fmt.Errorf("%w: nil data", ErrInvalid)
	}
	emb, err := mvu.Embed(ctx, x, e.Options)
	if err != nil {
		return emb, fmt.Errorf("psdlearn: mvu: %w", err)
	}
	return emb, nil
}

// provenance records the backend, the seed and, when the estimator learned
// from data rows x, their shape and hash.
func provenance(b engine.Backend, seed uint64, x *mat.Dense) *model.Provenance {
	p := model.NewProvenance(b.Name(), seed)
	if x != nil {
		p.Data = model.DescribeData("fit", x, nil, nil)
	}
	return p
}
