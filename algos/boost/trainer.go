package boost

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/grid"
	"github.com/psdlearn/psdlearn/progress"
	"github.com/psdlearn/psdlearn/train"
	"gonum.org/v1/gonum/mat"
)

func init() {
	train.Register("boostmetric", trainBoostMetric)
	train.Register("psdboost", trainPSDBoost)
}

// DefaultViolationFractions gives the C values the psdboost trainer chooses
// among on the validation set when none is given: C = 1/f, i.e. the LP's
// per-triplet slack weight C/m = 1/(f·m) for m triplets, so that roughly a
// fraction f of the triplets may violate the margin.
var DefaultViolationFractions = []float64{0.5, 0.2, 0.1, 0.05}

// trainBoostMetric is the "boostmetric" trainer: exponential (default) or
// logistic loss, stage-wise (default) or totally corrective, Passes passes
// (triplets regenerated with in.K targets × in.K impostors per point); the
// hinge loss runs PSDBoost. Cancelled, it returns the metric learned so far
// (not validated) with an error wrapping ctx.Err().
func trainBoostMetric(ctx context.Context, in train.Input) (train.Output, error) {
	o := in.Options
	if o.Loss == "hinge" {
		return trainPSDBoost(ctx, in)
	}
	out := train.Output{DualityGap: math.NaN(), ValError: math.NaN(), ChosenC: math.NaN()}
	if err := checkInput(in); err != nil {
		return out, err
	}
	opt, err := baseOptions(in)
	if err != nil {
		return out, err
	}
	if o.Loss != "" {
		if opt.Loss, err = ParseLoss(o.Loss); err != nil {
			return out, err
		}
	}
	if o.Mode != "" {
		if opt.Mode, err = ParseMode(o.Mode); err != nil {
			return out, err
		}
	}
	if opt.Precision, err = ParsePrecision(o.Precision); err != nil {
		return out, err
	}
	if len(o.C) > 0 {
		return out, fmt.Errorf("%w: --C applies to the hinge loss (psdboost) only", ErrInvalid)
	}
	opt.Nu = o.Nu
	if in.Progress != nil {
		opt.Progress = progress.Prefix(in.Progress, fmt.Sprintf("boostmetric %s/%s: ", opt.Loss, opt.Mode))
	}
	var capNote string
	if o.Iters == 0 && o.Passes <= 1 && opt.Mode == Stagewise && in.Val != nil && in.Val.Len() > 0 {
		opt.Extend = extendOnValidation(in, opt.Backend, &capNote)
	}
	var res *Result
	t0 := time.Now()
	if o.Passes > 1 {
		res, err = MultiPass(ctx, in.Train.X, in.Train.Y, kOf(in), o.Passes, in.Triplets, opt)
	} else {
		res, err = BoostMetric(ctx, in.Train.X, in.Triplets, opt)
	}
	if res != nil {
		out.Solves = append(out.Solves, train.Solve{C: math.NaN(), Seconds: time.Since(t0).Seconds(), Iterations: res.Iterations, Converged: converged(res) && err == nil, Reason: res.Stop.String(), SingleIterations: res.SingleIterations})
	}
	if err != nil {
		if ctx.Err() != nil && res != nil {
			// Cancelled: the metric learned so far, not validated.
			fillOutput(&out, res, in.Train.Dim())
		}
		return out, err
	}
	fillOutput(&out, res, in.Train.Dim())
	if capNote != "" {
		out.Reason += "; " + capNote
	}
	if !out.Converged {
		out.Warnings = append(out.Warnings, fmt.Sprintf("boostmetric %s/%s: not converged (%s) after %d iterations", opt.Loss, opt.Mode, out.Reason, res.Iterations))
	}
	// Nothing is chosen on the validation set, so it is not searched here
	// (ValError stays NaN): train.Experiment scores the returned metric.
	if in.Progress != nil {
		in.Progress(progress.Event{Algorithm: "boostmetric", Iteration: len(res.W), Objective: res.Objective, Gap: math.NaN(),
			Message: fmt.Sprintf("boostmetric: %d terms, stopped: %s, objective %.10g", len(res.W), res.Stop, res.Objective)})
	}
	return out, nil
}

