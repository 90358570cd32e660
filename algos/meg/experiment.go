package meg

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/progress"
	"gonum.org/v1/gonum/mat"
)

// The experiments of the paper (§5): a target kernel U on d objects, then
// MEG learning it online from noisy squared distances (RunOnline), or
// DefiniteBoost learning a kernel from the pairs U puts close together
// (RunDefiniteBoost). `psdlearn kernel` is a thin front end to them.

// DefaultSplits is the number of random 50/50 divisions of the objects
// over which the 1-NN error is averaged.
const DefaultSplits = 10

// TargetOptions configures NewTarget.
type TargetOptions struct {
	// Objects is the number d of objects: a class-stratified seeded sample
	// of the rows (0: all rows).
	Objects int
	// Standardize standardises the features of the objects first.
	Standardize bool
	// Gamma is the RBF width of exp(−γ‖a − b‖²); 0 selects
	// GammaScale·MedianGamma of the objects.
	Gamma float64
	// GammaScale multiplies the median heuristic (0: 1).
	GammaScale float64
	// Splits is the number of random 50/50 divisions of the 1-NN error (0: DefaultSplits).
	Splits int
	// Seed fixes the sample and the 1-NN divisions.
	Seed uint64
}

// NNError is the 1-NN error of a kernel on labelled objects (distances
// K_aa + K_bb − 2K_ab): the mean and standard deviation over seeded random
// 50/50 divisions, and the leave-one-out error over all objects.
type NNError struct {
	Mean, SD, LOO float64
}

// Target is an experiment's target: the objects, their labels and the
// trace-normalised RBF kernel U over them.
type Target struct {
	X       *mat.Dense
	Y       []int
	U       *mat.SymDense
	Gamma   float64
	Classes int
	// NN is U's own 1-NN error, the figure a learned kernel is compared with.
	NN     NNError
	splits int
	seed   uint64
	n      int // the number of objects when U and Y are nil (NewObjectTarget)
}

// NewTarget samples the objects from the labelled rows of x and builds the
// target kernel.
func NewTarget(x *mat.Dense, y []int, opt TargetOptions) (*Target, error) {
	if x == nil {
		return nil, fmt.Errorf("%w: nil data", ErrInvalid)
	}
	n, dim := x.Dims()
	if len(y) != n {
		return nil, fmt.Errorf("%w: %d labels for %d rows", ErrInvalid, len(y), n)
	}
	if n < 2 || opt.Objects < 0 || opt.Objects == 1 || opt.Splits < 0 {
		return nil, fmt.Errorf("%w: %d rows, %d objects, %d splits", ErrInvalid, n, opt.Objects, opt.Splits)
	}
	splits := opt.Splits
	if splits == 0 {
		splits = DefaultSplits
	}
	idx := StratifiedSample(y, opt.Objects, opt.Seed)
	xs := mat.NewDense(len(idx), dim, nil)
	ys := make([]int, len(idx))
	classes := map[int]bool{}
	for k, i := range idx {
		xs.SetRow(k, x.RawRowView(i))
		ys[k] = y[i]
		classes[ys[k]] = true
	}
	if opt.Standardize {
		st, err := data.FitStandardizer(xs)
		if err != nil {
			return nil, err
		}
		if xs, err = st.Apply(xs); err != nil {
			return nil, err
		}
	}
	gamma := opt.Gamma
	if gamma == 0 {
		scale := opt.GammaScale
		if scale == 0 {
			scale = 1
		}
		if !(scale > 0) || math.IsInf(scale, 0) {
			return nil, fmt.Errorf("%w: gamma scale %v, want a positive number", ErrInvalid, scale)
		}
		g, err := MedianGamma(xs)
		if err != nil {
			return nil, err
		}
		gamma = scale * g
	}
	k, err := RBFKernel(xs, gamma)
	if err != nil {
		return nil, err
	}
	u, err := TraceNormalize(k)
	if err != nil {
		return nil, err
	}
	t := &Target{X: xs, Y: ys, U: u, Gamma: gamma, Classes: len(classes), splits: splits, seed: opt.Seed}
	if t.NN, err = t.NNErrorOf(u); err != nil {
		return nil, err
	}
	return t, nil
}

