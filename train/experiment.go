package train

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/model"

	"github.com/psdlearn/psdlearn/progress"
	"gonum.org/v1/gonum/mat"
)

// Experiment is one run of the experimental protocol (DESIGN.md §4):
// preprocessing fitted on the training part, LMNN triplets on it, a trainer,
// and k-NN evaluation of the learned metric next to the Euclidean one.
type Experiment struct {
	Algo             string
	Train, Val, Test *data.Dataset // Val may be nil
	Standardize      bool
	PCA              int // 0: off
	K                int // triplet and k-NN k; 0 means 3
	Seed             uint64
	Backend          engine.Backend // nil means engine.Default()
	Options          Options
	Progress         progress.Func
	// Source describes the data for the model's provenance
	// (Report.Provenance); nil describes Train alone.
	Source *Source
}

// Source is where the data of an Experiment came from, as recorded in
// model.Provenance: the data set as read, before Train, Val and Test were
// cut from it, its name and the split that cut them, and a separate test
// set if Test was not cut from it.
type Source struct {
	Name  string        // a data SPEC such as "builtin:iris" (default Data.Name)
	Data  *data.Dataset // as read, before the split
	Split string        // as --split spells it: "0.7,0.15,0.15" (seeded by Experiment.Seed) or "rows:…"; "" for none
	// TestName and Test describe a separate test set (psdlearn train
	// --test); nil Test means Test was cut from Data by Split.
	TestName string
	Test     *data.Dataset
}

// Report is the outcome of an Experiment. Errors are fractions in [0, 1];
// fields that do not apply are NaN.
type Report struct {
	Algo, Backend                       string
	NTrain, NVal, NTest, InputDim, Dim  int
	K, Triplets, Iterations, Rank       int
	TrainSeconds                        float64
	Objective, DualityGap, ChosenC      float64
	ValError, TestError                 float64
	EuclideanValError, EuclideanTestErr float64
	Curve                               []float64
	Candidates                          []Candidate   // model selection (see Output.Candidates)
	CPolicy                             string        // see Output.CPolicy
	Searched                            []float64     // see Output.Searched
	Metric                              *model.Metric // in the preprocessed space
	Pipeline                            *data.Pipeline
	// Provenance is what to record in the model file: module and Go
	// versions, backend, seed, the split and the data of Experiment.Source
	// (Train when it is nil), created now; zero its Created for a
	// reproducible file.
	Provenance *model.Provenance
	// Converged, Reason, GapTol and Warnings are the trainer's (see
	// Output); a trainer that reports no certificate gets a warning saying
	// so, and a cancelled run is never Converged.
	Converged bool
	Reason    string
	GapTol    float64
	Warnings  []string
	// Phases is where the time went.
	Phases Phases
}

// Phases are the wall times of the stages of an experiment, in seconds.
// Load is left to the caller, which loads the data before RunExperiment.
// Train covers every solve and the validation evaluations inside the
// trainer; Solves breaks the solves down (one per C value tried).
type Phases struct {
	Load       float64 `json:"load"`
	Preprocess float64 `json:"preprocess"`
	Triplets   float64 `json:"triplets"`
	Train      float64 `json:"train"`
	Solves     []Solve `json:"solves"`
	Evaluation float64 `json:"evaluation"`
}

// finish fills the certificate fields of r from the trainer's output.
func (r *Report) finish(out Output, cancelled bool) {
	r.Converged, r.Reason, r.GapTol = out.Converged && !cancelled, out.Reason, out.GapTol
	if !(r.GapTol > 0) { // unset: no tolerance to report
		r.GapTol = math.NaN()
	}
	r.Warnings = append([]string(nil), out.Warnings...)
	r.Phases.Solves = out.Solves
	switch {
	case cancelled:
		r.Reason = "cancelled"
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: interrupted: the model is the best found before the cancellation, not certified", r.Algo))
	case !r.Converged && len(r.Warnings) == 0:
		reason := out.Reason
		if reason == "" {
			reason = "the trainer reported no certificate"
		}
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: not converged (%s)", r.Algo, reason))
	}
}