// fillOutput copies the metric and the summary of res into out.
func fillOutput(out *train.Output, res *Result, d int) {
	out.M = res.Matrix(d)
	out.Iterations = res.Iterations
	out.Objective = res.Objective
	out.Curve = res.Curve
	if !math.IsNaN(res.DualityGap) {
		out.DualityGap = res.DualityGap
	}
	out.Converged = converged(res)
	out.Reason = res.Stop.String()
}

// converged reports whether a run stopped by its own criterion: no term
// improves the objective (StopConverged), or, with the exponential loss, the
// objective is unbounded below because the triplets are separable
// (StopUnbounded: there is no optimum to certify; the metric's direction is
// learned, its scale is arbitrary). Iteration limits, PSDBoost stalls and
// cancellations are not convergence.
func converged(res *Result) bool {
	return res.Stop == StopConverged || res.Stop == StopUnbounded
}

// trainPSDBoost is the "psdboost" trainer (hinge loss by column generation).
// With several C values it learns one metric per value and keeps the one
// with the lowest validation k-NN error (ties keep the smaller C, as every
// trainer does: train.SelectC). C has the meaning it has for FrobMetric:
// the LP's weight on each triplet's slack is C/m for m triplets, so one C
// means the same trade-off whatever the number of triplets. Cancelled, it returns the best metric of the values of C
// completed before, or else the metric learned so far for the current one.
func trainPSDBoost(ctx context.Context, in train.Input) (train.Output, error) {
	out := train.Output{DualityGap: math.NaN(), ValError: math.NaN(), ChosenC: math.NaN()}
	if err := checkInput(in); err != nil {
		return out, err
	}
	if in.Options.Loss != "" && in.Options.Loss != "hinge" {
		return out, fmt.Errorf("%w: psdboost uses the hinge loss, not %q (use --algo boostmetric)", ErrInvalid, in.Options.Loss)
	}
	if in.Options.Passes > 1 {
		return out, fmt.Errorf("%w: multi-pass is implemented for the exponential and logistic losses", ErrInvalid)
	}
	opt, err := baseOptions(in)
	if err != nil {
		return out, err
	}
	opt.Loss = Hinge
	m := float64(in.Triplets.Len())
	cs := append([]float64(nil), in.Options.C...)
	if len(cs) == 0 {
		for _, f := range DefaultViolationFractions {
			cs = append(cs, 1/f)
		}
	}
	sort.Float64s(cs)
	for _, c := range cs {
		// Checked in the caller's units before any solve: C/m is the LP's
		// weight on each slack, which must be at least 1/m.
		if !(c >= 1) || math.IsInf(c, 0) {
			return out, fmt.Errorf("%w: psdboost C = %g: want C ≥ 1 (the per-triplet slack weight C/m below 1/m leaves the LP unbounded)", ErrInvalid, c)
		}
		if err := checkPSDOptions(c/m, 0); err != nil {
			return out, fmt.Errorf("psdboost C = %g: %w", c, err)
		}
	}
	if len(cs) > 1 && (in.Val == nil || in.Val.Len() == 0) {
		return out, fmt.Errorf("%w: choosing among %d values of C needs a validation set", ErrInvalid, len(cs))
	}
	best, chosen, bestErr, err := train.SelectC(cs, func(c float64) (*Result, float64, error) {
		opt.C = c / m // the LP's weight on each slack
		if in.Progress != nil {
			opt.Progress = progress.Prefix(in.Progress, fmt.Sprintf("psdboost C=%.4g: ", c))
		}
		t0 := time.Now()
		res, err := PSDBoost(ctx, in.Train.X, in.Triplets, opt)
		if res != nil {
			out.Solves = append(out.Solves, train.Solve{C: c, Seconds: time.Since(t0).Seconds(), Iterations: res.Iterations, Converged: converged(res) && err == nil, Reason: res.Stop.String()})
		}
		if err != nil {
			return res, math.NaN(), fmt.Errorf("psdboost C=%g: %w", c, err)
		}
		if !converged(res) {
			out.Warnings = append(out.Warnings, fmt.Sprintf("psdboost C=%g: not converged (%s) after %d iterations, λmax − π = %.3g", c, res.Stop, res.Iterations, res.SDPGap))
		}
		valErr := math.NaN()
		if in.Val != nil && in.Val.Len() > 0 && len(cs) > 1 { // one C: nothing to choose
			if valErr, err = resultKNNError(opt.Backend, res, in, kOf(in)); err != nil {
				return nil, math.NaN(), err
			}
		}
		if in.Progress != nil {
			in.Progress(progress.Event{Algorithm: "psdboost", Iteration: res.Iterations, Objective: res.Pi, Gap: res.SDPGap,
				Message: fmt.Sprintf("psdboost C=%g: %d iterations (%s), π %.10g, LP duality gap %.3g, λmax − π %.3g, validation %d-NN error %.4f",
					c, res.Iterations, res.Stop, res.Pi, res.DualityGap, res.SDPGap, kOf(in), valErr)})
		}
		return res, valErr, nil
	})
	if err != nil {
		// Cancelled: hand back the best metric so far, or else the
		// interrupted solve's iterate.
		if ctx.Err() != nil && best != nil {
			fillOutput(&out, best, in.Train.Dim())
			out.ChosenC = chosen
			out.ValError = bestErr
		}
		return out, err
	}
	fillOutput(&out, best, in.Train.Dim())
	out.ChosenC = chosen
	out.DualityGap = best.DualityGap
	out.ValError = bestErr
	return out, nil
}

