package psdlearn

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/psdlearn/psdlearn/algos/meg"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/limits"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/progress"
	"gonum.org/v1/gonum/mat"
)

// Distance is one distance example of MEG: objects A and B are at squared
// distance Y, that is K_AA + K_BB − 2K_AB = Y for the kernel K to learn (the
// quantity model.Kernel.SqDistance returns).
type Distance struct {
	A, B int
	Y    float64
}

// MEG is the Matrix Exponentiated Gradient kernel learner of Tsuda, Rätsch
// and Warmuth (NIPS 2004): it learns a positive definite kernel over n
// objects from distance examples, one update per example,
//
//	W ← exp(log W − 2η(ŷ − y) X_ab) / Z,   ŷ = tr(W X_ab) = ½‖φ(a) − φ(b)‖²_W,
//
// from W = I/n, with W of trace one; the learned kernel is K = Trace·W, so a
// squared distance Y under K is the label Y/(2·Trace) of the trace-one
// update. The zero value makes one pass over the examples with the paper's
// learning rate.
type MEG struct {
	// Trace is the trace of the learned kernel: the scale in which the
	// distances are measured (0: 1, the paper's trace-one kernel). No
	// kernel of trace T has a squared distance above 2T, so every |Y| must
	// be at most 2·Trace.
	Trace float64
	// Eta is the learning rate η of the trace-one update (0: 2, the rate of
	// the paper's experiment: Lemma 3.2's η = 2c/(r²(2+c)) with r = 1 and
	// c = ∞, right for exact distances; the lemma's loss bound needs η ≤ 2).
	// With a large Trace the updates of small distances are small, and a
	// larger rate fits faster, but too large a rate diverges: Info's "mse"
	// shows the fit.
	Eta float64
	// Passes is the number of passes over the examples (0: 1). The first
	// presents them in the order given (the online protocol), every later
	// pass in a seeded random order.
	Passes int
	// Seed fixes the order of the passes after the first.
	Seed uint64
	// Backend runs the eigendecompositions (nil: engine.Default()).
	Backend engine.Backend
	// Progress, if set, receives an event after every pass.
	Progress progress.Func
}

// FitDistances learns a kernel on n objects from the distance examples ds
// (objects are indices 0..n−1). The model's Kernel holds the full-rank
// K = V diag(λ) Vᵀ (a transductive kernel, like SimpleNPKL's). The online
// updates have no convergence certificate: the model's Certificate says so,
// and its Info records the online loss ("total_loss") and the mean squared
// error of the final kernel on the examples ("mse"), both in the units of
// the squared distances.
func (e MEG) FitDistances(ctx context.Context, n int, ds []Distance) (*model.Model, error) {
	trace := e.Trace
	if trace == 0 {
		trace = 1
	}
	if !(trace > 0) || math.IsInf(trace, 0) {
		return nil, fmt.Errorf("%w: Trace = %v, want a positive finite value", ErrInvalid, e.Trace)
	}
	eta := e.Eta
	if eta == 0 {
		eta = 2
	}
	if !(eta > 0) || math.IsInf(eta, 0) {
		return nil, fmt.Errorf("%w: Eta = %v, want a positive finite value", ErrInvalid, e.Eta)
	}
	passes := e.Passes
	if passes == 0 {
		passes = 1
	}
	if passes < 0 {
		return nil, fmt.Errorf("%w: Passes = %d", ErrInvalid, e.Passes)
	}
	if n < 2 {
		return nil, fmt.Errorf("%w: %d objects, want at least 2", ErrInvalid, n)
	}
	if len(ds) == 0 {
		return nil, fmt.Errorf("%w: no distance examples", ErrInvalid)
	}
	for t, d := range ds {
		if err := checkPair(d.A, d.B, n); err != nil {
			return nil, fmt.Errorf("%w: distance %d: %w", ErrInvalid, t, err)
		}
		if math.IsNaN(d.Y) || math.Abs(d.Y) > 2*trace {
			return nil, fmt.Errorf("%w: distance %d: squared distance %v outside [−2·Trace, 2·Trace] = ±%g (set Trace to the scale of the distances)", ErrInvalid, t, d.Y, 2*trace)
		}
	}
	b := engine.Or(e.Backend)
	learner, err := meg.NewLearner(n, meg.LearnerOptions{Eta: eta, Backend: b})
	if err != nil {
		return nil, fmt.Errorf("psdlearn: meg: %w", err)
	}
	seq := &distSeq{n: n, ds: ds, order: make([]int, len(ds)), scale: 2 * trace}
	for t := range seq.order {
		seq.order[t] = t
	}
	rng := rand.New(rand.NewPCG(e.Seed, 0x6d65672d70617373)) // "meg-pass"
	say := progress.Printf(e.Progress, "meg")
	for p := 1; p <= passes; p++ {
		if p > 1 {
			rng.Shuffle(len(seq.order), func(i, j int) { seq.order[i], seq.order[j] = seq.order[j], seq.order[i] })
		}
		res, err := learner.Run(ctx, seq, nil)
		if err != nil {
			return nil, fmt.Errorf("psdlearn: meg: pass %d: %w", p, err)
		}
		if say != nil {
			say("meg: pass %d of %d: mean squared error %.4g on %d examples", p, passes, res.TotalLoss*seq.scale*seq.scale/float64(res.Steps), res.Steps)
		}
	}
	vals, vecs, err := learner.Eigen()
	if err != nil {
		return nil, fmt.Errorf("psdlearn: meg: %w", err)
	}
	kern, err := kernelOf(vals, vecs, trace)
	if err != nil {
		return nil, fmt.Errorf("psdlearn: meg: %w", err)
	}
	var mse float64
	for _, d := range ds {
		r := kern.SqDistance(d.A, d.B) - d.Y
		mse += r * r
	}
	mse /= float64(len(ds))
	return &model.Model{
		Kind: model.KindKernel, Algo: "meg", Kernel: kern, Provenance: provenance(b, e.Seed, nil),
		Info: map[string]any{
			"trace": trace, "eta": eta, "passes": passes, "seed": e.Seed, "backend": b.Name(),
			"objects": n, "examples": len(ds), "updates": learner.Steps(),
			"total_loss": learner.TotalLoss() * seq.scale * seq.scale, "mse": mse,
		},
		Certificate: &model.Certificate{
			Gap: math.NaN(), Tolerance: math.NaN(),
			Reason: fmt.Sprintf("online MEG: %d pass(es) over %d examples, no convergence certificate", passes, len(ds)),
		},
	}, nil
}

