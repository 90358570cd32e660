package psdlearn

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/warn"
	"gonum.org/v1/gonum/mat"
)

// metric returns the Metric of a learned matrix, factored by the run's
// backend (model.NewMetricFrom): LAPACK's dsyevd on the native backend,
// about 40 times faster than model.NewMetric's pure-Go decomposition at
// D = 2,048 (2.3 s against 96 s).
func (r *run) metric(m mat.Symmetric) (*model.Metric, error) {
	return model.NewMetricFrom(m, func(a *mat.SymDense) ([]float64, *mat.Dense, error) {
		e, err := r.b.SymEig(a, engine.EigRange{}, true)
		return e.Values, e.Vectors, err
	})
}

// finish builds the model and the result's fit fields from the final
// candidate; cancelled marks it interrupted.
func (r *run) finish(f *candidate, cancelled bool) error {
	met, err := r.metric(f.sol.M)
	if err != nil {
		return fmt.Errorf("psdlearn: %s: learned matrix: %w", r.name, err)
	}
	res, sol := r.res, f.sol
	res.ChosenC, res.Iterations, res.Objective, res.DualityGap, res.Curve = f.c, sol.Iterations, sol.Objective, sol.DualityGap, sol.Curve
	res.Rank, res.Dim = met.Rank(), dimOf(f.sp.prob.X)
	cert := model.Certificate{Converged: sol.Converged && !cancelled, Gap: sol.DualityGap, Tolerance: sol.GapTol, Reason: sol.Reason}
	if !(cert.Tolerance > 0) {
		cert.Tolerance = math.NaN() // the algorithm has no gap tolerance
	}
	warnings := append([]string(nil), r.warned...)
	if cancelled {
		cert.Interrupted, cert.Reason = true, "cancelled"
		what := "the best found before the cancellation"
		switch {
		case f.tier == 4:
			what = "the Euclidean metric on the input features (the run was cancelled before its first iterate)"
		case f.tier >= 2:
			what = fmt.Sprintf("fitted on fold %d's training rows during model selection (the run was cancelled before the fit on all rows)", f.sp.fold)
		}
		warnings = append(warnings, fmt.Sprintf("%s: interrupted: the model is %s, not certified", r.name, what))
		res.Interrupted = true
	}
	if w := warn.DegenerateMetric(mat.Trace(met.M), met.Dim()); w != "" {
		warnings = append(warnings, w)
	}
	if w := warn.GapAboveTolerance(r.name, cert.Converged, cert.Gap, cert.Tolerance, ""); w != "" {
		warnings = append(warnings, w)
	}
	cert.Warnings = warnings
	res.Warnings, res.Certificate = warnings, cert
	m := &model.Model{Kind: model.KindMetric, Algo: r.name, Metric: met, Certificate: &cert, Provenance: r.provenance()}
	if !f.sp.pipe.Empty() {
		m.Preprocess = f.sp.pipe
	}
	m.Info = r.info()
	res.Model = m
	return nil
}

// evaluate scores the final model: k-NN errors on the validation and test
// rows, or the satisfaction of the validation and held-out triplets.
func (r *run) evaluate(f *candidate) error {
	t0 := time.Now()
	defer func() { r.res.Phases.Evaluation = time.Since(t0).Seconds() }()
	res, met, x := r.res, r.res.Model.Metric, f.sp.prob.X
	if r.d.Triplets != nil || r.d.Pairs != nil {
		var err error
		if r.choose {
			res.Eval.ValError, res.Eval.EuclideanValError = f.score, math.NaN()
			if s, err := satisfaction(nil, x, r.parts[1]); err == nil {
				res.Eval.EuclideanValError = 1 - s
			}
		}
		if res.Eval.Satisfaction, err = satisfaction(met, x, r.parts[2]); err != nil {
			return err
		}
		res.Eval.EuclideanSatisfaction, err = satisfaction(nil, x, r.parts[2])
		return err
	}
	var sets []eval.Queries
	if r.d.Test != nil {
		tx, err := f.sp.pipe.ApplyBLAS(r.b.BLAS(), r.d.Test.X)
		if err != nil {
			return fmt.Errorf("psdlearn: test rows: %w", asInvalid(err))
		}
		sets = append(sets, queries(tx, r.labels.dense(r.d.Test.Y)))
		res.NTest = r.d.Test.Len()
	}
	switch {
	case res.Selection == SelectFolds:
		res.Eval.ValError, res.Eval.EuclideanValError = f.score, r.euclidVal
	case r.c.Validation != nil:
		vx, err := f.sp.pipe.ApplyBLAS(r.b.BLAS(), r.c.Validation.X)
		if err != nil {
			return fmt.Errorf("psdlearn: validation rows: %w", asInvalid(err))
		}
		sets = append(sets, queries(vx, r.labels.dense(r.c.Validation.Y)))
		res.NVal = r.c.Validation.Len()
	}
	if len(sets) == 0 {
		return nil
	}
	learned, err := r.exec.KNNErrors(r.b, met.L, x, f.sp.prob.Y, r.k, sets...)
	if err != nil {
		return fmt.Errorf("psdlearn: evaluation: %w", err)
	}
	euclid, err := r.exec.KNNErrors(r.b, nil, x, f.sp.prob.Y, r.k, sets...)
	if err != nil {
		return fmt.Errorf("psdlearn: evaluation: %w", err)
	}
	i := 0
	if r.d.Test != nil {
		res.Eval.TestError, res.Eval.EuclideanTestError = learned[0], euclid[0]
		i++
	}
	if i < len(sets) {
		res.Eval.ValError, res.Eval.EuclideanValError = learned[i], euclid[i]
	}
	return nil
}

