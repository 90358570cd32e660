package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/algos/lmnn"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/internal/jsonnum"
	"github.com/psdlearn/psdlearn/progress"
	"gonum.org/v1/gonum/mat"
)

// BoostFig2Dims are the input dimensions of BoostFig2: the paper's range,
// 50 to 1,000, and on to 2,000.
var BoostFig2Dims = []int{50, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1500, 2000}

// The protocol of BoostFig2. The paper fixes the number of triplets (250)
// and the data (its Figure 1's concentric circles), not the number of
// points, the radii, the noise scale or a test set; these are ours.
const (
	// BoostFig2Triplets is the number of training triplets at every D.
	BoostFig2Triplets = 250
	// BoostFig2Train is the number of training points (25 per class): their
	// 3-NN triplets number 9 per point, 900, of which BoostFig2Triplets are
	// drawn at random.
	BoostFig2Train = 100
	// BoostFig2Test is the number of test points of the 3-NN test error.
	BoostFig2Test = 400
	// boostFig2K is the k of the triplets and of the k-NN test error.
	boostFig2K = 3
)

// BoostFig2Options configures BoostFig2.
type BoostFig2Options struct {
	// Backend runs both learners (nil: engine.Default()).
	Backend engine.Backend
	// Seed fixes the data, the triplets drawn and every random choice.
	Seed uint64
	// Dims are the input dimensions (nil: BoostFig2Dims); MaxDim > 0 drops
	// those above it, for quick runs.
	Dims   []int
	MaxDim int
	// PlotDir, if not empty, receives the figure as PNGs.
	PlotDir string
	// Progress, if non-nil, receives an event per dimension done.
	Progress progress.Func
}

// BoostFig2Run is one learner's training at one dimension.
type BoostFig2Run struct {
	// Seconds is the wall time of the training call alone (the data and
	// the triplets are made before it, the test error after), CPUSeconds
	// its CPU time (user and system, all threads).
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpu_seconds"`
	// Iterations are BoostMetric's rank-one terms or LMNN's subgradient
	// steps (accepted or rejected); Stop says why the run ended and
	// Converged whether that is the learner's own stopping rule.
	Iterations int    `json:"iterations"`
	Stop       string `json:"stop"`
	Converged  bool   `json:"converged"`
	// Rank is the rank of the learned metric: BoostMetric's terms, the
	// number of eigenvalues LMNN's last projection kept.
	Rank int `json:"rank"`
	// TestError is the 3-NN test error (fraction) in the learned metric,
	// NaN when the metric is zero or the run failed.
	TestError float64 `json:"test_error"`
	// Error is set when the run failed.
	Error string `json:"error,omitempty"`
}

// PerIteration is Seconds / Iterations (NaN without iterations).
func (r BoostFig2Run) PerIteration() float64 {
	if r.Iterations == 0 {
		return math.NaN()
	}
	return r.Seconds / float64(r.Iterations)
}

// MarshalJSON encodes the figures that are not known as null.
func (r BoostFig2Run) MarshalJSON() ([]byte, error) {
	type plain BoostFig2Run
	return json.Marshal(struct {
		plain
		Seconds      jsonnum.Float `json:"seconds"`
		CPUSeconds   jsonnum.Float `json:"cpu_seconds"`
		TestError    jsonnum.Float `json:"test_error"`
		PerIteration jsonnum.Float `json:"seconds_per_iteration"`
	}{plain(r), jsonnum.Float(r.Seconds), jsonnum.Float(r.CPUSeconds), jsonnum.Float(r.TestError), jsonnum.Float(r.PerIteration())})
}

// BoostFig2Row is one input dimension.
type BoostFig2Row struct {
	Dim int `json:"dim"`
	// Triplets is the number of training triplets (BoostFig2Triplets).
	Triplets int `json:"triplets"`
	// Euclidean is the 3-NN test error (fraction) in the Euclidean metric.
	Euclidean float64      `json:"euclidean_test_error"`
	Boost     BoostFig2Run `json:"boostmetric"`
	LMNN      BoostFig2Run `json:"lmnn"`
}

// Ratio is LMNN's time over BoostMetric's (NaN when either failed).
func (r BoostFig2Row) Ratio() float64 {
	if r.Boost.Error != "" || r.LMNN.Error != "" || r.Boost.Seconds <= 0 {
		return math.NaN()
	}
	return r.LMNN.Seconds / r.Boost.Seconds
}

