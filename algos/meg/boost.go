package meg

import (
	"context"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/errs"
	"gonum.org/v1/gonum/mat"
)

// Projection selects DefiniteBoost's step size.
type Projection int

const (
	// Approximate is the closed-form step of the paper's eq. (13),
	// α = log[(1 − r/λmin)/(1 − r/λmax)] / (λmax − λmin).
	Approximate Projection = iota
	// Exact is the exact Bregman projection onto the chosen constraint: the
	// α ≥ 0 minimising tr exp(log W_t − α C), found by a safeguarded
	// root search on tr(W(α) C) = 0 (one eigendecomposition per evaluation).
	Exact
)

// String returns "approx" or "exact".
func (p Projection) String() string {
	switch p {
	case Approximate:
		return "approx"
	case Exact:
		return "exact"
	}
	return fmt.Sprintf("Projection(%d)", int(p))
}

// tieTol is the relative difference below which two violations are a tie.
const tieTol = 1e-12

// ErrInfeasible is returned when a violated constraint cannot be satisfied by
// any positive definite W (its matrix has no negative eigenvalue).
var ErrInfeasible = errs.New("meg: infeasible constraint", errs.ErrInvalid)

// DefaultMaxIter bounds DefiniteBoost's projections.
const DefaultMaxIter = 100000

// BoostOptions configures DefiniteBoost.
type BoostOptions struct {
	// Projection is Approximate (default) or Exact.
	Projection Projection
	// Tol stops the iteration when max_j tr(W C_j) ≤ Tol. Default 1e-9.
	Tol float64
	// MaxIter bounds the number of projections (0: DefaultMaxIter).
	MaxIter int
	// W1 is the initial matrix, symmetric positive definite, scaled to trace
	// one. Nil means I/d.
	W1 mat.Symmetric
	// Backend computes the eigendecompositions; nil means engine.Default().
	Backend engine.Backend
	// Observe, if not nil, is called after every projection; an error from
	// it stops the run and is returned.
	Observe func(BoostStep) error
}

// BoostStep describes one projection of DefiniteBoost.
type BoostStep struct {
	Iter       int     // 1-based
	Constraint int     // j_t = argmax_j tr(W_t C_j)
	Violation  float64 // r_t = tr(W_t C_{j_t}) > Tol
	Alpha      float64 // the step α_t ≥ 0
	Dual       float64 // log tr exp(log W_1 − Σ_j α_j C_j) after the step
	LogRho     float64 // log ρ(r_t) of Theorem 4.1 (≤ 0): Dual − previous Dual ≤ LogRho
	Evals      int     // eigendecompositions used by the step
	// W is W_{t+1} after the step. It is valid only during the call and must
	// not be modified.
	W *mat.SymDense
}

// BoostResult is the outcome of DefiniteBoost.
type BoostResult struct {
	W            *mat.SymDense // the final W, trace one, positive definite
	Alpha        []float64     // accumulated multipliers α_j ≥ 0, one per constraint
	Iterations   int           // projections made
	Converged    bool          // max_j tr(W C_j) ≤ Tol at the end
	MaxViolation float64       // max_j tr(W C_j) at the end
	Violations   []float64     // tr(W C_j) at the end, one per constraint
	InitialDual  float64       // dual objective at W_1 (0 for trace-one W_1)
	Dual         float64       // final dual objective log tr exp(log W_1 − Σ α_j C_j)
	LogBound     float64       // InitialDual + Σ_t log ρ(r_t) ≥ Dual (Theorem 4.1)
	Eigs         int           // eigendecompositions of the exponent
}

// ApproxAlpha returns the approximate projection step of eq. (13),
// log[(1 − r/λmin)/(1 − r/λmax)]/(λmax − λmin), for a violation 0 ≤ r < λmax
// of a constraint whose spectrum lies in [λmin, λmax], λmin < 0 < λmax.
func ApproxAlpha(r, lmin, lmax float64) float64 {
	return (math.Log1p(-r/lmin) - math.Log1p(-r/lmax)) / (lmax - lmin)
}

// LogRho returns log ρ(r) of Theorem 4.1,
//
//	ρ(r) = (1 − r/λmax)^{λmax/(λmax−λmin)} (1 − r/λmin)^{−λmin/(λmax−λmin)} ≤ 1,
//
// the factor by which one approximate (or exact) projection at least reduces
// tr exp of the dual exponent. In the AdaBoost case it is √(1 − r²).
func LogRho(r, lmin, lmax float64) float64 {
	w := lmax - lmin
	return lmax/w*math.Log1p(-r/lmax) - lmin/w*math.Log1p(-r/lmin)
}