// distSeq presents the distance examples in the given order as the
// trace-one sequence (X_ab, Y/scale) of meg.Learner.Run.
type distSeq struct {
	n     int
	ds    []Distance
	order []int
	scale float64
}

func (s *distSeq) Len() int { return len(s.ds) }

func (s *distSeq) At(t int) (meg.Sym, float64) {
	d := s.ds[s.order[t]]
	return meg.DistPair{N: s.n, A: d.A, B: d.B}, d.Y / s.scale
}

// checkPair checks that (a, b) are two distinct objects of n.
func checkPair(a, b, n int) error {
	if a < 0 || a >= n || b < 0 || b >= n {
		return fmt.Errorf("pair (%d,%d) outside [0,%d)", a, b, n)
	}
	if a == b {
		return fmt.Errorf("pair (%d,%d) links an object to itself", a, b)
	}
	return nil
}

// kernelOf returns the kernel scale·V diag(vals) Vᵀ from an ascending
// eigendecomposition, with the eigenpairs in descending order.
func kernelOf(vals []float64, vecs *mat.Dense, scale float64) (*model.Kernel, error) {
	n, r := vecs.Dims()
	v := mat.NewDense(n, r, nil)
	lam := make([]float64, r)
	for k := 0; k < r; k++ {
		lam[k] = scale * vals[r-1-k]
		for i := 0; i < n; i++ {
			v.Set(i, k, vecs.At(i, r-1-k))
		}
	}
	return model.NewKernel(v, lam)
}

// The defaults of DefiniteBoost, each defined once.
const (
	// DefaultNear bounds the squared distance of must-linked pairs, in
	// units of 2/n (the paper's ε·d).
	DefaultNear = 0.2
	// DefaultFar is the least squared distance of cannot-linked pairs, in
	// units of 2/n (their distance under I/n).
	DefaultFar = 1.0
	// DefaultDefiniteBoostTol is the largest violation, relative to its
	// bound, at which the projections stop.
	DefaultDefiniteBoostTol = 1e-6
)

