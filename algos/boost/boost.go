// Package boost learns a Mahalanobis metric X ⪰ 0 from triplet constraints
// with the boosting family of Shen et al.: BoostMetric (JMLR 2012) with the
// exponential or logistic loss, stage-wise (coordinate descent, Algorithm 3)
// or totally corrective (Algorithm 4, L-BFGS-B on all weights), optionally
// multi-pass; and PSDBoost (NIPS 2008), the hinge-loss, trace-one version
// solved exactly by column ("matrix") generation on a linear program.
//
// The weak learners are trace-one rank-one matrices v vᵀ: each iteration
// computes the leading eigenpair (λ, v) of Â(u) = Σ_r u_r A_r for the current
// triplet weights u. Â(u) is never assembled from the A_r: it is Xᵀ L_W X, a
// data-sized sparse Laplacian product (engine WeightedGram), and for large
// dimensions the eigenpair is computed matrix-free by Lanczos on
// v ↦ Xᵀ(L_W(X v)). The margins of a new term, H_r = (p_r·v)² − (q_r·v)², come
// from one matrix–vector product z = X v and the squared differences of z over
// the pairs the triplets use. The learned metric is kept as its rank-one terms
// Σ_j w_j v_j v_jᵀ (Result.V, Result.W).
//
// Stopping rules: BoostMetric stops when λmax(Â(u)) < ν + Tol·λ₁ (no new
// term decreases the objective) or after Iters terms; its corrective
// re-solves are warm-started and capped, the last one run to full accuracy.
// PSDBoost stops when λmax(Â(u)) ≤ π + Eps, a certificate over all
// triplets: its restricted master LP is solved by row generation on a
// working set of triplets until no other triplet is violated, so its duals
// u are feasible and optimal for the LP over all of them.
//
// The package registers the trainers "boostmetric" and "psdboost" with
// train.
package boost

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/progress"
	"gonum.org/v1/gonum/mat"
)

// Loss is the loss function on the triplet margins ρ_r = ⟨A_r, X⟩.
type Loss int

const (
	// Exp is the exponential loss: minimise log Σ_r exp(−ρ_r) + ν tr X.
	Exp Loss = iota
	// Logistic is the logistic loss: minimise Σ_r log(1 + exp(−ρ_r)) + ν tr X.
	Logistic
	// Hinge is the soft-margin hinge loss of PSDBoost:
	// maximise ρ − C Σ_r ξ_r s.t. ⟨A_r, X⟩ ≥ ρ − ξ_r, ξ ≥ 0, X ⪰ 0, tr X = 1.
	Hinge
)

// String returns the command-line name of l.
func (l Loss) String() string {
	switch l {
	case Exp:
		return "exp"
	case Logistic:
		return "logistic"
	case Hinge:
		return "hinge"
	}
	return fmt.Sprintf("Loss(%d)", int(l))
}

// ParseLoss parses "exp" (or "exponential"), "logistic" (or "logit") and "hinge".
func ParseLoss(s string) (Loss, error) {
	switch strings.ToLower(s) {
	case "exp", "exponential":
		return Exp, nil
	case "logistic", "logit":
		return Logistic, nil
	case "hinge":
		return Hinge, nil
	}
	return 0, errs.Option(fmt.Errorf("%w: unknown loss %q (want exp, logistic or hinge)", ErrInvalid, s))
}

// Mode is the weight optimisation of BoostMetric.
type Mode int

const (
	// Stagewise fixes the earlier weights and line-searches the new one (Algorithm 3).
	Stagewise Mode = iota
	// Corrective re-optimises all weights after every new term (Algorithm 4).
	Corrective
)

