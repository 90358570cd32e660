package meg

import (
	"context"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/engine"
	"gonum.org/v1/gonum/mat"
)

// LearnerOptions configures an online MEG Learner.
type LearnerOptions struct {
	// Eta is the learning rate η > 0. If zero it is EtaFromC(C, R).
	Eta float64
	// R bounds λmax(X_t) − λmin(X_t) for every instance (the r of Lemma 3.1).
	// If positive, Update rejects an instance whose eigenvalue spread exceeds
	// it (for a Dense instance this costs an eigenvalue-only decomposition).
	R float64
	// C is the constant c > 0 of Lemma 3.2 (math.Inf(1) allowed) used with R
	// to set η = 2c/(r²(2+c)) when Eta is zero.
	C float64
	// W1 is the initial matrix, symmetric positive definite; it is scaled to
	// trace one. Nil means I/d.
	W1 mat.Symmetric
	// Backend computes the eigendecompositions; nil means engine.Default().
	Backend engine.Backend
}

// EtaFromC returns the learning rate η = 2c/(r²(2+c)) of Lemma 3.2; for
// c = +Inf it is 2/r².
func EtaFromC(c, r float64) float64 {
	if math.IsInf(c, 1) {
		return 2 / (r * r)
	}
	return 2 * c / (r * r * (2 + c))
}

// LossBound returns the right-hand side of Lemma 3.2,
//
//	L_MEG ≤ (1 + c/2) L_U + (1/2 + 1/c) r² Δ(U, W_1),
//
// for the comparator loss lossU, the divergence div = Δ(U, W_1), the spread
// bound r and the constant c (c = +Inf requires lossU = 0 and gives r²Δ/2).
func LossBound(lossU, div, r, c float64) float64 {
	if math.IsInf(c, 1) {
		if lossU > 0 {
			return math.Inf(1)
		}
		return 0.5 * r * r * div
	}
	return (1+c/2)*lossU + (0.5+1/c)*r*r*div
}

// OptimalC returns the c that minimises LossBound for given lossU and div:
// c = r·√(2Δ/L_U) (the paper's tuning with ℓ_max = L_U, d_max = Δ); +Inf when
// lossU is 0.
func OptimalC(lossU, div, r float64) float64 {
	if lossU <= 0 {
		return math.Inf(1)
	}
	return r * math.Sqrt(2*div/lossU)
}

// Learner is the online Matrix Exponentiated Gradient learner of a trace-one
// symmetric positive definite W for the quadratic loss (tr(W X_t) − y_t)².
//
// It keeps the exponent E_t = c_t I + log W_1 − 2η Σ_{s<t}(ŷ_s − y_s) X_s as a
// dense matrix and its eigendecomposition V Λ Vᵀ, with c_t so that the top
// eigenvalue is 0; then W_t = V exp(Λ) Vᵀ / tr exp(Λ). Every eigenvalue of W_t
// is exp(λ_k)/Σ exp(λ_j) > 0 (as long as λ_k > −745, where exp underflows), so
// W_t is symmetric, trace one and positive definite by construction.
//
// A Learner is not safe for concurrent use.
type Learner struct {
	d       int
	eta, r  float64
	b       engine.Backend
	e       *mat.SymDense // the exponent E_t
	st      *expState     // eigendecomposition of e; nil when stale
	steps   int
	loss    float64
	scratch []float64
}

// NewLearner returns a MEG learner for d×d matrices.
func NewLearner(d int, opt LearnerOptions) (*Learner, error) {
	if d <= 0 {
		return nil, fmt.Errorf("%w: dimension %d", ErrInvalid, d)
	}
	if err := checkMemory(fmt.Sprintf("a MEG learner on %d×%d matrices", d, d), LearnerMemory(d)); err != nil {
		return nil, err
	}
	eta := opt.Eta
	if eta == 0 {
		if !(opt.R > 0) || !(opt.C > 0) || math.IsNaN(opt.C) || math.IsInf(opt.R, 0) {
			return nil, fmt.Errorf("%w: learning rate needs Eta > 0, or R > 0 and C > 0", ErrInvalid)
		}
		eta = EtaFromC(opt.C, opt.R)
	}
	if !(eta > 0) || math.IsInf(eta, 0) {
		return nil, fmt.Errorf("%w: learning rate %v", ErrInvalid, eta)
	}
	if opt.R < 0 || math.IsNaN(opt.R) || math.IsInf(opt.R, 0) {
		return nil, fmt.Errorf("%w: spread bound R = %v", ErrInvalid, opt.R)
	}
	b := engine.Or(opt.Backend)
	e, err := initialExponent(b, d, opt.W1)
	if err != nil {
		return nil, err
	}
	l := &Learner{d: d, eta: eta, r: opt.R, b: b, e: e, scratch: make([]float64, d)}
	if err := l.refresh(); err != nil {
		return nil, err
	}
	return l, nil
}

// refresh recomputes the eigendecomposition of E if it is stale and shifts E
// so that its top eigenvalue is 0.
func (l *Learner) refresh() error {
	if l.st != nil {
		return nil
	}
	st, err := newExpState(l.b, l.e)
	if err != nil {
		return err
	}
	top := st.vals[l.d-1]
	raw, stride := upper(l.e)
	for i := 0; i < l.d; i++ {
		raw[i*stride+i] -= top
	}
	for k := range st.vals {
		st.vals[k] -= top
	}
	st.logZ -= top
	l.st = st
	return nil
}

// Dim returns d.
func (l *Learner) Dim() int { return l.d }

// Eta returns the learning rate.
func (l *Learner) Eta() float64 { return l.eta }

// Steps returns the number of updates made.
func (l *Learner) Steps() int { return l.steps }