// DefiniteBoost is the Bregman-projection kernel learner of Tsuda, Rätsch
// and Warmuth (NIPS 2004): the trace-one kernel W closest to I/n in von
// Neumann divergence such that must-linked pairs are close and
// cannot-linked pairs far,
//
//	‖φ(a) − φ(b)‖²_W ≤ Near·2/n  (must-link),   ‖φ(a) − φ(b)‖²_W ≥ Far·2/n  (cannot-link),
//
// where 2/n is the squared distance of every pair under I/n. It projects
// onto the most violated constraint at each step (the generalisation of
// AdaBoost). The zero value is the paper's setting: Near 0.2, the
// approximate projection.
type DefiniteBoost struct {
	// Near bounds the squared distance of must-linked pairs, in units of
	// 2/n (0: DefaultNear, the paper's ε·d).
	Near float64
	// Far is the least squared distance of cannot-linked pairs, in units of
	// 2/n (0: DefaultFar, their distance under I/n). Both must lie in
	// (0, n).
	Far float64
	// Projection is meg.Approximate (the zero value: the closed-form step
	// of the paper's eq. (13)) or meg.Exact.
	Projection meg.Projection
	// Tol stops the projections when no constraint is violated by more
	// than Tol relative to its bound (0: DefaultDefiniteBoostTol).
	Tol float64
	// Iters bounds the number of projections (0: meg.DefaultMaxIter).
	Iters int
	// Backend runs the eigendecompositions (nil: engine.Default()).
	Backend engine.Backend
	// Progress, if set, receives an event every 100 projections and at the
	// end.
	Progress progress.Func
}

// FitPairs learns a trace-one kernel on the pairs.N objects from the
// must-link and cannot-link pairs. The model's Kernel holds the full-rank
// K = V diag(λ) Vᵀ; its Certificate is converged when every constraint
// holds within Tol, and otherwise (the Iters cap) says so with a warning.
// Info records the largest relative violation ("max_violation") and the
// weak-duality bound −Σ_j α_j tr(W C_j) on how far Δ(W, I/n) is above the
// exact projection's ("duality_gap").
func (e DefiniteBoost) FitPairs(ctx context.Context, pairs *constraints.Pairs) (*model.Model, error) {
	if pairs == nil {
		return nil, fmt.Errorf("%w: nil pairs", ErrInvalid)
	}
	n := pairs.N
	if n < 2 {
		return nil, fmt.Errorf("%w: pairs on %d objects, want at least 2", ErrInvalid, n)
	}
	if len(pairs.List) == 0 {
		return nil, fmt.Errorf("%w: no pairs", ErrInvalid)
	}
	near, far := e.Near, e.Far
	if near == 0 {
		near = DefaultNear
	}
	if far == 0 {
		far = DefaultFar
	}
	if !(near > 0 && near < float64(n)) || !(far > 0 && far < float64(n)) {
		return nil, fmt.Errorf("%w: Near = %v and Far = %v, want both in (0, %d)", ErrInvalid, e.Near, e.Far, n)
	}
	tol := e.Tol
	if tol == 0 {
		tol = DefaultDefiniteBoostTol
	}
	if !(tol > 0) || math.IsInf(tol, 0) {
		return nil, fmt.Errorf("%w: Tol = %v, want a positive finite value", ErrInvalid, e.Tol)
	}
	iters := e.Iters
	if iters == 0 {
		iters = meg.DefaultMaxIter
	}
	if iters < 0 {
		return nil, fmt.Errorf("%w: Iters = %d", ErrInvalid, e.Iters)
	}
	if e.Projection != meg.Approximate && e.Projection != meg.Exact {
		return nil, fmt.Errorf("%w: projection %v", ErrInvalid, e.Projection)
	}
	for r, p := range pairs.List {
		if err := checkPair(p.A, p.B, n); err != nil {
			return nil, fmt.Errorf("%w: pair %d: %w", ErrInvalid, r, err)
		}
	}
	if err := limits.Check(fmt.Sprintf("definiteboost on %d objects", n), meg.LearnerMemory(n)); err != nil {
		return nil, fmt.Errorf("psdlearn: %w", err)
	}
	// Constraint j is tr(W C_j) ≤ 0 scaled by its bound ε = Near/n or
	// Far/n (half squared distances of a trace-one W), so that violations
	// are relative and one tolerance serves both kinds. Scaling a
	// constraint changes neither its projection nor its step.
	epsNear, epsFar := near/float64(n), far/float64(n)
	cons := make([]meg.Sym, len(pairs.List))
	for j, p := range pairs.List {
		if p.Same {
			cons[j] = pairCon{n: n, a: p.A, b: p.B, s: 1 / epsNear, sigma: -1}
		} else {
			cons[j] = pairCon{n: n, a: p.A, b: p.B, s: -1 / epsFar, sigma: 1}
		}
	}
	b := engine.Or(e.Backend)
	say := progress.Printf(e.Progress, "definiteboost")
	opt := meg.BoostOptions{Projection: e.Projection, Tol: tol, MaxIter: iters, Backend: b}
	if say != nil {
		opt.Observe = func(st meg.BoostStep) error {
			if st.Iter%100 == 0 {
				say("definiteboost: projection %d, largest relative violation %.3g, dual %.6g", st.Iter, st.Violation, st.Dual)
			}
			return nil
		}
	}
	res, err := meg.DefiniteBoost(ctx, cons, opt)
	if err != nil {
		return nil, fmt.Errorf("psdlearn: definiteboost: %w", err)
	}
	eig, err := b.SymEig(res.W, engine.AllRange(), true)
	if err != nil {
		return nil, fmt.Errorf("psdlearn: definiteboost: %w", err)
	}
	kern, err := kernelOf(eig.Values, eig.Vectors, 1)
	if err != nil {
		return nil, fmt.Errorf("psdlearn: definiteboost: %w", err)
	}
	var gap float64
	for j, a := range res.Alpha {
		gap -= a * res.Violations[j]
	}
	cert := &model.Certificate{Converged: res.Converged, Gap: math.NaN(), Tolerance: math.NaN()}
	if res.Converged {
		cert.Reason = fmt.Sprintf("every constraint holds within the relative tolerance %g after %d projections", tol, res.Iterations)
	} else {
		cert.Reason = fmt.Sprintf("iteration cap of %d projections reached with a relative violation of %.3g above the tolerance %g", iters, res.MaxViolation, tol)
		cert.Warnings = []string{"definiteboost: " + cert.Reason}
	}
	if say != nil {
		say("definiteboost: %s", cert.Reason)
	}
	ml, cl := pairs.Counts()
	return &model.Model{
		Kind: model.KindKernel, Algo: "definiteboost", Kernel: kern, Provenance: provenance(b, 0, nil),
		Info: map[string]any{
			"near": near, "far": far, "projection": e.Projection.String(), "tol": tol, "iters": iters,
			"backend": b.Name(), "objects": n, "must_link": ml, "cannot_link": cl,
			"iterations": res.Iterations, "max_violation": res.MaxViolation, "dual": res.Dual,
			"duality_gap": gap,
		},
		Certificate: cert,
	}, nil
}