// BoostFig2Report is the BoostMetric paper's Figure 2 reproduced: training
// time of stage-wise BoostMetric (exponential loss) and LMNN against the
// input dimension, on the concentric circles with 250 triplets.
type BoostFig2Report struct {
	Protocol string         `json:"protocol"`
	Backend  string         `json:"backend"`
	Rows     []BoostFig2Row `json:"rows"`
	// Figure1 is the check of the data on the paper's Figure 1 setting.
	Figure1 *BoostFig1 `json:"figure1,omitempty"`
	// MaxDim is the --max-size of the run (0: none), named in the page's
	// command line.
	MaxDim  int      `json:"max_dim,omitempty"`
	Plots   []string `json:"plots,omitempty"`
	Machine string   `json:"machine"`
}

// BoostFig2Section is BoostFig2 with the report options: MaxSize is the
// largest input dimension run.
func BoostFig2Section(ctx context.Context, o ReportOptions) (Report, error) {
	if err := noCase(o, "boostfig2"); err != nil {
		return nil, err
	}
	return BoostFig2(ctx, BoostFig2Options{Backend: o.Backend, Seed: o.Seed, MaxDim: o.MaxSize, PlotDir: o.PlotDir, Progress: o.Progress})
}

// BoostFig2 times stage-wise BoostMetric with the exponential loss and
// LMNN (full-rank M, its defaults) on the same data and triplets at every
// input dimension D: BoostFig2Train + BoostFig2Test points of
// datasets.ConcentricCircles (D − 2 noise dimensions of standard deviation
// datasets.CirclesNoise), the first BoostFig2Train for training, the
// BoostFig2Triplets triplets drawn at random from their 3-NN triplets
// (BoostMetric learns from them; LMNN takes its target neighbours from them
// and searches its impostors itself among the training points, as it
// does), and the 3-NN test error of each learned metric on the rest.
// A learner that fails at one D is recorded in its run; the report goes on.
func BoostFig2(ctx context.Context, opt BoostFig2Options) (*BoostFig2Report, error) {
	b := engine.Or(opt.Backend)
	dims := opt.Dims
	if dims == nil {
		dims = BoostFig2Dims
	}
	rep := &BoostFig2Report{Backend: b.Name(), Machine: Machine(), MaxDim: opt.MaxDim,
		Protocol: fmt.Sprintf("%d training and %d test points of four concentric circles (radii 1 to 4) in the first two dimensions and Gaussian noise of standard deviation %g in the other D − 2; "+
			"%d triplets drawn at random (seeded) from the training points' %d-NN triplets (%d targets × %d impostors per point, Euclidean); "+
			"BoostMetric stage-wise with the exponential loss and its defaults (ν = %g, at most %d terms, the leading eigenpair by a dense eigensolver up to D = 200 and by Lanczos above); LMNN with its defaults (full-rank M, μ = %g, at most %d iterations), its target neighbours those of the triplets; "+
			"%d-NN test error; one run per D, the time of the training call alone",
			BoostFig2Train, BoostFig2Test, datasets.CirclesNoise, BoostFig2Triplets, boostFig2K, boostFig2K, boostFig2K,
			boost.DefaultNu, boost.DefaultIters, lmnn.DefaultMu, lmnn.DefaultMaxIter, boostFig2K)}
	for _, d := range dims {
		if opt.MaxDim > 0 && d > opt.MaxDim {
			continue
		}
		row, err := boostFig2Row(ctx, b, d, opt.Seed)
		if err != nil {
			return rep, err
		}
		rep.Rows = append(rep.Rows, row)
		if opt.Progress != nil {
			opt.Progress(progress.Event{Algorithm: "bench boostfig2", Objective: math.NaN(), Gap: math.NaN(),
				Message: fmt.Sprintf("boostfig2: D = %d: BoostMetric %.3g s (%d iterations), LMNN %.3g s (%d iterations)",
					d, row.Boost.Seconds, row.Boost.Iterations, row.LMNN.Seconds, row.LMNN.Iterations)})
		}
	}
	if len(rep.Rows) == 0 {
		return rep, fmt.Errorf("boostfig2: no dimension of %v is at most --max-size %d", dims, opt.MaxDim)
	}
	f1, err := BoostFigure1(ctx, b, opt.Seed)
	if err != nil {
		return rep, err
	}
	rep.Figure1 = f1
	if opt.PlotDir != "" {
		if err := os.MkdirAll(opt.PlotDir, 0o755); err != nil {
			return rep, err
		}
		files, err := rep.plot(opt.PlotDir)
		if err != nil {
			return rep, err
		}
		rep.Plots = files
	}
	return rep, nil
}

