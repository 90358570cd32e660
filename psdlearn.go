// Package psdlearn learns positive semidefinite matrices: Mahalanobis
// metrics from labelled data (BoostMetric, PSDBoost, FrobMetric, and the
// baselines LMNN and ITML), kernels over a set of objects from pairs or
// distances (SimpleNPKL, DefiniteBoost, MEG) and embeddings (MVU). This root
// package is the short path for a Go program; the algorithms themselves live
// in the packages under algos (boost, frob, sdp, mvu, npkl, meg, lmnn,
// itml), the learned model and its file format in model, and the numerical
// backends behind them in engine.
//
// The five-line path (model.LoadFile needs no native library):
//
//	m, err := psdlearn.BoostMetric{Common: psdlearn.Common{Standardize: true}}.Fit(ctx, x, y)
//	err = m.SaveFile("metric.json")
//	m, err = model.LoadFile("metric.json")
//	z, err := m.Transform(rows)            // Euclidean distances in z are the metric's
//	d := m.Metric.Distance(a, b)           // on preprocessed rows (see model.Model.Prepare)
//
// # Conventions
//
// Estimators are small structs in the manner of scikit-learn's: the zero
// value of every field means the documented default, and Fit learns from all
// the rows it is given (x n×D, labels y), with no test set. Fit builds the
// triplets (each point's K nearest same-class points × its K nearest
// other-class points) on the preprocessed rows; FitTriplets takes triplets
// built by the caller. Both return a *model.Model: the metric M with its
// factor L (columns signed so that their largest entry is positive), the
// fitted preprocessing, the certificate of the solve (converged, gap,
// tolerance, reason) and the options (provenance). A model's Transform,
// Save and Load use gonum only: their numbers do not depend on the engine
// backend, and a program that only loads and transforms links no native
// library.
//
// C has one meaning everywhere in this package: the weight of the average
// hinge loss, i.e. the objective is ‖M‖²/2 + C·(1/m)Σ ξ_r for FrobMetric and
// the LP's per-triplet slack weight C/m for PSDBoost, so one C value means
// the same trade-off whatever the number m of triplets (the CLI's --C means
// the same).
//
// Given several C values, Fit chooses the one with the lowest k-NN
// validation error (K neighbours; equal errors choose the smaller C), then
// refits on all rows with it. The error is measured on Validation, when it
// is set, after fitting on all rows; otherwise by stratified k-fold
// cross-validation (Folds, default 3): the rows of every class are dealt
// at random (Seed) to the folds, each fold is held out in turn while the
// preprocessing, the triplets and the metric are fitted on the others, and
// the errors are averaged over the folds. FrobMetric without C chooses
// among the values of its default policy (see FrobMetric.C and package
// grid), which follow the data. The model's Info records the values tried
// ("C", in order), the policy ("c_policy"), the mean errors ("val_errors"),
// the chosen value's ("val_error") and the Euclidean metric's on the same
// rows ("euclidean_val_error"), and the number of folds ("folds", 0 on
// Validation); when the chosen value's error is above the Euclidean one,
// the certificate carries a warning saying so. FitTriplets can choose
// only on Validation (folds cannot be cut from given triplets).
//
// The kernel learners (SimpleNPKL.FitPairs, DefiniteBoost.FitPairs,
// MEG.FitDistances) take ctx first like Fit and return a *model.Model of
// Kind model.KindKernel: a kernel over the given objects only (no Transform
// for new points), with a certificate that claims convergence only when
// the algorithm has a stopping rule that was met.
//
// Estimators hold no state and are safe for concurrent use; so are models
// once loaded (Transform and Distance only read them), and the inputs,
// which are never modified.
package psdlearn

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/algos/frob"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	_ "github.com/psdlearn/psdlearn/engine/backends" // registers the "go" and "native" backends
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/grid"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/progress"
	"github.com/psdlearn/psdlearn/train"
	"gonum.org/v1/gonum/mat"
)

// ErrInvalid is wrapped by errors about invalid estimator settings or data.
var ErrInvalid = errs.New("psdlearn: invalid input", errs.ErrInvalid)

