package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/psdlearn/psdlearn/algos/meg"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"gonum.org/v1/gonum/mat"
)

func init() {
	register(command{
		name:    "kernel",
		summary: "learn a kernel matrix from distances to a target kernel: MEG (online) or DefiniteBoost (batch)",
		run:     runKernel,
	})
}

// kernelFlags are the options of `psdlearn kernel`.
type kernelFlags struct {
	algo, data, labelCol, backend string
	objects                       int
	standardize                   bool
	gamma, gammaScale             float64
	seed                          uint64
	splits                        int
	// MEG
	steps       int
	noise       float64
	c           string
	eta         float64
	checkpoints int
	// DefiniteBoost
	epsScale   float64
	projection string
	tol        float64
	maxIter    int
}

// kernelSetup is the experiment's target: d objects, their labels, the
// trace-normalised RBF kernel U over them.
type kernelSetup struct {
	name    string
	b       engine.Backend
	x       *mat.Dense
	y       []int
	u       *mat.SymDense
	gamma   float64
	nnMean  float64
	nnSD    float64
	nnLOO   float64
	classes int
}

// nnSummary is the 1-NN error of one kernel.
type nnSummary struct {
	Mean, SD, LOO float64
}

func runKernel(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "kernel")
	var f kernelFlags
	fs.StringVar(&f.algo, "algo", "", "algorithm: meg (online) | definiteboost (batch)")
	fs.StringVar(&f.data, "data", "builtin:wine", "data SPEC whose points are the objects of the target kernel")
	labelColFlag(fs, &f.labelCol)
	fs.StringVar(&f.backend, "backend", "", "numerical backend: "+strings.Join(engine.Names(), "|")+" (default: "+engine.Default().Name()+")")
	fs.IntVar(&f.objects, "objects", -1, "number of objects d, a class-stratified seeded sample (0: all; default 52 for meg as in the paper, all for definiteboost)")
	fs.BoolVar(&f.standardize, "standardize", true, "standardise the features of the objects before the RBF kernel")
	fs.Float64Var(&f.gamma, "gamma", 0, "RBF kernel exp(-gamma |a-b|^2) of the target (0: gamma-scale / median squared distance)")
	fs.Float64Var(&f.gammaScale, "gamma-scale", 1, "multiplier of the median heuristic when --gamma is 0")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed (object sample, distance examples, noise, 1-NN splits)")
	fs.IntVar(&f.splits, "splits", 10, "random 50/50 train/test divisions for the 1-NN error")
	fs.IntVar(&f.steps, "steps", 200000, "meg: number of online distance examples")
	fs.Float64Var(&f.noise, "noise", 0, "meg: standard deviation of Gaussian noise on the distance labels")
	fs.StringVar(&f.c, "c", "auto", "meg: constant c of Lemma 3.2, eta = 2c/(r^2(2+c)): a number, inf, or auto (inf without noise, else r*sqrt(2*Delta/L_U) in hindsight)")
	fs.Float64Var(&f.eta, "eta", 0, "meg: learning rate (0: from --c); the bound is reported when eta*r^2 <= 2")
	fs.IntVar(&f.checkpoints, "checkpoints", 1, "meg: record loss, bound and 1-NN error at steps 1,2,5×10^k (0: only the end)")
	fs.Float64Var(&f.epsScale, "eps", 0.2, "definiteboost: epsilon*d, the constraints are ½|x_a-x_b|^2 <= epsilon for the pairs closer than epsilon under the target")
	fs.StringVar(&f.projection, "projection", "both", "definiteboost: approx | exact | both")
	fs.Float64Var(&f.tol, "tol", 1e-6, "definiteboost: stop when every tr(W C_j) <= tol*epsilon")
	fs.IntVar(&f.maxIter, "max-iter", 100000, "definiteboost: iteration limit")
	if err := parseFlags(fs, "kernel", args); err != nil {
		return err
	}
	f.algo = strings.ToLower(f.algo)
	if f.algo != "meg" && f.algo != "definiteboost" {
		return fmt.Errorf("kernel: --algo must be meg or definiteboost (got %q)", f.algo)
	}
	if f.objects == -1 {
		f.objects = 0
		if f.algo == "meg" {
			f.objects = 52
		}
	}
	if f.objects < 0 || f.objects == 1 || f.splits <= 0 {
		return fmt.Errorf("kernel: --objects must be 0 or at least 2 and --splits positive")
	}
	b, err := resolveBackend(f.backend)
	if err != nil {
		return err
	}
	progress := newProgress(env)
	setup, err := kernelTarget(f, b)
	if err != nil {
		return err
	}
	progress("kernel: %d objects of %s (%d classes), RBF gamma %.4g; target 1-NN error %.4f (LOO %.4f)",
		len(setup.y), setup.name, setup.classes, setup.gamma, setup.nnMean, setup.nnLOO)
	if f.algo == "meg" {
		return runMEG(ctx, env, f, setup, progress)
	}
	return runDefiniteBoost(ctx, env, f, setup, progress)
}

