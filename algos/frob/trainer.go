package frob

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/progress"
	"github.com/psdlearn/psdlearn/train"
)

// DefaultCs is the list of C values the frobmetric trainer chooses among on
// the validation set when none is given: the grid on which the reference
// letters figure (2.84%) was measured. C is in the units of the normalised
// data (see Learn), so the same list serves data of any scale.
var DefaultCs = []float64{0.1, 1, 10, 100}

func init() { train.Register("frobmetric", trainFrobMetric) }

// trainFrobMetric learns one FrobMetric per C value (ascending, each warm
// started from the previous dual solution scaled into its box) and keeps the
// one with the lowest k-NN error on the validation rows; ties keep the
// smaller C. The test rows are never seen. When ctx is cancelled the output
// holds the best metric so far (if any) next to the error.
//
// Every solve that stops without its certificate (relative duality gap above
// DefaultGapTol) adds a warning with its reason; Converged is the chosen
// solve's certificate. Options.Iters bounds the L-BFGS-B iterations and the
// Newton polish steps of each solve.
func trainFrobMetric(ctx context.Context, in train.Input) (train.Output, error) {
	out := train.Output{DualityGap: math.NaN(), ValError: math.NaN(), ChosenC: math.NaN(), GapTol: DefaultGapTol}
	if in.Train == nil || in.Train.X == nil || in.Triplets == nil {
		return out, fmt.Errorf("%w: frobmetric needs training data and triplets", ErrInput)
	}
	if in.Options.Iters < 0 {
		return out, fmt.Errorf("%w: iteration limit %d, want > 0 (or 0 for the default)", ErrInput, in.Options.Iters)
	}
	cs := append([]float64(nil), in.Options.C...)
	if len(cs) == 0 {
		cs = append(cs, DefaultCs...)
	}
	sort.Float64s(cs)
	if len(cs) > 1 && (in.Val == nil || in.Val.Len() == 0) {
		return out, fmt.Errorf("%w: choosing among %d values of C needs a validation set", ErrInput, len(cs))
	}
	k := in.K
	if k <= 0 {
		k = 3
	}
	if in.Options.Iters < 0 {
		return out, fmt.Errorf("%w: --iters %d: want a positive limit, or 0 for the default", ErrInput, in.Options.Iters)
	}
	ws, err := ParseWorkingSet(in.Options.WorkingSet)
	if err != nil {
		return out, err
	}
	b := engine.Or(in.Backend)
	var (
		prev  []float64
		prevC float64
	)
	best, chosen, bestErr, err := train.SelectC(cs, func(c float64) (*MetricResult, float64, error) {
		opt := MetricOptions{C: c, MaxIter: in.Options.Iters, WorkingSet: ws, Backend: b, Progress: in.Progress}
		if in.Options.Iters > 0 {
			// The limit bounds the Newton polish too, not only L-BFGS-B.
			opt.NewtonSteps = min(defaultNewtonSteps, in.Options.Iters)
		}
		if prev != nil { // warm start from the previous C's multipliers
			opt.U0 = make([]float64, len(prev))
			for i, v := range prev {
				opt.U0[i] = v * c / prevC
			}
		}
		t0 := time.Now()
		res, err := Learn(ctx, in.Train.X, in.Triplets, opt)
		if res != nil {
			out.Solves = append(out.Solves, train.Solve{C: c, Seconds: time.Since(t0).Seconds(), Iterations: res.Iterations, Converged: res.Certified && err == nil, Reason: res.Reason})
		}
		if err != nil {
			return res, math.NaN(), fmt.Errorf("frobmetric C=%g: %w", c, err)
		}
		prev, prevC = res.U, c
		if !res.Certified {
			out.Warnings = append(out.Warnings, fmt.Sprintf("frobmetric C=%g: not certified (%s): relative duality gap %.3g above the tolerance %.3g after %d iterations",
				c, res.Reason, res.RelGap, DefaultGapTol, res.Iterations))
		}
		valErr := math.NaN()
		if in.Val != nil && in.Val.Len() > 0 && len(cs) > 1 { // one C: nothing to choose
			valErr, err = eval.FactorKNNError(b, res.L, in.Train.X, in.Train.Y, in.Val.X, in.Val.Y, k)
			if err != nil {
				return nil, math.NaN(), fmt.Errorf("frobmetric C=%g: validation: %w", c, err)
			}
		}
		if in.Progress != nil {
			in.Progress(progress.Event{Algorithm: "frobmetric", Iteration: res.Iterations, Objective: res.Primal, Gap: res.RelGap,
				Message: fmt.Sprintf("frobmetric C=%g: %d iterations, primal %s, rel. duality gap %s (%s)%s",
					c, res.Iterations, progress.Number("%.8g", res.Primal, "n/a"), progress.Number("%.3g", res.RelGap, "n/a"), res.Reason,
					progress.Number(fmt.Sprintf(", validation %d-NN error %%.4f", k), valErr, ""))})
		}
		if len(cs) > 1 {
			out.Candidates = append(out.Candidates, train.Candidate{C: c, ValError: valErr, Iterations: res.Iterations, DualityGap: res.RelGap, Converged: res.Certified})
		}
		return res, valErr, nil
	})
	if err != nil {
		// Cancelled: hand back the best metric so far, the best validated
		// one or else the interrupted solve's iterate.
		if ctx.Err() != nil && best != nil {
			out.ChosenC = chosen
			fillOutput(&out, best, bestErr)
		}
		return out, err
	}
	out.ChosenC = chosen
	fillOutput(&out, best, bestErr)
	return out, nil
}

// fillOutput copies the chosen solution into out.
func fillOutput(out *train.Output, best *MetricResult, valErr float64) {
	out.M = best.M
	out.Iterations = best.Iterations
	out.Objective = best.Primal
	out.DualityGap = best.RelGap
	out.ValError = valErr
	if math.IsInf(valErr, 1) {
		out.ValError = math.NaN()
	}
	out.Curve = best.Curve
	out.Converged = best.Certified
	out.Reason = best.Reason
}

// defaultNewtonSteps is the Newton polish's step budget when
// MetricOptions.NewtonSteps is zero (see learnWhole).
const defaultNewtonSteps = 30