// Common holds the settings every metric estimator shares.
type Common struct {
	// Standardize centres every feature and scales it to unit variance
	// (fitted on the training rows, stored in the model).
	Standardize bool
	// PCA projects onto this many principal components after
	// standardisation (0: no projection).
	PCA int
	// K is the number of target and impostor neighbours per point of the
	// generated triplets (0: 3).
	K int
	// Validation, if set, is the labelled set on which several C values are
	// compared (raw features, preprocessed like the training rows).
	Validation *data.Dataset
	// Folds is the number of stratified cross-validation folds on which
	// several C values are compared without Validation (0: 3). Every class
	// needs at least Folds rows.
	Folds int
	// Seed fixes the cross-validation folds.
	Seed uint64
	// Backend runs the numerical kernels (nil: engine.Default()).
	Backend engine.Backend
	// Progress, if set, receives the progress events of the run.
	Progress progress.Func
}

// BoostMetric is the boosting metric learner of Shen et al. (JMLR 2012):
// exponential or logistic loss on the triplets' margins, rank-one updates.
type BoostMetric struct {
	Common
	// Loss is boost.Exp (the zero value) or boost.Logistic.
	Loss boost.Loss
	// Mode is boost.Stagewise (the zero value) or boost.Corrective.
	Mode boost.Mode
	// Iters bounds the number of rank-one terms (0: 500).
	Iters int
	// Nu is the trace regulariser ν relative to the data's scale (0: 1e-7).
	Nu float64
}

// Fit learns a metric from the labelled rows of x.
func (e BoostMetric) Fit(ctx context.Context, x *mat.Dense, y []int) (*model.Model, error) {
	return fit(ctx, e.Common, "boostmetric", e.options(), x, y, nil)
}

// FitTriplets learns a metric from triplets on the rows of x (indices into
// x; the rows are preprocessed, the triplets kept).
func (e BoostMetric) FitTriplets(ctx context.Context, x *mat.Dense, ts *constraints.TripletSet) (*model.Model, error) {
	return fit(ctx, e.Common, "boostmetric", e.options(), x, nil, ts)
}

func (e BoostMetric) options() train.Options {
	loss, mode := "exp", "stagewise"
	if e.Loss == boost.Logistic {
		loss = "logistic"
	}
	if e.Mode == boost.Corrective {
		mode = "corrective"
	}
	return train.Options{Loss: loss, Mode: mode, Iters: e.Iters, Nu: e.Nu}
}

// PSDBoost is the column-generation SDP learner of Shen et al. (NIPS 2008):
// hinge loss, trace-one metric, certified by λmax − π.
type PSDBoost struct {
	Common
	// C lists the average-hinge weights to choose among (nil: 10, i.e. the
	// LP weight 1/(0.1·m)); see the package doc for their meaning.
	C []float64
	// Iters bounds the column-generation iterations (0: 500).
	Iters int
}

// Fit learns a metric from the labelled rows of x.
func (e PSDBoost) Fit(ctx context.Context, x *mat.Dense, y []int) (*model.Model, error) {
	return fit(ctx, e.Common, "psdboost", train.Options{Iters: e.Iters}, x, y, nil, e.C...)
}

// FitTriplets learns a metric from triplets on the rows of x.
func (e PSDBoost) FitTriplets(ctx context.Context, x *mat.Dense, ts *constraints.TripletSet) (*model.Model, error) {
	return fit(ctx, e.Common, "psdboost", train.Options{Iters: e.Iters}, x, nil, ts, e.C...)
}

// FrobMetric is the Frobenius-regularised learner of Shen et al. ("A
// scalable dual approach"): min ‖M‖²/2 + C·(1/m)Σ ξ_r over M ⪰ 0, solved in
// the dual and certified by the duality gap.
type FrobMetric struct {
	Common
	// C lists the values to choose among (nil: the default policy,
	// frob.DefaultPolicy: 0.1, 1, 10 and 100, joined by their multiples
	// for the spread of the feature scales when standardising the
	// features lowers the Euclidean validation error, and extended beyond
	// an edge where the validation optimum sits; on Validation, else on
	// the first fold).
	C []float64
	// Iters bounds the L-BFGS-B iterations of each solve (0: 20,000).
	Iters int
}