// String returns the command-line name of m.
func (m Mode) String() string {
	switch m {
	case Stagewise:
		return "stagewise"
	case Corrective:
		return "corrective"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode parses "stagewise" (or "stage-wise") and "corrective" (or "totally-corrective", "tc").
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(s) {
	case "stagewise", "stage-wise", "sw":
		return Stagewise, nil
	case "corrective", "totally-corrective", "totallycorrective", "tc":
		return Corrective, nil
	}
	return 0, errs.Option(fmt.Errorf("%w: unknown mode %q (want stagewise or corrective)", ErrInvalid, s))
}

// ParsePrecision parses auto, double or mixed.
func ParsePrecision(s string) (Precision, error) {
	switch strings.ToLower(s) {
	case "", "auto":
		return PrecisionAuto, nil
	case "double":
		return PrecisionDouble, nil
	case "mixed":
		return PrecisionMixed, nil
	}
	return 0, errs.Option(fmt.Errorf("%w: unknown precision %q (want auto, double or mixed)", ErrInvalid, s))
}

// String returns "auto", "double" or "mixed", as ParsePrecision reads them.
func (p Precision) String() string {
	switch p {
	case PrecisionDouble:
		return "double"
	case PrecisionMixed:
		return "mixed"
	}
	return "auto"
}

// Precision selects the arithmetic of BoostMetric's weighted Gram.
//
// In mixed precision the Gram Â(u) = Xᵀ L_W X whose leading eigenvector
// becomes the next term is computed in single precision: the Laplacian
// product and the GEMM read and write half the bytes and the GEMM runs at
// about twice the rate. Only the choice of the direction v is affected: its
// margins, the line search and the model are computed in double precision
// from v. Every stopping decision is made in double precision: an iteration
// keeps the single-precision direction only when its exact Rayleigh quotient
// vᵀÂ(u)v (Σ_r u_r H_r, from the double-precision margins) is at least the
// stopping threshold, which proves λmax(Â(u)) is too; otherwise, and when the
// direction is poor (the quotient below 0.9 of the single-precision λmax),
// that iteration and every later one price in double precision. The first
// iteration, which sets the threshold, is always double.
type Precision int

const (
	// PrecisionAuto is mixed precision when one Gram costs at least
	// mixedMinFlops (2·N·D² ≥ 10⁹: Fashion-MNIST's 50,000 × 164, not
	// letters' 10,500 × 16) and the backend has single-precision BLAS; else
	// double.
	PrecisionAuto Precision = iota
	// PrecisionDouble computes every Gram in double precision.
	PrecisionDouble
	// PrecisionMixed prices in single precision as described above whatever
	// the size (when the backend has single-precision BLAS).
	PrecisionMixed
)

// EigMethod selects how the leading eigenpair of Â(u) is computed.
type EigMethod int

const (
	// EigAuto uses EigDense up to Options.DenseMaxDim dimensions and
	// EigLanczos above; without DenseMaxDim, the path a cost model of one
	// iteration finds cheaper for the data's size (dense on MNIST's 784
	// pixels with 20,000 points, Lanczos from about 200 dimensions with 100
	// points).
	EigAuto EigMethod = iota
	// EigDense forms the D×D matrix Xᵀ L_W X and calls the dense partial eigensolver.
	EigDense
	// EigLanczos runs the sparse eigensolver on the operator v ↦ Xᵀ(L_W(X v))
	// (dimensions below 3 always use the dense solver).
	EigLanczos
)

// Options configures a run. Zero values select the documented defaults.
type Options struct {
	Loss Loss
	Mode Mode // exponential and logistic losses only
	// Iters bounds the number of iterations: of rank-one terms J for
	// BoostMetric, of pricing rounds for PSDBoost (each may add up to
	// Columns terms). Zero selects DefaultIters for BoostMetric and
	// DefaultPSDBoostIters for PSDBoost.
	Iters int
	// Nu is BoostMetric's trace regulariser ν (and stopping threshold
	// λmax(Â) < ν). Zero selects DefaultNu.
	Nu float64
	// Tol is BoostMetric's relative stopping tolerance: stop when
	// λmax(Â(u)) < ν + Tol·λ₁, with λ₁ the leading eigenvalue of the first
	// iteration (the scale of Â). Zero selects DefaultTol; a negative value selects
	// 0, the paper's criterion λmax < ν (which the iterates approach only
	// asymptotically when the optimum is attained).
	Tol float64
	// C is PSDBoost's trade-off between the margin and the slacks; it must
	// satisfy C·m ≥ 1 for m triplets (else the problem is unbounded). Zero
	// selects C = 1/(0.1·m), i.e. about 10% of the triplets may violate the margin.
	C float64
	// Eps is PSDBoost's stopping tolerance: stop when λmax(Â(u)) ≤ π + Eps.
	// Zero selects DefaultEps.
	Eps float64
	// Columns is the number of eigenvectors of Â(u) PSDBoost offers the
	// master per iteration on the dense eigensolver path (those with a
	// positive reduced cost enter as columns; the Lanczos path offers the
	// leading one). Zero selects 16; 1 is classic single-column pricing.
	Columns int
	// Stabilize is PSDBoost's dual smoothing weight α < 1: pricing at
	// α·u_best + (1−α)·u, u_best the priced weights with the smallest bound
	// λmax so far, with a fall-back to u on a mis-price. Zero selects 0.5; a
	// negative value turns smoothing off (pricing at the LP's duals u).
	Stabilize float64
	// Extend, if non-nil, is asked by BoostMetric (not PSDBoost) when the
	// iteration limit is reached, with the iterations so far and the terms
	// learned (V and W in the units of the normalised data, see
	// Result.Scale; a metric's k-NN decisions do not depend on its scale),
	// how many more iterations to run: 0 stops at the limit. The boostmetric
	// trainer extends the limit while the validation error still improves.
	Extend func(it int, r *Result) int
	// Monitor, if non-nil, watches a BoostMetric run (not PSDBoost) at
	// the iterations it asks for and may stop it early (StopMonitor). The
	// boostmetric trainer scores the terms on validation rows with it.
	Monitor Monitor
	// Eig selects the eigensolver; DenseMaxDim, if positive, is the EigAuto
	// threshold on the dimension (zero: the cost model, see EigAuto).
	Eig         EigMethod
	DenseMaxDim int
	// Precision selects the arithmetic of BoostMetric's weighted Gram Â(u)
	// on the dense eigensolver path (see Precision). PSDBoost always prices
	// in double precision.
	Precision Precision
	// Backend runs the numerical kernels; nil means engine.Default().
	Backend engine.Backend
	// Seed fixes the Lanczos start vectors.
	Seed uint64
	// Progress, if non-nil, receives an event after every iteration (its
	// Objective, and for PSDBoost its Gap λmax − π).
	Progress progress.Func

	// lp overrides the linear-programming solver chosen from the backend (tests).
	lp engine.LPSolver
	// keep overrides the number of triplet columns PSDBoost's master keeps
	// (tests: small problems that still fold triplets at C).
	keep int
	// termAge overrides the solves a term of PSDBoost's master may go
	// without weight before it may leave (defaultTermAge); negative: never.
	termAge int
	// lpDual forces the dual form of PSDBoost's master on every LP solver
	// (tests: the pure-Go simplex takes the primal form on small problems).
	lpDual bool
}

// A Monitor watches a BoostMetric run (Options.Monitor): after every
// iteration it for which Due(it) holds, the run stores its terms in its
// Result (as it does when it returns) and calls Check; Check returning
// true ends the run there with StopMonitor. Check is called after the
// iteration's Progress event and before Options.Extend at the limit; the
// Result it receives is the run's own, which later iterations update, so
// a Monitor copies what it keeps. A run that ends without an error returns
// Keep's answer: its own Result, or a copy with the terms of an earlier
// check (every other field is the run's). Distributed runs call it on
// every rank with the same Result, and it must answer alike on every rank.
type Monitor interface {
	// Due reports whether Check wants the terms after iteration it.
	Due(it int) bool
	// Check receives the terms after iteration it and reports whether
	// to stop.
	Check(it int, r *Result) bool
	// Keep returns the result the run returns, given its final one.
	Keep(r *Result) *Result
}

// A PassMonitor is a Monitor that MultiPass tells where each pass starts:
// StartPass(p, l) comes before pass p, whose terms are learned on the
// points Lᵀa_i (l is nil for the first pass, the identity), so that the
// metric of a pass's terms X_p is L X_p Lᵀ in the input space.
type PassMonitor interface {
	Monitor
	StartPass(p int, l *mat.Dense)
}

// Stop says why a run ended.
type Stop int

const (
	// StopConverged: no rank-one term improves the objective (λmax < ν + Tol·λ₁, or λmax ≤ π + ε).
	StopConverged Stop = iota
	// StopIterations: the iteration limit was reached.
	StopIterations
	// StopUnbounded: with the exponential loss the objective is unbounded
	// below because the triplets are separable with a margin above ν per unit
	// trace — stage-wise: every triplet had margin ≥ ν along the new direction
	// (the term got the capped weight unboundedMargin/min_r H_r); corrective:
	// an iterate satisfied min_r ρ_r > ν·tr X. The metric learned so far is
	// returned (its scale is arbitrary).
	StopUnbounded
	// StopStalled: PSDBoost priced a term the restricted master problem
	// already holds at λ > π + ε, so the LP solver's tolerances, not the
	// method, limit the accuracy (see Result.SDPGap).
	StopStalled
	// StopCancelled: the context was cancelled; the Result holds the
	// iterations completed before it.
	StopCancelled
	// StopMemory: PSDBoost's master could not take the next columns within
	// the memory limit (limits.MaxMemory): every term keeps m margins, and
	// multiple pricing adds up to Options.Columns terms per iteration. The
	// Result holds the last master solved, with its certificate.
	StopMemory
	// StopMonitor: Options.Monitor stopped the run (the boostmetric
	// trainer's validation error rose clearly above its best).
	StopMonitor
)

// String describes s.
func (s Stop) String() string {
	switch s {
	case StopConverged:
		return "converged"
	case StopIterations:
		return "iteration limit"
	case StopUnbounded:
		return "unbounded (separable)"
	case StopStalled:
		return "stalled (LP tolerance)"
	case StopCancelled:
		return "cancelled"
	case StopMemory:
		return "memory limit"
	case StopMonitor:
		return "stopped by its monitor"
	}
	return fmt.Sprintf("Stop(%d)", int(s))
}

// Result is a learned metric X = Σ_j W[j] V_j V_jᵀ with unit columns V_j, and
// the history of the run.
type Result struct {
	V *mat.Dense // D×J, unit columns (nil when J = 0)
	W []float64  // J non-negative weights, in the units of the data
	// Scale is the data's RMS deviation s (data.RMSDeviation): the run
	// learned on x/s, and every other field below is in those units.
	Scale float64

	Iterations int
	Stop       Stop
	Objective  float64   // final primal objective (for PSDBoost: ρ − C Σ ξ = π)
	Curve      []float64 // objective after every iteration (PSDBoost: π)
	Lambda     []float64 // λmax(Â(u)) at every pricing step (BoostMetric: one per iteration, plus the final one that stopped a converged run; PSDBoost: one before the first iteration and one or two after every iteration, see Options.Stabilize)
	// SingleIterations counts the BoostMetric iterations whose direction
	// came from a single-precision Gram (Options.Precision); their Lambda
	// entries are the larger of that Gram's λmax and the direction's exact
	// Rayleigh quotient. The stopping λmax is always double.
	SingleIterations int
	// Phases is BoostMetric's time per phase of its iterations (zero for
	// PSDBoost).
	Phases Phases

	// PSDBoost only (NaN otherwise).
	Pi         float64   // optimum of the last restricted master LP
	DualityGap float64   // LP duality gap D(u) − P(w) recomputed from the LP's duals u and weights w
	SDPGap     float64   // λmax(Â(U)) − π, the smallest over the pricing steps: bounds the SDP suboptimality
	U          []float64 // the feasible triplet weights priced with the smallest λmax (the certificate; the last LP's own duals unless smoothing priced better)
}

// Dim returns D.
func (r *Result) Dim() int {
	if r.V == nil {
		return 0
	}
	d, _ := r.V.Dims()
	return d
}

// Matrix returns X = Σ_j w_j v_j v_jᵀ as a D×D symmetric matrix. d is the
// dimension, used when there are no terms.
func (r *Result) Matrix(d int) *mat.SymDense {
	if r.V != nil {
		d, _ = r.V.Dims()
	}
	x := mat.NewSymDense(d, nil)
	for j, w := range r.W {
		v := r.V.ColView(j)
		x.SymRankOne(x, w, v)
	}
	return x
}

// Factor returns L (D×J) with X = L Lᵀ: column j is √w_j v_j.
func (r *Result) Factor() *mat.Dense {
	if r.V == nil {
		return nil
	}
	d, j := r.V.Dims()
	l := mat.NewDense(d, j, nil)
	for c := 0; c < j; c++ {
		s := math.Sqrt(math.Max(r.W[c], 0))
		for i := 0; i < d; i++ {
			l.Set(i, c, s*r.V.At(i, c))
		}
	}
	return l
}

// Trace returns tr X = Σ_j w_j.
func (r *Result) Trace() float64 {
	var s float64
	for _, w := range r.W {
		s += w
	}
	return s
}

// ErrInvalid is wrapped by errors about invalid input.
var ErrInvalid = errs.New("boost: invalid input", errs.ErrInvalid)

// Train learns a metric on the rows of x (n×D) from the triplets ts (on the
// same n points) with the loss and mode of opt: Hinge runs PSDBoost, Exp and
// Logistic run BoostMetric.
func Train(ctx context.Context, x *mat.Dense, ts *constraints.TripletSet, opt Options) (*Result, error) {
	if opt.Loss == Hinge {
		return PSDBoost(ctx, x, ts, opt)
	}
	return BoostMetric(ctx, x, ts, opt)
}

// validate checks the data and the triplets.
func validate(x *mat.Dense, ts *constraints.TripletSet) error {
	if x == nil {
		return fmt.Errorf("%w: nil data", ErrInvalid)
	}
	if ts == nil || ts.Len() == 0 {
		return fmt.Errorf("%w: no triplets", ErrInvalid)
	}
	n, d := x.Dims()
	if n != ts.N {
		return fmt.Errorf("%w: data has %d rows, triplets are on %d points", ErrInvalid, n, ts.N)
	}
	if d == 0 {
		return fmt.Errorf("%w: data has no columns", ErrInvalid)
	}
	raw := x.RawMatrix()
	for i := 0; i < n; i++ {
		if err := engine.CheckFinite(fmt.Sprintf("x row %d", i), raw.Data[i*raw.Stride:i*raw.Stride+d]); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalid, err)
		}
	}
	return nil
}

// appendTerm appends the unit vector v as a new column of V.
func appendTerm(vs [][]float64, v []float64) [][]float64 {
	return append(vs, append([]float64(nil), v...))
}

// packTerms builds the D×J matrix of unit vectors.
func packTerms(d int, vs [][]float64) *mat.Dense {
	if len(vs) == 0 {
		return nil
	}
	m := mat.NewDense(d, len(vs), nil)
	for j, v := range vs {
		m.SetCol(j, v)
	}
	return m
}
