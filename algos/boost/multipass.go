package boost

import (
	"context"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine"
	"gonum.org/v1/gonum/mat"
)

// MultiPass runs BoostMetric passes times (JMLR 2012, Section 3.7). Pass 1
// learns X_1 on the rows of x from ts (generated from the labels y with k
// targets × k impostors per point when ts is nil). Every later pass factors
// the metric learned so far as L Lᵀ, regenerates the triplets from the
// transformed points Lᵀa_i, learns X_p on them and composes: the result is
// L X_p Lᵀ, kept as rank-one terms (the unit vectors L v_j/‖L v_j‖ with
// weights w_j ‖L v_j‖²). Iterations and Curve accumulate over the passes.
// A pass that learns no term ends the run with the metric of the passes before.
// Options.Monitor watches every pass (and keeps its terms); a PassMonitor
// is told where each pass starts.
//
// On cancellation MultiPass returns the best iterate so far with Stop =
// StopCancelled and an error wrapping ctx.Err(): during the first pass, the
// metric of its completed iterations (see BoostMetric); during a later pass,
// the metric of the passes completed before it (a pass starts again from the
// zero metric on the transformed points, so its partial terms are not a
// better metric), with Iterations and Curve of those passes only.
func MultiPass(ctx context.Context, x *mat.Dense, y []int, k, passes int, ts *constraints.TripletSet, opt Options) (*Result, error) {
	if x == nil {
		return nil, fmt.Errorf("%w: nil data", ErrInvalid)
	}
	n, d := x.Dims()
	if len(y) != n {
		return nil, fmt.Errorf("%w: %d labels for %d points", ErrInvalid, len(y), n)
	}
	if passes < 1 {
		passes = 1
	}
	if k <= 0 {
		k = 3
	}
	b := engine.Or(opt.Backend)
	opt.Backend = b
	if ts == nil {
		var err error
		if ts, err = makeTriplets(b, x, y, k); err != nil {
			return nil, err
		}
	}
	var (
		total *Result
		l     *mat.Dense // D×r transform of the passes so far (nil: identity)
		cur   = x
	)
	for p := 1; p <= passes; p++ {
		if p > 1 {
			if err := ctx.Err(); err != nil {
				total.Stop = StopCancelled
				return total, fmt.Errorf("boost: pass %d: %w", p, err)
			}
			var err error
			if ts, err = makeTriplets(b, cur, y, k); err != nil {
				return nil, fmt.Errorf("boost: pass %d: %w", p, err)
			}
		}
		if pm, ok := opt.Monitor.(PassMonitor); ok {
			pm.StartPass(p, l)
		}
		res, err := BoostMetric(ctx, cur, ts, opt)
		if err != nil {
			if ctx.Err() == nil || res == nil {
				return nil, fmt.Errorf("boost: pass %d: %w", p, err)
			}
			if total == nil {
				return res, fmt.Errorf("boost: pass %d: %w", p, err)
			}
			total.Stop = StopCancelled
			return total, fmt.Errorf("boost: pass %d: %w", p, err)
		}
		if len(res.W) == 0 {
			if total == nil {
				total = res
			}
			break
		}
		if l != nil {
			res = compose(l, res)
		}
		if total != nil {
			res.Iterations += total.Iterations
			res.SingleIterations += total.SingleIterations
			res.Curve = append(total.Curve, res.Curve...)
			res.Lambda = append(total.Lambda, res.Lambda...)
		}
		total = res
		if p == passes {
			break
		}
		if l, err = factor(b, total, d); err != nil {
			return nil, fmt.Errorf("boost: pass %d: %w", p, err)
		}
		var z mat.Dense
		z.Mul(x, l)
		cur = &z
	}
	return total, nil
}

// compose maps the terms of res, learned on the points Lᵀa, back to the
// input space: L X Lᵀ = Σ_j w_j (L v_j)(L v_j)ᵀ.
func compose(l *mat.Dense, res *Result) *Result {
	d, _ := l.Dims()
	out := *res
	var lv mat.Dense
	lv.Mul(l, res.V)
	_, j := lv.Dims()
	out.V = mat.NewDense(d, j, nil)
	out.W = make([]float64, j)
	for c := 0; c < j; c++ {
		col := mat.Col(nil, c, &lv)
		var s float64
		for _, e := range col {
			s += e * e
		}
		normalize(col)
		out.V.SetCol(c, col)
		out.W[c] = res.W[c] * s
	}
	return &out
}

// factor returns L with X = L Lᵀ for the learned metric: the rank-one
// factor (D×J) when J ≤ D, else U Λ^½ from the positive eigenpairs of X.
func factor(b engine.Backend, res *Result, d int) (*mat.Dense, error) {
	if len(res.W) <= d {
		return res.Factor(), nil
	}
	e, err := b.SymEig(res.Matrix(d), engine.PositivePart(0), true)
	if err != nil {
		return nil, fmt.Errorf("boost: factoring the metric: %w", err)
	}
	r := len(e.Values)
	if r == 0 {
		return nil, fmt.Errorf("boost: factoring the metric: no positive eigenvalue")
	}
	l := mat.NewDense(d, r, nil)
	for c := 0; c < r; c++ {
		s := math.Sqrt(e.Values[c])
		for i := 0; i < d; i++ {
			l.Set(i, c, s*e.Vectors.At(i, c))
		}
	}
	return l, nil
}

// makeTriplets builds the triplets of DESIGN §4 with constraints.Triplets:
// for every point its k nearest same-class points (targets) × its k nearest
// other-class points (impostors), by exact Euclidean k-NN on the rows of x.
func makeTriplets(b engine.Backend, x *mat.Dense, y []int, k int) (*constraints.TripletSet, error) {
	ts, err := constraints.TripletsBLAS(b.BLAS(), x, y, k)
	if err != nil {
		return nil, fmt.Errorf("boost: triplets: %w", err)
	}
	return ts, nil
}