// warnWorseThanEuclidean adds the warning of a model whose validation
// error is above the Euclidean metric's on the same validation rows (or
// held-out constraints).
func (r *run) warnWorseThanEuclidean() {
	res := r.res
	n, unit := res.NVal, "rows"
	switch {
	case res.Selection == SelectFolds:
		n = res.NTrain
	case res.Selection == SelectHeldOut:
		n, unit = res.ValTriplets, "triplets"
	}
	w := warn.WorseThanEuclidean(r.name, res.Eval.ValError, res.Eval.EuclideanValError, n, unit)
	if w == "" {
		return
	}
	ws := append(append([]string(nil), res.Warnings...), w)
	res.Warnings, res.Certificate.Warnings = ws, ws
	if res.Model != nil && res.Model.Certificate != nil {
		res.Model.Certificate.Warnings = ws
	}
}

func queries(x *mat.Dense, y []int) eval.Queries { return eval.Queries{X: x, Y: y} }

// satisfaction is eval.TripletSatisfaction, NaN without triplets.
func satisfaction(m *model.Metric, x *mat.Dense, ts *constraints.TripletSet) (float64, error) {
	if ts == nil || ts.Len() == 0 {
		return math.NaN(), nil
	}
	return eval.TripletSatisfaction(m, x, ts)
}

// info is the run summary stored in the model file: the effective
// settings (defaults resolved), the selection and the solve.
func (r *run) info() map[string]any {
	res := r.res
	info := map[string]any{
		"standardize": r.c.Standardize, "pca": r.c.PCA, "k": r.k, "seed": r.c.Seed, "backend": res.Backend,
		"selection": res.Selection.String(), "chosen_c": res.ChosenC, "iterations": res.Iterations,
		"objective": res.Objective, "duality_gap": res.DualityGap, "triplets": res.Triplets,
		"val_error": res.Eval.ValError, "euclidean_val_error": res.Eval.EuclideanValError,
		"test_error": res.Eval.TestError, "euclidean_test_error": res.Eval.EuclideanTestError,
		"interrupted": res.Interrupted,
	}
	if res.Searched != nil {
		info["C"] = res.Searched
	}
	if res.CPolicy != "" {
		info["c_policy"] = res.CPolicy
	}
	if res.Scores != nil {
		errs := make([]float64, len(res.Scores))
		for i, s := range res.Scores {
			errs[i] = s.ValError
		}
		info["val_errors"] = errs
	}
	if res.Selection == SelectFolds {
		info["folds"] = res.Folds
	}
	if r.d.Triplets != nil || r.d.Pairs != nil {
		info["holdout"] = r.d.HoldOut
		info["heldout_triplets"] = res.HeldOutTriplets
		info["triplet_satisfaction"] = res.Eval.Satisfaction
		info["triplet_satisfaction_euclidean"] = res.Eval.EuclideanSatisfaction
	}
	if o, ok := r.l.(interface{ options() map[string]any }); ok {
		for k, v := range o.options() {
			info[k] = v
		}
	}
	if r.name == "itml" {
		info["gamma"] = res.ChosenC
	}
	return info
}

// provenance records the backend, the seed and the data.
func (r *run) provenance() *model.Provenance {
	p := model.NewProvenance(r.res.Backend, r.c.Seed)
	src := r.d.Source
	describe := func(name string, d *data.Dataset) *model.DataInfo {
		return model.DescribeData(name, d.X, d.Y, d.Classes)
	}
	switch {
	case src != nil && src.Data != nil:
		p.Data, p.Split = describe(src.Name, src.Data), src.Split
	default:
		name := "fit"
		if src != nil {
			name = cmp.Or(src.Name, name)
		}
		p.Data = model.DescribeData(name, r.d.X, r.d.Y, nil)
	}
	if src != nil && src.Test != nil {
		p.Test = describe(src.TestName, src.Test)
	}
	return p
}