// RunExperiment runs e and evaluates the learned metric.
//
// On cancellation during training it returns the best iterate so far — a
// Report holding the metric the trainer returned with the cancellation (its
// training summary filled in, the evaluation fields NaN: nothing is
// evaluated after a cancellation), or nil if the trainer returned none — and
// an error wrapping ctx.Err(). Cancelled before training, it returns nil.
func RunExperiment(ctx context.Context, e Experiment) (*Report, error) {
	trainer, err := Lookup(e.Algo)
	if err != nil {
		return nil, err
	}
	if e.Train == nil || e.Test == nil {
		return nil, fmt.Errorf("train: experiment needs training and test data")
	}
	k := e.K
	if k == 0 {
		k = 3
	}
	if k < 1 || e.PCA < 0 {
		return nil, fmt.Errorf("train: k must be ≥ 1 and PCA ≥ 0 (got k = %d, PCA = %d)", k, e.PCA)
	}
	// k-NN evaluation needs k training points: reject a too-large k before
	// spending any time on triplets and training.
	if n := e.Train.Len(); k > n {
		return nil, fmt.Errorf("train: k = %d is larger than the %d training points", k, n)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	b := engine.Or(e.Backend)
	say := progress.Printf(e.Progress, "train")
	if say == nil {
		say = func(string, ...any) {}
	}
	var ph Phases
	tPre := time.Now()
	pipe, err := data.FitPipeline(b, e.Train.X, e.Standardize, e.PCA)
	if err != nil {
		return nil, fmt.Errorf("train: preprocessing: %w", err)
	}
	tr, err := data.ApplyDatasetBLAS(pipe, b.BLAS(), e.Train)
	if err != nil {
		return nil, err
	}
	test, err := data.ApplyDatasetBLAS(pipe, b.BLAS(), e.Test)
	if err != nil {
		return nil, err
	}
	val := e.Val
	if val != nil {
		if val, err = data.ApplyDatasetBLAS(pipe, b.BLAS(), val); err != nil {
			return nil, err
		}
	}
	ph.Preprocess = time.Since(tPre).Seconds()
	tTrip := time.Now()
	ts, err := constraints.TripletsBLAS(b.BLAS(), tr.X, tr.Y, k)
	if err != nil {
		return nil, fmt.Errorf("train: triplets: %w", err)
	}
	ph.Triplets = time.Since(tTrip).Seconds()
	say("train: %d triplets on %d points", ts.Len(), tr.Len())
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}

	t0 := time.Now()
	out, err := trainer(ctx, Input{
		Train: tr, Val: val, Triplets: ts, K: k, Seed: e.Seed, Backend: b,
		Options: e.Options, Progress: e.Progress,
	})
	r := &Report{
		Algo: strings.ToLower(e.Algo), Backend: b.Name(),
		NTrain: tr.Len(), NVal: val.Len(), NTest: test.Len(), InputDim: e.Train.Dim(), Dim: tr.Dim(),
		K: k, Triplets: ts.Len(), Iterations: out.Iterations, TrainSeconds: time.Since(t0).Seconds(),
		Objective: out.Objective, DualityGap: out.DualityGap, ChosenC: out.ChosenC,
		ValError: math.NaN(), EuclideanValError: math.NaN(), Curve: out.Curve, Pipeline: pipe,
		Candidates: out.Candidates, CPolicy: out.CPolicy, Searched: out.Searched, Phases: ph,
	}
	r.Phases.Train = r.TrainSeconds
	r.Provenance = e.provenance(b.Name())
	r.finish(out, err != nil && ctx.Err() != nil)
	if err != nil {
		err = fmt.Errorf("train: %s: %w", e.Algo, err)
		if ctx.Err() == nil || out.M == nil || out.M.SymmetricDim() != tr.Dim() {
			return nil, err
		}
		// Cancelled with a metric: hand it back unevaluated.
		m, merr := model.NewMetric(out.M)
		if merr != nil {
			return nil, err
		}
		r.Metric, r.Rank = m, m.Rank()
		r.ValError, r.TestError, r.EuclideanTestErr = math.NaN(), math.NaN(), math.NaN()
		return r, err
	}
	if out.M == nil || out.M.SymmetricDim() != tr.Dim() {
		return nil, fmt.Errorf("train: %s returned no %d×%d metric", e.Algo, tr.Dim(), tr.Dim())
	}
	if r.Metric, err = model.NewMetric(out.M); err != nil {
		return nil, fmt.Errorf("train: %s: learned matrix: %w", e.Algo, err)
	}
	r.Rank = r.Metric.Rank()
	tEval := time.Now()
	defer func() { r.Phases.Evaluation = time.Since(tEval).Seconds() }()
	// The learned metric and the Euclidean one are each scored on the test
	// and validation parts in one search. The validation error of the
	// returned metric is recomputed here rather than trusted from the
	// trainer.
	sets := []eval.Queries{{X: test.X, Y: test.Y}}
	if val != nil {
		sets = append(sets, eval.Queries{X: val.X, Y: val.Y})
	}
	learned, err := eval.FactorKNNErrors(b, r.Metric.L, tr.X, tr.Y, k, sets...)
	if err != nil {
		return nil, fmt.Errorf("train: evaluation: %w", err)
	}
	euclid, err := eval.FactorKNNErrors(b, nil, tr.X, tr.Y, k, sets...)
	if err != nil {
		return nil, fmt.Errorf("train: evaluation: %w", err)
	}
	r.TestError, r.EuclideanTestErr = learned[0], euclid[0]
	if val != nil {
		r.ValError, r.EuclideanValError = learned[1], euclid[1]
		if w := WorseThanEuclidean(r.Algo, r.ValError, r.EuclideanValError, val.Len()); w != "" {
			r.Warnings = append(r.Warnings, w)
		}
	}
	return r, nil
}

