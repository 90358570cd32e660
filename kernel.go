package psdlearn

import (
	"cmp"
	"context"
	"fmt"
	"sort"

	"github.com/psdlearn/psdlearn/algos/mvu"
	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/constraints"
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
	// Neighbors is the k of the kNN graph (0: DefaultGraphNeighbors).
	Neighbors int
	// Graph configures the graph (the zero value: a binary union graph).
	Graph sparse.GraphOptions
	// Loss is npkl.Linear (the zero value: the closed form) or
	// npkl.SquaredHinge.
	Loss npkl.Loss
	// C weighs the loss and B bounds tr(K²) (0: npkl.DefaultC and
	// npkl.DefaultB).
	C, B float64
	// Iters is the number of squared-hinge iterations (0: npkl.DefaultIters).
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
	k := cmp.Or(e.Neighbors, DefaultGraphNeighbors)
	if k < 0 || k >= n {
		return nil, fmt.Errorf("%w: %d neighbours for %d points", ErrInvalid, k, n)
	}
	b := engine.Or(e.Backend)
	if e.Standardize {
		var err error
		if x, err = standardize(x); err != nil {
			return nil, err
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
	kern, err := model.NewKernel(res.V, res.Lambda)
	if err != nil {
		return nil, fmt.Errorf("psdlearn: simplenpkl: learned kernel: %w", err)
	}
	eigenpairs := 0
	if len(res.History) > 0 {
		eigenpairs = res.History[len(res.History)-1].Eigenpairs
	}
	ml, cl := pairs.Counts()
	return &model.Model{
		Kind: model.KindKernel, Algo: "simplenpkl", Kernel: kern,
		Info: map[string]any{
			"standardize": e.Standardize, "neighbors": k, "loss": e.Loss.String(), "C": e.C, "B": e.B,
			"iters": e.Iters, "seed": e.Seed, "backend": b.Name(), "must_link": ml, "cannot_link": cl,
			"rank": len(res.Lambda), "covered": res.Covered,
		},
		Certificate: simpleNPKLCertificate(e.Loss, res.Covered, res.Iterations, eigenpairs, res.Rank()),
		Provenance:  provenance(b, e.Seed, x),
	}, nil
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

// Model returns the Gram matrix X = F·Fᵀ that MVU learned in emb (F the
// n×r factor of the SDP's solution, all its rank, not only the embedding's
// dimensions) as a kernel model: the thin SVD F = U·Σ·Wᵀ gives
// X = U·Σ²·Uᵀ, so V = U and λ = σ² (descending) at a cost of O(n·r²), no
// n×n matrix formed; columns with σ = 0 are dropped. Like the other learned
// kernels it is transductive: MVU defines no embedding of new points. The
// certificate is the SDP's (gap and feasibility); Info records the
// settings and figures of the solve; the provenance records the backend
// and the seed (not the data, which the caller describes).
func (e MVU) Model(emb *mvu.Embedding) (*model.Model, error) {
	if emb == nil || emb.Solution == nil || emb.Solution.Factor == nil {
		return nil, fmt.Errorf("%w: mvu: the embedding has no Gram factor", ErrInvalid)
	}
	sol := emb.Solution
	var svd mat.SVD
	if !svd.Factorize(sol.Factor, mat.SVDThin) {
		return nil, fmt.Errorf("psdlearn: mvu: SVD of the Gram factor failed")
	}
	sv := svd.Values(nil)
	var u mat.Dense
	svd.UTo(&u)
	r := 0
	for r < len(sv) && sv[r] > 0 {
		r++
	}
	if r == 0 {
		return nil, fmt.Errorf("psdlearn: mvu: the learned Gram matrix is zero")
	}
	n, _ := u.Dims()
	lam := make([]float64, r)
	for i := range lam {
		lam[i] = sv[i] * sv[i]
	}
	k, err := model.NewKernel(mat.DenseCopyOf(u.Slice(0, n, 0, r)), lam)
	if err != nil {
		return nil, fmt.Errorf("psdlearn: mvu: %w", err)
	}
	b := engine.Or(e.SDP.Backend)
	return &model.Model{
		Kind: model.KindKernel, Algo: "mvu", Kernel: k,
		Info: map[string]any{
			"k": cmp.Or(e.K, mvu.DefaultK), "sigma": emb.Sigma, "dims": cmp.Or(e.Dims, mvu.DefaultDims), "inequalities": !emb.Equalities,
			"penalty": e.Penalty, "method": sol.Method.String(), "iterations": emb.Iterations, "seed": e.SDP.Seed,
			"objective": sol.Primal, "dual_objective": sol.Dual, "duality_gap": sol.RelGap, "max_violation": sol.MaxViolation,
			"backend": b.Name(),
		},
		Certificate: &model.Certificate{Converged: sol.Certified, Gap: sol.RelGap, Tolerance: emb.GapTol, Reason: sol.Reason},
		Provenance:  model.NewProvenance(b.Name(), e.SDP.Seed),
	}, nil
}

// KernelOfMatrix returns the kernel form V·diag(λ)·Vᵀ of a dense PSD
// matrix w (the learned matrices of MEG and DefiniteBoost): its full
// eigendecomposition with the eigenvalues descending, so the first
// columns of the kernel's factor V·diag(√λ) carry the most variance.
func KernelOfMatrix(w mat.Symmetric) (*model.Kernel, error) {
	if w == nil {
		return nil, fmt.Errorf("%w: nil matrix", ErrInvalid)
	}
	var eig mat.EigenSym
	if !eig.Factorize(w, true) {
		return nil, fmt.Errorf("psdlearn: eigendecomposition of the learned kernel failed")
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	n := len(vals)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return vals[order[a]] > vals[order[b]] })
	v := mat.NewDense(n, n, nil)
	lam := make([]float64, n)
	for c, o := range order {
		lam[c] = vals[o]
		for i := 0; i < n; i++ {
			v.Set(i, c, vecs.At(i, o))
		}
	}
	return model.NewKernel(v, lam)
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