// pairCon is the constraint matrix s·X_ab + σI of DefiniteBoost, X_ab the
// matrix of meg.DistPair (tr(W X_ab) = ½‖φ(a) − φ(b)‖²_W, eigenvalues 0
// and 1).
type pairCon struct {
	n, a, b  int
	s, sigma float64
}

func (c pairCon) pair() meg.DistPair { return meg.DistPair{N: c.n, A: c.a, B: c.b} }

// Dim returns n.
func (c pairCon) Dim() int { return c.n }

// Inner returns s·tr(W X_ab) + σ tr W.
func (c pairCon) Inner(w *mat.SymDense) float64 {
	var tr float64
	for i := 0; i < c.n; i++ {
		tr += w.At(i, i)
	}
	return c.s*c.pair().Inner(w) + c.sigma*tr
}

// DiagQuad writes dst[k] = s·v_kᵀ X_ab v_k + σ‖v_k‖².
func (c pairCon) DiagQuad(dst []float64, v *mat.Dense) {
	c.pair().DiagQuad(dst, v)
	raw := v.RawMatrix()
	norm := make([]float64, raw.Cols)
	for i := 0; i < raw.Rows; i++ {
		for k, x := range raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols] {
			norm[k] += x * x
		}
	}
	for k := range norm {
		dst[k] = c.s*dst[k] + c.sigma*norm[k]
	}
}

// Rotate overwrites dst with s·vᵀ X_ab v + σI (v has orthonormal columns).
func (c pairCon) Rotate(dst *mat.SymDense, v *mat.Dense) {
	c.pair().Rotate(dst, v)
	m := dst.SymmetricDim()
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			x := c.s * dst.At(i, j)
			if i == j {
				x += c.sigma
			}
			dst.SetSym(i, j, x)
		}
	}
}

// AddTo adds alpha·(s·X_ab + σI) to dst.
func (c pairCon) AddTo(dst *mat.SymDense, alpha float64) {
	c.pair().AddTo(dst, alpha*c.s)
	for i := 0; i < c.n; i++ {
		dst.SetSym(i, i, dst.At(i, i)+alpha*c.sigma)
	}
}

// Extremes returns the eigenvalues σ and s + σ in order.
func (c pairCon) Extremes(engine.Backend) (float64, float64, error) {
	lo, hi := c.sigma, c.s+c.sigma
	if lo > hi {
		lo, hi = hi, lo
	}
	return lo, hi, nil
}