// DefiniteBoost solves min Δ(W, W_1) s.t. tr W = 1, tr(W C_j) ≤ 0 for all j,
// by the paper's Section 4: at each step it picks the most violated
// constraint j_t = argmax_j tr(W_t C_j) (violations within a relative 1e-12
// of the largest are ties, which go to the lowest j), stops if
// r_t = tr(W_t C_{j_t}) ≤ Tol, and otherwise sets
// W_{t+1} = exp(log W_t − α_t C_{j_t}) / Z_t with the approximate or exact
// projection step. The exponent log W_1 − Σ α_j C_j is kept as a dense d×d
// matrix and decomposed with the backend; W is formed (dsyrk) once per step
// to evaluate every constraint in O(cost of Inner).
//
// As in the paper (and AdaBoost), multipliers only grow and the run stops
// at the first W satisfying every constraint within Tol. That W is feasible
// but in general not the exact projection W*: by weak duality
// Δ(W, W1) − Δ(W*, W1) ≤ Δ(W, W1) + Dual = −Σ_j α_j tr(W C_j), a gap the
// caller can compute from Alpha and Violations.
//
// Reaching MaxIter is not an error: the result has Converged = false. The
// context is checked before every projection: on cancellation DefiniteBoost
// returns the best iterate so far (W after the last projection, with its
// violations; the dual objective only decreases) and an error wrapping
// ctx.Err().
func DefiniteBoost(ctx context.Context, cons []Sym, opt BoostOptions) (*BoostResult, error) {
	if len(cons) == 0 {
		return nil, fmt.Errorf("%w: no constraints", ErrInvalid)
	}
	if cons[0] == nil {
		return nil, fmt.Errorf("%w: constraint 0 is nil", ErrInvalid)
	}
	d := cons[0].Dim()
	if d <= 0 {
		return nil, fmt.Errorf("%w: dimension %d", ErrInvalid, d)
	}
	for j, c := range cons {
		if err := checkSym(c, d); err != nil {
			return nil, fmt.Errorf("meg: constraint %d: %w", j, err)
		}
	}
	tol := opt.Tol
	if tol == 0 {
		tol = 1e-9
	}
	if !(tol > 0) || math.IsInf(tol, 0) {
		return nil, fmt.Errorf("%w: tolerance %v", ErrInvalid, opt.Tol)
	}
	maxIter := opt.MaxIter
	if maxIter == 0 {
		maxIter = DefaultMaxIter
	}
	if maxIter < 0 {
		return nil, fmt.Errorf("%w: MaxIter %d", ErrInvalid, opt.MaxIter)
	}
	if opt.Projection != Approximate && opt.Projection != Exact {
		return nil, fmt.Errorf("%w: projection %v", ErrInvalid, opt.Projection)
	}
	b := engine.Or(opt.Backend)
	e, err := initialExponent(b, d, opt.W1)
	if err != nil {
		return nil, err
	}
	st, err := newExpState(b, e)
	if err != nil {
		return nil, err
	}
	res := &BoostResult{Alpha: make([]float64, len(cons)), Violations: make([]float64, len(cons)), Eigs: 1}
	res.InitialDual = st.logZ
	res.LogBound = st.logZ
	w := mat.NewSymDense(d, nil)
	viol := res.Violations
	type bounds struct {
		lo, hi float64
		ok     bool
	}
	ext := make([]bounds, len(cons))
	proj := projector{b: b, d: d, scratch: make([]float64, d)}

	st.formW(b, w)
	for {
		top := math.Inf(-1)
		for j, c := range cons {
			viol[j] = c.Inner(w)
			top = math.Max(top, viol[j])
		}
		// Violations equal to the largest up to rounding are ties; they go to
		// the lowest index, so that the path does not depend on how the
		// constraint matrices are represented.
		jt := 0
		for viol[jt] < top-tieTol*math.Abs(top) {
			jt++
		}
		res.W, res.MaxViolation, res.Dual = w, viol[jt], st.logZ
		r := viol[jt]
		if r <= tol {
			res.Converged = true
			return res, nil
		}
		if res.Iterations >= maxIter {
			return res, nil
		}
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("meg: DefiniteBoost: %w", err)
		}
		if !ext[jt].ok {
			lo, hi, err := cons[jt].Extremes(b)
			if err != nil {
				return res, fmt.Errorf("meg: constraint %d: %w", jt, err)
			}
			ext[jt] = bounds{lo, hi, true}
		}
		lo, hi := ext[jt].lo, ext[jt].hi
		if !(lo < 0) {
			return res, fmt.Errorf("%w: constraint %d is violated (%g) but its matrix has no negative eigenvalue (λmin = %g)", ErrInfeasible, jt, r, lo)
		}
		if !(r < hi) {
			return res, fmt.Errorf("meg: constraint %d: violation %g not below λmax = %g (W has collapsed onto its top eigenspace)", jt, r, hi)
		}
		alpha := ApproxAlpha(r, lo, hi)
		evals := 1
		var next *expState
		if opt.Projection == Exact {
			alpha, next, evals, err = proj.exact(e, cons[jt], r, alpha, hi-lo)
			if err != nil {
				return res, fmt.Errorf("meg: exact projection on constraint %d: %w", jt, err)
			}
			cons[jt].AddTo(e, -alpha)
		} else {
			cons[jt].AddTo(e, -alpha)
			next, err = newExpState(b, e)
			if err != nil {
				return res, err
			}
		}
		st = next
		res.Eigs += evals
		res.Iterations++
		res.Alpha[jt] += alpha
		lr := LogRho(r, lo, hi)
		res.LogBound += lr
		res.Dual = st.logZ
		st.formW(b, w)
		if opt.Observe != nil {
			if err := opt.Observe(BoostStep{Iter: res.Iterations, Constraint: jt, Violation: r, Alpha: alpha, Dual: st.logZ, LogRho: lr, Evals: evals, W: w}); err != nil {
				res.W = w
				res.MaxViolation = math.Inf(-1)
				for j, c := range cons {
					viol[j] = c.Inner(w)
					res.MaxViolation = math.Max(res.MaxViolation, viol[j])
				}
				return res, err
			}
		}
	}
}