// provenance returns the model provenance of e run on the backend called
// backend.
func (e Experiment) provenance(backend string) *model.Provenance {
	p := model.NewProvenance(backend, e.Seed)
	describe := func(name string, d *data.Dataset) *model.DataInfo {
		if d == nil {
			return nil
		}
		if name == "" {
			name = d.Name
		}
		return model.DescribeData(name, d.X, d.Y, d.Classes)
	}
	src := e.Source
	if src == nil || src.Data == nil {
		p.Data = describe("", e.Train)
		if src != nil {
			p.Data.Name = cmp.Or(src.Name, p.Data.Name)
		}
	} else {
		p.Data, p.Split = describe(src.Name, src.Data), src.Split
	}
	if src != nil && src.Test != nil {
		p.Test = describe(src.TestName, src.Test)
	}
	return p
}

// ConstraintExperiment learns a metric from constraints a user gives on the
// rows of Data — triplets, or similar/dissimilar pairs turned into triplets
// (constraints.PairTriplets) — instead of triplets generated from labels.
// Labels, if Data has any, are not used: there is no label-based split and
// no k-NN evaluation. The preprocessing (Standardize, PCA) is fitted on all
// rows, which involves no constraint.
//
// The constraints themselves are split, seeded by Seed: a share HoldOut of
// them is held out (never trained on, never used to choose C) and the
// learned metric is scored on it by its triplet satisfaction rate
// (Satisfaction), next to the Euclidean metric's. When Options.C lists
// several values, the same share HoldOut of the rest is a validation part:
// a metric is learned from the training part for every C and the one that
// violates the fewest validation triplets is kept (ties: the smaller C). The
// unit of the split is the triplet for Triplets and the pair for Pairs: a
// triplet built from pairs is held out when either of its two pairs is,
// else it is in validation when either pair is, so the training triplets
// use training pairs only.
type ConstraintExperiment struct {
	Algo string
	// Data holds the rows the constraints index (its labels are ignored).
	Data *data.Dataset
	// Exactly one of Triplets and Pairs is given.
	Triplets []constraints.Triplet
	Pairs    *constraints.Pairs
	// MaxTriplets caps the triplets built from Pairs (0:
	// constraints.MaxReadConstraints).
	MaxTriplets int
	// HoldOut is the share of the constraints held out to score the metric
	// (and of the rest to choose C from several values); 0 trains on them
	// all, which leaves nothing to score on and cannot choose among
	// several C. It must be below 1.
	HoldOut     float64
	Standardize bool
	PCA         int
	Seed        uint64
	Backend     engine.Backend
	Options     Options
	Progress    progress.Func
	Source      *Source
}

