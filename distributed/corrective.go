package distributed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/internal/corrective"
	"github.com/psdlearn/psdlearn/internal/f64"
	"gonum.org/v1/gonum/mat"
)

// Totally corrective BoostMetric over the shards. After each new term the
// weights of all J terms are re-solved by L-BFGS-B, as boost's correct
// does: every rank runs the same L-BFGS-B on the J weights (a handful of
// numbers), and every evaluation is distributed. With X = Σ_j w_j v_j v_jᵀ
// (replicated, D×D) each rank computes its triplets' margins ⟨A_r, X⟩ and
// weights p_r; the loss and the separation test are reduced as scalars and
// the gradient g_j = ν − v_jᵀ Â(p) v_j needs Â(p) = Σ_r p_r A_r, whose
// D(D+1)/2 entries are gathered and added in rank order. Every rank thus
// evaluates the same function to the same bits and L-BFGS-B takes the
// same steps everywhere, which the collectives inside the evaluations
// require.
//
// Cancellation: L-BFGS-B runs under a context that is never cancelled (a
// rank stopping on its own would leave the others in a collective); every
// evaluation carries each rank's cancellation flag, and once any rank is
// cancelled every rank's evaluation returns NaN, the solve ends on every
// rank, and the run returns the last completed iteration.

// Cost bounds of the re-solves: boost's (internal/corrective).
const (
	correctiveMaxIter   = corrective.MaxIter
	correctiveFinalIter = corrective.FinalIter
)

// errCancelledEval marks an evaluation abandoned because a rank was
// cancelled.
var errCancelledEval = errors.New("distributed: cancelled during a corrective re-solve")

// corrector evaluates the objective of the term weights over all ranks.
type corrector struct {
	lp   *local
	rd   *reducer
	loss boost.Loss
	nu   float64
	vs   [][]float64   // the terms, replicated
	xm   *mat.SymDense // X = Σ_j w_j v_j v_jᵀ
	tri  []float64     // packed upper triangle of this rank's Â(p)
	p    []float64     // this rank's triplet weights
}

func newCorrector(lp *local, rd *reducer, loss boost.Loss, nu float64) *corrector {
	return &corrector{lp: lp, rd: rd, loss: loss, nu: nu, xm: mat.NewSymDense(lp.d, nil),
		tri: make([]float64, lp.d*(lp.d+1)/2), p: make([]float64, lp.m)}
}

// marginsOf writes the margins ⟨A_r, X⟩ of this rank's triplets for the
// weights w into rho and returns 1ᵀw.
func (c *corrector) marginsOf(rho, w []float64) (float64, error) {
	lp := c.lp
	tr := corrective.Sum(c.xm, c.vs, w)
	if lp.m == 0 {
		return tr, nil
	}
	if err := lp.b.PairQuadForms(lp.pairs, lp.x, c.xm, lp.ts.Pairs); err != nil {
		return 0, fmt.Errorf("distributed: margins: %w", err)
	}
	lp.ts.Margins(rho, lp.pairs)
	return tr, nil
}

// separated reports, over all ranks, whether every margin exceeds ν·tr > 0
// (boost's separates); one AllreduceMax.
func (c *corrector) separated(rho []float64, tr float64) (bool, error) {
	f := []float64{c.notSeparated(rho, tr)}
	if err := c.rd.comm.AllreduceMax(f); err != nil {
		return false, fmt.Errorf("distributed: separation test: %w", err)
	}
	return f[0] == 0, nil
}

// notSeparated is 1 unless every margin of this rank exceeds ν·tr > 0,
// else 0: the local part of boost's separates, reduced by max.
func (c *corrector) notSeparated(rho []float64, tr float64) float64 {
	if !(tr > 0) {
		return 1
	}
	for _, v := range rho {
		if !(v > c.nu*tr) {
			return 1
		}
	}
	return 0
}