// kernelTarget loads the data, samples the objects and builds the target kernel.
func kernelTarget(f kernelFlags, b engine.Backend) (*kernelSetup, error) {
	ds, err := loadData(f.data, f.labelCol)
	if err != nil {
		return nil, err
	}
	n := ds.Len()
	if n < 2 {
		return nil, fmt.Errorf("kernel: %s has %d points", f.data, n)
	}
	idx := stratifiedSample(ds.Y, f.objects, f.seed)
	x := mat.NewDense(len(idx), ds.Dim(), nil)
	y := make([]int, len(idx))
	classes := map[int]bool{}
	for k, i := range idx {
		x.SetRow(k, ds.X.RawRowView(i))
		y[k] = ds.Y[i]
		classes[y[k]] = true
	}
	if f.standardize {
		st, err := data.FitStandardizer(x)
		if err != nil {
			return nil, err
		}
		if x, err = st.Apply(x); err != nil {
			return nil, err
		}
	}
	gamma := f.gamma
	if gamma == 0 {
		if !(f.gammaScale > 0) {
			return nil, fmt.Errorf("kernel: --gamma-scale must be positive")
		}
		g, err := meg.MedianGamma(x)
		if err != nil {
			return nil, err
		}
		gamma = f.gammaScale * g
	}
	k, err := meg.RBFKernel(x, gamma)
	if err != nil {
		return nil, err
	}
	u, err := meg.TraceNormalize(k)
	if err != nil {
		return nil, err
	}
	s := &kernelSetup{name: ds.Name, b: b, x: x, y: y, u: u, gamma: gamma, classes: len(classes)}
	nn, err := nnOf(u, y, f)
	if err != nil {
		return nil, err
	}
	s.nnMean, s.nnSD, s.nnLOO = nn.Mean, nn.SD, nn.LOO
	return s, nil
}

func nnOf(k mat.Symmetric, y []int, f kernelFlags) (nnSummary, error) {
	mean, sd, err := meg.NNErrorSplits(k, y, f.splits, f.seed)
	if err != nil {
		return nnSummary{}, err
	}
	loo, err := meg.NNErrorLOO(k, y)
	if err != nil {
		return nnSummary{}, err
	}
	return nnSummary{Mean: mean, SD: sd, LOO: loo}, nil
}

