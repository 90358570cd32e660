package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/algos/lmnn"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/internal/jsonnum"
	"github.com/psdlearn/psdlearn/internal/plots"
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
		TestError    jsonnum.Float `json:"test_error"`
		PerIteration jsonnum.Float `json:"seconds_per_iteration"`
	}{plain(r), jsonnum.Float(r.TestError), jsonnum.Float(r.PerIteration())})
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

// BoostFig1 is BoostMetric on the setting of the paper's Figure 1: the
// concentric circles in 10 dimensions (8 of noise), 1,000 training points
// whose 3-NN triplets number 9,000, as the paper's, and 400 test points.
type BoostFig1 struct {
	Dim      int `json:"dim"`
	Triplets int `json:"triplets"`
	// Eigenvalues are the three largest eigenvalues of the learned X
	// divided by its trace (the paper's: 0.542, 0.414, 0.007).
	Eigenvalues []float64 `json:"eigenvalues"`
	// Circles is the share of tr X on the two circle coordinates,
	// (X₁₁ + X₂₂)/tr X: 1 when the metric sees the circles only.
	Circles    float64 `json:"circles_share"`
	Iterations int     `json:"iterations"`
	Stop       string  `json:"stop"`
	// TestError and Euclidean are 3-NN test errors (fractions).
	TestError float64 `json:"test_error"`
	Euclidean float64 `json:"euclidean_test_error"`
}

// boostFig1Eigen are the eigenvalues of X the paper reports for Figure 1.
var boostFig1Eigen = []float64{0.542, 0.414, 0.007}

