package frob

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"time"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/grid"
	"github.com/psdlearn/psdlearn/progress"
	"github.com/psdlearn/psdlearn/train"
	"gonum.org/v1/gonum/mat"
)

// DefaultCs is the base of the list of C values the frobmetric trainer
// chooses among on the validation set when none is given: the grid on
// which the reference letters figure (2.84%) was measured, on standardised
// data. C is in the units of the normalised data (see Learn), so the same
// list serves data of any overall scale; DefaultPolicy scales it to the
// spread of the feature scales and extends it where the validation
// optimum sits at an edge.
var DefaultCs = []float64{0.1, 1, 10, 100}

// DefaultPolicy is the policy of C values of the frobmetric trainer when
// none is given, for training rows tr and validation rows val (nil: no
// validation), k neighbours. It starts from DefaultCs and, when the
// feature scales of the normalised training rows spread by at least one
// grid step (grid.FrobeniusScale ≥ grid.MinScale: about 1.5e10 for the raw
// wine features, whose deviations span 0.13 to 303; 1 for standardised
// data) and standardising them lowers the Euclidean k-NN validation error
// (grid.ScaleIfStandardisingHelps, on at most pilotMaxRows validation
// rows; on MNIST's principal components it raises it from 2.5% to 9.6%, on
// raw wine it lowers it from about 30% to 5%), adds DefaultCs multiplied by
// that factor (grid.Union): the validation rows then choose between C in
// the data's own units and C in the units of the standardised features
// (raw glass, whose refractive index varies by 0.2% of the data's scale,
// keeps C in its own units: the scaled values are worse there and their
// duals the worst conditioned). The list is extended by factors of ten
// beyond an edge where the validation optimum sits strictly
// (grid.Adaptive).
func DefaultPolicy(b engine.Backend, tr, val *data.Dataset, k int) (grid.Policy, error) {
	dev, err := data.RelativeDeviations(tr.X)
	if err != nil {
		return grid.Policy{}, fmt.Errorf("%w: %w", ErrInput, err)
	}
	f, err := grid.FrobeniusScale(dev)
	if err != nil {
		return grid.Policy{}, fmt.Errorf("%w: %w", ErrInput, err)
	}
	if f >= grid.MinScale && val != nil && val.Len() > 0 {
		// The Euclidean errors of the data as they are and standardised
		// (the factor diag(1/deviation) in the units of x).
		s, err := data.RMSDeviation(tr.X)
		if err != nil {
			return grid.Policy{}, fmt.Errorf("%w: %w", ErrInput, err)
		}
		d := len(dev)
		l := mat.NewDense(d, d, nil)
		for j, v := range dev {
			if v > 0 {
				l.Set(j, j, 1/(v*s))
			}
		}
		q := pilotRows(val)
		raw, err := eval.FactorKNNErrors(b, nil, tr.X, tr.Y, k, q)
		if err != nil {
			return grid.Policy{}, fmt.Errorf("frob: C policy: %w", err)
		}
		std, err := eval.FactorKNNErrors(b, l, tr.X, tr.Y, k, q)
		if err != nil {
			return grid.Policy{}, fmt.Errorf("frob: C policy: %w", err)
		}
		f = grid.ScaleIfStandardisingHelps(f, raw[0], std[0])
	} else {
		f = 1
	}
	return grid.Adaptive(grid.Union(DefaultCs, f), 1), nil
}

// pilotMaxRows bounds the validation rows of DefaultPolicy's comparison of
// the Euclidean errors: it decides between scales that differ by orders of
// magnitude, which a sample of rows tells apart as well as all of them
// (MNIST: 2.5% against 9.6% on 10,000 rows), at a fifth of the k-NN
// search there.
const pilotMaxRows = 2000

// pilotRows returns the rows of val DefaultPolicy compares on: all of them
// up to pilotMaxRows, else every ⌈n/pilotMaxRows⌉-th row.
func pilotRows(val *data.Dataset) eval.Queries {
	n := val.Len()
	if n <= pilotMaxRows {
		return eval.Queries{X: val.X, Y: val.Y}
	}
	step := (n + pilotMaxRows - 1) / pilotMaxRows
	var rows []int
	for i := 0; i < n; i += step {
		rows = append(rows, i)
	}
	sub := val.Subset(rows)
	return eval.Queries{X: sub.X, Y: sub.Y}
}

func init() { train.Register("frobmetric", trainFrobMetric) }

