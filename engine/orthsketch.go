package engine

import (
	"math"
	"math/rand/v2"

	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// orthSketch estimates the coefficients of a new block against a Krylov
// basis without reading the basis. It keeps S = V·G, a few random
// combinations of the basis columns (G Gaussian with variance
// 1/sketchCols), so that for a block column w
//
//	E‖Sᵀw‖² = E‖Gᵀ(Vᵀw)‖² = ‖Vᵀw‖²,
//
// the squared length of all of w's coefficients against the basis.
// ‖Sᵀw‖² is ‖Vᵀw‖²/sketchCols times a χ² variable with sketchCols degrees
// of freedom: with 8 columns it falls below a tenth of its mean with
// probability 8·10⁻⁴ and below a hundredth with probability 10⁻⁷. Reading
// S (n×8) costs about a twentieth of reading a basis of 170 columns, and it
// is kept up to date as blocks are appended (one n×b×8 update) and rebuilt
// at a restart.
//
// KrylovSchur checks every new block against it after the local pass and
// projects the block on the whole basis (the two reads of the basis that
// dominated its time on large sparse operators) only when the estimate
// says the block has lost orthogonality beyond what sketchFactor allows. The sketch only
// decides whether to orthogonalise; it never enters the basis.
type orthSketch struct {
	s *mat.Dense // n×sketchCols: V·G
	g *mat.Dense // MaxBasis×sketchCols
}

// sketchCols is the number of random combinations of the basis kept.
const sketchCols = 8

// sketchFactor sets the orthogonality KrylovSchur keeps: a block whose
// estimated ‖Vᵀw‖ is at most max(sketchFactor·Tol, orthSkip)·‖w‖ is
// appended without the projection on the whole basis (on letters, 1e-10
// for EigTol 1e-8: 57% of the blocks skip it). Components of that size barely
// move the Ritz pairs: the Krylov relation A·V = V·H + W·R still holds
// to rounding (what is not subtracted stays in W), and the Ritz residual
// estimates it gives are off by about that relative amount, a hundredth of
// the tolerance asked; the returned pairs are checked with fresh products
// anyway. Blocks a few times above it (the estimate is random) are caught
// by the next blocks' checks, which see the loss grow tenfold per block
// (Lanczos's loss of orthogonality, measured on letters). A factor of 0.1
// still converged there; 1 did not (the symmetrised projected matrix then
// drifts from the relation by about Tol·‖A‖ per restart).
const sketchFactor = 1e-2

// startNoise weighs the random part of a starting block seeded from
// KrylovSchurOptions.Start: the same expected column norm as the
// combination of Start's columns (0.01 and 0.1 took the same products on
// letters).
const startNoise = 1.0

// newOrthSketch returns a sketch for an n-row basis of up to maxBasis
// columns, its G drawn from rng.
func newOrthSketch(n, maxBasis int, rng *rand.Rand) *orthSketch {
	o := &orthSketch{s: mat.NewDense(n, sketchCols, nil), g: mat.NewDense(maxBasis, sketchCols, nil)}
	sd := 1 / math.Sqrt(sketchCols)
	for i := range o.g.RawMatrix().Data {
		o.g.RawMatrix().Data[i] = sd * rng.NormFloat64()
	}
	return o
}

// reset rebuilds S from the basis v (n×cur): S = V·G[:cur].
func (o *orthSketch) reset(impl blas.Float64, v *mat.Dense) {
	rv, rs, rg := v.RawMatrix(), o.s.RawMatrix(), o.g.RawMatrix()
	MulRows(impl, rv.Rows, sketchCols, rv.Cols, rv.Data, rv.Stride, rg.Data, rg.Stride, rs.Data, rs.Stride)
}

// add appends the block w (n×b), basis columns [lo, lo+b): S += w·G[lo:lo+b].
func (o *orthSketch) add(w *mat.Dense, lo int) {
	rw, rs, rg := w.RawMatrix(), o.s.RawMatrix(), o.g.RawMatrix()
	n, b := rw.Rows, rw.Cols
	g := make([]*[sketchCols]float64, b)
	for l := range g {
		g[l] = (*[sketchCols]float64)(rg.Data[(lo+l)*rg.Stride:])
	}
	// The unrolled sums here and in check are written out: a helper for
	// them is not inlined, and a loop over the eight costs 1.8x the time
	// (BenchmarkSketchAdd, 0.48 against 0.27 ms).
	sparse.ParallelRows(n, n*b*sketchCols, func(rlo, rhi int) {
		for i := rlo; i < rhi; i++ {
			sr := (*[sketchCols]float64)(rs.Data[i*rs.Stride:])
			for l, a := range rw.Data[i*rw.Stride : i*rw.Stride+b] {
				gl := g[l]
				sr[0] += a * gl[0]
				sr[1] += a * gl[1]
				sr[2] += a * gl[2]
				sr[3] += a * gl[3]
				sr[4] += a * gl[4]
				sr[5] += a * gl[5]
				sr[6] += a * gl[6]
				sr[7] += a * gl[7]
			}
		}
	})
}

// check returns the column norms of w (n×b) and whether every column w_l
// has estimated coefficients ‖Sᵀw_l‖ ≤ tol·‖w_l‖ against the basis: one
// streamed pass over w and S.
func (o *orthSketch) check(w *mat.Dense, tol float64) (norms []float64, ok bool) {
	rw, rs := w.RawMatrix(), o.s.RawMatrix()
	n, b := rw.Rows, rw.Cols
	sums := streamParts(n, b*(sketchCols+1), func(acc []float64, lo, hi int) {
		sq := acc[b*sketchCols:]
		for i := lo; i < hi; i++ {
			sr := (*[sketchCols]float64)(rs.Data[i*rs.Stride:])
			for l, a := range rw.Data[i*rw.Stride : i*rw.Stride+b] {
				r := (*[sketchCols]float64)(acc[l*sketchCols:])
				r[0] += a * sr[0]
				r[1] += a * sr[1]
				r[2] += a * sr[2]
				r[3] += a * sr[3]
				r[4] += a * sr[4]
				r[5] += a * sr[5]
				r[6] += a * sr[6]
				r[7] += a * sr[7]
				sq[l] += a * a
			}
		}
	})
	norms = make([]float64, b)
	ok = true
	for l := range norms {
		norms[l] = math.Sqrt(sums[b*sketchCols+l])
		var ss float64
		for _, c := range sums[l*sketchCols : (l+1)*sketchCols] {
			ss += c * c
		}
		if !(math.Sqrt(ss) <= tol*norms[l]) {
			ok = false
		}
	}
	return norms, ok
}
