package psdlearn

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/grid"
	"github.com/psdlearn/psdlearn/model"
	"gonum.org/v1/gonum/mat"
)

// BoostFirstCheck is where BoostMetric's default stopping (Iters = 0 with
// validation rows and one pass) first scores its model: the validation
// k-NN error of the terms learned so far is measured after BoostFirstCheck
// iterations, after every doubling of that number (25, 50, 100, 200, …)
// and at the iteration limit. More terms must lower it:
//   - the run stops at the first score that is not below the lowest one
//     before it, and keeps the terms of that lowest score (the earlier
//     terms on a tie); a run that ends otherwise (converged, or at the
//     limit) keeps its final terms unless their error is above the lowest
//     score;
//   - in the stage-wise mode, the limit (DefaultBoostIters) is doubled at
//     most grid.DefaultMaxDoublings times while the model at the limit is
//     clearly better (grid.ClearlyBetter) than the model at half the
//     limit (the first half of its terms, which in that mode is exactly
//     the earlier model).
//
// Each doubling of the terms at least doubles a run's cost (a totally
// corrective iteration costs more as terms accumulate), so a doubling that
// does not pay on the validation rows ends the run. The totally corrective
// mode re-weights every term at every iteration: its kept terms carry the
// weights of the iteration that scored them.
const BoostFirstCheck = 25

// termScore is the validation error of the model after Iter iterations.
type termScore struct {
	iter int
	err  float64
}

// A termChooser is BoostMetric's default stopping on validation rows (see
// BoostFirstCheck): the run's boost.PassMonitor and, stage-wise, its
// Extend. Its state is that of the current pass.
type termChooser struct {
	p         *Problem
	pass      int
	l         *mat.Dense // the pass's input transform (nil: identity)
	limit     int        // the iteration limit, DefaultBoostIters doubled by extend
	doublings int
	scores    []termScore
	best      termScore     // the lowest error scored (the earlier on a tie)
	kept      *boost.Result // the terms of best, copied
	extended  string        // what extend decided
	notes     []string      // what each pass decided, for the solve's reason
	// score is the validation error of the first j terms of r
	// (valError; tests script it).
	score func(r *boost.Result, j int) float64
	n     int // validation rows
}

func newTermChooser(p *Problem) *termChooser {
	c := &termChooser{p: p, n: len(p.ValY)}
	c.score = c.valError
	c.StartPass(1, nil)
	return c
}

// StartPass resets the choice for pass p, learned on the points Lᵀa_i.
func (c *termChooser) StartPass(p int, l *mat.Dense) {
	c.pass, c.l, c.limit, c.doublings = p, l, DefaultBoostIters, 0
	c.scores, c.best, c.kept, c.extended = nil, termScore{err: math.NaN()}, nil, ""
}

// Due reports whether it is a checkpoint: BoostFirstCheck times a power of
// two, or the limit.
func (c *termChooser) Due(it int) bool {
	if it == c.limit {
		return true
	}
	q := it / BoostFirstCheck
	return it%BoostFirstCheck == 0 && q&(q-1) == 0
}

// Check scores the terms after iteration it, keeps a copy of the best, and
// stops the run when the error is not below the best.
func (c *termChooser) Check(it int, r *boost.Result) bool {
	e := c.score(r, len(r.W))
	c.scores = append(c.scores, termScore{it, e})
	if math.IsNaN(e) {
		return false
	}
	if math.IsNaN(c.best.err) || e < c.best.err {
		c.best = termScore{it, e}
		kept := *r
		if r.V != nil {
			kept.V = mat.DenseCopyOf(r.V)
		}
		kept.W = slices.Clone(r.W)
		c.kept = &kept
		return false
	}
	return true
}

// extend is the stage-wise run's Extend: it doubles the limit while the
// model at the limit (scored by Check just before) is clearly better than
// the model at half the limit.
func (c *termChooser) extend(it int, r *boost.Result) int {
	full := c.last(it)
	half := c.score(r, len(r.W)/2)
	if c.doublings < grid.DefaultMaxDoublings && grid.ClearlyBetter(half, full, c.n) {
		c.doublings++
		c.limit += it
		c.extended = fmt.Sprintf("limit doubled %d times to %d: validation error %.4f at %d iterations, %.4f at half", c.doublings, c.limit, full, it, half)
		return it
	}
	if c.doublings == 0 {
		c.extended = fmt.Sprintf("validation error %.4f at the limit of %d iterations, %.4f at half: no clear gain from more", full, it, half)
	}
	return 0
}

