package psdlearn

import (
	"context"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/algos/lmnn"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/train"
	"gonum.org/v1/gonum/mat"
)

// LMNN is Large Margin Nearest Neighbor metric learning (Weinberger & Saul,
// JMLR 2009): pull every point's K target neighbours (nearest same-class
// points) close and push differently-labelled impostors out of a unit margin
// around them, (1−μ)·pull + μ·hinge, by projected subgradient descent on M
// (algos/lmnn; docs/algorithms-lmnn.md). The margin is in units of the mean
// squared target distance, so the learned metric scales as 1/s² with the
// data. LMNN has no C and ignores Validation and Folds.
type LMNN struct {
	Common
	// Mu is the push weight μ in (0, 1] (0: 0.5).
	Mu float64
	// Iters bounds the descent's iterations (0: 1000).
	Iters int
	// Rank, if > 0, learns M = L Lᵀ with a D×Rank factor L by gradient
	// steps on L, started from the top principal axes (1 ≤ Rank ≤ D, D the
	// dimension after Common's preprocessing); 0 learns the full-rank M.
	Rank int
}

// Fit learns a metric from the labelled rows of x.
func (e LMNN) Fit(ctx context.Context, x *mat.Dense, y []int) (*model.Model, error) {
	if math.IsNaN(e.Mu) || e.Mu < 0 || e.Mu > 1 {
		return nil, fmt.Errorf("%w: Mu = %v, want a value in (0, 1] (0 for the default 0.5)", ErrInvalid, e.Mu)
	}
	if e.Iters < 0 {
		return nil, fmt.Errorf("%w: Iters = %d, want > 0 (0 for the default)", ErrInvalid, e.Iters)
	}
	if e.Rank < 0 {
		return nil, fmt.Errorf("%w: Rank = %d, want 1 ≤ Rank ≤ D, or 0 for the full-rank M", ErrInvalid, e.Rank)
	}
	c := e.Common
	if x == nil {
		return nil, fmt.Errorf("%w: nil data", ErrInvalid)
	}
	n, _ := x.Dims()
	if len(y) != n {
		return nil, fmt.Errorf("%w: %d labels for %d rows", ErrInvalid, len(y), n)
	}
	k := c.K
	if k == 0 {
		k = 3
	}
	if k < 0 {
		return nil, fmt.Errorf("%w: K = %d", ErrInvalid, k)
	}
	mu := e.Mu
	if mu == 0 {
		mu = lmnn.DefaultMu
	}
	b := engine.Or(c.Backend)
	opt := train.Options{Iters: e.Iters, Rank: e.Rank}
	m, err := fitOnce(ctx, c, lmnn.Trainer(mu), "lmnn", opt, &data.Dataset{Name: "fit", X: x, Y: y}, nil, nil, k, b, nil)
	if err != nil {
		return nil, err
	}
	m.Info["mu"] = mu
	m.Info["rank"] = e.Rank
	m.Provenance = model.NewProvenance(b.Name(), c.Seed)
	m.Provenance.Data = model.DescribeData("fit", x, y, nil)
	return m, nil
}