// trainFrobMetric learns one FrobMetric per C value — the values of
// Options.C, or without them those of DefaultPolicy: its initial list
// ascending, then its extensions beyond an edge — each warm started from
// the previous dual solution scaled into its box, and keeps the one with
// the lowest k-NN error on the validation rows; ties keep the smaller C.
// The test rows are never seen. When ctx is cancelled the output
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
	k := in.K
	if k <= 0 {
		k = 3
	}
	policy := grid.Fixed(in.Options.C)
	if len(in.Options.C) == 0 {
		var err error
		if policy, err = DefaultPolicy(engine.Or(in.Backend), in.Train, in.Val, k); err != nil {
			return out, err
		}
	}
	if err := policy.Validate(); err != nil {
		return out, fmt.Errorf("%w: %w", ErrInput, err)
	}
	cs := policy.Initial()
	if len(cs) > 1 && (in.Val == nil || in.Val.Len() == 0) {
		return out, fmt.Errorf("%w: choosing among %d values of C needs a validation set", ErrInput, len(cs))
	}
	out.CPolicy = policy.String()
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
	// With several candidates, each is solved to SelectGapTol (at most
	// selectMaxIter iterations) to be compared on the validation rows, and
	// only the chosen one is then solved to DefaultGapTol.
	selecting := len(cs) > 1
	options := func(c float64, final bool) MetricOptions {
		opt := MetricOptions{C: c, MaxIter: in.Options.Iters, WorkingSet: ws, Backend: b, Progress: in.Progress}
		if in.Options.Iters > 0 {
			// The limit bounds the Newton polish too, not only L-BFGS-B.
			opt.NewtonSteps = min(defaultNewtonSteps, in.Options.Iters)
		}
		if selecting && !final {
			opt.GapTol = SelectGapTol
			opt.MaxIter = min(cmp.Or(in.Options.Iters, selectMaxIter), selectMaxIter)
		}
		return opt
	}
	best, chosen, bestErr, tried, err := train.SelectCGrid(policy, func(c float64) (*MetricResult, float64, error) {
		opt := options(c, false)
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
		switch {
		case !res.Certified && !selecting:
			out.Warnings = append(out.Warnings, uncertified(c, res))
		case !res.Certified && in.Options.Iters > 0:
			// The user's limit, not the selection's own, stopped a
			// candidate short of the selection tolerance.
			out.Warnings = append(out.Warnings, fmt.Sprintf("frobmetric C=%g: candidate not solved to the selection tolerance (%s): relative duality gap %.3g above %.3g after %d iterations",
				c, res.Reason, res.RelGap, SelectGapTol, res.Iterations))
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
				Message: fmt.Sprintf("frobmetric C=%g: %d iterations, primal %.8g, rel. duality gap %.3g (%s), validation %d-NN error %.4f",
					c, res.Iterations, res.Primal, res.RelGap, res.Reason, k, valErr)})
		}
		if len(cs) > 1 {
			// Converged: the candidate reached SelectGapTol.
			out.Candidates = append(out.Candidates, train.Candidate{C: c, ValError: valErr, Iterations: res.Iterations, DualityGap: res.RelGap, Converged: res.Certified})
		}
		return res, valErr, nil
	})
	out.Searched = tried
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
	if selecting {
		// The chosen candidate, from its own dual point, to the certificate.
		opt := options(chosen, true)
		opt.U0 = best.U
		t0 := time.Now()
		res, err := Learn(ctx, in.Train.X, in.Triplets, opt)
		if res != nil {
			out.Solves = append(out.Solves, train.Solve{C: chosen, Seconds: time.Since(t0).Seconds(), Iterations: res.Iterations, Converged: res.Certified && err == nil, Reason: "chosen C to the certificate: " + res.Reason})
			res.Iterations += best.Iterations
		}
		if err != nil {
			fillOutput(&out, best, bestErr)
			return out, fmt.Errorf("frobmetric C=%g: %w", chosen, err)
		}
		best = res
		if in.Progress != nil {
			in.Progress(progress.Event{Algorithm: "frobmetric", Iteration: res.Iterations, Objective: res.Primal, Gap: res.RelGap,
				Message: fmt.Sprintf("frobmetric C=%g chosen: %d iterations, primal %.8g, rel. duality gap %.3g (%s)", chosen, res.Iterations, res.Primal, res.RelGap, res.Reason)})
		}
	}
	if !best.Certified && selecting {
		out.Warnings = append(out.Warnings, uncertified(chosen, best))
	}
	fillOutput(&out, best, bestErr)
	return out, nil
}

// uncertified is the warning of a solve that stopped short of DefaultGapTol.
func uncertified(c float64, res *MetricResult) string {
	return fmt.Sprintf("frobmetric C=%g: not certified (%s): relative duality gap %.3g above the tolerance %.3g after %d iterations",
		c, res.Reason, res.RelGap, DefaultGapTol, res.Iterations)
}

// SelectGapTol is the relative duality gap to which the frobmetric trainer
// solves each candidate value of C while it chooses among several on the
// validation rows (at most selectMaxIter L-BFGS-B iterations each); the
// chosen value is then solved to DefaultGapTol from its candidate's dual
// point, and only that solve's certificate is the model's. A candidate
// that stops short of SelectGapTol is reported in the candidates
// (converged false, with its gap); it adds a warning only when the user's
// iteration limit stopped it. A candidate's
// metric is within √(2·gap) of its optimum in Frobenius norm, which moves
// few k-NN decisions; solving the candidates no further saves most of the
// iterations of the candidates not chosen, and of the largest values of C,
// whose duals are the worst conditioned.
const SelectGapTol = 1e-3

// selectMaxIter bounds the L-BFGS-B iterations of one candidate.
const selectMaxIter = 2000

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
