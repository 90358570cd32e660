package frob

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/psdlearn/psdlearn/algos/internal/dualsolve"
	"github.com/psdlearn/psdlearn/engine"

	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// Semismooth Newton polish of the FrobMetric dual.
//
// The duality gap of a dual point u is a sum of complementarity terms,
//
//	gap = Σ_r u_r (m_r − 1)_+ + (C/m − u_r)(1 − m_r)_+,   m_r = ⟨A_r, X(u)⟩,
//
// so a relative gap of 1e-6 needs projected gradients m_r − 1 of order
// 1e-9 on the free multipliers. Quasi-Newton line searches compare function
// values, and near the optimum the decrease such gradients promise is below
// the rounding of f: L-BFGS-B stalls a little short of that. The polish takes
// projected (semismooth) Newton steps instead: the generalised Hessian of
// f(u) = ½‖(G(u))_+‖² − Σu, G(u) = Σ u_r A_r, is
//
//	J v = [⟨A_r, D(·)_+[G](Σ_s v_s A_s)⟩]_r,   D(·)_+[G](H) = Q (Γ ∘ QᵀHQ) Qᵀ
//
// with G = Q diag(μ) Qᵀ and Γ the divided differences of max(·, 0) at μ.
// A product costs one weighted Gram, two D×D rotations and one pass of pair
// quadratic forms — the price of an evaluation. Steps are accepted on the
// duality gap itself, which is computed from gradients and is accurate far
// below the rounding level of f.

// hessVec computes out = J_FF v for the generalised Hessian at the
// eigendecomposition (mu, q) of G, restricted to the free set (v is zero
// outside it; out is computed everywhere).
func (e *metricEval) hessVec(out, v []float64, mu []float64, q *mat.Dense, pq []float64) error {
	graph, err := e.ts.GraphInto(e.graph, v)
	if err != nil {
		return fmt.Errorf("frob: %w", err)
	}
	e.graph = graph
	e.phases.HessianRows += len(graph.ActiveRows())
	h := mat.NewSymDense(e.d, nil)
	if err := e.b.WeightedGram(h, e.x, graph); err != nil {
		return fmt.Errorf("frob: weighted Gram: %w", err)
	}
	dx := HessianDirection(e.b, h, mu, q)
	if err := e.b.PairQuadForms(pq, e.x, dx, e.ts.Pairs); err != nil {
		return fmt.Errorf("frob: pair quadratic forms: %w", err)
	}
	e.ts.Margins(out, pq)
	return nil
}

// HessianDirection returns D(·)_+[G](H) = Q (Γ ∘ QᵀHQ) Qᵀ for the
// eigendecomposition G = Q diag(mu) Qᵀ, Γ the divided differences of
// max(·, 0) at mu: the change of (G)_+ along H, whose pair quadratic forms
// are a generalised Hessian product of the dual (see hessVec).
func HessianDirection(b engine.Backend, h *mat.SymDense, mu []float64, q *mat.Dense) *mat.SymDense {
	d := h.SymmetricDim()
	impl := b.BLAS()
	hr := h.RawSymmetric()
	hf := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v := hr.Data[i*hr.Stride+j]
			hf[i*d+j], hf[j*d+i] = v, v
		}
	}
	qr := q.RawMatrix()
	t := make([]float64, d*d)
	ht := make([]float64, d*d)
	// ht = Qᵀ H Q
	impl.Dgemm(blas.NoTrans, blas.NoTrans, d, d, d, 1, hf, d, qr.Data, qr.Stride, 0, t, d)
	impl.Dgemm(blas.Trans, blas.NoTrans, d, d, d, 1, qr.Data, qr.Stride, t, d, 0, ht, d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			ht[i*d+j] *= divDiffPos(mu[i], mu[j])
		}
	}
	// dX = Q ht Qᵀ
	impl.Dgemm(blas.NoTrans, blas.Trans, d, d, d, 1, ht, d, qr.Data, qr.Stride, 0, t, d)
	impl.Dgemm(blas.NoTrans, blas.NoTrans, d, d, d, 1, qr.Data, qr.Stride, t, d, 0, hf, d)
	dx := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			dx.SetSym(i, j, 0.5*(hf[i*d+j]+hf[j*d+i]))
		}
	}
	return dx
}