func checkInput(in train.Input) error {
	if in.Train == nil || in.Train.X == nil || in.Triplets == nil {
		return fmt.Errorf("%w: training data and triplets are required", ErrInvalid)
	}
	return nil
}

func kOf(in train.Input) int {
	if in.K > 0 {
		return in.K
	}
	return 3
}

// baseOptions maps the options common to both trainers.
func baseOptions(in train.Input) (Options, error) {
	if in.Options.Iters < 0 {
		return Options{}, fmt.Errorf("%w: --iters %d", ErrInvalid, in.Options.Iters)
	}
	if in.Options.Passes < 0 {
		return Options{}, fmt.Errorf("%w: --passes %d", ErrInvalid, in.Options.Passes)
	}
	return Options{Iters: in.Options.Iters, Backend: engine.Or(in.Backend), Seed: in.Seed}, nil
}

// resultKNNError is the validation k-NN error of a learned metric (see
// eval.FactorKNNError: the rule the reports use).
func resultKNNError(b engine.Backend, res *Result, in train.Input, k int) (float64, error) {
	l := res.Factor()
	if l == nil {
		return math.NaN(), nil
	}
	e, err := eval.FactorKNNError(b, l, in.Train.X, in.Train.Y, in.Val.X, in.Val.Y, k)
	if err != nil {
		return 0, fmt.Errorf("boost: validation: %w", err)
	}
	return e, nil
}

// extendOnValidation is the iteration limit of the stage-wise boostmetric
// trainer when none is given: the algorithm's default (500 terms), doubled
// at most grid.DefaultMaxDoublings times while the validation k-NN error of
// the model at the limit is clearly below (grid.ClearlyBetter) that of the
// model at half the limit — the first half of its terms with their
// weights, which in the stage-wise mode is exactly the earlier model. The
// totally corrective mode re-weights every term at every iteration, so the
// first half of its terms is not its earlier model: it keeps the limit, as
// do multi-pass runs.
// note receives what was decided, for the run's reason.
func extendOnValidation(in train.Input, b engine.Backend, note *string) func(int, *Result) int {
	k := kOf(in)
	doublings := 0
	valErr := func(r *Result, j int) float64 {
		if r.V == nil || j < 1 {
			return math.NaN()
		}
		d, n := r.V.Dims()
		j = min(j, n)
		l := mat.NewDense(d, j, nil)
		for c := 0; c < j; c++ {
			s := math.Sqrt(r.W[c])
			for i := 0; i < d; i++ {
				l.Set(i, c, s*r.V.At(i, c))
			}
		}
		e, err := eval.FactorKNNError(b, l, in.Train.X, in.Train.Y, in.Val.X, in.Val.Y, k)
		if err != nil {
			return math.NaN()
		}
		return e
	}
	return func(it int, r *Result) int {
		_, terms := r.V.Dims()
		half, full := valErr(r, terms/2), valErr(r, terms)
		if doublings < grid.DefaultMaxDoublings && grid.ClearlyBetter(half, full, in.Val.Len()) {
			doublings++
			*note = fmt.Sprintf("limit doubled %d times to %d: validation error %.4f at %d iterations, %.4f at half", doublings, 2*it, full, it, half)
			return it
		}
		if doublings == 0 {
			*note = fmt.Sprintf("validation error %.4f at the limit of %d iterations, %.4f at half: no clear gain from more", full, it, half)
		}
		return 0
	}
}
