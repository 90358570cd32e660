package psdlearn

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/grid"
	"github.com/psdlearn/psdlearn/progress"
	"gonum.org/v1/gonum/mat"
)

// Data is what Run learns from: labelled rows (X and Y), or rows with
// triplets or pairs on them (X and exactly one of Triplets and Pairs).
type Data struct {
	// X holds the training rows (raw features, n×D).
	X *mat.Dense
	// Y labels the rows of X. Labels are any int values: they are
	// remapped to 0..classes−1, never used as indices.
	Y []int
	// Triplets or Pairs, on the rows of X, replace the triplets built from
	// Y. Pairs are turned into triplets (constraints.PairTriplets) for
	// the learners that learn from triplets.
	Triplets *constraints.TripletSet
	Pairs    *constraints.Pairs
	// MaxTriplets caps the triplets built from Pairs (0:
	// constraints.MaxReadConstraints).
	MaxTriplets int
	// Test, if set, is a labelled test set (raw features) on which the
	// learned metric's k-NN error is measured next to the Euclidean one.
	// Labelled input only.
	Test *data.Dataset
	// HoldOut is the share of the given triplets or pairs held out (never
	// trained on, never used to choose C) to score the learned metric by
	// its triplet satisfaction (Result.Eval). Constraint input only; 0
	// holds out none.
	HoldOut float64
	// Source describes the data for the model's provenance (nil: X and Y
	// as "fit").
	Source *Source
}

// Source is where the data of a run came from, as recorded in
// model.Provenance: the data set as read, before the training, validation
// and test rows were cut from it, its name and the split that cut them,
// and a separate test set if the test rows were not cut from it.
type Source struct {
	Name  string        // a data SPEC such as "builtin:iris" (default Data.Name)
	Data  *data.Dataset // as read, before the split
	Split string        // "0.7,0.15,0.15" (seeded by Common.Seed) or "rows:…"; "" for none
	// TestName and Test describe a separate test set; nil Test means the
	// test rows were cut from Data by Split.
	TestName string
	Test     *data.Dataset
}

// Run is the pipeline every metric learner runs on, whatever the way in
// (the estimators' Fit methods, the command line): data → preprocessing →
// triplets → a solve per C → selection → certificate → model → evaluation.
//
// Preprocessing (Common.Standardize, Common.PCA) is fitted on the training
// rows: on each fold's training rows during cross-validation, on all rows
// X for constraint input (which involves no constraint). The triplets are
// each point's K nearest same-class points × its K nearest other-class
// points, or the given ones.
//
// The values of C come from Common.Grid (the learner's list by default).
// Given several, Run chooses the one with the lowest validation error
// (equal errors choose the smaller C): the k-NN error on
// Common.Validation, after fitting on all rows; without it, the mean k-NN
// error over stratified folds (Common.Folds), then a fit on all rows with
// the chosen C; for given triplets or pairs, the fraction of held-out
// constraints (a share Common.HoldOut of them) violated. The model is then
// scored on Data.Test (k-NN) or on the constraints held out by
// Data.HoldOut (satisfaction), next to the Euclidean metric.
//
// A solve that stops without its certificate (an iteration cap, a stall)
// still gives a model: Run returns it, marked in its certificate, with a
// *NotConvergedError. Cancelled, Run returns the best model so far (the
// best scored fit, else the interrupted solve's iterate, else — cancelled
// before any iterate — the Euclidean metric on the input features),
// marked Interrupted, with a *NotConvergedError that also matches
// ctx.Err(); the evaluation is skipped. A context already done when Run is
// called gives a nil Result and ctx.Err().
// Invalid settings or data give an error matching errs.ErrInvalid before
// any work.
func Run(ctx context.Context, l Learner, d Data) (*Result, error) {
	if l == nil {
		return nil, fmt.Errorf("%w: nil learner", ErrInvalid)
	}
	r, err := newRun(ctx, l, d)
	if err != nil {
		return nil, err
	}
	return r.run()
}

