package bench

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/algos/boost"
	_ "github.com/psdlearn/psdlearn/algos/boost" // registers boostmetric, psdboost
	_ "github.com/psdlearn/psdlearn/algos/frob"  // registers frobmetric
	"github.com/psdlearn/psdlearn/algos/meg"
	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/errs"
	"gonum.org/v1/gonum/mat"
)

// AlgoCases returns the cases of the "algos" suite: every algorithm on the
// bundled real data with the letters protocol of docs/howto-real-data.md (standardised
// features; small sets split 70/15/15 with the seed, letters by its fixed
// rows). Size is the number of training points (objects for the kernel
// learners). Each run reports its test error (metrics), clustering accuracy
// or 1-NN error (kernels) in Result.Metrics and its convergence curve when
// the algorithm has one.
//
// Every algorithm has a letters case (select them with Options.Case
// "letters"): BoostMetric, FrobMetric and PSDBoost on the fixed split
// (PSDBoost truncated to a bounded number of iterations, named so),
// SimpleNPKL clustering all 20,000 points, and DefiniteBoost and MEG on a
// 200-object subset of the training rows, since both keep dense N×N
// matrices (see letters.go). The letters cases take minutes each. The MVU
// cases unroll Swiss rolls of 2,000 and 20,000 points (see mvu.go). The
// fashion cases run BoostMetric and FrobMetric on Fashion-MNIST when the
// Debian package dataset-fashion-mnist is installed (see FashionCases). The
// deep case runs FrobMetric with one C on 20,000 generated points at
// D = 2,048, the comparison of the backends at deep-feature dimensions
// (see DeepCases).
func AlgoCases(seed uint64) []Case {
	var cases []Case
	for _, c := range []struct {
		data, split, algo, label string
		learner                  func(psdlearn.Common) psdlearn.Learner
	}{
		{"iris", data.DefaultSplit, "psdboost", "psdboost", func(c psdlearn.Common) psdlearn.Learner { return psdlearn.PSDBoost{Common: c} }},
		{"wine", data.DefaultSplit, "boostmetric", "boostmetric exp stage-wise", func(c psdlearn.Common) psdlearn.Learner {
			return psdlearn.BoostMetric{Common: c, Loss: boost.Exp, Mode: boost.Stagewise}
		}},
		{"wine", data.DefaultSplit, "boostmetric", "boostmetric logistic corrective", func(c psdlearn.Common) psdlearn.Learner {
			return psdlearn.BoostMetric{Common: c, Loss: boost.Logistic, Mode: boost.Corrective}
		}},
		{"wine", data.DefaultSplit, "frobmetric", "frobmetric", func(c psdlearn.Common) psdlearn.Learner { return psdlearn.FrobMetric{Common: c} }},
		{"letters", "rows:10500,4500,5000", "boostmetric", "boostmetric exp stage-wise", func(c psdlearn.Common) psdlearn.Learner {
			return psdlearn.BoostMetric{Common: c, Loss: boost.Exp, Mode: boost.Stagewise}
		}},
		{"letters", "rows:10500,4500,5000", "frobmetric", "frobmetric", func(c psdlearn.Common) psdlearn.Learner { return psdlearn.FrobMetric{Common: c} }},
	} {
		c := c
		parts, err := splitBuiltin(c.data, c.split, seed)
		size := 0
		if err == nil {
			size = parts[0].Len()
		}
		cases = append(cases, Case{Name: c.label, Size: size, Detail: c.data + " " + c.split, Setup: func(b engine.Backend) (func(context.Context) (Outcome, error), error) {
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context) (Outcome, error) {
				rep, err := runExperiment(ctx, c.learner(psdlearn.Common{Standardize: true, Seed: seed, Backend: b}), parts)
				if err != nil {
					return Outcome{}, err
				}
				m := map[string]float64{"test_error": rep.Eval.TestError, "euclidean_test_error": rep.Eval.EuclideanTestError}
				if !math.IsNaN(rep.DualityGap) {
					m["duality_gap"] = rep.DualityGap
				}
				return Outcome{Iterations: rep.Iterations, Metrics: m, Curve: rep.Curve}, nil
			}, nil
		}})
	}
	for _, c := range []struct {
		data string
		loss npkl.Loss
	}{{"iris", npkl.Linear}, {"iris", npkl.SquaredHinge}, {"wine", npkl.Linear}, {"wine", npkl.SquaredHinge}} {
		c := c
		d, err := datasets.Open(c.data)
		if err != nil {
			continue
		}
		cases = append(cases, Case{Name: "simplenpkl " + c.loss.String(), Size: d.Len(), Detail: c.data + ", 5 runs", Setup: func(b engine.Backend) (func(context.Context) (Outcome, error), error) {
			x, err := standardized(b, d.X)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context) (Outcome, error) {
				rep, err := psdlearn.Cluster(ctx, x, d.Y, psdlearn.ClusterOptions{Runs: 5, Seed: seed, Learn: npkl.Options{Loss: c.loss, Backend: b}})
				if err != nil {
					return Outcome{}, err
				}
				o := Outcome{Iterations: int(math.Round(rep.ItersMean)), Metrics: map[string]float64{"accuracy": rep.AccuracyMean, "accuracy_sd": rep.AccuracySD}}
				if len(rep.Runs) > 0 {
					o.Curve = rep.Runs[0].Objectives
				}
				return o, nil
			}, nil
		}})
	}
	if d, err := datasets.Open("wine"); err == nil {
		const objects = 52
		cases = append(cases, Case{Name: "definiteboost approx", Size: objects, Detail: "wine RBF target kernel, close-pair constraints", Setup: func(b engine.Backend) (func(context.Context) (Outcome, error), error) {
			x, err := standardized(b, d.X)
			if err != nil {
				return nil, err
			}
			u, err := rbfTarget(mat.DenseCopyOf(x.Slice(0, objects, 0, d.Dim())))
			if err != nil {
				return nil, err
			}
			cons, _, err := meg.CloseConstraints(u, 0.2/objects)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context) (Outcome, error) {
				var curve []float64
				res, err := meg.DefiniteBoost(ctx, cons, meg.BoostOptions{Backend: b, Tol: 1e-6 * 0.2 / objects,
					Observe: func(s meg.BoostStep) error { curve = append(curve, s.Dual); return nil }})
				if err != nil {
					return Outcome{}, err
				}
				return Outcome{Iterations: res.Iterations, Metrics: map[string]float64{"dual": res.Dual, "max_violation": res.MaxViolation}, Curve: curve}, nil
			}, nil
		}})
	}
	cases = append(cases, lettersCases(seed)...)
	cases = append(cases, FashionCases(seed, DefaultFashion)...)
	cases = append(cases, DeepCases(seed, DefaultDeep)...)
	return append(cases, mvuCases(seed)...)
}

