package sdp

import (
	"errors"
	"github.com/psdlearn/psdlearn/algos/internal/dualsolve"
	"math"
	"sort"

	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// The SDP dual: its value and gradient from the negative part, the primal
// recovered from it and the certificate.

// bigVectors returns the big rank-one vectors as dense n-vectors.
func (e *dualEval) bigVectors() [][]float64 {
	if e.bigDense == nil && len(e.big) > 0 {
		e.bigDense = make([][]float64, len(e.big))
		for t, r := range e.big {
			v := make([]float64, e.n)
			if r.idx == nil {
				copy(v, r.val)
			} else {
				for i, x := range r.val {
					v[r.idx[i]] += x
				}
			}
			e.bigDense[t] = v
		}
	}
	return e.bigDense
}

// entry returns (C + Â)_ij.
func (e *dualEval) entry(i, j int, bd [][]float64) float64 {
	var v float64
	ind := e.s.Ind[e.s.Indptr[i]:e.s.Indptr[i+1]]
	if k := sort.SearchInts(ind, j); k < len(ind) && ind[k] == j {
		v = e.s.Data[e.s.Indptr[i]+k]
	}
	for t, w := range e.bigW {
		if w != 0 {
			v += w * bd[t][i] * bd[t][j]
		}
	}
	return v
}

// innerM returns ⟨C + Â, A⟩; y and ay are n-vector scratch space.
func (e *dualEval) innerM(a SymMatrix, bd [][]float64, y, ay []float64) float64 {
	var s float64
	for _, t := range a.Entries {
		v := t.V * e.entry(t.I, t.J, bd)
		if t.I != t.J {
			v *= 2
		}
		s += v
	}
	for _, r := range a.RankOnes {
		if r.Index != nil && len(r.Index) <= smallRankOne {
			for ta, ia := range r.Index {
				for tb, ib := range r.Index {
					s += r.W * r.Value[ta] * r.Value[tb] * e.entry(ia, ib, bd)
				}
			}
			continue
		}
		clear(y)
		if r.Index == nil {
			copy(y, r.Value)
		} else {
			for t, i := range r.Index {
				y[i] += r.Value[t]
			}
		}
		e.Apply(ay, y)
		var d float64
		for i, v := range y {
			d += v * ay[i]
		}
		s += r.W * d
	}
	return s
}

// frobSq returns ‖C + Â‖²_F = ‖S‖² + 2Σ_t w_t v_tᵀ S v_t + Σ_{t,t′} w_t w_t′ (v_t·v_t′)².
func (e *dualEval) frobSq(bd [][]float64, sv []float64) float64 {
	var s float64
	for _, v := range e.s.Data {
		s += v * v
	}
	for t, w := range e.bigW {
		if w == 0 {
			continue
		}
		e.s.MulVec(sv, bd[t])
		var d float64
		for i, v := range bd[t] {
			d += v * sv[i]
		}
		s += 2 * w * d
		for t2, w2 := range e.bigW {
			if w2 == 0 {
				continue
			}
			var c float64
			for i, v := range bd[t] {
				c += v * bd[t2][i]
			}
			s += w * w2 * c * c
		}
	}
	return s
}

// eval returns the dual objective ½σ‖(C+Â)_−‖² + bᵀu and its gradient.
func (e *dualEval) eval(u, grad []float64) (float64, error) {
	e.assemble(u)
	cons := e.p.Constraints
	e.trialBU = 0
	for i, c := range cons {
		e.trialBU += c.B * u[i]
	}
	e.bounded = false
	lam, vec, err := e.negativePart(true)
	if errors.Is(err, errAboveCutoff) {
		return e.boundedEval(lam, vec, grad), nil
	}
	e.comp = false
	if errors.Is(err, errHighRank) {
		var plam []float64
		var pvec *mat.Dense
		if plam, pvec, err = e.positivePart(); err == nil {
			e.complement(plam, pvec)
		} else if errors.Is(err, errHighRank) {
			// Both parts are large: a dense eigendecomposition is far
			// cheaper than Lanczos with hundreds of pairs, where it fits.
			if e.n <= denseFallbackN {
				lam, vec, err = e.negativeDense()
			} else {
				lam, vec, err = e.negativePart(false)
			}
		}
	}
	if err != nil {
		return 0, err
	}
	if !e.comp {
		r := len(lam)
		e.lam = lam
		e.half = 0
		for _, l := range lam {
			e.half += 0.5 * e.sigma * l * l
		}
		e.z = scaledFactor(lam, vec)
		e.qc = quadForm(e.z, e.p.C)
		sparse.ParallelRows(len(cons), len(cons)*(r+1)*4, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				e.q[i] = quadForm(e.z, cons[i].A)
			}
		})
	}
	e.u = append(e.u[:0], u...)
	e.cacheTol = e.tol
	e.bu = e.trialBU
	e.maxViol = 0
	for i, c := range cons {
		ax := e.sigma * e.q[i] // ⟨A_i, X*⟩
		grad[i] = c.B - ax
		if c.Penalty == 0 {
			viol := ax - c.B
			if c.Equality {
				viol = math.Abs(viol)
			}
			e.maxViol = max(e.maxViol, viol/(1+math.Abs(c.B))) // builtin: math.Max is a call per constraint
		}
	}
	e.repairPrimal(false)
	return e.half + e.bu, nil
}

