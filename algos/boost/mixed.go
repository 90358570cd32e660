package boost

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/internal/chunked"
	"github.com/psdlearn/psdlearn/limits"
	"gonum.org/v1/gonum/blas"
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
	// gramChunkRows is the number of rows from which the single-precision
	// Gram is split into chunked.Chunks GEMMs.
	gramChunkRows = 4096
)

// single is the single-precision state of a pricer.
type single struct {
	s32  blas.Float32
	x32  []float32 // X rounded to float32, n×d row-major
	y32  []float32 // L_W·X
	part [][]float32
}

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
	s32, ok := p.b.BLAS().(blas.Float32)
	if !p.dense || !ok {
		return false, nil
	}
	if limits.Check("", Memory(p.n, p.d, p.ts.Len(), iters, p.dense)+limits.Words(1, p.n, p.d)) != nil {
		return false, nil // no room for the copies: double precision
	}
	// The copy is centred: L_W annihilates constant columns (its rows sum to
	// zero), so Xᵀ L_W X = (X − 1μᵀ)ᵀ L_W (X − 1μᵀ), and an offset common
	// to all rows, which float32 would keep at the expense of the
	// differences between rows, drops out before the rounding.
	raw := p.x.RawMatrix()
	mean := make([]float64, p.d)
	for i := 0; i < p.n; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+p.d] {
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(p.n)
	}
	x32 := make([]float32, p.n*p.d)
	for i := 0; i < p.n; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+p.d] {
			f := float32(v - mean[j])
			if math.IsInf(float64(f), 0) {
				return false, nil // beyond float32's range: stay in double
			}
			x32[i*p.d+j] = f
		}
	}
	p.single = &single{s32: s32, x32: x32, y32: make([]float32, p.n*p.d)}
	return true, nil
}

// topSingle returns the largest eigenvalue of the single-precision Gram of
// Â(u) and a unit eigenvector (computed in double from that Gram).
func (p *pricer) topSingle(ctx context.Context, u []float64) (float64, []float64, error) {
	g, err := p.weigh(u)
	if err != nil {
		return 0, nil, err
	}
	s, d := p.single, p.d
	t := time.Now()
	g.LaplacianMulDense32(s.y32, s.x32, d)
	// Xᵀ(L_W X) = Σ_c X_cᵀ (L_W X)_c over fixed row chunks, each one SGEMM;
	// the partial products are added in double, in chunk order, so the
	// result does not depend on GOMAXPROCS.
	b := chunked.Bounds(p.n, gramChunkRows)
	if len(s.part) < len(b)-1 {
		s.part = make([][]float32, len(b)-1)
		for c := range s.part {
			s.part[c] = make([]float32, d*d)
		}
	}
	chunked.For(p.n, gramChunkRows, func(c, lo, hi int) {
		s.s32.Sgemm(blas.Trans, blas.NoTrans, d, d, hi-lo, 1, s.x32[lo*d:], d, s.y32[lo*d:], d, 0, s.part[c], d)
	})
	raw := p.gram.RawSymmetric()
	for i := 0; i < d; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+d]
		clear(row[i:])
		for c := 0; c+1 < len(b); c++ {
			for j, v := range s.part[c][i*d+i : i*d+d] {
				row[i+j] += float64(v)
			}
		}
	}
	p.phases.Gram += since(t)
	p.phases.Grams++
	p.phases.GramRows += len(g.ActiveRows())
	p.phases.Grams32++
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	t = time.Now()
	e, err := p.b.SymEig(p.gram, engine.TopK(d, 1), true)
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