// ConstraintReport is the outcome of a ConstraintExperiment: the Report
// (NTrain is the number of rows, every one of which the preprocessing and
// the triplets may use; NVal = NTest = 0; the k-NN errors are NaN;
// Triplets counts the training triplets; ValError is the fraction of
// validation triplets the chosen metric violates and Candidates' ValError
// the same per C) with the held-out scores.
type ConstraintReport struct {
	Report
	// ValTriplets and HeldOutTriplets are the sizes of the validation
	// (choosing C) and held-out (scoring) parts.
	ValTriplets, HeldOutTriplets int
	// Satisfaction and EuclideanSatisfaction are the fractions of the
	// held-out triplets (i, j, k) with d(i,j) < d(i,k) under the learned and
	// the Euclidean metric (on the preprocessed data); NaN with no held-out
	// triplet.
	Satisfaction, EuclideanSatisfaction float64
}

// Satisfaction returns the fraction of the triplets (i, j, k) of ts with
// d_M(x_i, x_j) < d_M(x_i, x_k), strictly (a tie counts as a violation),
// for the metric m (nil: Euclidean) on the rows of x.
func Satisfaction(m *model.Metric, x *mat.Dense, ts *constraints.TripletSet) (float64, error) {
	if ts == nil || ts.Len() == 0 {
		return math.NaN(), nil
	}
	if x == nil {
		return math.NaN(), fmt.Errorf("train: satisfaction: nil data")
	}
	n, d := x.Dims()
	if ts.N != n {
		return math.NaN(), fmt.Errorf("train: satisfaction: triplets on %d points, data of %d rows", ts.N, n)
	}
	if m == nil {
		m = model.Identity(d)
	}
	dist := make([]float64, len(ts.Pairs))
	if err := m.PairSqDistances(dist, x, ts.Pairs); err != nil {
		return math.NaN(), fmt.Errorf("train: satisfaction: %w", err)
	}
	h := make([]float64, ts.Len())
	ts.Margins(h, dist)
	ok := 0
	for _, v := range h {
		if v > 0 {
			ok++
		}
	}
	return float64(ok) / float64(len(h)), nil
}

// constraintSeedStream is the PCG stream of the constraint split.
const constraintSeedStream = 0xc0_45_7a_1e_5b_11

// splitConstraints assigns each of m constraints a part: 0 train, 1
// validation, 2 held out. The held-out part has round(holdOut·m)
// constraints (at least one when holdOut > 0), the validation part, when
// wanted, round(holdOut·rest) of the rest (at least one).
func splitConstraints(m int, holdOut float64, val bool, seed uint64) []uint8 {
	part := make([]uint8, m)
	if holdOut <= 0 {
		return part
	}
	rng := rand.New(rand.NewPCG(seed, constraintSeedStream))
	perm := rng.Perm(m)
	nTest := max(1, int(math.Round(holdOut*float64(m))))
	nVal := 0
	if val {
		nVal = max(1, int(math.Round(holdOut*float64(m-nTest))))
	}
	for r, i := range perm {
		switch {
		case r < nTest:
			part[i] = 2
		case r < nTest+nVal:
			part[i] = 1
		}
	}
	return part
}

