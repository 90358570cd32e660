package frob

import (
	"math"
	"time"

	"github.com/psdlearn/psdlearn/internal/chunked"
	"github.com/psdlearn/psdlearn/limits"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/blas"
)

// Single-precision evaluations of a loose solve.
//
// A solve to a relative gap above refineMaxTarget (a candidate of a model
// selection: frob.SelectGapTol) spends most of its time in two GEMMs per
// evaluation, the weighted Gram Xᵀ L_W X (2·N·D² flops) and the embedding
// X·V√Λ (2·N·D·r). Their rounding in single precision, a relative 1e-7 of
// the Gram and of the margins, is four orders of magnitude below what such
// a solve resolves, and SGEMM runs at twice DGEMM's rate. So when the Gram
// costs at least singleMinFlops, those two products run in single
// precision (on a centred float32 copy of X: L_W annihilates constant
// columns, and pair differences do not see the offset) while the
// eigendecomposition, the pair sums and L-BFGS-B stay in double.
//
// Nothing is certified in single precision: when such a solve stops, its
// point is evaluated again in double and its certificate is that
// evaluation's (solveWhole); if the gap is then above the target, the
// solve goes on in double.

// singleMinFlops is the Gram cost 2·N·D² from which a loose solve
// evaluates in single precision (as BoostMetric's PrecisionAuto).
var singleMinFlops = 1e9 // a variable for the tests of small problems

// gram32ChunkRows is the number of rows from which a single-precision GEMM
// is split into chunked.Chunks row chunks (so its result does not depend
// on GOMAXPROCS).
const gram32ChunkRows = 4096

// single32 is the single-precision state of an evaluator.
type single32 struct {
	s32  blas.Float32
	x32  []float32 // X − 1μᵀ rounded to float32, n×d
	y32  []float32 // L_W·X32
	z32  []float32 // the embedding X32·L32, n×r
	l32  []float32 // the factor V√Λ, d×r
	part [][]float32
}

// useSingle sets up single-precision evaluations for a solve to the
// relative gap target, when the target is loose, the Gram costs at least
// singleMinFlops, the backend has SGEMM, X fits float32 and its copy fits
// the memory budget. It reports whether it did.
func (e *metricEval) useSingle(target float64) bool {
	if target <= refineMaxTarget || e.ext != nil || 2*float64(e.n)*float64(e.d)*float64(e.d) < singleMinFlops {
		return false
	}
	s32, ok := e.b.BLAS().(blas.Float32)
	if !ok || limits.Check("", limits.Words(2, e.n, e.d)) != nil {
		return false
	}
	raw := e.x.RawMatrix()
	mean := make([]float64, e.d)
	for i := 0; i < e.n; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+e.d] {
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(e.n)
	}
	x32 := make([]float32, e.n*e.d)
	for i := 0; i < e.n; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+e.d] {
			f := float32(v - mean[j])
			if math.IsInf(float64(f), 0) {
				return false
			}
			x32[i*e.d+j] = f
		}
	}
	e.s32 = &single32{s32: s32, x32: x32, y32: make([]float32, e.n*e.d)}
	return true
}

// gram32 writes the upper triangle of Xᵀ L_W X, computed in single
// precision and summed over row chunks in double, into e.g.
func (e *metricEval) gram32(g *sparse.PairGraph) {
	s, d := e.s32, e.d
	g.LaplacianMulDense32(s.y32, s.x32, d)
	b := chunked.Bounds(e.n, gram32ChunkRows)
	for len(s.part) < len(b)-1 {
		s.part = append(s.part, make([]float32, d*d))
	}
	chunked.For(e.n, gram32ChunkRows, func(c, lo, hi int) {
		s.s32.Sgemm(blas.Trans, blas.NoTrans, d, d, hi-lo, 1, s.x32[lo*d:], d, s.y32[lo*d:], d, 0, s.part[c], d)
	})
	raw := e.g.RawSymmetric()
	for i := 0; i < d; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+d]
		clear(row[i:])
		for c := 0; c+1 < len(b); c++ {
			for j, v := range s.part[c][i*d+i : i*d+d] {
				row[i+j] += float64(v)
			}
		}
	}
}

// pairDists32 writes the squared distances of the pairs of e.ts in the
// embedding X·lf (lf the d×r factor, row-major) into e.pd: the product in
// single precision, the sums of squares in double.
func (e *metricEval) pairDists32(lf []float64, r int) {
	s, d := e.s32, e.d
	s.l32 = grow32(s.l32, d*r)
	for i, v := range lf[:d*r] {
		s.l32[i] = float32(v)
	}
	s.z32 = grow32(s.z32, e.n*r)
	t := time.Now()
	chunked.For(e.n, gram32ChunkRows, func(_, lo, hi int) {
		s.s32.Sgemm(blas.NoTrans, blas.NoTrans, hi-lo, r, d, 1, s.x32[lo*d:], d, s.l32, r, 0, s.z32[lo*r:], r)
	})
	e.phases.Embed += since(t)
	t = time.Now()
	z, pairs := s.z32, e.ts.Pairs
	sparse.ParallelRows(len(pairs), len(pairs)*r, func(lo, hi int) {
		for p := lo; p < hi; p++ {
			za, zb := z[pairs[p].A*r:pairs[p].A*r+r], z[pairs[p].B*r:pairs[p].B*r+r]
			var sum float64
			for j, v := range za {
				diff := float64(v - zb[j])
				sum += diff * diff
			}
			e.pd[p] = sum
		}
	})
	e.phases.Pairs += since(t)
}

// toDouble ends the single-precision evaluations: it evaluates u again in
// double and returns the certificate of that evaluation.
func (e *metricEval) toDouble(u []float64) (primal, dual float64, err error) {
	e.s32 = nil
	if _, err := e.eval(u, make([]float64, len(u))); err != nil {
		return 0, 0, err
	}
	primal, dual = e.certificate()
	return primal, dual, nil
}

func grow32(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}
