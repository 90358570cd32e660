package boost

import (
	"context"
	"fmt"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/internal/locality"
	"gonum.org/v1/gonum/mat"
)

// BoostMetric learns a metric on the rows of x from the triplets ts by
// boosting rank-one terms (JMLR 2012, Algorithms 3 and 4); see boostMetric
// for the method and its stopping rule.
//
// The problem is made scale-free by construction: BoostMetric learns on the
// normalised data x/s, with s = data.RMSDeviation(x) (Result.Scale), and
// returns the metric in the units of x, W scaled by 1/s². Multiplying the
// data by c therefore multiplies W by 1/c² and leaves every distance, every
// triplet margin and the run itself unchanged. ν, Tol and the quantities the
// run reports (Objective, Curve, Lambda, Progress) are those of x/s: ν = 1e-7
// means the same thing for pixel intensities and for standardised features.
func BoostMetric(ctx context.Context, x *mat.Dense, ts *constraints.TripletSet, opt Options) (*Result, error) {
	return normalized(ctx, x, ts, opt, boostMetric)
}

// PSDBoost learns a metric on the rows of x from the triplets ts with the
// hinge loss by column generation (NIPS 2008); see psdBoost for the method
// and its certificate.
//
// Like BoostMetric it learns on x/s with s = data.RMSDeviation(x)
// (Result.Scale) and returns W in the units of x (scaled by 1/s², so
// tr X = 1/s²). C, ε and the reported π, gaps, duals U and Lambda are those
// of the trace-one problem on x/s, so they do not depend on the data's units.
func PSDBoost(ctx context.Context, x *mat.Dense, ts *constraints.TripletSet, opt Options) (*Result, error) {
	return normalized(ctx, x, ts, opt, psdBoost)
}

// normalized runs solve on x/s and rescales the learned weights to x.
func normalized(ctx context.Context, x *mat.Dense, ts *constraints.TripletSet, opt Options,
	solve func(context.Context, *mat.Dense, *constraints.TripletSet, Options) (*Result, error)) (*Result, error) {
	if err := validate(x, ts); err != nil {
		return nil, err
	}
	xs, s, err := data.Normalize(x)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	xs, ts, err = locality.Apply(xs, ts)
	if err != nil {
		return nil, fmt.Errorf("boost: %w", err)
	}
	res, err := solve(ctx, xs, ts, opt)
	if res != nil {
		res.Scale = s
		inv := 1 / (s * s)
		for j := range res.W {
			res.W[j] *= inv
		}
	}
	return res, err
}
