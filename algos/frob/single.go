package frob

import (
	"time"

	"github.com/psdlearn/psdlearn/algos/internal/gram32"
	"github.com/psdlearn/psdlearn/internal/f32"
	"github.com/psdlearn/psdlearn/limits"
	"github.com/psdlearn/psdlearn/sparse"
)

// Single-precision evaluations of a loose solve.
//
// A solve to a relative gap above refineMaxTarget (a candidate of a model
// selection: frob.SelectGapTol), and a working-set phase (a bounded run
// over all the triplets that only seeds the next working set), spend most
// of their time in two GEMMs per evaluation, the weighted Gram Xᵀ L_W X
// (2·N·D² flops) and the embedding X·V√Λ (2·N·D·r). Their rounding in
// single precision, a relative 1e-7 of the Gram and of the margins, is four
// orders of magnitude below what such a solve resolves, and SGEMM runs at
// twice DGEMM's rate. So when the Gram costs at least singleMinFlops, those
// two products run in single precision (on a centred float32 copy of X,
// package gram32) while the eigendecomposition, the pair sums and L-BFGS-B
// stay in double.
//
// Nothing is certified in single precision: when such a solve stops, its
// point is evaluated again in double and its certificate is that
// evaluation's (solveWhole); if the gap is then above the target, the
// solve goes on in double.

// singleMinFlops is the Gram cost 2·N·D² from which a loose solve
// evaluates in single precision (as BoostMetric's PrecisionAuto).
var singleMinFlops = 1e9 // a variable for the tests of small problems

// single32 is the single-precision state of an evaluator: the centred
// copy of X and the embedding's scratch.
type single32 struct {
	*gram32.Data
	z32 []float32 // the embedding X32·L32, n×r
	l32 []float32 // the factor V√Λ, d×r
}

// useSingle sets up single-precision evaluations for a solve to the
// relative gap target, when the target is loose, the Gram costs at least
// singleMinFlops, the backend has SGEMM, X fits float32 and its copy fits
// the memory budget. It reports whether it did.
func (e *metricEval) useSingle(target float64) bool {
	if target <= refineMaxTarget || e.ext != nil || 2*float64(e.n)*float64(e.d)*float64(e.d) < singleMinFlops {
		return false
	}
	if limits.Check("", limits.Words(1, e.n, e.d)) != nil {
		return false // the copy and L_W·X: n·d float32 pairs, one word each
	}
	data := gram32.New(e.b.BLAS(), e.x)
	if data == nil {
		return false
	}
	e.s32 = &single32{Data: data}
	return true
}

// pairDists32 writes the squared distances of the pairs of e.ts in the
// embedding X·lf (lf the d×r factor, row-major) into e.pd: the product in
// single precision, the sums of squares in double.
func (e *metricEval) pairDists32(lf []float64, r int) {
	s := e.s32
	s.l32 = grow32(s.l32, e.d*r)
	f32.FromFloat64(s.l32, lf[:e.d*r])
	s.z32 = grow32(s.z32, e.n*r)
	t := time.Now()
	s.Embed(s.z32, s.l32, r)
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