// BoostFigure1 runs stage-wise BoostMetric with the exponential loss (the
// paper's choice for Figure 1) on the Figure 1 setting of the circles.
func BoostFigure1(ctx context.Context, b engine.Backend, seed uint64) (*BoostFig1, error) {
	const dim, nTrain = 10, 1000
	b = engine.Or(b)
	x, y, err := datasets.ConcentricCircles(nTrain+BoostFig2Test, dim, datasets.CirclesNoise, seed)
	if err != nil {
		return nil, err
	}
	xTr := mat.DenseCopyOf(x.Slice(0, nTrain, 0, dim))
	xTe := mat.DenseCopyOf(x.Slice(nTrain, nTrain+BoostFig2Test, 0, dim))
	yTr, yTe := y[:nTrain], y[nTrain:]
	ts, err := constraints.TripletsBLAS(b.BLAS(), xTr, yTr, boostFig2K)
	if err != nil {
		return nil, err
	}
	res, err := boost.BoostMetric(ctx, xTr, ts, boost.Options{Loss: boost.Exp, Mode: boost.Stagewise, Backend: b, Seed: seed})
	if err != nil {
		return nil, fmt.Errorf("boostfig2: figure 1: %w", err)
	}
	f := &BoostFig1{Dim: dim, Triplets: ts.Len(), Iterations: res.Iterations, Stop: res.Stop.String(), TestError: math.NaN()}
	if f.Euclidean, err = eval.KNNError(b, xTr, yTr, xTe, yTe, boostFig2K); err != nil {
		return nil, err
	}
	m := res.Matrix(dim)
	tr := res.Trace()
	if tr <= 0 {
		return f, nil
	}
	var es mat.EigenSym
	if !es.Factorize(m, false) {
		return nil, fmt.Errorf("boostfig2: figure 1: eigendecomposition of X failed")
	}
	v := es.Values(nil)
	for i := len(v) - 1; i >= len(v)-3; i-- {
		f.Eigenvalues = append(f.Eigenvalues, v[i]/tr)
	}
	f.Circles = (m.At(0, 0) + m.At(1, 1)) / tr
	if f.TestError, err = eval.FactorKNNError(b, res.Factor(), xTr, yTr, xTe, yTe, boostFig2K); err != nil {
		return nil, err
	}
	return f, nil
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

// Crossover is the smallest dimension from which on BoostMetric is faster
// than LMNN at every larger dimension measured, or 0 when it is not faster
// at the largest one (or no row has both times).
func (r *BoostFig2Report) Crossover() int {
	cross := 0
	for i := len(r.Rows) - 1; i >= 0; i-- {
		q := r.Rows[i].Ratio()
		if math.IsNaN(q) || q <= 1 {
			break
		}
		cross = r.Rows[i].Dim
	}
	return cross
}

// boostFig2Claim is the paper's claim, in our words.
const boostFig2Claim = `The BoostMetric paper (Shen, Kim, Wang and van den Hengel, "Positive Semidefinite Metric Learning Using Boosting-like Algorithms", JMLR 2012) compares the training time of stage-wise BoostMetric with the exponential loss and of LMNN on its concentric-circles toy set (Figure 1: four classes on concentric circles in the first two dimensions, Gaussian noise in the others), varying the input dimension from 50 to 1,000 with the number of triplets fixed at 250 (its Figure 2, run in Matlab). Its claim: at low dimension the two are comparable; as the dimension grows BoostMetric becomes significantly faster, because each of its iterations needs only the leading eigenvector of a D×D matrix (O(D²) by the paper's count), while each LMNN iteration projects onto the PSD cone with a full eigendecomposition (O(D³)). The paper prints the curves only, no table.`

// Markdown writes the report as a docs/ page.
func (r *BoostFig2Report) Markdown(w io.Writer) error {
	var b strings.Builder
	cmd := "psdlearn bench --suite boostfig2 --md docs/boostmetric-figure2.md --plot docs/plots"
	if r.MaxDim > 0 {
		cmd = fmt.Sprintf("psdlearn bench --suite boostfig2 --max-size %d --md docs/boostmetric-figure2.md --plot docs/plots", r.MaxDim)
	}
	fmt.Fprintf(&b, "# BoostMetric's Figure 2: training time against input dimension\n\nThis page is generated by `%s`; do not edit it by hand.\n\n", cmd)
	fmt.Fprintf(&b, "## What the paper claims\n\n%s\n\n", boostFig2Claim)
	if f := r.Figure1; f != nil {
		b.WriteString("## The data: the paper's Figure 1\n\n")
		fmt.Fprintf(&b, "The generated circles are checked on the paper's Figure 1 setting (D = %d, eight noise dimensions, %d triplets from 1,000 training points, stage-wise BoostMetric with the exponential loss): "+
			"the learned X has the normalised leading eigenvalues %s against the paper's %s, %.1f%% of its trace on the two circle coordinates, "+
			"and a 3-NN test error of %s%% on 400 test points against %s%% for the Euclidean metric (%d terms, %s).\n\n",
			f.Dim, f.Triplets, fig2List(f.Eigenvalues), fig2List(boostFig1Eigen), 100*f.Circles, fig2Pct(f.TestError), fig2Pct(f.Euclidean), f.Iterations, f.Stop)
	}
	fmt.Fprintf(&b, "## What we measured\n\nProtocol: %s. Backend %s; machine: %s. Times are wall-clock seconds (CPU seconds, all threads, in parentheses); test errors in percent; the stop column says why each run ended.\n\n", r.Protocol, r.Backend, r.Machine)
	b.WriteString("| D | BoostMetric s | terms | s/term | stop | test error | LMNN s | iterations | s/iteration | stop | rank | test error | Euclidean | LMNN / BoostMetric |\n")
	b.WriteString("|---:|---:|---:|---:|---|---:|---:|---:|---:|---|---:|---:|---:|---:|\n")
	for _, row := range r.Rows {
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %s | %s | %s |\n", row.Dim,
			fig2Secs(row.Boost), fig2Iters(row.Boost), fig2Num(row.Boost.PerIteration()), fig2Stop(row.Boost), fig2Pct(row.Boost.TestError),
			fig2Secs(row.LMNN), fig2Iters(row.LMNN), fig2Num(row.LMNN.PerIteration()), fig2Stop(row.LMNN), row.LMNN.Rank, fig2Pct(row.LMNN.TestError),
			fig2Pct(row.Euclidean), fig2Ratio(row.Ratio()))
	}
	b.WriteString("\n")
	b.WriteString(r.verdict())
	if warns := r.warnings(); len(warns) > 0 {
		b.WriteString("\n### Warnings\n\n")
		for _, s := range warns {
			fmt.Fprintf(&b, "- %s\n", s)
		}
	}
	for _, p := range r.Plots {
		fmt.Fprintf(&b, "\n![%s](%s)\n", filepath.Base(p), plotLink(p))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// boostFig2Chance is the 3-NN test error of a guess among the four
// balanced classes.
const boostFig2Chance = 0.75

// warnings lists, per learner, the dimensions where its run failed, learned
// a zero metric, stopped at its iteration limit or tested worse than the
// Euclidean metric, and says when every test error is near chance.
func (r *BoostFig2Report) warnings() []string {
	var out []string
	near := true
	for _, v := range []struct {
		name string
		run  func(BoostFig2Row) BoostFig2Run
	}{{"BoostMetric", func(r BoostFig2Row) BoostFig2Run { return r.Boost }}, {"LMNN", func(r BoostFig2Row) BoostFig2Run { return r.LMNN }}} {
		var limit, worse, zero []string
		for _, row := range r.Rows {
			run := v.run(row)
			d := fmt.Sprint(row.Dim)
			switch {
			case run.Error != "":
				out = append(out, fmt.Sprintf("%s failed at D = %d: %s", v.name, row.Dim, run.Error))
				continue
			case math.IsNaN(run.TestError):
				zero = append(zero, d)
			case run.TestError > row.Euclidean:
				worse = append(worse, d)
			}
			if !run.Converged {
				limit = append(limit, d)
			}
			near = near && !(run.TestError < boostFig2Chance-0.1)
		}
		if len(limit) > 0 {
			out = append(out, fmt.Sprintf("%s stopped at its iteration limit, not its stopping rule, at D = %s: its time there is that of the limit.", v.name, strings.Join(limit, ", ")))
		}
		if len(zero) > 0 {
			out = append(out, fmt.Sprintf("%s learned a zero metric at D = %s.", v.name, strings.Join(zero, ", ")))
		}
		if len(worse) > 0 {
			out = append(out, fmt.Sprintf("%s's test error is above the Euclidean metric's at D = %s.", v.name, strings.Join(worse, ", ")))
		}
	}
	if near && len(r.Rows) > 0 {
		out = append(out, fmt.Sprintf("Every test error is within 10 points of chance (%.0f%% for four balanced classes): %d triplets on %d points do not single out the two circle dimensions among D ≥ %d. The figure measures time, as the paper's does; the Figure 1 check above shows the data are learnable with enough triplets.",
			100*boostFig2Chance, BoostFig2Triplets, BoostFig2Train, r.Rows[0].Dim))
	}
	return out
}

// verdict states, from the rows, whether the measurement bears the claim out.
func (r *BoostFig2Report) verdict() string {
	var ok []BoostFig2Row
	for _, row := range r.Rows {
		if !math.IsNaN(row.Ratio()) {
			ok = append(ok, row)
		}
	}
	if len(ok) == 0 {
		return "No dimension has both times: nothing to compare.\n"
	}
	lo, hi := ok[0], ok[len(ok)-1]
	perIter := func(row BoostFig2Row) string {
		return fmt.Sprintf("%s s per LMNN iteration against %s s per BoostMetric term", fig2Num(row.LMNN.PerIteration()), fig2Num(row.Boost.PerIteration()))
	}
	s := fmt.Sprintf("LMNN took %s× BoostMetric's time at D = %d and %s× at D = %d (%s at D = %d; %s at D = %d). ",
		fig2Ratio(lo.Ratio()), lo.Dim, fig2Ratio(hi.Ratio()), hi.Dim, perIter(lo), lo.Dim, perIter(hi), hi.Dim)
	switch c := r.Crossover(); {
	case c == lo.Dim:
		s += fmt.Sprintf("BoostMetric was faster at every dimension measured, from D = %d to %d.", lo.Dim, hi.Dim)
	case c > 0:
		s += fmt.Sprintf("BoostMetric was faster from D = %d on, as the paper claims for large dimensions.", c)
	default:
		s += fmt.Sprintf("BoostMetric was not faster than LMNN at D = %d, the largest dimension measured: the claim does not hold on this measurement.", hi.Dim)
	}
	return s + " The time of a run is its number of iterations times their cost: the columns s/term and s/iteration separate the two.\n"
}

func fig2Secs(r BoostFig2Run) string {
	if r.Error != "" {
		return "failed"
	}
	if math.IsNaN(r.CPUSeconds) {
		return fig2Num(r.Seconds)
	}
	return fmt.Sprintf("%s (%s)", fig2Num(r.Seconds), fig2Num(r.CPUSeconds))
}

func fig2Iters(r BoostFig2Run) string {
	if r.Error != "" {
		return "—"
	}
	return fmt.Sprint(r.Iterations)
}

func fig2Stop(r BoostFig2Run) string {
	if r.Error != "" {
		return "error"
	}
	return r.Stop
}

func fig2List(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.3f", x)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func fig2Num(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.3g", v)
}

func fig2Pct(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.2f", 100*v)
}

func fig2Ratio(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.2g", v)
}

// plot draws the training times and the times per iteration against D.
func (r *BoostFig2Report) plot(dir string) ([]string, error) {
	var files []string
	for _, panel := range []struct {
		file, title, ylabel string
		pick                func(BoostFig2Run) float64
	}{
		{"boostmetric-fig2-time.png", "BoostMetric's Figure 2: training time, 250 triplets, concentric circles", "training time (s)", func(r BoostFig2Run) float64 { return r.Seconds }},
		{"boostmetric-fig2-periter.png", "Time per iteration: BoostMetric term, LMNN subgradient step", "seconds per iteration", BoostFig2Run.PerIteration},
	} {
		var x, yb, yl []float64
		for _, row := range r.Rows {
			x = append(x, float64(row.Dim))
			yb = append(yb, fig2Value(row.Boost, panel.pick))
			yl = append(yl, fig2Value(row.LMNN, panel.pick))
		}
		path := filepath.Join(dir, panel.file)
		err := plots.Lines(path, plots.LineChart{Title: panel.title, XLabel: "input dimension D", YLabel: panel.ylabel,
			Series: []plots.LineSeries{{Name: "BoostMetric (stage-wise, exp)", X: x, Values: yb}, {Name: "LMNN", X: x, Values: yl, Dashed: true}}})
		if err != nil {
			return files, err
		}
		files = append(files, path)
	}
	return files, nil
}

func fig2Value(r BoostFig2Run, pick func(BoostFig2Run) float64) float64 {
	if r.Error != "" {
		return math.NaN()
	}
	return pick(r)
}