// boundedEval returns the lower bound ½σ Σ θ_j² + bᵀu of the dual objective
// at the trial point from its k smallest Ritz pairs (all negative) and writes
// the gradient of that bound into grad, leaving the cache of the last exact
// evaluation in place.
func (e *dualEval) boundedEval(lam []float64, vec *mat.Dense, grad []float64) float64 {
	e.bounded = true
	f := e.trialBU
	for _, l := range lam {
		f += 0.5 * e.sigma * l * l
	}
	z := scaledFactor(lam, vec)
	cons := e.p.Constraints
	sparse.ParallelRows(len(cons), len(cons)*(len(lam)+1)*4, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			grad[i] = cons[i].B - e.sigma*quadForm(z, cons[i].A)
		}
	})
	return f
}

// complement fills the evaluation cache from the positive eigenpairs of
// M = C + Â: with P = V₊√Λ₊, −M₋ = P Pᵀ − M, so ⟨Z Zᵀ, A⟩ = ⟨P Pᵀ, A⟩ − ⟨M, A⟩
// and ½σ‖M₋‖² = ½σ(‖M‖² − Σ λ₊²). No high-rank matrix is formed.
func (e *dualEval) complement(plam []float64, pvec *mat.Dense) {
	e.comp = true
	e.z, e.lam = nil, nil
	p := scaledFactor(plam, pvec)
	bd := e.bigVectors()
	y, ay := make([]float64, e.n), make([]float64, e.n)
	fro := e.frobSq(bd, y)
	var pos float64
	for _, l := range plam {
		pos += l * l
	}
	e.half = 0.5 * e.sigma * math.Max(0, fro-pos)
	e.qc = quadForm(p, e.p.C) - e.innerM(e.p.C, bd, y, ay)
	for i, c := range e.p.Constraints {
		e.q[i] = quadForm(p, c.A) - e.innerM(c.A, bd, y, ay)
	}
}

// scaledFactor returns V·diag(√|λ|) (nil when there are no pairs).
func scaledFactor(lam []float64, vec *mat.Dense) *mat.Dense {
	if len(lam) == 0 {
		return nil
	}
	n, _ := vec.Dims()
	z := mat.NewDense(n, len(lam), nil)
	for j, l := range lam {
		s := math.Sqrt(math.Abs(l))
		for i := 0; i < n; i++ {
			z.Set(i, j, vec.At(i, j)*s)
		}
	}
	return z
}

// certificate returns the primal objective of the cache's primal point,
// X* = σ Z Zᵀ or its repair (with optimal slacks of the soft constraints),
// and the dual objective at the cached point.
func (e *dualEval) certificate() (primal, dual float64) {
	if e.rep != nil {
		return e.repPrimal, -(e.half + e.bu)
	}
	primal = e.sigma*e.qc + e.half // ⟨C,X⟩ + ‖X‖²/(2σ) = σ⟨C,ZZᵀ⟩ + ½σΣλ²
	for i, c := range e.p.Constraints {
		if c.Penalty > 0 {
			v := e.sigma*e.q[i] - c.B
			if c.Equality {
				v = math.Abs(v)
			}
			if v > 0 {
				primal += c.Penalty * v
			}
		}
	}
	return primal, -(e.half + e.bu)
}