// run is the state of one Run.
type run struct {
	ctx    context.Context
	l      Learner
	c      Common
	d      Data
	name   string
	b      engine.Backend
	exec   Executor
	k      int
	labels *labelMap
	y      []int // dense labels of d.X (nil for constraint input)
	say    func(string, ...any)
	res    *Result
	start  []float64 // the learner's values of C, ascending (nil: no C)
	first  []float64 // the grid's first proposal
	choose bool
	// grid proposes the values of C (nil: Common.Grid, else FixedGrid);
	// followData may set it.
	grid Grid
	// euclidVal is the mean Euclidean k-NN error on the folds'
	// validation rows (SelectFolds).
	euclidVal float64
	// policy describes where the values of C come from (Result.CPolicy).
	policy string
	fall   *candidate // the best model so far, for a cancellation
	warned []string
	// parts of given constraints: 0 train, 1 validation, 2 held out.
	parts [3]*constraints.TripletSet
	// trainPairs is the training part of given pairs.
	trainPairs *constraints.Pairs
}

// fitPipeline fits the preprocessing on the rows x, with PCA's covariance
// computed by the Executor when it can (ChunkExecutor).
func (r *run) fitPipeline(x *mat.Dense) (*data.Pipeline, error) {
	var run data.ChunkRunner
	if ce, ok := r.exec.(ChunkExecutor); ok {
		run = ce.RunChunks
	}
	return data.FitPipelineWith(r.b, x, r.c.Standardize, r.c.PCA, run)
}

// newRun validates everything that can be validated before any work.
func newRun(ctx context.Context, l Learner, d Data) (*run, error) {
	c := l.Settings()
	r := &run{ctx: ctx, l: l, c: c, d: d, name: l.Name(), b: engine.Or(c.Backend), exec: c.Executor}
	if r.exec == nil {
		r.exec = Local{}
	}
	r.k = cmp.Or(c.K, DefaultK)
	if err := r.check(); err != nil {
		return nil, err
	}
	r.say = progress.Printf(c.Progress, r.name)
	if r.say == nil {
		r.say = func(string, ...any) {}
	}
	n, dim := d.X.Dims()
	r.res = &Result{
		Algorithm: r.name, Backend: r.b.Name(), ChosenC: math.NaN(), Objective: math.NaN(), DualityGap: math.NaN(),
		NTrain: n, InputDim: dim, K: r.k,
		Eval: Evaluation{ValError: math.NaN(), EuclideanValError: math.NaN(), TestError: math.NaN(), EuclideanTestError: math.NaN(),
			Satisfaction: math.NaN(), EuclideanSatisfaction: math.NaN()},
		CPolicy: r.policy,
	}
	return r, nil
}