// NNErrorOf returns the 1-NN error of kernel k on the target's objects,
// with the target's divisions.
func (t *Target) NNErrorOf(k mat.Symmetric) (NNError, error) {
	if t.Y == nil { // no labels (NewKernelTarget, NewObjectTarget)
		nan := math.NaN()
		return NNError{nan, nan, nan}, nil
	}
	mean, sd, err := NNErrorSplits(k, t.Y, t.splits, t.seed)
	if err != nil {
		return NNError{}, err
	}
	loo, err := NNErrorLOO(k, t.Y)
	if err != nil {
		return NNError{}, err
	}
	return NNError{Mean: mean, SD: sd, LOO: loo}, nil
}

// StratifiedSample returns m sorted row indices, each class represented in
// proportion to its size (largest remainders first, ties to the lower
// class), each class's rows drawn by a seeded permutation. m = 0 or m ≥ n
// returns every row.
func StratifiedSample(y []int, m int, seed uint64) []int {
	n := len(y)
	if m <= 0 || m >= n {
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

// OnlineOptions configures RunOnline.
type OnlineOptions struct {
	// Steps is the number of online distance examples (must be positive).
	Steps int
	// Noise is the standard deviation of Gaussian noise on the labels.
	Noise float64
	// C is the constant c of Lemma 3.2, η = 2c/(r²(2+c)): positive, +Inf,
	// or 0 for the choice in hindsight (OptimalC). Ignored when Eta is set.
	C float64
	// Eta, if positive, is the learning rate; c follows from it, and the
	// bound is reported only when η·r² ≤ 2.
	Eta float64
	// Checkpoints records the loss, bound, divergence and 1-NN error at the
	// steps 1, 2 and 5 × 10^k (k ≥ 2) besides the last.
	Checkpoints bool
	// Seed fixes the examples and the noise.
	Seed uint64
	// Backend runs the numerical kernels (nil: engine.Default()).
	Backend engine.Backend
	// Progress, if set, receives an event at every checkpoint.
	Progress progress.Func
	// Examples, if set, are the distance examples in order instead of Steps
	// sampled from the target (Steps must then be 0 or their number, and
	// Noise 0). The target's U may then be nil (NewObjectTarget): the
	// comparator loss, the divergences and the bound are NaN or absent, and
	// C = 0 (in hindsight) means c = +Inf, η = 2/r².
	Examples *DistSequence
}

// Checkpoint records the online run at one step.
type Checkpoint struct {
	Step       int
	TotalLoss  float64
	LossBound  *float64 // nil: no Lemma 3.2 bound for this learning rate
	Divergence float64  // Δ(U, W_t)
	NNError    float64  // mean 1-NN error of W_t over the divisions
}

// OnlineReport is the outcome of RunOnline.
type OnlineReport struct {
	// R bounds λmax − λmin of every instance (Lemma 3.1); Eta and C are
	// the learning rate and the constant used (C = +Inf for c = ∞).
	R, Eta, C float64
	// Bounded reports that Lemma 3.2's bound applies.
	Bounded bool
	// ComparatorLoss is L_U, the loss of the target on the sequence;
	// Divergence0 is Δ(U, W_1).
	ComparatorLoss, Divergence0 float64
	Steps                       int
	TotalLoss                   float64
	LossBound                   *float64
	DivergenceFinal             float64
	Checkpoints                 []Checkpoint
	// NN is the 1-NN error of the learned kernel.
	NN NNError
	// Seconds is the time of the online run (checkpoints included).
	Seconds float64
	// W is the learned kernel (trace one, on the target's objects).
	W *mat.SymDense
}

// RunOnline learns the target online with MEG from Steps noisy squared
// distances (§5.1) and reports the loss against Lemma 3.2's bound.
func RunOnline(ctx context.Context, t *Target, opt OnlineOptions) (*OnlineReport, error) {
	if t == nil {
		return nil, fmt.Errorf("%w: nil target", ErrInvalid)
	}
	if opt.Examples != nil {
		if opt.Steps != 0 && opt.Steps != opt.Examples.Len() || opt.Noise != 0 {
			return nil, fmt.Errorf("%w: %d steps and noise %v with %d given examples, want 0 or %d steps and no noise", ErrInvalid, opt.Steps, opt.Noise, opt.Examples.Len(), opt.Examples.Len())
		}
		if opt.Examples.N != t.Objects() {
			return nil, fmt.Errorf("%w: distance examples on %d objects, target on %d", ErrInvalid, opt.Examples.N, t.Objects())
		}
		opt.Steps = opt.Examples.Len()
	} else if t.U == nil {
		return nil, fmt.Errorf("%w: a target without a kernel needs the distance examples", ErrInvalid)
	}
	if opt.Steps <= 0 {
		return nil, fmt.Errorf("%w: %d steps, want a positive number", ErrInvalid, opt.Steps)
	}
	if opt.Noise < 0 || math.IsNaN(opt.Noise) || math.IsInf(opt.Noise, 0) {
		return nil, fmt.Errorf("%w: noise %v, want a finite non-negative number", ErrInvalid, opt.Noise)
	}
	if opt.C < 0 || math.IsNaN(opt.C) {
		return nil, fmt.Errorf("%w: c = %v, want positive, +Inf or 0 (in hindsight)", ErrInvalid, opt.C)
	}
	if opt.Eta < 0 || math.IsNaN(opt.Eta) || math.IsInf(opt.Eta, 0) {
		return nil, fmt.Errorf("%w: learning rate %v, want a finite non-negative number", ErrInvalid, opt.Eta)
	}
	b := engine.Or(opt.Backend)
	d := t.Objects()
	seq := opt.Examples
	if seq == nil {
		var err error
		if seq, err = SampleDistances(t.U, opt.Steps, opt.Noise, opt.Seed); err != nil {
			return nil, err
		}
	}
	// r ≥ λmax − λmin of every X_t (Lemma 3.1); every X_ab has eigenvalues {0, 1}.
	var r float64
	for i := 0; i < seq.Len(); i++ {
		x, _ := seq.At(i)
		lo, hi, err := x.Extremes(b)
		if err != nil {
			return nil, err
		}
		r = math.Max(r, hi-lo)
	}
	w1 := mat.NewDiagDense(d, nil)
	for i := 0; i < d; i++ {
		w1.SetDiag(i, 1/float64(d))
	}
	div0, lossU := math.NaN(), math.NaN()
	if t.U != nil {
		var err error
		if div0, err = VonNeumann(b, t.U, w1); err != nil {
			return nil, err
		}
		lossU = SequenceLoss(t.U, seq)
	}
	c, eta, bounded := opt.C, opt.Eta, true
	switch {
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
		if c == 0 && t.U == nil {
			c = math.Inf(1) // no comparator to choose c in hindsight
		} else if c == 0 {
			c = OptimalC(lossU, div0, r)
		}
		eta = EtaFromC(c, r)
		if !(eta > 0) {
			return nil, errs.Option(fmt.Errorf("%w: the learning rate underflows to 0: c = %g chosen in hindsight from the comparator's loss %g (noise %g): give c (or η) or a smaller noise", ErrInvalid, c, lossU, opt.Noise))
		}
	}
	if bounded && math.IsInf(c, 1) && lossU > 0 {
		bounded = false // c = ∞ gives no bound unless L_U = 0
	}
	if t.U == nil {
		bounded = false // Lemma 3.2 bounds the loss by the target's
	}
	learner, err := NewLearner(d, LearnerOptions{Eta: eta, R: r, Backend: b})
	if err != nil {
		return nil, err
	}
	rep := &OnlineReport{R: r, Eta: eta, C: c, Bounded: bounded, ComparatorLoss: lossU, Divergence0: div0, Steps: opt.Steps}
	var prefixU float64
	boundAt := func(lu float64) *float64 {
		if !bounded {
			return nil
		}
		v := LossBound(lu, div0, r, c)
		return &v
	}
	checkpoint := func(step int, total float64) error {
		w, err := learner.W()
		if err != nil {
			return err
		}
		nn, dv := math.NaN(), math.NaN()
		if t.Y != nil {
			if nn, _, err = NNErrorSplits(w, t.Y, t.splits, t.seed); err != nil {
				return err
			}
		}
		if t.U != nil {
			if dv, err = learner.Divergence(t.U); err != nil {
				return err
			}
		}
		cp := Checkpoint{Step: step, TotalLoss: total, LossBound: boundAt(prefixU), Divergence: dv, NNError: nn}
		rep.Checkpoints = append(rep.Checkpoints, cp)
		if opt.Progress != nil {
			bs := "n/a"
			if cp.LossBound != nil {
				bs = fmt.Sprintf("%.5g", *cp.LossBound)
			}
			opt.Progress(progress.Event{Algorithm: "meg", Iteration: step, Objective: total, Gap: math.NaN(),
				Message: fmt.Sprintf("meg: step %d: total loss %.5g, bound %s, Δ(U,W) %s%s", step, total, bs, progress.Number("%.4g", dv, "n/a"), progress.Number(", 1-NN error %.4f", nn, ""))})
		}
		return nil
	}
	start := time.Now()
	_, err = learner.Run(ctx, seq, func(st Step) error {
		if t.U != nil {
			x, y := seq.At(st.T - 1)
			e := x.Inner(t.U) - y
			prefixU += e * e
		}
		if opt.Checkpoints && isCheckpoint(st.T) && st.T < opt.Steps {
			return checkpoint(st.T, st.TotalLoss)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	rep.Seconds = time.Since(start).Seconds()
	if err := checkpoint(opt.Steps, learner.TotalLoss()); err != nil {
		return nil, err
	}
	if !opt.Checkpoints {
		rep.Checkpoints = nil
	}
	w, err := learner.W()
	if err != nil {
		return nil, err
	}
	if rep.NN, err = t.NNErrorOf(w); err != nil {
		return nil, err
	}
	rep.W = w
	rep.TotalLoss = learner.TotalLoss()
	rep.LossBound = boundAt(lossU)
	rep.DivergenceFinal = math.NaN()
	if t.U != nil {
		rep.DivergenceFinal, _ = learner.Divergence(t.U)
	}
	return rep, nil
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

// BoostExperimentOptions configures RunDefiniteBoost.
type BoostExperimentOptions struct {
	// EpsScale is ε·d: the constraints are ½‖x_a − x_b‖² ≤ ε for the pairs
	// closer than ε under the target (0 < ε < 1 required).
	EpsScale float64
	// Projections lists the projections to run (nil: Approximate, Exact).
	Projections []Projection
	// Tol stops a run when every tr(W C_j) ≤ Tol·ε (must be positive).
	Tol float64
	// MaxIter is the iteration limit of each run (must be positive).
	MaxIter int
	// Backend runs the numerical kernels (nil: engine.Default()).
	Backend engine.Backend
	// Progress, if set, receives an event every 100 iterations and at the
	// end of each run.
	Progress progress.Func
	// Constraints, if not nil, replace the target's close pairs: tr(W C_j)
	// ≤ 0 on the target's objects (NearConstraint, FarConstraint), with ε =
	// EpsScale/d still scaling Tol. The target's U may then be nil.
	Constraints []Sym
}

// BoostRun is one DefiniteBoost run of the experiment.
type BoostRun struct {
	Projection                                            Projection
	Iterations, Eigs                                      int
	Converged                                             bool
	MaxViolation, Dual, DualBound, Divergence, DualityGap float64
	NN                                                    NNError
	Seconds                                               float64
	// W is the learned kernel (trace one, on the target's objects).
	W *mat.SymDense
	// Duals holds the dual objective after every projection and
	// DualSeconds the time since the run's start at each.
	Duals, DualSeconds []float64
}

// BoostExperimentReport is the outcome of RunDefiniteBoost.
type BoostExperimentReport struct {
	Constraints  int
	Epsilon, Tol float64
	Runs         []BoostRun
}

// RunDefiniteBoost learns, with DefiniteBoost and each projection, a kernel
// that satisfies the target's close-pair constraints (§5.2).
func RunDefiniteBoost(ctx context.Context, t *Target, opt BoostExperimentOptions) (*BoostExperimentReport, error) {
	if t == nil {
		return nil, fmt.Errorf("%w: nil target", ErrInvalid)
	}
	d := t.Objects()
	eps := opt.EpsScale / float64(d)
	if !(eps > 0 && eps < 1) {
		return nil, fmt.Errorf("%w: epsilon = %g, want 0 < epsilon < 1", ErrInvalid, eps)
	}
	if !(opt.Tol > 0) || opt.MaxIter <= 0 {
		return nil, fmt.Errorf("%w: tolerance %v and iteration limit %d must be positive", ErrInvalid, opt.Tol, opt.MaxIter)
	}
	projs := opt.Projections
	if len(projs) == 0 {
		projs = []Projection{Approximate, Exact}
	}
	b := engine.Or(opt.Backend)
	say := progress.Printf(opt.Progress, "definiteboost")
	if say == nil {
		say = func(string, ...any) {}
	}
	var cons []Sym
	if opt.Constraints != nil {
		if len(opt.Constraints) == 0 {
			return nil, fmt.Errorf("%w: no constraints", ErrInvalid)
		}
		cons = append(cons, opt.Constraints...) // DefiniteBoost does not keep them
		say("definiteboost: %d given constraints", len(cons))
	} else {
		if t.U == nil {
			return nil, fmt.Errorf("%w: a target without a kernel needs the constraints", ErrInvalid)
		}
		var err error
		if cons, _, err = CloseConstraints(t.U, eps); err != nil {
			return nil, err
		}
		if len(cons) == 0 {
			return nil, fmt.Errorf("%w: no pair is closer than epsilon = %g under the target kernel (raise epsilon or lower gamma)", ErrInvalid, eps)
		}
		say("definiteboost: %d constraints ½|x_a-x_b|^2 <= epsilon = %.4g", len(cons), eps)
	}
	w1 := mat.NewDiagDense(d, nil)
	for i := 0; i < d; i++ {
		w1.SetDiag(i, 1/float64(d))
	}
	rep := &BoostExperimentReport{Constraints: len(cons), Epsilon: eps, Tol: opt.Tol * eps}
	for _, p := range projs {
		start := time.Now()
		var duals, times []float64
		res, err := DefiniteBoost(ctx, cons, BoostOptions{
			Projection: p, Tol: opt.Tol * eps, MaxIter: opt.MaxIter, Backend: b,
			Observe: func(st BoostStep) error {
				duals, times = append(duals, st.Dual), append(times, time.Since(start).Seconds())
				if st.Iter%100 == 0 && opt.Progress != nil {
					opt.Progress(progress.Event{Algorithm: "definiteboost", Iteration: st.Iter, Objective: st.Dual, Gap: math.NaN(),
						Elapsed: time.Since(start), Message: fmt.Sprintf("definiteboost %v: iteration %d, violation %.3g (tolerance %.3g), dual %.6g", p, st.Iter, st.Violation, opt.Tol*eps, st.Dual)})
				}
				return nil
			},
		})
		if err != nil {
			return nil, err
		}
		secs := time.Since(start).Seconds()
		div, err := VonNeumann(b, res.W, w1)
		if err != nil {
			return nil, err
		}
		var gap float64
		for j, a := range res.Alpha {
			gap -= a * res.Violations[j]
		}
		nn, err := t.NNErrorOf(res.W)
		if err != nil {
			return nil, err
		}
		run := BoostRun{
			Projection: p, Iterations: res.Iterations, Eigs: res.Eigs, Converged: res.Converged,
			MaxViolation: res.MaxViolation, Dual: res.Dual, DualBound: res.LogBound, Divergence: div, DualityGap: gap,
			NN: nn, Seconds: secs, W: res.W, Duals: duals, DualSeconds: times,
		}
		say("definiteboost %v: %d iterations (%d eigendecompositions), converged %v, dual %s%s",
			p, run.Iterations, run.Eigs, run.Converged, progress.Number("%.6g", run.Dual, "n/a"), progress.Number(", 1-NN error %.4f", run.NN.Mean, ""))
		rep.Runs = append(rep.Runs, run)
	}
	return rep, nil
}
