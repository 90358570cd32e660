package lmnn

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/train"
)

func init() { train.Register("lmnn", Trainer(0)) }

// Trainer returns the train.Trainer of LMNN with push weight mu (0: the
// default 0.5) unless the input's Options.Mu (--mu) sets another. It is
// registered as "lmnn" with the default.
//
// It learns from the labelled training rows: the target neighbours are
// those of in.Triplets (built from the labels by the experiment protocol),
// the impostors come from the labels. Options.Iters bounds the iterations
// (0: 1000); Options.Rank > 0 (--rank) selects the low-rank factor
// (Options.Rank of Learn); LMNN has no C, so Options.C must be empty. The
// validation rows are not used (ValError is NaN: nothing is chosen). On cancellation the output
// holds the current iterate next to the error.
func Trainer(mu float64) train.Trainer {
	return func(ctx context.Context, in train.Input) (train.Output, error) {
		out := train.Output{DualityGap: math.NaN(), ValError: math.NaN(), ChosenC: math.NaN(), GapTol: math.NaN()}
		if in.Train == nil || in.Train.X == nil || in.Triplets == nil {
			return out, fmt.Errorf("%w: lmnn needs training data and its triplets", ErrInput)
		}
		if in.Train.Y == nil {
			return out, fmt.Errorf("%w: lmnn learns from class labels (impostors are differently-labelled points); it cannot learn from a constraint file alone", ErrInput)
		}
		if in.Options.Iters < 0 {
			return out, fmt.Errorf("%w: iteration limit %d, want > 0 (or 0 for the default)", ErrInput, in.Options.Iters)
		}
		if len(in.Options.C) > 0 {
			return out, fmt.Errorf("%w: lmnn has no C (got %v)", ErrInput, in.Options.C)
		}
		opt := Options{Mu: mu, MaxIter: in.Options.Iters, Rank: in.Options.Rank, Progress: in.Progress}
		if in.Options.Mu != 0 {
			opt.Mu = in.Options.Mu
		}
		if err := opt.validate(); err != nil {
			return out, err
		}
		if _, d := in.Train.X.Dims(); opt.Rank > d {
			return out, fmt.Errorf("%w: rank %d above the dimension %d of the training data (after preprocessing); want 1 ≤ rank ≤ %d, or 0 for the full-rank M", ErrInput, opt.Rank, d, d)
		}
		k := in.K
		if k <= 0 {
			k = 3
		}
		b := engine.Or(in.Backend)
		opt.Backend = b
		t0 := time.Now()
		res, err := Learn(ctx, in.Train.X, in.Train.Y, in.Triplets, opt)
		if res == nil {
			return out, err
		}
		out.M = res.M
		out.Iterations = res.Iterations
		out.Objective = res.Objective
		out.Curve = res.Curve
		out.Converged = res.Converged && err == nil
		out.Reason = res.Reason
		out.Solves = []train.Solve{{C: math.NaN(), Seconds: time.Since(t0).Seconds(), Iterations: res.Iterations, Converged: out.Converged, Reason: res.Reason}}
		if err != nil {
			return out, err
		}
		if !res.Converged {
			out.Warnings = append(out.Warnings, fmt.Sprintf("lmnn: not converged after %d iterations: %s", res.Iterations, res.Reason))
		}
		if res.Truncated > 0 {
			out.Warnings = append(out.Warnings, fmt.Sprintf("lmnn: the last impostor search was cut at %d neighbours for %d of %d points: impostors beyond them were not seen",
				DefaultCandidates, res.Truncated, in.Train.Len()))
		}
		return out, nil
	}
}