// Fit learns a metric from the labelled rows of x.
func (e FrobMetric) Fit(ctx context.Context, x *mat.Dense, y []int) (*model.Model, error) {
	return fit(ctx, e.Common, "frobmetric", train.Options{Iters: e.Iters}, x, y, nil, e.C...)
}

// FitTriplets learns a metric from triplets on the rows of x. With several
// C values it needs Validation (held-out rows cannot be cut from triplets).
func (e FrobMetric) FitTriplets(ctx context.Context, x *mat.Dense, ts *constraints.TripletSet) (*model.Model, error) {
	return fit(ctx, e.Common, "frobmetric", train.Options{Iters: e.Iters}, x, nil, ts, e.C...)
}

// fit runs algo on x (with labels y, or on the given triplets) and returns
// the model. cs are C values in this package's convention.
func fit(ctx context.Context, c Common, algo string, opt train.Options, x *mat.Dense, y []int, ts *constraints.TripletSet, cs ...float64) (*model.Model, error) {
	if x == nil {
		return nil, fmt.Errorf("%w: nil data", ErrInvalid)
	}
	n, _ := x.Dims()
	if ts == nil && len(y) != n {
		return nil, fmt.Errorf("%w: %d labels for %d rows", ErrInvalid, len(y), n)
	}
	if ts != nil && ts.N != n {
		return nil, fmt.Errorf("%w: triplets on %d points for %d rows", ErrInvalid, ts.N, n)
	}
	for _, v := range cs {
		if !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: C = %v, want a positive finite value", ErrInvalid, v)
		}
	}
	if c.Folds < 0 || c.Folds == 1 {
		return nil, fmt.Errorf("%w: Folds = %d, want 0 (the default, 3) or at least 2", ErrInvalid, c.Folds)
	}
	trainer, err := train.Lookup(algo)
	if err != nil {
		return nil, err
	}
	b := engine.Or(c.Backend)
	k := c.K
	if k == 0 {
		k = 3
	}
	if k < 0 {
		return nil, fmt.Errorf("%w: K = %d", ErrInvalid, k)
	}
	full := &data.Dataset{Name: "fit", X: x, Y: y}
	if y == nil {
		full.Y = make([]int, n) // triplets given: labels are not used
	}
	cs = sortedCopy(cs) // ascending: equal validation errors choose the smaller C
	chosen := cs
	var sel *selection
	// FrobMetric without C: the default policy, made from the first
	// split's prepared rows.
	var policy func(tr, val *data.Dataset) (grid.Policy, error)
	if algo == "frobmetric" && len(cs) == 0 {
		policy = func(tr, val *data.Dataset) (grid.Policy, error) { return frob.DefaultPolicy(b, tr, val, k) }
	}
	if len(cs) > 1 || policy != nil {
		if sel, err = chooseC(ctx, c, trainer, algo, opt, full, ts, k, b, cs, policy); err != nil {
			return nil, err
		}
		chosen = []float64{sel.c}
	}
	m, err := fitOnce(ctx, c, trainer, algo, opt, full, nil, ts, k, b, chosen)
	if err != nil {
		return nil, err
	}
	if sel != nil {
		m.Info["C"], m.Info["val_errors"], m.Info["folds"] = sel.tried, sel.meanErr, sel.folds
		m.Info["c_policy"], m.Info["euclidean_val_error"] = sel.policy, sel.euclidErr
		m.Info["val_error"] = sel.meanErr[slices.Index(sel.tried, sel.c)]
		if w := train.WorseThanEuclidean(algo, m.Info["val_error"].(float64), sel.euclidErr, sel.nVal); w != "" {
			m.Certificate.Warnings = append(m.Certificate.Warnings, w)
		}
	}
	m.Provenance = model.NewProvenance(b.Name(), c.Seed)
	m.Provenance.Data = model.DescribeData("fit", x, y, nil)
	return m, nil
}