// last returns the error scored at iteration it (NaN if none).
func (c *termChooser) last(it int) float64 {
	if n := len(c.scores); n > 0 && c.scores[n-1].iter == it {
		return c.scores[n-1].err
	}
	return math.NaN()
}

// Keep returns the terms the pass keeps, res or the best scored ones, and
// notes the choice.
func (c *termChooser) Keep(res *boost.Result) *boost.Result {
	kept, note := c.choose(res)
	if note != "" && c.pass > 1 {
		note = fmt.Sprintf("pass %d: %s", c.pass, note)
	}
	c.notes = append(c.notes, note)
	return kept
}

// note is what the passes decided.
func (c *termChooser) note() string { return join(c.notes...) }

// choose returns the terms the pass keeps and a note on the choice.
func (c *termChooser) choose(res *boost.Result) (*boost.Result, string) {
	if c.kept == nil {
		return res, c.extended
	}
	final := c.last(res.Iterations)
	if math.IsNaN(final) && res.Stop != boost.StopMonitor {
		final = c.score(res, len(res.W))
	}
	if c.best.iter == res.Iterations || res.Stop != boost.StopMonitor && (math.IsNaN(final) || final <= c.best.err) {
		return res, join(c.extended, fmt.Sprintf("kept the final terms, validation error %.4f (scored at %s)", final, c.scoredAt()))
	}
	kept := *res
	kept.V, kept.W, kept.Objective = c.kept.V, c.kept.W, c.kept.Objective
	return &kept, fmt.Sprintf("kept the %d terms of iteration %d, validation error %.4f; %.4f after %d iterations (scored at %s)",
		len(kept.W), c.best.iter, c.best.err, final, res.Iterations, c.scoredAt())
}

// scoredAt lists the checkpoints and their errors.
func (c *termChooser) scoredAt() string {
	s := ""
	for i, p := range c.scores {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%d: %.4f", p.iter, p.err)
	}
	return s
}

// valError is the validation k-NN error of the first j terms of r (NaN
// when it cannot be measured), learned on the points Lᵀa_i of the pass.
// Up to D terms the factor F is their scaled directions; beyond, the D×D
// matrix is factored by the backend; the metric's factor is L F.
func (c *termChooser) valError(r *boost.Result, j int) float64 {
	if r.V == nil || j < 1 {
		return math.NaN()
	}
	d, n := r.V.Dims()
	j = min(j, n)
	prefix := &boost.Result{V: r.V.Slice(0, d, 0, j).(*mat.Dense), W: r.W[:j]}
	var l *mat.Dense
	if j <= d {
		l = prefix.Factor()
	} else {
		met, err := model.NewMetricFrom(prefix.Matrix(d), func(a *mat.SymDense) ([]float64, *mat.Dense, error) {
			e, err := c.p.Backend.SymEig(a, engine.EigRange{}, true)
			return e.Values, e.Vectors, err
		})
		if err != nil {
			return math.NaN()
		}
		l = met.L
	}
	if c.l != nil {
		var tl mat.Dense
		tl.Mul(c.l, l)
		l = &tl
	}
	if kd, ok := c.p.Dist.(KNNDistributor); ok {
		// A sharded solve: every process is at this checkpoint and scores
		// its block of the validation rows.
		e, err := kd.KNNErrors(c.p.Backend, l, c.p.X, c.p.Y, c.p.K, eval.Queries{X: c.p.ValX, Y: c.p.ValY})
		if err != nil {
			return math.NaN()
		}
		return e[0]
	}
	e, err := eval.FactorKNNError(c.p.Backend, l, c.p.X, c.p.Y, c.p.ValX, c.p.ValY, c.p.K)
	if err != nil {
		return math.NaN()
	}
	return e
}

// join joins the non-empty notes with "; ".
func join(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, "; ")
}