// check validates the settings and the data.
func (r *run) check() error {
	c, d := r.c, r.d
	if d.X == nil || d.X.IsEmpty() {
		return fmt.Errorf("%w: no data rows", ErrInvalid)
	}
	n, dim := d.X.Dims()
	if err := checkFinite("X", d.X); err != nil {
		return err
	}
	if c.K < 0 || c.PCA < 0 || c.PCA > dim {
		return fmt.Errorf("%w: K = %d, PCA = %d: want K ≥ 0 and 0 ≤ PCA ≤ %d (the number of features)", ErrInvalid, c.K, c.PCA, dim)
	}
	if c.Folds < 0 || c.Folds == 1 {
		return optionf("Folds = %d, want 0 (the default, %d) or at least 2", c.Folds, DefaultFolds)
	}
	if !(c.HoldOut >= 0 && c.HoldOut < 1) || !(d.HoldOut >= 0 && d.HoldOut < 1) {
		return optionf("hold-out shares %v and %v: want shares in [0, 1)", c.HoldOut, d.HoldOut)
	}
	constraintInput := d.Triplets != nil || d.Pairs != nil
	switch {
	case d.Triplets != nil && d.Pairs != nil:
		return fmt.Errorf("%w: give triplets or pairs, not both", ErrInvalid)
	case constraintInput && d.Test != nil:
		return fmt.Errorf("%w: a labelled test set needs labelled training rows, not constraints", ErrInvalid)
	case constraintInput && c.Validation != nil:
		return fmt.Errorf("%w: with given constraints C is chosen on held-out constraints, not on a labelled Validation set", ErrInvalid)
	case !constraintInput && d.HoldOut != 0:
		return fmt.Errorf("%w: Data.HoldOut applies to given triplets or pairs", ErrInvalid)
	case !constraintInput && len(d.Y) != n:
		return fmt.Errorf("%w: %d labels for %d rows", ErrInvalid, len(d.Y), n)
	case d.Triplets != nil:
		if err := d.Triplets.Validate(); err != nil {
			return err
		}
		if d.Triplets.N != n {
			return fmt.Errorf("%w: triplets on %d points for %d rows", ErrInvalid, d.Triplets.N, n)
		}
	case d.Pairs != nil:
		if err := d.Pairs.Validate(); err != nil {
			return err
		}
		if d.Pairs.N != n {
			return fmt.Errorf("%w: pairs on %d points for %d rows", ErrInvalid, d.Pairs.N, n)
		}
	}
	for _, set := range []struct {
		what string
		d    *data.Dataset
	}{{"Validation", c.Validation}, {"Test", d.Test}} {
		if set.d == nil {
			continue
		}
		if set.d.X == nil || set.d.X.IsEmpty() || len(set.d.Y) != set.d.Len() {
			return fmt.Errorf("%w: %s needs rows and one label per row", ErrInvalid, set.what)
		}
		if set.d.Dim() != dim {
			return fmt.Errorf("%w: %s has %d features, the training rows %d", ErrInvalid, set.what, set.d.Dim(), dim)
		}
		if err := checkFinite(set.what, set.d.X); err != nil {
			return err
		}
	}
	if !constraintInput {
		r.labels = newLabelMap(d.Y)
		r.y = r.labels.dense(d.Y)
		if r.labels.classes() < 2 {
			return fmt.Errorf("%w: the labels have %d class, want at least 2", ErrInvalid, r.labels.classes())
		}
		if r.k > n-1 {
			return fmt.Errorf("%w: K = %d with %d training rows", ErrInvalid, r.k, n)
		}
	}
	return r.checkGrid()
}

// checkGrid asks the grid for its first values of C and checks them.
func (r *run) checkGrid() error {
	r.start = slices.Clone(r.l.Candidates())
	slices.Sort(r.start)
	if r.start == nil {
		if r.c.Grid != nil {
			return fmt.Errorf("%w: %s has no C to search", ErrInvalid, r.name)
		}
		return nil
	}
	r.first = r.next(nil)
	r.policy = grid.Format(r.start)
	if r.c.Grid != nil {
		r.policy = fmt.Sprintf("%T from %s", r.c.Grid, r.policy)
	}
	if len(r.first) == 0 {
		return fmt.Errorf("%w: no value of C to try", ErrInvalid)
	}
	for _, v := range r.first {
		if !(v > 0) || math.IsInf(v, 0) {
			return optionf("C = %v, want a positive finite value", v)
		}
	}
	r.choose = len(r.first) > 1
	return nil
}