// eval returns the objective at w and its gradient, the margins of w in
// rho, and whether they separate the triplets (exponential loss). cancel
// is this rank's cancellation flag; when any rank raised it, eval returns
// errCancelledEval on every rank.
func (c *corrector) eval(w, grad, rho []float64, cancel bool) (val float64, sep bool, err error) {
	tr, err := c.marginsOf(rho, w)
	if err != nil {
		return 0, false, err
	}
	flag, notSep := 0.0, 0.0
	if cancel {
		flag = 1
	}
	if c.loss == boost.Exp {
		notSep = c.notSeparated(rho, tr)
	}
	st := []float64{flag, notSep}
	if err := c.rd.comm.AllreduceMax(st); err != nil {
		return 0, false, fmt.Errorf("distributed: corrective step: %w", err)
	}
	if st[0] != 0 {
		return 0, false, errCancelledEval
	}
	sep = c.loss == boost.Exp && st[1] == 0
	switch c.loss {
	case boost.Exp:
		t, err := c.rd.expSums(rho, nil, 0)
		if err != nil {
			return 0, false, err
		}
		lse := t.LogSum()
		f64.ExpNeg(c.p, rho, lse) // boost's exponentials
		val = lse
	default:
		var s float64
		for r, q := range rho {
			c.p[r] = sigmoidNeg(q)
			s += softplus(-q)
		}
		all, err := c.rd.sums(s)
		if err != nil {
			return 0, false, err
		}
		val = all[0]
	}
	if err := c.lp.gramInto(c.rd.comm, c.tri, c.p); err != nil {
		return 0, false, err
	}
	g, err := c.rd.sums(c.tri...)
	if err != nil {
		return 0, false, err
	}
	d := c.lp.d
	rows := make([]int, d) // start of row a of the packed upper triangle
	for a := 1; a < d; a++ {
		rows[a] = rows[a-1] + d - a + 1
	}
	corrective.QuadForms(grad, c.vs, d, func(a int) []float64 { return g[rows[a] : rows[a]+d-a] })
	for j := range grad {
		grad[j] = c.nu - grad[j]
	}
	return val + c.nu*tr, sep, nil
}

// correct is boost's correct over the ranks: it minimises the objective of
// the term weights from w0 with at most maxIter L-BFGS-B iterations,
// writes the margins of the solution into rho and returns the weights.
func (c *corrector) correct(ctx context.Context, w0, rho []float64, maxIter int) (w []float64, unbounded bool, err error) {
	var (
		evalErr error
		lastW   []float64
		lastSep bool
	)
	f := func(w, grad []float64) float64 {
		if evalErr != nil {
			return math.NaN()
		}
		val, sep, err := c.eval(w, grad, rho, ctx.Err() != nil)
		if err != nil {
			evalErr = err
			return math.NaN()
		}
		lastW = append(lastW[:0], w...)
		lastSep = sep
		return val
	}
	lower := make([]float64, len(w0))
	grad := make([]float64, len(w0))
	f0 := f(w0, grad)
	if evalErr != nil {
		return nil, false, evalErr
	}
	settings := corrective.Settings(maxIter)
	if c.loss == boost.Exp {
		g := make([]float64, len(rho))
		settings.Callback = func(it engine.MinimizeIteration) bool {
			if evalErr != nil {
				return false
			}
			if slices.Equal(it.X, lastW) {
				unbounded = lastSep
				return !unbounded
			}
			tr, err := c.marginsOf(g, it.X)
			if err == nil {
				unbounded, err = c.separated(g, tr)
			}
			if err != nil {
				evalErr = err
				return false
			}
			return !unbounded
		}
	}
	// Never cancelled: every rank must take the same steps (see above).
	res, err := c.lp.b.Minimize(context.Background(), engine.Problem{Func: f, Lower: lower}, w0, settings)
	if evalErr != nil {
		return nil, false, evalErr
	}
	if w, err = corrective.Accept(res, err, f0); err != nil {
		return nil, false, fmt.Errorf("distributed: totally corrective step: %w", err)
	}
	f(w, grad) // leaves the margins of w in rho
	if evalErr != nil {
		return nil, false, evalErr
	}
	return w, unbounded, nil
}