// fitOnce preprocesses tr, builds its triplets (unless given), runs the
// trainer with the C values cs (validation set val, preprocessed alike)
// and assembles the model.
func fitOnce(ctx context.Context, c Common, trainer train.Trainer, algo string, opt train.Options, tr, val *data.Dataset, ts *constraints.TripletSet, k int, b engine.Backend, cs []float64) (*model.Model, error) {
	p, err := prepare(c, tr, val, ts, k, b)
	if err != nil {
		return nil, err
	}
	out, err := p.solve(ctx, trainer, algo, opt, k, b, c.Seed, c.Progress, cs)
	if err != nil {
		return nil, err
	}
	met, err := model.NewMetric(out.M)
	if err != nil {
		return nil, fmt.Errorf("psdlearn: %s: learned matrix: %w", algo, err)
	}
	tol := out.GapTol
	if !(tol > 0) {
		tol = math.NaN() // the algorithm has no gap tolerance
	}
	chosen := out.ChosenC
	m := &model.Model{
		Kind: model.KindMetric, Algo: algo, Metric: met,
		Info: map[string]any{
			"standardize": c.Standardize, "pca": c.PCA, "k": k, "seed": c.Seed,
			"loss": opt.Loss, "mode": opt.Mode, "iters": opt.Iters, "nu": opt.Nu,
			"C": sortedCopy(cs), "chosen_c": chosen, "iterations": out.Iterations,
			"objective": out.Objective, "duality_gap": out.DualityGap,
			"backend": b.Name(), "triplets": p.ts.Len(),
		},
		Certificate: &model.Certificate{
			Converged: out.Converged, Gap: out.DualityGap, Tolerance: tol,
			Reason: out.Reason, Warnings: out.Warnings,
		},
	}
	if !p.pipe.Empty() {
		m.Preprocess = p.pipe
	}
	return m, nil
}

// prepared holds a training set (and validation set) preprocessed by the
// pipeline fitted on the training rows, and the triplets on the training
// rows.
type prepared struct {
	pipe    *data.Pipeline
	tr, val *data.Dataset
	ts      *constraints.TripletSet
}

// prepare fits the preprocessing on tr, applies it to tr and val, and
// builds the triplets of tr unless ts is given.
func prepare(c Common, tr, val *data.Dataset, ts *constraints.TripletSet, k int, b engine.Backend) (*prepared, error) {
	pipe, err := data.FitPipeline(b, tr.X, c.Standardize, c.PCA)
	if err != nil {
		return nil, fmt.Errorf("psdlearn: preprocessing: %w", err)
	}
	p := &prepared{pipe: pipe, ts: ts}
	if p.tr, err = data.ApplyDatasetBLAS(pipe, b.BLAS(), tr); err != nil {
		return nil, err
	}
	if val != nil {
		if p.val, err = data.ApplyDatasetBLAS(pipe, b.BLAS(), val); err != nil {
			return nil, err
		}
	}
	if p.ts == nil {
		if p.ts, err = constraints.TripletsBLAS(b.BLAS(), p.tr.X, p.tr.Y, k); err != nil {
			return nil, fmt.Errorf("psdlearn: triplets: %w", err)
		}
	}
	return p, nil
}

// solve runs the trainer on the prepared rows with the C values cs (in this
// package's convention).
func (p *prepared) solve(ctx context.Context, trainer train.Trainer, algo string, opt train.Options, k int, b engine.Backend, seed uint64, prog progress.Func, cs []float64) (train.Output, error) {
	o := opt
	o.C = append([]float64(nil), cs...)
	out, err := trainer(ctx, train.Input{Train: p.tr, Val: p.val, Triplets: p.ts, K: k, Seed: seed, Backend: b, Options: o, Progress: prog})
	if err != nil {
		return out, fmt.Errorf("psdlearn: %s: %w", algo, err)
	}
	return out, nil
}

func sortedCopy(v []float64) []float64 {
	out := append([]float64(nil), v...)
	sort.Float64s(out)
	return out
}