// projector carries the workspace of the exact projection.
type projector struct {
	b       engine.Backend
	d       int
	tmp     *mat.SymDense
	rot     *mat.SymDense
	scratch []float64
}

// eval decomposes E − αC and returns the state and h(α) = tr(W(α) C).
func (p *projector) eval(e *mat.SymDense, c Sym, alpha float64) (*expState, float64, error) {
	if p.tmp == nil {
		p.tmp = mat.NewSymDense(p.d, nil)
	}
	p.tmp.CopySym(e)
	c.AddTo(p.tmp, -alpha)
	st, err := newExpState(p.b, p.tmp)
	if err != nil {
		return nil, 0, err
	}
	return st, st.inner(c, p.scratch), nil
}

// curvature returns f”(α) for f(α) = log tr exp(E − αC) at the
// decomposition st of E − αC (Daleckii–Krein): with C̃ = Vᵀ C V,
// f” = Σ_kl C̃_kl² (p_k − p_l)/(λ_k − λ_l) − h², where the divided difference
// is p_k on the diagonal and is evaluated as p_max(1 − e^{−|δ|})/|δ|.
func (p *projector) curvature(st *expState, c Sym, h float64) float64 {
	if p.rot == nil {
		p.rot = mat.NewSymDense(p.d, nil)
	}
	c.Rotate(p.rot, st.vecs)
	raw, so := upper(p.rot)
	var f2 float64
	for k := 0; k < p.d; k++ {
		x := raw[k*so+k]
		f2 += x * x * st.p[k]
		for l := k + 1; l < p.d; l++ {
			x := raw[k*so+l]
			if x == 0 {
				continue
			}
			g := math.Max(st.p[k], st.p[l])
			if dl := math.Abs(st.vals[k] - st.vals[l]); dl > 0 {
				g *= -math.Expm1(-dl) / dl
			}
			f2 += 2 * x * x * g
		}
	}
	return f2 - h*h
}

// exact finds the root α* > 0 of the decreasing function h(α) = tr(W(α) C),
// W(α) ∝ exp(E − αC), h(0) = r > 0: the minimiser of the convex
// f(α) = log tr exp(E − αC), whose derivative is −h. Starting from the
// approximate step it takes Newton steps α ← α + h/f”(α), safeguarded by the
// bracket of the root (doubling while no negative h is known, bisection when
// a step leaves the bracket), until |h| ≤ max(1e-10·r, 1e-15·(λmax − λmin))
// or the bracket is at rounding level. It returns α*, the decomposition of
// E − α*C and the number of eigendecompositions.
func (p *projector) exact(e *mat.SymDense, c Sym, r, guess, width float64) (float64, *expState, int, error) {
	htol := math.Max(1e-10*r, 1e-15*width) // width = λmax − λmin: the rounding level of h
	lo, hi := 0.0, math.Inf(1)
	var best *expState
	bestAlpha, bestH := 0.0, math.Inf(1)
	evals := 0
	a := guess
	if !(a > 0) || math.IsInf(a, 0) {
		a = 1
	}
	for it := 0; it < 200; it++ {
		st, h, err := p.eval(e, c, a)
		evals++
		if err != nil {
			return 0, nil, evals, err
		}
		if math.Abs(h) < bestH {
			best, bestAlpha, bestH = st, a, math.Abs(h)
		}
		if math.Abs(h) <= htol {
			break
		}
		if h > 0 {
			lo = a
		} else {
			hi = a
		}
		if !math.IsInf(hi, 1) && hi-lo <= 4e-16*hi {
			break
		}
		next := a + h/p.curvature(st, c, h)
		if !(next > lo && next < hi) {
			if math.IsInf(hi, 1) {
				next = 2 * a
			} else {
				next = 0.5 * (lo + hi)
			}
		}
		a = next
	}
	if math.IsInf(hi, 1) && bestH > htol {
		return 0, nil, evals, fmt.Errorf("%w: no step makes tr(W C) ≤ 0", ErrInfeasible)
	}
	return bestAlpha, best, evals, nil
}
