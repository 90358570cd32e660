package psdlearn

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/algos/itml"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/train"
	"gonum.org/v1/gonum/mat"
)

// ITML is Information-Theoretic Metric Learning (Davis, Kulis, Jain, Sra
// and Dhillon, ICML 2007): the metric closest to the prior I/τ (τ the mean
// feature variance of the preprocessed rows, so I after standardisation)
// in the LogDet divergence under similar / dissimilar pair constraints
// with slack, solved by cyclic Bregman projections (see package
// algos/itml).
//
// Gamma plays the part of C in this package (the trainer reads C as it):
// the weight of the average slack divergence, dimensionless; the paper's γ
// is Gamma/m for m constraints. Several values are chosen among like C
// (Validation, else stratified folds; equal errors choose the smaller).
// The model's Info records them under "C" and the chosen one under
// "chosen_c" and "gamma".
type ITML struct {
	Common
	// Gamma lists the trade-offs to choose among (nil: itml.DefaultGammas,
	// that is 3, 10 and 30, for Fit; itml.DefaultGamma, 10, for FitPairs).
	Gamma []float64
	// Iters bounds the cycles over the constraints (0: 1000).
	Iters int
}

// Fit learns a metric from the labelled rows of x. The constraints are
// itml.LabelPairs of the (preprocessed) rows: 20·c² similar and 20·c²
// dissimilar pairs for c classes, drawn with Seed; the bounds u and l are
// the 5th and 95th percentiles of their squared distances under the prior.
// (Fit shares the other estimators' path, which also builds the K-neighbour
// triplets; ITML does not use them.)
func (e ITML) Fit(ctx context.Context, x *mat.Dense, y []int) (*model.Model, error) {
	if e.Iters < 0 {
		return nil, fmt.Errorf("%w: Iters = %d, want ≥ 0", ErrInvalid, e.Iters)
	}
	gs := e.Gamma
	if len(gs) == 0 {
		gs = itml.DefaultGammas
	}
	m, err := fit(ctx, e.Common, "itml", train.Options{Iters: e.Iters}, x, y, nil, gs...)
	if err != nil {
		return nil, err
	}
	m.Info["gamma"] = m.Info["chosen_c"]
	return m, nil
}

// FitPairs learns a metric from pair constraints on the rows of x
// (pairs.List[r].Same: similar, else dissimilar), after the preprocessing
// of Common. It takes one Gamma value at most (several cannot be compared
// without labels). On cancellation it returns the current iterate, marked
// not converged, with an error wrapping ctx.Err().
func (e ITML) FitPairs(ctx context.Context, x *mat.Dense, pairs *constraints.Pairs) (*model.Model, error) {
	if x == nil || pairs == nil {
		return nil, fmt.Errorf("%w: nil data or pairs", ErrInvalid)
	}
	n, _ := x.Dims()
	if pairs.N != n {
		return nil, fmt.Errorf("%w: pairs on %d points for %d rows", ErrInvalid, pairs.N, n)
	}
	if len(e.Gamma) > 1 {
		return nil, fmt.Errorf("%w: FitPairs takes one Gamma value, have %d (choosing needs labels; use Fit)", ErrInvalid, len(e.Gamma))
	}
	g := itml.DefaultGamma
	if len(e.Gamma) == 1 {
		g = e.Gamma[0]
	}
	if !(g > 0) || math.IsInf(g, 0) {
		return nil, fmt.Errorf("%w: Gamma = %v, want a positive finite value", ErrInvalid, g)
	}
	if e.Iters < 0 {
		return nil, fmt.Errorf("%w: Iters = %d, want ≥ 0", ErrInvalid, e.Iters)
	}
	b := engine.Or(e.Backend)
	pipe, err := data.FitPipeline(b, x, e.Standardize, e.PCA)
	if err != nil {
		return nil, fmt.Errorf("psdlearn: preprocessing: %w", err)
	}
	px, err := pipe.ApplyBLAS(b.BLAS(), x)
	if err != nil {
		return nil, fmt.Errorf("psdlearn: preprocessing: %w", err)
	}
	res, err := itml.Learn(ctx, px, pairs, itml.Options{Gamma: g, MaxIter: e.Iters, Backend: b, Progress: e.Progress})
	if res == nil || res.M == nil {
		return nil, fmt.Errorf("psdlearn: itml: %w", err)
	}
	met, merr := model.NewMetric(res.M)
	if merr != nil {
		return nil, fmt.Errorf("psdlearn: itml: learned matrix: %w", errors.Join(merr, err))
	}
	converged := res.Converged && err == nil
	m := &model.Model{
		Kind: model.KindMetric, Algo: "itml", Metric: met,
		Info: map[string]any{
			"standardize": e.Standardize, "pca": e.PCA, "seed": e.Seed, "iters": e.Iters,
			"C": []float64{g}, "chosen_c": g, "gamma": g, "paper_gamma": res.PaperGamma,
			"u": res.U, "l": res.L, "pairs": pairs.Len(), "skipped_pairs": res.Skipped,
			"iterations": res.Iterations, "backend": b.Name(),
		},
		Certificate: &model.Certificate{Converged: converged, Gap: math.NaN(), Tolerance: math.NaN(), Reason: res.Reason},
		Provenance:  provenance(b, e.Seed, x),
	}
	if !converged {
		m.Certificate.Warnings = []string{"itml: not converged: " + res.Reason}
	}
	if !pipe.Empty() {
		m.Preprocess = pipe
	}
	if err != nil {
		return m, fmt.Errorf("psdlearn: itml: %w", err)
	}
	return m, nil
}