func splitBuiltin(name, split string, seed uint64) ([]*data.Dataset, error) {
	d, err := datasets.Open(name)
	if err != nil {
		return nil, err
	}
	spec, err := data.ParseSplit(split)
	if err != nil {
		return nil, err
	}
	if spec.Rows != nil {
		return data.SplitRows(d, spec.Rows)
	}
	parts, err := data.Split(d, spec.Fracs, seed)
	if err != nil {
		return nil, err
	}
	if len(parts) != 3 {
		return nil, fmt.Errorf("bench: split %q has %d parts, want 3", split, len(parts))
	}
	return parts, nil
}

func standardized(b engine.Backend, x *mat.Dense) (*mat.Dense, error) {
	p, err := data.FitPipeline(b, x, true, 0)
	if err != nil {
		return nil, err
	}
	return p.Apply(x)
}

// runExperiment runs l on the training part of parts, choosing C on the
// validation part (parts[1], nil for none) and scoring on the test part.
// A solve that stops without its certificate still counts: its model is
// scored and the result says so (Certificate, Warnings).
func runExperiment(ctx context.Context, l psdlearn.Learner, parts []*data.Dataset) (*psdlearn.Result, error) {
	d := psdlearn.Data{X: parts[0].X, Y: parts[0].Y, Test: parts[len(parts)-1]}
	if len(parts) == 3 {
		l = withValidation(l, parts[1])
	}
	r, err := psdlearn.Run(ctx, l, d)
	if err != nil && (r == nil || !errors.Is(err, errs.ErrNotConverged) || ctx.Err() != nil) {
		return nil, err
	}
	return r, nil
}

// withValidation returns l with its Common.Validation set to val.
func withValidation(l psdlearn.Learner, val *data.Dataset) psdlearn.Learner {
	switch e := l.(type) {
	case psdlearn.BoostMetric:
		e.Validation = val
		return e
	case psdlearn.PSDBoost:
		e.Validation = val
		return e
	case psdlearn.FrobMetric:
		e.Validation = val
		return e
	case psdlearn.ITML:
		e.Validation = val
		return e
	case psdlearn.LMNN:
		e.Validation = val
		return e
	}
	return l
}