// BoostFig2Data returns the training and test sets of BoostFig2 at input
// dimension dim and the training triplets drawn from the training set.
func BoostFig2Data(b engine.Backend, dim int, seed uint64) (xTrain *mat.Dense, yTrain []int, xTest *mat.Dense, yTest []int, ts *constraints.TripletSet, err error) {
	x, y, err := datasets.ConcentricCircles(BoostFig2Train+BoostFig2Test, dim, datasets.CirclesNoise, seed)
	if err != nil {
		return nil, nil, nil, nil, nil, err
	}
	// ConcentricCircles cycles through the classes, so the first
	// BoostFig2Train points hold BoostFig2Train/4 of each.
	xTrain = mat.DenseCopyOf(x.Slice(0, BoostFig2Train, 0, dim))
	xTest = mat.DenseCopyOf(x.Slice(BoostFig2Train, BoostFig2Train+BoostFig2Test, 0, dim))
	yTrain, yTest = y[:BoostFig2Train], y[BoostFig2Train:]
	all, err := constraints.TripletsBLAS(engine.Or(b).BLAS(), xTrain, yTrain, boostFig2K)
	if err != nil {
		return nil, nil, nil, nil, nil, err
	}
	if len(all.Triplets) < BoostFig2Triplets {
		return nil, nil, nil, nil, nil, fmt.Errorf("boostfig2: %d triplets, want at least %d", len(all.Triplets), BoostFig2Triplets)
	}
	// A seeded draw without replacement, kept in the generator's order.
	rng := rand.New(rand.NewPCG(seed, uint64(dim)))
	pick := rng.Perm(len(all.Triplets))[:BoostFig2Triplets]
	slices.Sort(pick)
	sub := make([]constraints.Triplet, len(pick))
	for i, p := range pick {
		sub[i] = all.Triplets[p]
	}
	ts, err = constraints.NewTripletSet(BoostFig2Train, sub)
	if err != nil {
		return nil, nil, nil, nil, nil, err
	}
	return xTrain, yTrain, xTest, yTest, ts, nil
}

// boostFig2Row runs both learners at one dimension.
func boostFig2Row(ctx context.Context, b engine.Backend, dim int, seed uint64) (BoostFig2Row, error) {
	xTr, yTr, xTe, yTe, ts, err := BoostFig2Data(b, dim, seed)
	if err != nil {
		return BoostFig2Row{}, err
	}
	row := BoostFig2Row{Dim: dim, Triplets: ts.Len()}
	if row.Euclidean, err = eval.KNNError(b, xTr, yTr, xTe, yTe, boostFig2K); err != nil {
		return row, err
	}
	score := func(l *mat.Dense) float64 {
		if l == nil {
			return math.NaN()
		}
		e, err := eval.FactorKNNError(b, l, xTr, yTr, xTe, yTe, boostFig2K)
		if err != nil {
			return math.NaN()
		}
		return e
	}
	// Each learner is timed alone; a cancelled context stops the report.
	var run BoostFig2Run
	start, cpu0 := time.Now(), processCPU()
	res, err := boost.BoostMetric(ctx, xTr, ts, boost.Options{Loss: boost.Exp, Mode: boost.Stagewise, Backend: b, Seed: seed})
	run.Seconds, run.CPUSeconds = time.Since(start).Seconds(), cpuSince(cpu0)
	if ctx.Err() != nil {
		return row, ctx.Err()
	}
	if err != nil {
		run.Error, run.TestError = err.Error(), math.NaN()
	} else {
		run.Iterations, run.Stop, run.Rank = res.Iterations, res.Stop.String(), len(res.W)
		run.Converged = res.Stop == boost.StopConverged || res.Stop == boost.StopUnbounded
		run.TestError = score(res.Factor())
	}
	row.Boost = run

	run = BoostFig2Run{}
	start, cpu0 = time.Now(), processCPU()
	lres, err := lmnn.Learn(ctx, xTr, yTr, ts, lmnn.Options{Backend: b})
	run.Seconds, run.CPUSeconds = time.Since(start).Seconds(), cpuSince(cpu0)
	if ctx.Err() != nil {
		return row, ctx.Err()
	}
	if err != nil {
		run.Error, run.TestError = err.Error(), math.NaN()
	} else {
		run.Iterations, run.Stop, run.Converged = lres.Iterations, lres.Reason, lres.Converged
		if lres.L != nil {
			_, run.Rank = lres.L.Dims()
			if mat.Norm(lres.L, 1) == 0 {
				run.Rank = 0
			}
		}
		run.TestError = score(lres.L)
		if run.Rank == 0 {
			run.TestError = math.NaN()
		}
	}
	row.LMNN = run
	return row, nil
}

// cpuSince is the process CPU time since start in seconds (NaN where it
// cannot be read).
func cpuSince(start time.Duration) float64 {
	now := processCPU()
	if start < 0 || now < 0 {
		return math.NaN()
	}
	return (now - start).Seconds()
}