// stratifiedSample returns m sorted row indices, each class represented in
// proportion to its size (largest remainders first, ties to the lower
// class), each class's rows drawn by a seeded permutation. m = 0 or m ≥ n
// returns every row.
func stratifiedSample(y []int, m int, seed uint64) []int {
	n := len(y)
	if m == 0 || m >= n {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	byClass := map[int][]int{}
	var labels []int
	for i, c := range y {
		if _, ok := byClass[c]; !ok {
			labels = append(labels, c)
		}
		byClass[c] = append(byClass[c], i)
	}
	sort.Ints(labels)
	take := make(map[int]int, len(labels))
	type rem struct {
		c    int
		frac float64
	}
	var rems []rem
	total := 0
	for _, c := range labels {
		q := float64(m) * float64(len(byClass[c])) / float64(n)
		take[c] = int(q)
		total += int(q)
		rems = append(rems, rem{c, q - math.Floor(q)})
	}
	sort.SliceStable(rems, func(i, j int) bool { return rems[i].frac > rems[j].frac })
	for k := 0; total < m; k++ {
		take[rems[k%len(rems)].c]++
		total++
	}
	rng := rand.New(rand.NewPCG(seed, 0x6b65726e656c)) // "kernel"
	var out []int
	for _, c := range labels {
		rows := byClass[c]
		perm := rng.Perm(len(rows))
		for _, p := range perm[:take[c]] {
			out = append(out, rows[p])
		}
	}
	sort.Ints(out)
	return out
}

// megCheckpoint records the online run at one step.
type megCheckpoint struct {
	Step       int      `json:"step"`
	TotalLoss  float64  `json:"total_loss"`
	LossBound  *float64 `json:"loss_bound"`
	Divergence float64  `json:"divergence"`
	NNError    float64  `json:"nn_error"`
}

// megSummary is the JSON summary of `kernel --algo meg`.
type megSummary struct {
	Algo            string          `json:"algo"`
	Backend         string          `json:"backend"`
	Data            string          `json:"data"`
	Objects         int             `json:"objects"`
	Dim             int             `json:"dim"`
	Gamma           float64         `json:"gamma"`
	Steps           int             `json:"steps"`
	Iterations      int             `json:"iterations"`
	Noise           float64         `json:"noise"`
	R               float64         `json:"r"`
	C               *float64        `json:"c"` // null: c = +Inf (or no bound)
	Eta             float64         `json:"eta"`
	TotalLoss       float64         `json:"total_loss"`
	Objective       float64         `json:"objective"`
	LossBound       *float64        `json:"loss_bound"`
	ComparatorLoss  float64         `json:"comparator_loss"`
	Divergence0     float64         `json:"divergence_initial"`
	DivergenceFinal float64         `json:"divergence_final"`
	NNError         float64         `json:"nn_error"`
	NNErrorSD       float64         `json:"nn_error_sd"`
	NNErrorLOO      float64         `json:"nn_error_loo"`
	TargetNNError   float64         `json:"target_nn_error"`
	TargetNNErrorSD float64         `json:"target_nn_error_sd"`
	TargetNNLOO     float64         `json:"target_nn_error_loo"`
	NNProtocol      string          `json:"nn_protocol"`
	TrainSeconds    float64         `json:"train_seconds"`
	PeakRSSMB       float64         `json:"peak_rss_mb"`
	Checkpoints     []megCheckpoint `json:"checkpoints,omitempty"`
}

func nnProtocol(f kernelFlags) string {
	return fmt.Sprintf("1-NN with d(a,b)^2 = K_aa + K_bb - 2K_ab: nn_error = mean (sd) over %d seeded random 50/50 train/test divisions of the objects; nn_error_loo = leave-one-out over all objects", f.splits)
}

// parseC returns c for --c; auto is resolved later.
func parseC(s string) (c float64, auto bool, err error) {
	switch strings.ToLower(s) {
	case "auto", "":
		return 0, true, nil
	case "inf", "+inf":
		return math.Inf(1), false, nil
	}
	c, err = strconv.ParseFloat(s, 64)
	if err != nil || !(c > 0) {
		return 0, false, fmt.Errorf("kernel: --c must be a positive number, inf or auto (got %q)", s)
	}
	return c, false, nil
}

// isCheckpoint reports whether step t is 1, 2 or 5 times a power of ten (≥ 100).
func isCheckpoint(t int) bool {
	if t < 100 {
		return false
	}
	for t%10 == 0 {
		t /= 10
	}
	return t == 1 || t == 2 || t == 5
}

func runMEG(ctx context.Context, env *cmdEnv, f kernelFlags, s *kernelSetup, progress func(string, ...any)) error {
	if f.steps <= 0 {
		return fmt.Errorf("kernel: --steps must be positive")
	}
	if f.noise < 0 || math.IsNaN(f.noise) || math.IsInf(f.noise, 0) {
		return fmt.Errorf("kernel: --noise must be a finite non-negative number")
	}
	d := len(s.y)
	seq, err := meg.SampleDistances(s.u, f.steps, f.noise, f.seed)
	if err != nil {
		return err
	}
	// r ≥ λmax − λmin of every X_t (Lemma 3.1); every X_ab has eigenvalues {0, 1}.
	var r float64
	for t := 0; t < seq.Len(); t++ {
		x, _ := seq.At(t)
		lo, hi, err := x.Extremes(s.b)
		if err != nil {
			return err
		}
		r = math.Max(r, hi-lo)
	}
	w1 := mat.NewDiagDense(d, nil)
	for i := 0; i < d; i++ {
		w1.SetDiag(i, 1/float64(d))
	}
	div0, err := meg.VonNeumann(s.b, s.u, w1)
	if err != nil {
		return err
	}
	lossU := meg.SequenceLoss(s.u, seq)
	c, auto, err := parseC(f.c)
	if err != nil {
		return err
	}
	eta := f.eta
	bounded := true
	switch {
	case eta < 0 || math.IsNaN(eta) || math.IsInf(eta, 0):
		return fmt.Errorf("kernel: --eta must be a finite non-negative number")
	case eta > 0:
		// The bound holds for η = 2c/(r²(2+c)), i.e. c = ηr²/(2 − ηr²).
		switch er := eta * r * r; {
		case er < 2:
			c = er / (2 - er)
		case er == 2:
			c = math.Inf(1)
		default:
			bounded = false
		}
	default:
		if auto {
			c = meg.OptimalC(lossU, div0, r)
		}
		eta = meg.EtaFromC(c, r)
	}
	if bounded && math.IsInf(c, 1) && lossU > 0 {
		bounded = false // c = ∞ gives no bound unless L_U = 0
	}
	learner, err := meg.NewLearner(d, meg.LearnerOptions{Eta: eta, R: r, Backend: s.b})
	if err != nil {
		return err
	}
	sum := megSummary{
		Algo: "meg", Backend: s.b.Name(), Data: f.data, Objects: d, Dim: s.x.RawMatrix().Cols, Gamma: s.gamma,
		Steps: f.steps, Noise: f.noise, R: r, Eta: eta, ComparatorLoss: lossU, Divergence0: div0,
		TargetNNError: s.nnMean, TargetNNErrorSD: s.nnSD, TargetNNLOO: s.nnLOO, NNProtocol: nnProtocol(f),
	}
	if bounded && !math.IsInf(c, 1) {
		sum.C = ptr(c)
	}
	var prefixU float64
	boundAt := func(lu float64) *float64 {
		if !bounded {
			return nil
		}
		return ptr(meg.LossBound(lu, div0, r, c))
	}
	checkpoint := func(step int, total float64) error {
		w, err := learner.W()
		if err != nil {
			return err
		}
		nn, _, err := meg.NNErrorSplits(w, s.y, f.splits, f.seed)
		if err != nil {
			return err
		}
		dv, err := learner.Divergence(s.u)
		if err != nil {
			return err
		}
		cp := megCheckpoint{Step: step, TotalLoss: total, LossBound: boundAt(prefixU), Divergence: dv, NNError: nn}
		sum.Checkpoints = append(sum.Checkpoints, cp)
		bs := "n/a"
		if cp.LossBound != nil {
			bs = fmt.Sprintf("%.5g", *cp.LossBound)
		}
		progress("meg: step %d: total loss %.5g, bound %s, Δ(U,W) %.4g, 1-NN error %.4f", step, total, bs, dv, nn)
		return nil
	}
	start := time.Now()
	_, err = learner.Run(ctx, seq, func(st meg.Step) error {
		x, y := seq.At(st.T - 1)
		e := x.Inner(s.u) - y
		prefixU += e * e
		if f.checkpoints > 0 && isCheckpoint(st.T) && st.T < f.steps {
			return checkpoint(st.T, st.TotalLoss)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sum.TrainSeconds = time.Since(start).Seconds()
	if err := checkpoint(f.steps, learner.TotalLoss()); err != nil {
		return err
	}
	if f.checkpoints == 0 {
		sum.Checkpoints = nil
	}
	w, err := learner.W()
	if err != nil {
		return err
	}
	nn, err := nnOf(w, s.y, f)
	if err != nil {
		return err
	}
	sum.Iterations = learner.Steps()
	sum.TotalLoss = learner.TotalLoss()
	sum.Objective = sum.TotalLoss
	sum.LossBound = boundAt(lossU)
	sum.DivergenceFinal, _ = learner.Divergence(s.u)
	sum.NNError, sum.NNErrorSD, sum.NNErrorLOO = nn.Mean, nn.SD, nn.LOO
	sum.PeakRSSMB = peakRSSMB()
	if env.json {
		return emitJSON(env, sum)
	}
	fmt.Fprintf(env.stdout, "MEG online kernel learning on %d objects of %s (backend %s, %.1f s)\n", d, s.name, sum.Backend, sum.TrainSeconds)
	fmt.Fprintf(env.stdout, "  steps %d, r %g, eta %.4g, noise %g\n", sum.Steps, r, eta, f.noise)
	if sum.LossBound != nil {
		fmt.Fprintf(env.stdout, "  total loss %.6g <= Lemma 3.2 bound %.6g (L_U %.4g, Δ(U,W1) %.4g)\n", sum.TotalLoss, *sum.LossBound, lossU, div0)
	} else {
		fmt.Fprintf(env.stdout, "  total loss %.6g (no Lemma 3.2 bound for this learning rate), L_U %.4g\n", sum.TotalLoss, lossU)
	}
	fmt.Fprintf(env.stdout, "  1-NN error: learned %.4f (sd %.4f, LOO %.4f), target %.4f (sd %.4f, LOO %.4f)\n",
		sum.NNError, sum.NNErrorSD, sum.NNErrorLOO, sum.TargetNNError, sum.TargetNNErrorSD, sum.TargetNNLOO)
	return nil
}

func ptr(v float64) *float64 { return &v }

// boostRun is the JSON summary of one DefiniteBoost run.
type boostRun struct {
	Projection   string  `json:"projection"`
	Iterations   int     `json:"iterations"`
	Eigs         int     `json:"eigendecompositions"`
	Converged    bool    `json:"converged"`
	MaxViolation float64 `json:"max_violation"`
	Dual         float64 `json:"dual_objective"`
	DualBound    float64 `json:"dual_bound"`
	Divergence   float64 `json:"divergence"`
	DualityGap   float64 `json:"duality_gap"`
	NNError      float64 `json:"nn_error"`
	NNErrorSD    float64 `json:"nn_error_sd"`
	NNErrorLOO   float64 `json:"nn_error_loo"`
	Seconds      float64 `json:"train_seconds"`
}

// boostSummary is the JSON summary of `kernel --algo definiteboost`.
type boostSummary struct {
	Algo            string     `json:"algo"`
	Backend         string     `json:"backend"`
	Data            string     `json:"data"`
	Objects         int        `json:"objects"`
	Dim             int        `json:"dim"`
	Gamma           float64    `json:"gamma"`
	Constraints     int        `json:"constraints"`
	Epsilon         float64    `json:"epsilon"`
	Tol             float64    `json:"tol"`
	Iterations      int        `json:"iterations"`
	Objective       float64    `json:"objective"`
	NNError         float64    `json:"nn_error"`
	TargetNNError   float64    `json:"target_nn_error"`
	TargetNNErrorSD float64    `json:"target_nn_error_sd"`
	TargetNNLOO     float64    `json:"target_nn_error_loo"`
	NNProtocol      string     `json:"nn_protocol"`
	TrainSeconds    float64    `json:"train_seconds"`
	PeakRSSMB       float64    `json:"peak_rss_mb"`
	Runs            []boostRun `json:"runs"`
}

func runDefiniteBoost(ctx context.Context, env *cmdEnv, f kernelFlags, s *kernelSetup, progress func(string, ...any)) error {
	var projs []meg.Projection
	switch strings.ToLower(f.projection) {
	case "approx", "approximate":
		projs = []meg.Projection{meg.Approximate}
	case "exact":
		projs = []meg.Projection{meg.Exact}
	case "both":
		projs = []meg.Projection{meg.Approximate, meg.Exact}
	default:
		return fmt.Errorf("kernel: --projection must be approx, exact or both (got %q)", f.projection)
	}
	d := len(s.y)
	eps := f.epsScale / float64(d)
	if !(eps > 0 && eps < 1) {
		return fmt.Errorf("kernel: --eps must give 0 < epsilon = eps/d < 1")
	}
	if !(f.tol > 0) || f.maxIter <= 0 {
		return fmt.Errorf("kernel: --tol and --max-iter must be positive")
	}
	cons, _, err := meg.CloseConstraints(s.u, eps)
	if err != nil {
		return err
	}
	if len(cons) == 0 {
		return fmt.Errorf("kernel: no pair is closer than epsilon = %g under the target kernel (raise --eps or lower --gamma-scale)", eps)
	}
	progress("definiteboost: %d constraints ½|x_a-x_b|^2 <= epsilon = %.4g", len(cons), eps)
	w1 := mat.NewDiagDense(d, nil)
	for i := 0; i < d; i++ {
		w1.SetDiag(i, 1/float64(d))
	}
	sum := boostSummary{
		Algo: "definiteboost", Backend: s.b.Name(), Data: f.data, Objects: d, Dim: s.x.RawMatrix().Cols, Gamma: s.gamma,
		Constraints: len(cons), Epsilon: eps, Tol: f.tol * eps,
		TargetNNError: s.nnMean, TargetNNErrorSD: s.nnSD, TargetNNLOO: s.nnLOO, NNProtocol: nnProtocol(f),
	}
	for _, p := range projs {
		start := time.Now()
		res, err := meg.DefiniteBoost(ctx, cons, meg.BoostOptions{
			Projection: p, Tol: f.tol * eps, MaxIter: f.maxIter, Backend: s.b,
			Observe: func(st meg.BoostStep) error {
				if st.Iter%100 == 0 {
					progress("definiteboost %v: iteration %d, violation %.3g, dual %.6g", p, st.Iter, st.Violation, st.Dual)
				}
				return nil
			},
		})
		if err != nil {
			return err
		}
		secs := time.Since(start).Seconds()
		div, err := meg.VonNeumann(s.b, res.W, w1)
		if err != nil {
			return err
		}
		var gap float64
		for j, a := range res.Alpha {
			gap -= a * res.Violations[j]
		}
		nn, err := nnOf(res.W, s.y, f)
		if err != nil {
			return err
		}
		run := boostRun{
			Projection: p.String(), Iterations: res.Iterations, Eigs: res.Eigs, Converged: res.Converged,
			MaxViolation: res.MaxViolation, Dual: res.Dual, DualBound: res.LogBound, Divergence: div, DualityGap: gap,
			NNError: nn.Mean, NNErrorSD: nn.SD, NNErrorLOO: nn.LOO, Seconds: secs,
		}
		progress("definiteboost %v: %d iterations (%d eigendecompositions), converged %v, dual %.6g, 1-NN error %.4f",
			p, run.Iterations, run.Eigs, run.Converged, run.Dual, run.NNError)
		sum.Runs = append(sum.Runs, run)
	}
	first := sum.Runs[0]
	sum.Iterations, sum.Objective, sum.NNError, sum.TrainSeconds = first.Iterations, first.Dual, first.NNError, first.Seconds
	sum.PeakRSSMB = peakRSSMB()
	if env.json {
		return emitJSON(env, sum)
	}
	fmt.Fprintf(env.stdout, "DefiniteBoost kernel learning on %d objects of %s (backend %s)\n", d, s.name, sum.Backend)
	fmt.Fprintf(env.stdout, "  %d constraints ½|x_a-x_b|^2 <= epsilon = %.4g, tolerance %.3g\n", len(cons), eps, sum.Tol)
	for _, r := range sum.Runs {
		fmt.Fprintf(env.stdout, "  %-6s iterations %d, eigendecompositions %d, converged %v, max violation %.3g, dual %.6g (Theorem 4.1 bound %.6g), gap %.4g, %.2f s\n",
			r.Projection, r.Iterations, r.Eigs, r.Converged, r.MaxViolation, r.Dual, r.DualBound, r.DualityGap, r.Seconds)
		fmt.Fprintf(env.stdout, "         1-NN error %.4f (sd %.4f, LOO %.4f)\n", r.NNError, r.NNErrorSD, r.NNErrorLOO)
	}
	fmt.Fprintf(env.stdout, "  target kernel 1-NN error %.4f (sd %.4f, LOO %.4f)\n", sum.TargetNNError, sum.TargetNNErrorSD, sum.TargetNNLOO)
	return nil
}