// next returns the grid's next values, ascending, without the ones scored.
func (r *run) next(scored []Score) []float64 {
	g := r.grid
	if g == nil {
		g = r.c.Grid
	}
	if g == nil {
		g = FixedGrid{}
	}
	var out []float64
	for _, v := range g.Next(slices.Clone(r.start), slices.Clone(scored)) {
		if !slices.ContainsFunc(scored, func(s Score) bool { return s.C == v }) && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// run runs the pipeline.
func (r *run) run() (*Result, error) {
	if err := r.ctx.Err(); err != nil {
		return nil, fmt.Errorf("psdlearn: %s: %w", r.name, err)
	}
	var (
		final *candidate
		err   error
	)
	t0 := time.Now()
	if r.d.Triplets != nil || r.d.Pairs != nil {
		final, err = r.fromConstraints()
	} else {
		final, err = r.fromLabels()
	}
	r.res.Phases.Train = time.Since(t0).Seconds() - r.res.Phases.Preprocess - r.res.Phases.Triplets
	cancelled := err != nil && r.ctx.Err() != nil
	if err != nil && !cancelled {
		return nil, err
	}
	if cancelled {
		final = r.fall
		if final == nil {
			final = r.euclidean()
		}
	}
	if err := r.finish(final, cancelled); err != nil {
		return nil, err
	}
	if cancelled {
		return r.res, &NotConvergedError{Algorithm: r.name, Reason: r.res.Certificate.Reason, Err: r.ctx.Err()}
	}
	if err := r.evaluate(final); err != nil {
		return nil, err
	}
	r.warnWorseThanEuclidean()
	r.res.Model.Info = r.info()
	if !r.res.Certificate.Converged {
		return r.res, &NotConvergedError{Algorithm: r.name, Reason: r.res.Certificate.Reason}
	}
	return r.res, nil
}

// split is one prepared training set with its validation part.
type split struct {
	prob   *Problem
	pipe   *data.Pipeline
	solver Solver
	// fold is the fold (from 1) of a cross-validation split, 0 for all
	// training rows.
	fold int
	// valX, valY are the labelled validation rows, preprocessed; valTS
	// the validation triplets of constraint input.
	valX  *mat.Dense
	valY  []int
	valTS *constraints.TripletSet
	// prepare, if set, prepares the split on first use (its other fields
	// are then unset).
	prepare func() (*split, error)
}

// candidate is a solved split: a model in hand.
type candidate struct {
	sp    *split
	sol   *Solution
	c     float64
	score float64
	// tier orders the fall-backs of a cancellation: 0 a finished fit on
	// all training rows, 1 an interrupted one, 2 a finished fold fit, 3 an
	// interrupted one.
	tier int
}

// euclidean is the fall-back of a run cancelled before any solve had an
// iterate: the Euclidean metric on the input features (no
// preprocessing), which every metric learner improves on.
func (r *run) euclidean() *candidate {
	d := dimOf(r.d.X)
	m := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		m.SetSym(i, i, 1)
	}
	sol := &Solution{M: m, Objective: math.NaN(), DualityGap: math.NaN(), GapTol: math.NaN(), Reason: "cancelled before the first iterate"}
	return &candidate{sp: &split{prob: &Problem{X: r.d.X}, pipe: &data.Pipeline{}}, sol: sol, c: math.NaN(), score: math.NaN(), tier: 4}
}

// keep records cand as the best model so far if it beats the one kept.
func (r *run) keep(cand *candidate) {
	if cand.sol == nil || cand.sol.M == nil {
		return
	}
	f := r.fall
	if f == nil || cand.tier < f.tier || cand.tier == f.tier && better(cand.score, cand.c, f.score, f.c) {
		r.fall = cand
	}
}

// better reports whether score a at C ca beats score b at C cb: lower, or
// equal at a smaller C; a NaN score never beats a number.
func better(a, ca, b, cb float64) bool {
	switch {
	case math.IsNaN(a):
		return false
	case math.IsNaN(b):
		return true
	}
	return a < b || a == b && ca < cb
}

// fromLabels runs the labelled path: one split, the validation split, or
// the folds then a fit on all rows.
func (r *run) fromLabels() (*candidate, error) {
	all := seq(r.d.X.RawMatrix().Rows)
	// The validation rows are prepared whenever they are given: to choose
	// C on them, or for a learner whose stopping follows them.
	val := r.c.Validation
	if r.choose && val != nil {
		r.res.Selection = SelectValidation
	}
	if !r.choose || val != nil {
		sp, err := r.prepareLabelled(all, val, 0)
		if err != nil {
			return nil, err
		}
		r.res.Triplets, r.res.Dim = sp.prob.Triplets.Len(), dimOf(sp.prob.X)
		if val != nil {
			r.res.NVal = val.Len()
		}
		if !r.choose {
			return r.solveOne(sp)
		}
		return r.search([]*split{sp})
	}
	// Stratified folds, then a fit on all rows with the chosen C.
	r.res.Selection = SelectFolds
	r.res.Folds = cmp.Or(r.c.Folds, DefaultFolds)
	folds, err := stratifiedFolds(r.y, r.res.Folds, r.c.Seed)
	if err != nil {
		return nil, err
	}
	// Each fold is prepared when first needed, so that the first solve
	// starts (and has an iterate to hand back) as early as possible.
	splits := make([]*split, len(folds))
	for f, rows := range folds {
		splits[f] = &split{fold: f + 1, prepare: func() (*split, error) {
			return r.prepareLabelled(complement(len(r.y), rows), r.subset(rows), f+1)
		}}
	}
	best, err := r.search(splits)
	if err != nil {
		return nil, err
	}
	sp, err := r.prepareLabelled(all, nil, 0)
	if err != nil {
		return nil, err
	}
	r.res.Triplets, r.res.Dim = sp.prob.Triplets.Len(), dimOf(sp.prob.X)
	return r.solve(sp, best.c, 0)
}

// subset returns the rows of the training data as a labelled set (raw
// features, dense labels).
func (r *run) subset(rows []int) *data.Dataset {
	return (&data.Dataset{X: r.d.X, Y: r.y}).Subset(rows)
}

// prepareLabelled fits the preprocessing on the given training rows,
// applies it to them and to val (raw features, original labels unless
// fold > 0), and builds the triplets.
func (r *run) prepareLabelled(rows []int, val *data.Dataset, fold int) (*split, error) {
	t0 := time.Now()
	tr := &data.Dataset{Name: "fit", X: r.d.X, Y: r.y}
	if len(rows) != len(r.y) { // a fold: copy its rows (all of them: no copy)
		tr = r.subset(rows)
	}
	pipe, err := r.fitPipeline(tr.X)
	if err != nil {
		return nil, fmt.Errorf("psdlearn: preprocessing: %w", asInvalid(err))
	}
	x, err := pipe.ApplyBLAS(r.b.BLAS(), tr.X)
	if err != nil {
		return nil, fmt.Errorf("psdlearn: preprocessing: %w", asInvalid(err))
	}
	sp := &split{pipe: pipe, fold: fold}
	if val != nil && val.Len() > 0 {
		if sp.valX, err = pipe.ApplyBLAS(r.b.BLAS(), val.X); err != nil {
			return nil, fmt.Errorf("psdlearn: preprocessing: %w", asInvalid(err))
		}
		sp.valY = val.Y
		if fold == 0 { // the caller's labels: the training rows' dense codes
			sp.valY = r.labels.dense(val.Y)
		}
	}
	r.res.Phases.Preprocess += time.Since(t0).Seconds()
	t1 := time.Now()
	ts, err := constraints.TripletsBLAS(r.b.BLAS(), x, tr.Y, r.k)
	if err != nil {
		return nil, fmt.Errorf("psdlearn: triplets: %w", err)
	}
	r.res.Phases.Triplets += time.Since(t1).Seconds()
	if fold == 0 {
		r.say("%s: %d triplets on %d points", r.name, ts.Len(), len(rows))
	}
	prog := r.c.Progress
	if fold > 0 {
		prog = progress.Prefix(prog, fmt.Sprintf("fold %d of %d: ", fold, r.res.Folds))
	}
	sp.prob = &Problem{X: x, Y: tr.Y, Classes: r.labels.classes(), Triplets: ts, ValX: sp.valX, ValY: sp.valY, K: r.k, Seed: r.c.Seed, Backend: r.b, Progress: prog}
	if sp.solver, err = r.exec.NewSolver(r.l, sp.prob); err != nil {
		return nil, err
	}
	return sp, nil
}

// solveOne fits the only value of C (or none) on sp.
func (r *run) solveOne(sp *split) (*candidate, error) {
	c := math.NaN()
	if len(r.first) == 1 {
		c = r.first[0]
		r.res.Searched = []float64{c}
	}
	return r.solve(sp, c, 0)
}

// A screeningSolver solves the candidates of a model selection to a
// looser tolerance than its certificate's (Screen) and then the chosen
// one, from its candidate's point, to the certificate (Refine). The run
// uses it when the solver offers it (FrobMetric's); a candidate's
// Solution reports convergence to the looser tolerance, and it is not
// warned about (only the refined model's certificate is the model's).
type screeningSolver interface {
	Solver
	Screen(ctx context.Context, c float64) (*Solution, error)
	Refine(ctx context.Context, c float64) (*Solution, error)
}

// How solveWith runs a solver.
const (
	solveFull   = iota // Solve: to the certificate
	solveScreen        // Screen: a candidate of a selection
	solveRefine        // Refine: the chosen candidate to the certificate
)

// solve runs sp's solver with c; a finished solve gets the given score.
// On an error it records the solve's iterate as a fall-back.
func (r *run) solve(sp *split, c, score float64) (*candidate, error) {
	return r.solveWith(sp, c, score, solveFull)
}

// solveWith is solve in the given mode (solveScreen and solveRefine need
// a screeningSolver).
func (r *run) solveWith(sp *split, c, score float64, mode int) (*candidate, error) {
	if err := r.ctx.Err(); err != nil {
		return nil, err
	}
	t0 := time.Now()
	var (
		sol *Solution
		err error
	)
	switch ss, _ := sp.solver.(screeningSolver); {
	case mode == solveScreen && ss != nil:
		sol, err = ss.Screen(r.ctx, c)
	case mode == solveRefine && ss != nil:
		sol, err = ss.Refine(r.ctx, c)
	default:
		mode = solveFull
		sol, err = sp.solver.Solve(r.ctx, c)
	}
	cand := &candidate{sp: sp, sol: sol, c: c, score: score}
	if sp.fold > 0 {
		cand.tier = 2
	}
	if sol != nil {
		s := Solve{C: c, Seconds: time.Since(t0).Seconds(), Iterations: sol.Iterations, Converged: sol.Converged && err == nil, Reason: sol.Reason, Fold: sp.fold, SingleIterations: sol.SingleIterations}
		if mode == solveRefine {
			s.Reason = "chosen C, from its candidate to the certificate: " + s.Reason
		}
		if err != nil && !asNotConverged(err) || r.ctx.Err() != nil {
			cand.tier++ // interrupted
			s.Reason = "cancelled"
		}
		r.res.Phases.Solves = append(r.res.Phases.Solves, s)
	}
	switch {
	case err != nil && r.ctx.Err() != nil:
		r.keep(cand)
		return nil, err
	case err != nil && !(asNotConverged(err) && sol != nil && sol.M != nil):
		return nil, r.solveError(c, err)
	case sol == nil || sol.M == nil || sol.M.SymmetricDim() != dimOf(sp.prob.X):
		return nil, fmt.Errorf("psdlearn: %s: the solver returned no %d×%d metric", r.name, dimOf(sp.prob.X), dimOf(sp.prob.X))
	}
	if err != nil || !sol.Converged {
		sol.Converged = false
		if mode != solveScreen {
			r.warnNotConverged(sp, c, sol)
		}
	}
	r.warned = append(r.warned, sol.Warnings...)
	return cand, nil
}

// solveError wraps a solver's failure.
func (r *run) solveError(c float64, err error) error {
	if errors.Is(err, ErrInvalid) { // this package's message: no layer to add
		return err
	}
	if math.IsNaN(c) {
		return fmt.Errorf("psdlearn: %s: %w", r.name, err)
	}
	return fmt.Errorf("psdlearn: %s C=%g: %w", r.name, c, err)
}

// warnNotConverged adds the warning of a solve that stopped without its
// certificate.
func (r *run) warnNotConverged(sp *split, c float64, sol *Solution) {
	at := r.name
	if !math.IsNaN(c) {
		at += fmt.Sprintf(" C=%g", c)
	}
	if sp.fold > 0 {
		at += fmt.Sprintf(" (fold %d of %d)", sp.fold, r.res.Folds)
	}
	msg := fmt.Sprintf("%s: not converged (%s) after %d iterations", at, cmp.Or(sol.Reason, "no reason given"), sol.Iterations)
	if sol.GapTol > 0 && !math.IsNaN(sol.DualityGap) {
		msg = fmt.Sprintf("%s: not certified (%s) after %d iterations: relative duality gap %.3g above the tolerance %.3g",
			at, cmp.Or(sol.Reason, "no reason given"), sol.Iterations, sol.DualityGap, sol.GapTol)
	}
	r.warned = append(r.warned, msg)
}

// search compares the grid's values of C on the splits (one validation
// split, or the folds): every value on every split, each split's solver
// warm-started along the values. It returns the best candidate (the one
// of the single split, or the chosen C with NaN solution for folds).
func (r *run) search(splits []*split) (*candidate, error) {
	var (
		scores []Score
		best   *candidate
	)
	prepare := func(f int) (*split, error) {
		sp := splits[f]
		if sp.prepare == nil {
			return sp, nil
		}
		sp, err := sp.prepare()
		if err != nil {
			return nil, err
		}
		splits[f] = sp
		if sp.fold > 0 { // the Euclidean error on the fold's validation rows
			e, err := r.exec.KNNErrors(r.b, nil, sp.prob.X, sp.prob.Y, r.k, queries(sp.valX, sp.valY))
			if err != nil {
				return nil, fmt.Errorf("psdlearn: %s: Euclidean validation: %w", r.name, err)
			}
			r.euclidVal += e[0] / float64(len(splits))
		}
		return sp, nil
	}
	sp0, err := prepare(0)
	if err != nil {
		return nil, err
	}
	batch, err := r.followData(sp0)
	if err != nil {
		return nil, err
	}
	for len(batch) > 0 {
		sum := make([]float64, len(batch))
		last := make([]*candidate, len(batch))
		for f := range splits {
			sp, err := prepare(f)
			if err != nil {
				return nil, err
			}
			for i, c := range batch {
				cand, err := r.solveWith(sp, c, math.NaN(), solveScreen)
				if err != nil {
					return nil, err
				}
				if cand.score, err = r.score(sp, cand.sol); err != nil {
					return nil, err
				}
				sum[i] += cand.score
				last[i] = cand
				r.keep(cand)
				r.say("%s", summaryWithScore(cand, r.res.Selection, r.k))
			}
		}
		for i, c := range batch {
			s := Score{C: c, ValError: sum[i] / float64(len(splits)), Iterations: last[i].sol.Iterations, DualityGap: last[i].sol.DualityGap, Converged: last[i].sol.Converged}
			scores = append(scores, s)
			if best == nil || better(s.ValError, c, best.score, best.c) {
				best = &candidate{sp: last[i].sp, sol: last[i].sol, c: c, score: s.ValError}
			}
		}
		slices.SortFunc(scores, func(a, b Score) int { return cmp.Compare(a.C, b.C) })
		batch = r.next(scores)
	}
	r.res.Scores = scores
	for _, s := range scores {
		r.res.Searched = append(r.res.Searched, s.C)
	}
	if len(splits) == 1 {
		// The chosen candidate, from its own point, to the certificate
		// (a screening solver's candidates stopped short of it).
		if _, ok := best.sp.solver.(screeningSolver); ok {
			refined, err := r.solveWith(best.sp, best.c, best.score, solveRefine)
			if err != nil {
				return nil, err
			}
			return refined, nil
		}
	}
	return best, nil
}

// summaryWithScore is the progress line of a scored solve.
func summaryWithScore(c *candidate, sel Selection, k int) string {
	s := c.sol.Summary
	if c.sp.fold > 0 {
		s = fmt.Sprintf("fold %d: %s", c.sp.fold, s)
	}
	if sel == SelectHeldOut {
		return s + progress.Number(", validation triplets violated %.4f", c.score, "")
	}
	return s + progress.Number(fmt.Sprintf(", validation %d-NN error %%.4f", k), c.score, "")
}

// score is the validation error of sol on sp: the k-NN error on the
// validation rows, or the fraction of validation triplets violated.
func (r *run) score(sp *split, sol *Solution) (float64, error) {
	met, err := r.metric(sol.M)
	if err != nil {
		return math.NaN(), fmt.Errorf("psdlearn: %s: learned matrix: %w", r.name, err)
	}
	if sp.valTS != nil {
		s, err := satisfaction(met, sp.prob.X, sp.valTS)
		return 1 - s, err
	}
	e, err := r.exec.KNNErrors(r.b, met.L, sp.prob.X, sp.prob.Y, r.k, queries(sp.valX, sp.valY))
	if err != nil {
		return math.NaN(), fmt.Errorf("psdlearn: %s: validation: %w", r.name, err)
	}
	return e[0], nil
}

func dimOf(x *mat.Dense) int {
	_, d := x.Dims()
	return d
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// asInvalid marks an error of the preprocessing on the caller's data as
// invalid input unless it has a class already.
func asInvalid(err error) error {
	if errors.Is(err, ErrInvalid) || isClassified(err) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrInvalid, err)
}