// RunConstraintExperiment runs e (see ConstraintExperiment). On
// cancellation during training it returns, like RunExperiment, the metric
// in hand unevaluated with an error wrapping ctx.Err().
func RunConstraintExperiment(ctx context.Context, e ConstraintExperiment) (*ConstraintReport, error) {
	trainer, err := Lookup(e.Algo)
	if err != nil {
		return nil, err
	}
	if e.Data == nil || e.Data.X == nil {
		return nil, fmt.Errorf("train: constraint experiment needs data")
	}
	if (e.Pairs == nil) == (len(e.Triplets) == 0) {
		return nil, fmt.Errorf("train: give triplets or pairs, not both or neither")
	}
	if !(e.HoldOut >= 0 && e.HoldOut < 1) || e.PCA < 0 {
		return nil, fmt.Errorf("train: hold-out share %v outside [0, 1) or PCA %d < 0", e.HoldOut, e.PCA)
	}
	if e.Options.Passes > 1 {
		return nil, fmt.Errorf("train: multi-pass regenerates triplets from labels; it cannot learn from given constraints")
	}
	choose := len(e.Options.C) > 1
	if choose && e.HoldOut == 0 {
		return nil, fmt.Errorf("train: choosing among %d values of C needs held-out constraints (a hold-out share above 0)", len(e.Options.C))
	}
	n := e.Data.Len()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	b := engine.Or(e.Backend)
	say := progress.Printf(e.Progress, "train")
	if say == nil {
		say = func(string, ...any) {}
	}

	// Split the constraints into training, validation and held-out triplets.
	tTrip := time.Now()
	var parts [3][]constraints.Triplet
	unit := "triplets"
	if e.Pairs != nil {
		unit = "pairs"
		if e.Pairs.N != n {
			return nil, fmt.Errorf("train: pairs on %d points, data of %d rows", e.Pairs.N, n)
		}
		all, err := constraints.PairTriplets(e.Pairs, e.MaxTriplets)
		if err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
		pp := splitConstraints(e.Pairs.Len(), e.HoldOut, choose, e.Seed)
		partOf := make(map[[2]int]uint8, e.Pairs.Len())
		for r, q := range e.Pairs.List {
			partOf[[2]int{q.A, q.B}] = pp[r]
		}
		key := func(a, b int) [2]int { return [2]int{min(a, b), max(a, b)} }
		for _, t := range all {
			p := max(partOf[key(t.I, t.J)], partOf[key(t.I, t.K)])
			parts[p] = append(parts[p], t)
		}
	} else {
		tp := splitConstraints(len(e.Triplets), e.HoldOut, choose, e.Seed)
		for r, t := range e.Triplets {
			parts[tp[r]] = append(parts[tp[r]], t)
		}
	}
	if len(parts[0]) == 0 {
		return nil, fmt.Errorf("train: no training triplet is left after holding out a share %g of the %s", e.HoldOut, unit)
	}
	if e.HoldOut > 0 && len(parts[2]) == 0 {
		return nil, fmt.Errorf("train: the held-out %s give no triplet to score on; give more constraints or a larger hold-out share", unit)
	}
	if choose && len(parts[1]) == 0 {
		return nil, fmt.Errorf("train: the validation %s give no triplet to choose C on; give more constraints or a single C", unit)
	}
	var sets [3]*constraints.TripletSet
	for p, ts := range parts {
		if len(ts) == 0 {
			continue
		}
		if sets[p], err = constraints.NewTripletSet(n, ts); err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
	}
	var ph Phases
	ph.Triplets = time.Since(tTrip).Seconds()
	say("train: %d training, %d validation, %d held-out triplets on %d points", len(parts[0]), len(parts[1]), len(parts[2]), n)

	tPre := time.Now()
	pipe, err := data.FitPipeline(b, e.Data.X, e.Standardize, e.PCA)
	if err != nil {
		return nil, fmt.Errorf("train: preprocessing: %w", err)
	}
	x, err := pipe.ApplyBLAS(b.BLAS(), e.Data.X)
	if err != nil {
		return nil, fmt.Errorf("train: preprocessing: %w", err)
	}
	ph.Preprocess = time.Since(tPre).Seconds()
	tr := &data.Dataset{Name: e.Data.Name, X: x}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}

	fit := func(opt Options) (Output, error) {
		return trainer(ctx, Input{Train: tr, Triplets: sets[0], Seed: e.Seed, Backend: b, Options: opt, Progress: e.Progress})
	}
	t0 := time.Now()
	var (
		out    Output
		chosen = math.NaN()
	)
	if !choose {
		out, err = fit(e.Options)
		chosen = out.ChosenC
	} else {
		cs := slices.Clone(e.Options.C)
		slices.Sort(cs)
		var (
			solves     []Solve
			warnings   []string
			candidates []Candidate
		)
		out, chosen, _, err = SelectC(cs, func(c float64) (Output, float64, error) {
			opt := e.Options
			opt.C = []float64{c}
			o, err := fit(opt)
			solves = append(solves, o.Solves...)
			warnings = append(warnings, o.Warnings...)
			if err != nil {
				return o, math.NaN(), err
			}
			valErr := math.NaN()
			if o.M != nil && o.M.SymmetricDim() == tr.Dim() {
				m, merr := model.NewMetric(o.M)
				if merr != nil {
					return o, math.NaN(), fmt.Errorf("C = %g: learned matrix: %w", c, merr)
				}
				s, serr := Satisfaction(m, x, sets[1])
				if serr != nil {
					return o, math.NaN(), serr
				}
				valErr = 1 - s
			}
			candidates = append(candidates, Candidate{C: c, ValError: valErr, Iterations: o.Iterations, DualityGap: o.DualityGap, Converged: o.Converged})
			say("train: C = %g: %.4f of the %d validation triplets violated", c, valErr, sets[1].Len())
			return o, valErr, nil
		})
		out.Solves, out.Warnings, out.Candidates = solves, warnings, candidates
	}
	cancelled := err != nil && ctx.Err() != nil
	r := &ConstraintReport{
		Report: Report{
			Algo: strings.ToLower(e.Algo), Backend: b.Name(),
			NTrain: n, InputDim: e.Data.Dim(), Dim: tr.Dim(),
			Triplets: len(parts[0]), Iterations: out.Iterations, TrainSeconds: time.Since(t0).Seconds(),
			Objective: out.Objective, DualityGap: out.DualityGap, ChosenC: chosen,
			ValError: math.NaN(), TestError: math.NaN(), EuclideanValError: math.NaN(), EuclideanTestErr: math.NaN(),
			Curve: out.Curve, Pipeline: pipe, Candidates: out.Candidates, Phases: ph,
		},
		ValTriplets: len(parts[1]), HeldOutTriplets: len(parts[2]),
		Satisfaction: math.NaN(), EuclideanSatisfaction: math.NaN(),
	}
	r.Phases.Train = r.TrainSeconds
	r.Provenance = Experiment{Seed: e.Seed, Train: e.Data, Source: e.Source}.provenance(b.Name())
	r.finish(out, cancelled)
	if err != nil {
		err = fmt.Errorf("train: %s: %w", e.Algo, err)
		if !cancelled || out.M == nil || out.M.SymmetricDim() != tr.Dim() {
			return nil, err
		}
		m, merr := model.NewMetric(out.M)
		if merr != nil {
			return nil, err
		}
		r.Metric, r.Rank = m, m.Rank()
		return r, err
	}
	if out.M == nil || out.M.SymmetricDim() != tr.Dim() {
		return nil, fmt.Errorf("train: %s returned no %d×%d metric", e.Algo, tr.Dim(), tr.Dim())
	}
	if r.Metric, err = model.NewMetric(out.M); err != nil {
		return nil, fmt.Errorf("train: %s: learned matrix: %w", e.Algo, err)
	}
	r.Rank = r.Metric.Rank()
	tEval := time.Now()
	if choose {
		if s, err := Satisfaction(r.Metric, x, sets[1]); err == nil {
			r.ValError = 1 - s
		}
		if s, err := Satisfaction(nil, x, sets[1]); err == nil {
			r.EuclideanValError = 1 - s
		}
	}
	if r.Satisfaction, err = Satisfaction(r.Metric, x, sets[2]); err != nil {
		return nil, err
	}
	if r.EuclideanSatisfaction, err = Satisfaction(nil, x, sets[2]); err != nil {
		return nil, err
	}
	r.Phases.Evaluation = time.Since(tEval).Seconds()
	return r, nil
}