// jacobiDiag writes the diagonal of the generalised Hessian,
// J_rr = Σ_ij Γ_ij (p̃_i p̃_j − q̃_i q̃_j)² with p̃ = Qᵀp_r, q̃ = Qᵀq_r, for
// every triplet: O(N·D² + m·D²), a Jacobi preconditioner for CG.
func (e *metricEval) jacobiDiag(diag []float64, mu []float64, q *mat.Dense) {
	d := e.d
	gam := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			gam[i*d+j] = divDiffPos(mu[i], mu[j])
		}
	}
	xr, qr := e.x.RawMatrix(), q.RawMatrix()
	xt := make([]float64, e.n*d)
	engine.MulRows(e.b.BLAS(), e.n, d, d, xr.Data, xr.Stride, qr.Data, qr.Stride, xt, d)
	ts := e.ts.Triplets
	sparse.ParallelRows(len(ts), len(ts)*d*d*3, func(lo, hi int) {
		pt := make([]float64, d)
		qt := make([]float64, d)
		for r := lo; r < hi; r++ {
			tr := ts[r]
			xi, xj, xk := xt[tr.I*d:tr.I*d+d], xt[tr.J*d:tr.J*d+d], xt[tr.K*d:tr.K*d+d]
			for c := 0; c < d; c++ {
				pt[c] = xi[c] - xk[c]
				qt[c] = xi[c] - xj[c]
			}
			var s float64
			for i := 0; i < d; i++ {
				g := gam[i*d : i*d+d]
				for j := 0; j < d; j++ {
					if g[j] != 0 {
						v := pt[i]*pt[j] - qt[i]*qt[j]
						s += g[j] * v * v
					}
				}
			}
			diag[r] = s
		}
	})
}

// divDiffPos is the divided difference of max(·, 0) at a and b.
func divDiffPos(a, b float64) float64 {
	switch {
	case a > 0 && b > 0:
		return 1
	case a <= 0 && b <= 0:
		return 0
	case a > 0:
		return a / (a - b)
	default:
		return b / (b - a)
	}
}

// polish runs projected semismooth Newton steps from u (modified in place)
// until the relative gap is at most cfg.gapTol, a step fails to reduce the
// gap, or the step budget is spent. It returns the number of evaluations
// (function and Hessian products) used. On return the cache holds u.
func (e *metricEval) polish(ctx context.Context, u []float64, cfg dualsolve.PolishConfig, progress func(string, ...any)) (int, error) {
	m, c := len(u), e.cm
	lower, upper := make([]float64, m), make([]float64, m)
	for i := range upper {
		upper[i] = c
	}
	var pq []float64
	var useJacobi bool
	if e.ext != nil {
		n, d, m, pairs := e.ext.Sizes()
		useJacobi = UseJacobi(n, d, m, pairs)
	} else {
		pq = make([]float64, len(e.ts.Pairs))
		// The Jacobi diagonal costs O(m·D²) per step: beyond about a hundred
		// evaluations' worth, CG runs unpreconditioned (diag = 1).
		useJacobi = float64(m)*float64(e.d)*float64(e.d) <= 100*(float64(e.n)*float64(e.d)*float64(e.d)+float64(len(e.ts.Pairs))*float64(e.d))
	}
	p := dualsolve.NewtonProblem{
		Eval: e.eval,
		Hessian: func() (func(out, v []float64) error, func([]float64), float64, error) {
			if e.ext != nil {
				return e.extHessian(useJacobi)
			}
			// Full eigendecomposition of G(u) for the divided differences.
			t := time.Now()
			eig, err := e.b.SymEig(e.g, engine.AllRange(), true)
			if err != nil {
				return nil, nil, 0, fmt.Errorf("frob: eigendecomposition: %w", err)
			}
			e.phases.Eig += since(t)
			e.phases.Eigs++
			e.phases.FullEigs++
			e.phases.EigPairs += len(eig.Values)
			apply := func(out, v []float64) error {
				t := time.Now()
				defer func() { e.phases.Hessian += since(t); e.phases.HessianProducts++ }()
				return e.hessVec(out, v, eig.Values, eig.Vectors, pq)
			}
			diag := func(d []float64) {
				if useJacobi {
					t := time.Now()
					e.jacobiDiag(d, eig.Values, eig.Vectors)
					e.phases.Hessian += since(t)
				}
			}
			// A tiny ridge keeps CG well defined on the null space of J.
			return apply, diag, 1e-12 * math.Max(1, maxAbs(e.lam)), nil
		},
		Merit:     func() float64 { return dualsolve.RelGap(e.certificate()) },
		Target:    cfg.GapTol,
		ActiveEps: func(_ int, pgmax float64) float64 { return math.Min(1e-3*c, pgmax) },
		MinStep:   1e-4,
	}
	if progress != nil {
		p.Report = func(step, evals int, gap float64) {
			progress("frobmetric polish: Newton step %d, rel.gap %.3g, %d evaluations", step, gap, evals)
		}
	}
	return dualsolve.ProjectedNewton(ctx, p, u, lower, upper, cfg)
}

func maxAbs(x []float64) float64 {
	var m float64
	for _, v := range x {
		m = max(m, math.Abs(v))
	}
	return m
}
