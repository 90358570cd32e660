package train

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/model"

	"github.com/psdlearn/psdlearn/progress"
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
		Candidates: out.Candidates, Phases: ph,
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
	if r.TestError, err = eval.MetricKNNError(b, r.Metric, tr.X, tr.Y, test.X, test.Y, k); err != nil {
		return nil, fmt.Errorf("train: evaluation: %w", err)
	}
	if r.EuclideanTestErr, err = eval.KNNError(b, tr.X, tr.Y, test.X, test.Y, k); err != nil {
		return nil, fmt.Errorf("train: evaluation: %w", err)
	}
	// The validation error of the returned metric is recomputed here rather
	// than trusted from the trainer.
	if val != nil {
		if r.ValError, err = eval.MetricKNNError(b, r.Metric, tr.X, tr.Y, val.X, val.Y, k); err != nil {
			return nil, fmt.Errorf("train: evaluation: %w", err)
		}
		if r.EuclideanValError, err = eval.KNNError(b, tr.X, tr.Y, val.X, val.Y, k); err != nil {
			return nil, fmt.Errorf("train: evaluation: %w", err)
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