// fromConstraints runs the constraint path: the given triplets or pairs
// are split into training, validation (to choose C) and held-out parts;
// the preprocessing is fitted on all rows.
func (r *run) fromConstraints() (*candidate, error) {
	d, n := r.d, r.d.X.RawMatrix().Rows
	t0 := time.Now()
	valShare := 0.0
	if r.choose {
		valShare = cmp.Or(r.c.HoldOut, DefaultHoldOut)
		r.res.Selection = SelectHeldOut
	}
	var parts [3][]constraints.Triplet
	unit := "triplets"
	var pairParts [3][]constraints.LabelledPair
	if d.Pairs != nil {
		unit = "pairs"
		all, err := constraints.PairTriplets(d.Pairs, d.MaxTriplets)
		if err != nil {
			return nil, err
		}
		pp := splitConstraints(d.Pairs.Len(), d.HoldOut, valShare, r.c.Seed)
		partOf := make(map[[2]int]uint8, d.Pairs.Len())
		for i, q := range d.Pairs.List {
			partOf[[2]int{min(q.A, q.B), max(q.A, q.B)}] = pp[i]
			pairParts[pp[i]] = append(pairParts[pp[i]], q)
		}
		key := func(a, b int) [2]int { return [2]int{min(a, b), max(a, b)} }
		for _, t := range all {
			p := max(partOf[key(t.I, t.J)], partOf[key(t.I, t.K)])
			parts[p] = append(parts[p], t)
		}
	} else {
		tp := splitConstraints(len(d.Triplets.Triplets), d.HoldOut, valShare, r.c.Seed)
		for i, t := range d.Triplets.Triplets {
			parts[tp[i]] = append(parts[tp[i]], t)
		}
	}
	switch {
	case len(parts[0]) == 0:
		return nil, fmt.Errorf("%w: no training triplet is left after holding out a share %g of the %s", ErrInvalid, d.HoldOut, unit)
	case d.HoldOut > 0 && len(parts[2]) == 0:
		return nil, fmt.Errorf("%w: the held-out %s give no triplet to score on; give more constraints or a larger hold-out share", ErrInvalid, unit)
	case r.choose && len(parts[1]) == 0:
		return nil, fmt.Errorf("%w: the validation %s give no triplet to choose C on; give more constraints or a single C", ErrInvalid, unit)
	}
	for p, ts := range parts {
		if len(ts) == 0 {
			continue
		}
		var err error
		if r.parts[p], err = constraints.NewTripletSet(n, ts); err != nil {
			return nil, err
		}
	}
	if d.Pairs != nil && len(pairParts[0]) > 0 {
		var err error
		if r.trainPairs, err = constraints.NewPairs(n, pairParts[0]); err != nil {
			return nil, err
		}
	}
	r.res.Phases.Triplets = time.Since(t0).Seconds()
	r.res.Triplets, r.res.ValTriplets, r.res.HeldOutTriplets = len(parts[0]), len(parts[1]), len(parts[2])
	r.say("%s: %d training, %d validation, %d held-out triplets on %d points", r.name, len(parts[0]), len(parts[1]), len(parts[2]), n)

	t1 := time.Now()
	pipe, err := r.fitPipeline(d.X)
	if err != nil {
		return nil, fmt.Errorf("psdlearn: preprocessing: %w", asInvalid(err))
	}
	x, err := pipe.ApplyBLAS(r.b.BLAS(), d.X)
	if err != nil {
		return nil, fmt.Errorf("psdlearn: preprocessing: %w", asInvalid(err))
	}
	r.res.Phases.Preprocess = time.Since(t1).Seconds()
	r.res.Dim = dimOf(x)
	sp := &split{pipe: pipe, valTS: r.parts[1]}
	sp.prob = &Problem{X: x, Triplets: r.parts[0], Pairs: r.trainPairs, K: r.k, Seed: r.c.Seed, Backend: r.b, Progress: r.c.Progress}
	if sp.solver, err = r.exec.NewSolver(r.l, sp.prob); err != nil {
		return nil, err
	}
	if !r.choose {
		return r.solveOne(sp)
	}
	return r.search([]*split{sp})
}

// constraintSeedStream is the PCG stream of the constraint split.
const constraintSeedStream = 0xc0_45_7a_1e_5b_11

// splitConstraints assigns each of m constraints a part: 0 train, 1
// validation, 2 held out. The held-out part has round(test·m) constraints
// (at least one when test > 0), the validation part round(val·rest) of the
// rest (at least one when val > 0).
func splitConstraints(m int, test, val float64, seed uint64) []uint8 {
	part := make([]uint8, m)
	if test <= 0 && val <= 0 {
		return part
	}
	rng := rand.New(rand.NewPCG(seed, constraintSeedStream))
	perm := rng.Perm(m)
	nTest, nVal := 0, 0
	if test > 0 {
		nTest = max(1, int(math.Round(test*float64(m))))
	}
	if val > 0 {
		nVal = max(1, int(math.Round(val*float64(m-nTest))))
	}
	for i, c := range perm {
		switch {
		case i < nTest:
			part[c] = 2
		case i < nTest+nVal:
			part[c] = 1
		}
	}
	return part
}