// TotalLoss returns Σ_t (ŷ_t − y_t)² over the updates made.
func (l *Learner) TotalLoss() float64 { return l.loss }

// Predict returns ŷ = tr(W_t X) for the current W_t.
func (l *Learner) Predict(x Sym) (float64, error) {
	if err := checkSym(x, l.d); err != nil {
		return 0, fmt.Errorf("meg: predict: %w", err)
	}
	if err := l.refresh(); err != nil {
		return 0, err
	}
	return l.st.inner(x, l.scratch), nil
}

// Update predicts ŷ_t = tr(W_t X) and makes the MEG update with the label y:
// W_{t+1} ∝ exp(log W_t − 2η(ŷ_t − y)X). It returns ŷ_t; the loss of the
// step is (ŷ_t − y)².
func (l *Learner) Update(x Sym, y float64) (float64, error) {
	if !finite(y) {
		return 0, fmt.Errorf("%w: label %v", ErrInvalid, y)
	}
	yhat, err := l.Predict(x)
	if err != nil {
		return 0, err
	}
	if l.r > 0 {
		lo, hi, err := x.Extremes(l.b)
		if err != nil {
			return 0, fmt.Errorf("meg: update: %w", err)
		}
		if hi-lo > l.r*(1+1e-12) {
			return 0, fmt.Errorf("%w: instance eigenvalue spread %g exceeds R = %g", ErrInvalid, hi-lo, l.r)
		}
	}
	g := yhat - y
	if g != 0 {
		x.AddTo(l.e, -2*l.eta*g)
		l.st = nil
	}
	l.steps++
	l.loss += g * g
	return yhat, nil
}

// W returns a new d×d matrix holding W_t = V exp(Λ) Vᵀ / tr exp(Λ).
func (l *Learner) W() (*mat.SymDense, error) {
	if err := l.refresh(); err != nil {
		return nil, err
	}
	w := mat.NewSymDense(l.d, nil)
	l.st.formW(l.b, w)
	return w, nil
}

// Eigen returns the eigendecomposition of W_t: its eigenvalues (ascending,
// positive, summing to one) and the orthonormal eigenvectors as columns.
// The results are copies.
func (l *Learner) Eigen() ([]float64, *mat.Dense, error) {
	if err := l.refresh(); err != nil {
		return nil, nil, err
	}
	return append([]float64(nil), l.st.p...), mat.DenseCopyOf(l.st.vecs), nil
}

// Divergence returns Δ(U, W_t) = tr(U log U − U log W_t − U + W_t) for a
// symmetric positive semidefinite U, using log W_t = V(Λ − log tr exp Λ)Vᵀ
// from the kept decomposition (exact even when W_t has tiny eigenvalues).
func (l *Learner) Divergence(u mat.Symmetric) (float64, error) {
	if u == nil || u.SymmetricDim() != l.d {
		return 0, fmt.Errorf("%w: divergence needs a %d×%d comparator", ErrInvalid, l.d, l.d)
	}
	if err := l.refresh(); err != nil {
		return 0, err
	}
	ulogu, tru, err := entropyTerm(l.b, u)
	if err != nil {
		return 0, err
	}
	ud, err := NewDense(u)
	if err != nil {
		return 0, err
	}
	q := make([]float64, l.d)
	ud.DiagQuad(q, l.st.vecs)
	var ulogw float64
	for k, lam := range l.st.vals {
		ulogw += (lam - l.st.logZ) * q[k]
	}
	return ulogu - ulogw - tru + 1, nil
}

// Sequence is a finite sequence of examples (X_t, y_t) for Run.
type Sequence interface {
	// Len returns the number of examples.
	Len() int
	// At returns example t, 0 ≤ t < Len().
	At(t int) (Sym, float64)
}

// Example is one instance matrix and its label.
type Example struct {
	X Sym
	Y float64
}

// Examples is a Sequence held in a slice.
type Examples []Example

// Len returns the number of examples.
func (s Examples) Len() int { return len(s) }

// At returns example t.
func (s Examples) At(t int) (Sym, float64) { return s[t].X, s[t].Y }

// Step describes one update of Run.
type Step struct {
	T         int     // 1-based index of the example
	Pred      float64 // ŷ_t = tr(W_t X_t)
	Label     float64 // y_t
	Loss      float64 // (ŷ_t − y_t)²
	TotalLoss float64 // cumulative loss of the run so far
}

// RunResult summarises a Run.
type RunResult struct {
	Steps     int     // examples processed
	TotalLoss float64 // Σ_t (ŷ_t − y_t)² over them
}

// Run feeds the examples of seq to the learner in order (the batch driver of
// the streaming API). observe, if not nil, is called after every update; an
// error from it stops the run and is returned. Run checks ctx before every
// update: on cancellation it returns the result of the updates made so far
// (the learner holds W after the last of them) and an error wrapping
// ctx.Err().
func (l *Learner) Run(ctx context.Context, seq Sequence, observe func(Step) error) (RunResult, error) {
	var res RunResult
	if seq == nil {
		return res, fmt.Errorf("%w: nil sequence", ErrInvalid)
	}
	n := seq.Len()
	for t := 0; t < n; t++ {
		// One update costs an eigendecomposition; a context check is free.
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("meg: Run: %w", err)
		}
		x, y := seq.At(t)
		yhat, err := l.Update(x, y)
		if err != nil {
			return res, fmt.Errorf("meg: example %d: %w", t, err)
		}
		loss := (yhat - y) * (yhat - y)
		res.Steps++
		res.TotalLoss += loss
		if observe != nil {
			if err := observe(Step{T: t + 1, Pred: yhat, Label: y, Loss: loss, TotalLoss: res.TotalLoss}); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}
