package itml

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/progress"
	"github.com/psdlearn/psdlearn/train"
)

// DefaultGammas is the list of Gamma values (weights of the average slack
// divergence, see Options.Gamma) the itml trainer chooses among on the
// validation rows when train.Options.C is empty. Without validation rows it
// uses DefaultGamma alone. On letters (10,500 training rows) the three fits
// take about 0.35 s together and choose 30.
var DefaultGammas = []float64{3, 10, 30}

func init() { train.Register("itml", trainITML) }

// trainITML is the "itml" trainer. train.Options.C is read as the list of
// slack trade-offs Gamma (Options.Gamma: the weight of the average slack
// divergence, dimensionless; nil means DefaultGammas with validation rows,
// else DefaultGamma; several are chosen among on the
// validation rows by train.SelectC: the lowest k-NN error, ties to the
// smaller γ); Options.Iters bounds the cycles of each solve. The
// constraints are LabelPairs(Train.Y, 0, Seed) — 20·c² similar and 20·c²
// dissimilar pairs — when the training rows carry at least two classes;
// otherwise (a constraint file) they are the pairs of the triplets: (I,J)
// similar and (I,K) dissimilar. The triplets are otherwise not used.
func trainITML(ctx context.Context, in train.Input) (train.Output, error) {
	out := train.Output{DualityGap: math.NaN(), ValError: math.NaN(), ChosenC: math.NaN(), GapTol: math.NaN()}
	if in.Train == nil || in.Train.X == nil {
		return out, fmt.Errorf("%w: itml needs training data", ErrInvalid)
	}
	if in.Options.Iters < 0 {
		return out, fmt.Errorf("%w: iteration limit %d, want > 0 (or 0 for the default)", ErrInvalid, in.Options.Iters)
	}
	gammas := slices.Clone(in.Options.C)
	hasVal := in.Val != nil && in.Val.Len() > 0
	if len(gammas) == 0 {
		gammas = []float64{DefaultGamma}
		if hasVal {
			gammas = slices.Clone(DefaultGammas)
		}
	}
	for _, g := range gammas {
		if !(g > 0) {
			return out, fmt.Errorf("%w: γ = %v, want > 0", ErrInvalid, g)
		}
	}
	slices.Sort(gammas)
	if len(gammas) > 1 && !hasVal {
		return out, fmt.Errorf("%w: choosing among %d values of γ needs a validation set", ErrInvalid, len(gammas))
	}
	n, _ := in.Train.X.Dims()
	ps, err := trainerPairs(in, n)
	if err != nil {
		return out, err
	}
	k := in.K
	if k <= 0 {
		k = 3
	}
	b := engine.Or(in.Backend)
	best, chosen, bestErr, err := train.SelectC(gammas, func(g float64) (*Result, float64, error) {
		t0 := time.Now()
		res, err := Learn(ctx, in.Train.X, ps, Options{Gamma: g, MaxIter: in.Options.Iters, Backend: b, Progress: in.Progress})
		if res != nil {
			out.Solves = append(out.Solves, train.Solve{C: g, Seconds: time.Since(t0).Seconds(), Iterations: res.Iterations, Converged: res.Converged && err == nil, Reason: res.Reason})
		}
		if err != nil {
			return res, math.NaN(), fmt.Errorf("itml γ=%g: %w", g, err)
		}
		if !res.Converged {
			out.Warnings = append(out.Warnings, fmt.Sprintf("itml γ=%g: not converged: %s", g, res.Reason))
		}
		valErr := math.NaN()
		if hasVal {
			met, err := model.NewMetric(res.M)
			if err != nil {
				return nil, math.NaN(), fmt.Errorf("itml γ=%g: learned matrix: %w", g, err)
			}
			if valErr, err = eval.FactorKNNError(b, met.L, in.Train.X, in.Train.Y, in.Val.X, in.Val.Y, k); err != nil {
				return nil, math.NaN(), fmt.Errorf("itml γ=%g: validation: %w", g, err)
			}
		}
		if in.Progress != nil {
			in.Progress(progress.Event{Algorithm: "itml", Iteration: res.Iterations, Objective: math.NaN(), Gap: res.Change,
				Message: fmt.Sprintf("itml γ=%g: %d cycles, %d constraints (u = %.4g, l = %.4g), %s%s",
					g, res.Iterations, ps.Len(), res.U, res.L, res.Reason, progress.Number(fmt.Sprintf(", validation %d-NN error %%.4f", k), valErr, ""))})
		}
		if len(gammas) > 1 {
			out.Candidates = append(out.Candidates, train.Candidate{C: g, ValError: valErr, Iterations: res.Iterations, DualityGap: math.NaN(), Converged: res.Converged})
		}
		return res, valErr, nil
	})
	if best != nil && (err == nil || ctx.Err() != nil) {
		out.M = best.M
		out.Iterations = best.Iterations
		out.Objective = math.NaN()
		out.ChosenC = chosen
		out.ValError = bestErr
		out.Curve = best.Curve
		out.Converged = best.Converged && err == nil
		out.Reason = best.Reason
	}
	return out, err
}

// trainerPairs are the constraints of the trainer: sampled from the labels
// when there are two classes or more, else the pairs of the triplets.
func trainerPairs(in train.Input, n int) (*constraints.Pairs, error) {
	if len(in.Train.Y) == n {
		seen := map[int]bool{}
		for _, c := range in.Train.Y {
			seen[c] = true
		}
		if len(seen) >= 2 {
			return LabelPairs(in.Train.Y, 0, in.Seed)
		}
	}
	if in.Triplets == nil || in.Triplets.Len() == 0 {
		return nil, fmt.Errorf("%w: itml needs labels of two classes or more, or triplets", ErrInvalid)
	}
	return TripletPairs(in.Triplets)
}

// TripletPairs turns triplets (I, J, K) — I closer to J than to K — into
// pair constraints: (I, J) similar and (I, K) dissimilar, each distinct pair
// once, in the order first met. A pair that is similar in one triplet and
// dissimilar in another keeps its first role.
func TripletPairs(ts *constraints.TripletSet) (*constraints.Pairs, error) {
	if ts == nil {
		return nil, fmt.Errorf("%w: nil triplets", ErrInvalid)
	}
	seen := make(map[[2]int]bool, 2*ts.Len())
	list := make([]constraints.LabelledPair, 0, 2*ts.Len())
	add := func(a, b int, same bool) {
		key := [2]int{min(a, b), max(a, b)}
		if a == b || seen[key] {
			return
		}
		seen[key] = true
		list = append(list, constraints.LabelledPair{A: key[0], B: key[1], Same: same})
	}
	for _, t := range ts.Triplets {
		add(t.I, t.J, true)
		add(t.I, t.K, false)
	}
	ps, err := constraints.NewPairs(ts.N, list)
	if err != nil {
		return nil, fmt.Errorf("itml: %w", err)
	}
	return ps, nil
}
