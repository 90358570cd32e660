package boost

import (
	"context"
	"fmt"
	"time"

	"github.com/psdlearn/psdlearn/algos/internal/gram32"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/internal/chunked"
	"github.com/psdlearn/psdlearn/limits"
	"gonum.org/v1/gonum/mat"
)

// Mixed-precision pricing (Options.Precision): the weighted Gram in single
// precision. At Fashion-MNIST's size (N = 50,000, D = 164) a double Gram is
// a 2.7 GFLOP DGEMM plus a memory-bound Laplacian product over 1.25 M
// entries of 164 values: most of an iteration.

const (
	// mixedMinFlops is the Gram cost 2·N·D² from which PrecisionAuto prices
	// in single precision.
	mixedMinFlops = 1e9
	// mixedEdgeRatio is the smallest ratio of the direction's exact
	// Rayleigh quotient to the single-precision λmax that keeps single
	// precision on.
	mixedEdgeRatio = 0.9
)

// single is the single-precision state of a pricer: the centred copy of X
// (package gram32).
type single = gram32.Data

// useMixed decides Options.Precision for BoostMetric on pricer p (iters
// terms at most) and sets up the single-precision copies of X and L_W X
// when it is used: N·D words more, within the memory budget (limits.Check)
// or not at all.
func (p *pricer) useMixed(prec Precision, iters int) (bool, error) {
	switch prec {
	case PrecisionDouble:
		return false, nil
	case PrecisionAuto:
		if 2*float64(p.n)*float64(p.d)*float64(p.d) < mixedMinFlops {
			return false, nil
		}
	case PrecisionMixed:
	default:
		return false, fmt.Errorf("%w: unknown precision %d", ErrInvalid, prec)
	}
	if !p.dense {
		return false, nil
	}
	if limits.Check("", Memory(p.n, p.d, p.ts.Len(), iters, p.dense)+limits.Words(1, p.n, p.d)) != nil {
		return false, nil // no room for the copies: double precision
	}
	p.single = gram32.New(p.b.BLAS(), p.x) // nil: no SGEMM, or beyond float32's range
	return p.single != nil, nil
}

// topSingle returns the largest eigenvalue of the single-precision Gram of
// Â(u) and a unit eigenvector (computed in double from that Gram).
func (p *pricer) topSingle(ctx context.Context, u []float64) (float64, []float64, error) {
	g, err := p.weigh(u)
	if err != nil {
		return 0, nil, err
	}
	t := time.Now()
	p.single.WeightedGram(p.gram, g)
	p.phases.Gram += since(t)
	p.phases.Grams++
	p.phases.GramRows += len(g.ActiveRows())
	p.phases.Grams32++
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	t = time.Now()
	e, err := p.b.SymEig(p.gram, engine.TopK(p.d, 1), true)
	if err != nil {
		return 0, nil, fmt.Errorf("boost: leading eigenpair: %w", err)
	}
	p.phases.Eig += since(t)
	p.phases.Eigs++
	return e.Values[0], mat.Col(nil, 0, e.Vectors), nil
}

// edge returns Σ_r u_r h_r = vᵀ Â(u) v for the margins h of v: the exact
// (double-precision) Rayleigh quotient of a direction.
func edge(u, h []float64) float64 {
	parts := make([]float64, chunked.Chunks)
	chunked.For(len(u), reduceChunkMin, func(c, lo, hi int) {
		var s float64
		for r := lo; r < hi; r++ {
			s += u[r] * h[r]
		}
		parts[c] = s
	})
	var s float64
	for _, v := range parts {
		s += v
	}
	return s
}