// factor returns the factor of the cache's primal point: √σ Z, or the
// repaired factor.
func (e *dualEval) factor() *mat.Dense {
	if e.rep != nil {
		return mat.DenseCopyOf(e.rep)
	}
	if e.comp {
		// A complement evaluation has no factor: compute the negative part
		// (of C + Â at the cached point: a bounded evaluation may have
		// assembled another since).
		e.assemble(e.u)
		if lam, vec, err := e.negativePart(false); err == nil {
			e.z, e.lam, e.comp = scaledFactor(lam, vec), lam, false
		}
	}
	if e.z == nil {
		return mat.NewDense(e.n, 1, nil)
	}
	f := mat.DenseCopyOf(e.z)
	f.Scale(math.Sqrt(e.sigma), f)
	return f
}

// combineRows writes y = Σ_t val[t]·row(idx[t]) (idx nil: row(t)), the
// vector aᵀZ of a sparse a against a factor's rows.
func combineRows(y []float64, idx []int, val []float64, row func(int) []float64) {
	clear(y)
	for t, v := range val {
		i := t
		if idx != nil {
			i = idx[t]
		}
		for k, zv := range row(i) {
			y[k] += v * zv
		}
	}
}

// quadForm returns ⟨Z Zᵀ, A⟩ for a factor z (nil means zero).
func quadForm(z *mat.Dense, a SymMatrix) float64 {
	if z == nil {
		return 0
	}
	raw := z.RawMatrix()
	r := raw.Cols
	row := func(i int) []float64 { return raw.Data[i*raw.Stride : i*raw.Stride+r] }
	var s float64
	for _, e := range a.Entries {
		zi, zj := row(e.I), row(e.J)
		var d float64
		for k, v := range zi {
			d += v * zj[k]
		}
		if e.I != e.J {
			d *= 2
		}
		s += e.V * d
	}
	if len(a.RankOnes) > 0 {
		y := make([]float64, r)
		for _, ro := range a.RankOnes {
			combineRows(y, ro.Index, ro.Value, row)
			var d float64
			for _, v := range y {
				d += v * v
			}
			s += ro.W * d
		}
	}
	return s
}

// The inexact evaluations of the sparse path: far from the
// optimum the dual's value and gradient need not carry 12 digits, and the
// eigensolver tolerance follows the progress of the solve.

// looseEigTol is the loosest eigensolver tolerance of an inexact solve.
const looseEigTol = 1e-3

// progressTol returns the eigensolver tolerance the cached point calls for:
// 1% of its progress measure, the larger of its relative duality gap and
// its relative constraint violation, within [EigTol, looseEigTol]
// (looseEigTol when nothing is cached). On the shifted operator the
// tolerance bounds the eigenvalue errors by about tol·|λ_min|, so the
// relative error of the objective, ∝ Σ λ δλ / Σ λ², stays well below the
// gap it is compared with.
func (e *dualEval) progressTol() float64 {
	if e.u == nil {
		return looseEigTol
	}
	pr, du := e.certificate()
	m := math.Max(math.Abs(dualsolve.RelGap(pr, du)), e.maxViol)
	if math.IsNaN(m) {
		return e.eigTol
	}
	return math.Min(math.Max(0.01*m, e.eigTol), looseEigTol)
}

// accuracy returns the driver's hooks for the inexact evaluations.
func (e *dualEval) accuracy() *dualsolve.Accuracy {
	return &dualsolve.Accuracy{
		Set: func(final bool) bool {
			want := e.eigTol
			if !final {
				want = e.progressTol()
			}
			if want < e.tol {
				e.tol = want
				return true
			}
			return false
		},
		Stale: func() bool { return e.progressTol() < e.tol/10 },
		Final: func() bool { return e.tol <= e.eigTol },
	}
}
