package sdp

import (
	"context"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/algos/internal/dualsolve"
	"github.com/psdlearn/psdlearn/engine"

	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// Semismooth Newton-CG for the dual of the general SDP (dense method).
//
// The generalised Hessian of f(u) = ½σ‖(S(u))_−‖² + bᵀu, S = C + Σ u_i A_i,
// applied to v is J v = σ[⟨A_i, D(A*(v))⟩]_i with A*(v) = Σ v_i A_i and
// D(H) = Q(Γ ∘ QᵀHQ)Qᵀ, S = Q diag(μ) Qᵀ, Γ the divided differences of
// min(·, 0). With α the r negative eigenvalues and β the others, Γ_αα = 1,
// Γ_ββ = 0 and Γ_iβ = μ_i/(μ_i − μ_j), so
//
//	D(H) = R Q_αᵀ + Q_α Rᵀ,  R = ½ Q_α M_αα + Q_β (Γ_βα ∘ M_βα),  M = QᵀHQ,
//
// and with W = H Q_α (sparse times n×r) a product costs O(r·n² + nnz·r)
// once S has been decomposed (once per Newton step): the low rank of the
// negative part makes the Newton system cheap.

// newtonState holds the eigendecomposition of S(u) for Hessian products.
type newtonState struct {
	mu   []float64
	q    *mat.Dense // n×n eigenvectors
	r    int        // number of negative eigenvalues (the first r)
	gam  []float64  // (n−r)×r: Γ_βα
	sv   []float64  // CSR values of A*(v)
	bigV []float64  // weights of the big rank-ones of A*(v)
	w    []float64  // n×r
	t    []float64  // n×r
	rr   []float64  // n×r: R
}

func (e *dualEval) newNewtonState(eig engine.Eigen) *newtonState {
	n := e.n
	r := 0
	for r < len(eig.Values) && eig.Values[r] < 0 {
		r++
	}
	st := &newtonState{mu: eig.Values, q: eig.Vectors, r: r,
		gam: make([]float64, (n-r)*r), sv: make([]float64, len(e.s.Data)), bigV: make([]float64, len(e.big)),
		w: make([]float64, n*r), t: make([]float64, n*r), rr: make([]float64, n*r)}
	for j := r; j < n; j++ {
		for i := 0; i < r; i++ {
			st.gam[(j-r)*r+i] = eig.Values[i] / (eig.Values[i] - eig.Values[j])
		}
	}
	return st
}

// hessVec writes out_i = σ⟨A_i, D(A*(v))⟩ for every constraint.
func (e *dualEval) hessVec(st *newtonState, out, v []float64) {
	n, r := e.n, st.r
	if r == 0 {
		for i := range out {
			out[i] = 0
		}
		return
	}
	// A*(v) as CSR values and big rank-one weights.
	for i := range st.sv {
		st.sv[i] = 0
	}
	for i, vi := range v {
		if vi == 0 {
			continue
		}
		for _, c := range e.contrib[e.cStart[i]:e.cStart[i+1]] {
			st.sv[c.slot] += vi * c.coef
		}
	}
	for t, b := range e.big {
		st.bigV[t] = 0
		if b.owner >= 0 {
			st.bigV[t] = v[b.owner] * b.w
		}
	}
	// W = A*(v) Q_α.
	qr := st.q.RawMatrix()
	sparse.ParallelRows(n, len(e.s.Data)*r, func(lo, hi int) {
		for a := lo; a < hi; a++ {
			wa := st.w[a*r : a*r+r]
			for k := range wa {
				wa[k] = 0
			}
			for p := e.s.Indptr[a]; p < e.s.Indptr[a+1]; p++ {
				if val := st.sv[p]; val != 0 {
					qb := qr.Data[e.s.Ind[p]*qr.Stride : e.s.Ind[p]*qr.Stride+r]
					for k, qv := range qb {
						wa[k] += val * qv
					}
				}
			}
		}
	})
	for t, b := range e.big {
		wt := st.bigV[t]
		if wt == 0 {
			continue
		}
		// W += wt · v (vᵀ Q_α)
		y := make([]float64, r)
		for s, val := range b.val {
			a := s
			if b.idx != nil {
				a = b.idx[s]
			}
			for k := 0; k < r; k++ {
				y[k] += val * qr.Data[a*qr.Stride+k]
			}
		}
		for s, val := range b.val {
			a := s
			if b.idx != nil {
				a = b.idx[s]
			}
			for k := 0; k < r; k++ {
				st.w[a*r+k] += wt * val * y[k]
			}
		}
	}
	impl := e.b.BLAS()
	// M_{:α} = Qᵀ W (n×r); rows α give M_αα, rows β give M_βα.
	impl.Dgemm(blas.Trans, blas.NoTrans, n, r, n, 1, qr.Data, qr.Stride, st.w, r, 0, st.t, r)
	// Scale: rows α by ½, rows β by Γ_βα.
	for a := 0; a < r; a++ {
		for k := 0; k < r; k++ {
			st.t[a*r+k] *= 0.5
		}
	}
	for j := r; j < n; j++ {
		g := st.gam[(j-r)*r : (j-r)*r+r]
		row := st.t[j*r : j*r+r]
		for k := range row {
			row[k] *= g[k]
		}
	}
	// R = Q · T (n×r).
	impl.Dgemm(blas.NoTrans, blas.NoTrans, n, r, n, 1, qr.Data, qr.Stride, st.t, r, 0, st.rr, r)
	// ⟨A_i, R Q_αᵀ + Q_α Rᵀ⟩: D_ab = R_a·Qα_b + Qα_a·R_b.
	dab := func(a, b int) float64 {
		ra, rb := st.rr[a*r:a*r+r], st.rr[b*r:b*r+r]
		qa, qb := qr.Data[a*qr.Stride:a*qr.Stride+r], qr.Data[b*qr.Stride:b*qr.Stride+r]
		var s float64
		for k := 0; k < r; k++ {
			s += ra[k]*qb[k] + qa[k]*rb[k]
		}
		return s
	}
	cons := e.p.Constraints
	sparse.ParallelRows(len(cons), len(cons)*r*8, func(lo, hi int) {
		y := make([]float64, r)
		z := make([]float64, r)
		for i := lo; i < hi; i++ {
			a := cons[i].A
			var s float64
			for _, en := range a.Entries {
				d := dab(en.I, en.J)
				if en.I != en.J {
					d *= 2
				}
				s += en.V * d
			}
			for _, ro := range a.RankOnes {
				// vᵀ(R Q_αᵀ + Q_α Rᵀ)v = 2 (vᵀR)(Q_αᵀv)
				for k := range y {
					y[k], z[k] = 0, 0
				}
				for t, val := range ro.Value {
					row := t
					if ro.Index != nil {
						row = ro.Index[t]
					}
					for k := 0; k < r; k++ {
						y[k] += val * st.rr[row*r+k]
						z[k] += val * qr.Data[row*qr.Stride+k]
					}
				}
				var d float64
				for k := range y {
					d += y[k] * z[k]
				}
				s += ro.W * 2 * d
			}
			out[i] = e.sigma * s
		}
	})
}

// hessDiag writes the diagonal of the generalised Hessian,
// J_ii = σ(‖M_αα‖²_F + 2 Σ_{j∈β, k∈α} Γ_jk M_jk²) with M = Qᵀ A_i Q_α,
// a Jacobi preconditioner for CG. A_i Q_α is nonzero only on the support of
// A_i, so constraint i costs O(n·r·support).
func (e *dualEval) hessDiag(st *newtonState, diag []float64) {
	n, r := e.n, st.r
	if r == 0 {
		for i := range diag {
			diag[i] = 0
		}
		return
	}
	qr := st.q.RawMatrix()
	qrow := func(a int) []float64 { return qr.Data[a*qr.Stride : a*qr.Stride+n] }
	cons := e.p.Constraints
	sparse.ParallelRows(len(cons), len(cons)*n*r*4, func(lo, hi int) {
		mm := make([]float64, n*r) // M = Qᵀ (A_i Q_α), n×r
		pa := map[int][]float64{}  // rows of A_i Q_α on the support
		y := make([]float64, r)
		for i := lo; i < hi; i++ {
			clear(pa)
			row := func(a int) []float64 {
				v, ok := pa[a]
				if !ok {
					v = make([]float64, r)
					pa[a] = v
				}
				return v
			}
			a := cons[i].A
			for _, en := range a.Entries {
				// A += V (e_I e_Jᵀ + e_J e_Iᵀ) (once on the diagonal)
				ri := row(en.I)
				qj := qrow(en.J)
				for k := 0; k < r; k++ {
					ri[k] += en.V * qj[k]
				}
				if en.I != en.J {
					rj := row(en.J)
					qi := qrow(en.I)
					for k := 0; k < r; k++ {
						rj[k] += en.V * qi[k]
					}
				}
			}
			for _, ro := range a.RankOnes {
				for k := range y {
					y[k] = 0
				}
				for t, val := range ro.Value {
					at := t
					if ro.Index != nil {
						at = ro.Index[t]
					}
					q := qrow(at)
					for k := 0; k < r; k++ {
						y[k] += val * q[k]
					}
				}
				for t, val := range ro.Value {
					at := t
					if ro.Index != nil {
						at = ro.Index[t]
					}
					ra := row(at)
					for k := 0; k < r; k++ {
						ra[k] += ro.W * val * y[k]
					}
				}
			}
			for k := range mm {
				mm[k] = 0
			}
			for at, pv := range pa {
				q := qrow(at)
				for j := 0; j < n; j++ {
					qj := q[j]
					if qj == 0 {
						continue
					}
					m := mm[j*r : j*r+r]
					for k, v := range pv {
						m[k] += qj * v
					}
				}
			}
			var s float64
			for j := 0; j < r; j++ {
				for k := 0; k < r; k++ {
					s += mm[j*r+k] * mm[j*r+k]
				}
			}
			for j := r; j < n; j++ {
				g := st.gam[(j-r)*r : (j-r)*r+r]
				m := mm[j*r : j*r+r]
				for k, v := range m {
					s += 2 * g[k] * v * v
				}
			}
			diag[i] = e.sigma * s
		}
	})
}

// newton runs projected semismooth Newton-CG steps on the SDP dual from u
// (modified in place) within the bounds, until the certificate passes
// (merit ≤ 1), a step fails, or the budget is spent. On return
// the cache holds u. It returns the number of evaluations and Hessian products.
func (e *dualEval) newton(ctx context.Context, u, lower, upper []float64, cfg dualsolve.PolishConfig, merit func() float64, progress func(string, ...any)) (int, error) {
	var st *newtonState
	p := dualsolve.NewtonProblem{
		Eval: e.eval,
		Hessian: func() (func(out, v []float64) error, func([]float64), float64, error) {
			eig, err := e.b.SymEig(e.dense(), engine.AllRange(), true)
			if err != nil {
				return nil, nil, 0, fmt.Errorf("sdp: eigendecomposition: %w", err)
			}
			st = e.newNewtonState(eig)
			apply := func(out, v []float64) error { e.hessVec(st, out, v); return nil }
			diag := func(d []float64) { e.hessDiag(st, d) }
			return apply, diag, 1e-10 * e.sigma, nil
		},
		Merit:  merit,
		Target: 1,
		ActiveEps: func(i int, pgmax float64) float64 {
			return math.Min(pgmax, 1e-3*math.Max(1, math.Abs(u[i])))
		},
		MinStep: 1e-6,
	}
	if progress != nil {
		p.Report = func(step, evals int, _ float64) {
			pr, du := e.certificate()
			progress("sdp Newton step %d: rank %d, dual %.10g, rel.gap %.3g, violation %.3g, %d evaluations", step, st.r, du, dualsolve.RelGap(pr, du), e.maxViol, evals)
		}
	}
	return dualsolve.ProjectedNewton(ctx, p, u, lower, upper, cfg)
}
