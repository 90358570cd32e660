package meg

import (
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/engine"
	"gonum.org/v1/gonum/mat"
)

// User-supplied targets and constraints: `psdlearn kernel --target`,
// `--distances` and `--pairs` give the experiments a kernel, distance
// examples or must-link/cannot-link pairs of the user's instead of the RBF
// kernel of NewTarget and what is derived from it.

// DefaultTargetTol is the relative tolerance of NewKernelTarget's checks.
const DefaultTargetTol = 1e-8

// KernelTargetOptions configures NewKernelTarget and NewObjectTarget.
type KernelTargetOptions struct {
	// Splits is the number of random 50/50 divisions of the 1-NN error (0: DefaultSplits).
	Splits int
	// Seed fixes the 1-NN divisions.
	Seed uint64
	// Tol is the relative tolerance of the symmetry check
	// (|K_ij − K_ji| ≤ Tol·max|K|) and of the PSD check
	// (λmin ≥ −Tol·λmax). 0: DefaultTargetTol.
	Tol float64
}

// NewKernelTarget returns the target of a user's kernel matrix k on n
// objects: k must be square (n ≥ 2), finite, symmetric and positive
// semidefinite within opt.Tol, with a positive trace. It is symmetrised
// ((K + Kᵀ)/2) and normalised to trace one as NewTarget's RBF kernel is
// (the learned kernels have trace one). y, one class label per object, may
// be nil: then the 1-NN errors (NN, NNErrorOf) are NaN. X is nil and Gamma
// is 0.
func NewKernelTarget(k mat.Matrix, y []int, opt KernelTargetOptions) (*Target, error) {
	if k == nil {
		return nil, fmt.Errorf("%w: nil target kernel", ErrInvalid)
	}
	r, c := k.Dims()
	if r != c {
		return nil, fmt.Errorf("%w: target kernel is %d×%d, want a square matrix", ErrInvalid, r, c)
	}
	n := r
	if n < 2 {
		return nil, fmt.Errorf("%w: target kernel is %d×%d, want at least 2 objects", ErrInvalid, n, n)
	}
	if y != nil && len(y) != n {
		return nil, fmt.Errorf("%w: %d labels for a %d×%d target kernel", ErrInvalid, len(y), n, n)
	}
	tol, err := targetTol(opt)
	if err != nil {
		return nil, err
	}
	var big float64
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			v := k.At(i, j)
			if !finite(v) {
				return nil, fmt.Errorf("%w: target kernel entry (%d,%d) = %v is not finite", ErrInvalid, i, j, v)
			}
			big = math.Max(big, math.Abs(v))
		}
	}
	if big < 0x1p-1022 {
		// The eigensolver (and the trace normalisation) cannot work in
		// subnormal numbers: gonum's LAPACK panics on such a matrix.
		return nil, fmt.Errorf("%w: every entry of the target kernel is zero or subnormal (largest magnitude %g, below the smallest normal number %g): multiply it by a large factor first", ErrInvalid, big, 0x1p-1022)
	}
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			a, b := k.At(i, j), k.At(j, i)
			if math.Abs(a-b) > tol*big {
				return nil, fmt.Errorf("%w: target kernel is not symmetric: entry (%d,%d) = %v, (%d,%d) = %v (relative tolerance %g)", ErrInvalid, i, j, a, j, i, b, tol)
			}
			s.SetSym(i, j, 0.5*(a+b))
		}
	}
	var tr float64
	for i := 0; i < n; i++ {
		tr += s.At(i, i)
	}
	if !(tr > 0) {
		return nil, fmt.Errorf("%w: target kernel has trace %v, want a positive trace", ErrInvalid, tr)
	}
	var eig mat.EigenSym
	if !eig.Factorize(s, false) {
		return nil, fmt.Errorf("%w: eigendecomposition of the target kernel failed", ErrInvalid)
	}
	vals := eig.Values(nil)
	lo, hi := vals[0], vals[len(vals)-1]
	if lo < -tol*math.Max(hi, 0) || !(hi > 0) {
		return nil, fmt.Errorf("%w: target kernel is not positive semidefinite: smallest eigenvalue %.6g, largest %.6g (relative tolerance %g)", ErrInvalid, lo, hi, tol)
	}
	u, err := TraceNormalize(s)
	if err != nil {
		return nil, err
	}
	t, err := NewObjectTarget(n, y, opt)
	if err != nil {
		return nil, err
	}
	t.U = u
	if t.NN, err = t.NNErrorOf(u); err != nil {
		return nil, err
	}
	return t, nil
}

func targetTol(opt KernelTargetOptions) (float64, error) {
	tol := opt.Tol
	if tol == 0 {
		tol = DefaultTargetTol
	}
	if !(tol > 0) || math.IsInf(tol, 0) || opt.Splits < 0 {
		return 0, fmt.Errorf("%w: tolerance %v, %d splits", ErrInvalid, opt.Tol, opt.Splits)
	}
	return tol, nil
}

// NewObjectTarget returns a target of n objects without a target kernel (U
// is nil): RunOnline with OnlineOptions.Examples learns from given distance
// examples only, and RunDefiniteBoost with BoostExperimentOptions.Constraints
// from given constraints. y may be nil (no 1-NN evaluation: NN is NaN).
func NewObjectTarget(n int, y []int, opt KernelTargetOptions) (*Target, error) {
	if n < 2 {
		return nil, fmt.Errorf("%w: %d objects, want at least 2", ErrInvalid, n)
	}
	if y != nil && len(y) != n {
		return nil, fmt.Errorf("%w: %d labels for %d objects", ErrInvalid, len(y), n)
	}
	if _, err := targetTol(opt); err != nil {
		return nil, err
	}
	splits := opt.Splits
	if splits == 0 {
		splits = DefaultSplits
	}
	classes := map[int]bool{}
	for _, c := range y {
		classes[c] = true
	}
	nan := math.NaN()
	return &Target{Y: y, Classes: len(classes), NN: NNError{nan, nan, nan}, splits: splits, seed: opt.Seed, n: n}, nil
}

// Objects returns the number of objects of the target.
func (t *Target) Objects() int {
	switch {
	case t.U != nil:
		return t.U.SymmetricDim()
	case t.Y != nil:
		return len(t.Y)
	}
	return t.n
}

// Labelled reports whether the target's objects have labels (and 1-NN
// errors are computed).
func (t *Target) Labelled() bool { return t.Y != nil }

// NewDistances returns the distance examples (DistPair{n, a_t, b_t},
// y_t = d_t/2) of the given squared distances d_t = ‖x_a − x_b‖² on n
// objects, in order. Every pair must have a ≠ b in [0, n) and every d_t
// must be finite and non-negative.
func NewDistances(n int, pairs []engine.Pair, d []float64) (*DistSequence, error) {
	if n < 2 {
		return nil, fmt.Errorf("%w: %d objects, want at least 2", ErrInvalid, n)
	}
	if len(pairs) != len(d) || len(d) == 0 {
		return nil, fmt.Errorf("%w: %d pairs with %d distances, want as many and at least one", ErrInvalid, len(pairs), len(d))
	}
	if err := checkMemory(fmt.Sprintf("a sequence of %d distance examples", len(d)), SequenceMemory(len(d))); err != nil {
		return nil, err
	}
	s := &DistSequence{N: n, Pairs: make([]engine.Pair, len(d)), Y: make([]float64, len(d))}
	for t, p := range pairs {
		if err := (DistPair{N: n, A: p.A, B: p.B}).validate(); err != nil {
			return nil, fmt.Errorf("example %d: %w", t, err)
		}
		if !(d[t] >= 0) || math.IsInf(d[t], 0) {
			return nil, fmt.Errorf("%w: example %d: squared distance %v, want a finite non-negative number", ErrInvalid, t, d[t])
		}
		s.Pairs[t], s.Y[t] = p, d[t]/2
	}
	return s, nil
}

// Negated is −S; see Negate.
type Negated struct{ S Sym }

// Negate returns −S. A constraint tr(W C) ≥ b is tr(W (−C)) ≤ −b, so the
// other direction of a DefiniteBoost constraint is its negation (see
// FarConstraint).
func Negate(s Sym) Negated { return Negated{S: s} }

// Dim returns d.
func (s Negated) Dim() int { return s.S.Dim() }

func (s Negated) validate() error {
	if s.S == nil {
		return fmt.Errorf("%w: nil matrix", ErrInvalid)
	}
	return checkSym(s.S, s.S.Dim())
}

// Inner returns −tr(W S).
func (s Negated) Inner(w *mat.SymDense) float64 { return -s.S.Inner(w) }

// DiagQuad writes dst[k] = −v_kᵀ S v_k.
func (s Negated) DiagQuad(dst []float64, v *mat.Dense) {
	s.S.DiagQuad(dst, v)
	for k := range dst {
		dst[k] = -dst[k]
	}
}

// Rotate overwrites dst with −vᵀ S v.
func (s Negated) Rotate(dst *mat.SymDense, v *mat.Dense) {
	s.S.Rotate(dst, v)
	out, so := upper(dst)
	m := dst.SymmetricDim()
	for i := 0; i < m; i++ {
		row := out[i*so+i : i*so+m]
		for k := range row {
			row[k] = -row[k]
		}
	}
}

// AddTo adds −alpha·S to dst.
func (s Negated) AddTo(dst *mat.SymDense, alpha float64) { s.S.AddTo(dst, -alpha) }

// Extremes returns (−λmax(S), −λmin(S)).
func (s Negated) Extremes(b engine.Backend) (float64, float64, error) {
	lo, hi, err := s.S.Extremes(b)
	return -hi, -lo, err
}

// NearConstraint returns the must-link constraint matrix X_ab − εI of
// CloseConstraints: tr(W C) ≤ 0 ⇔ ½‖x_a − x_b‖²_W ≤ ε for a trace-one W.
// Its eigenvalues are 1 − ε and −ε.
func NearConstraint(n, a, b int, eps float64) Sym {
	return Shift(DistPair{N: n, A: a, B: b}, -eps)
}

// FarConstraint returns the cannot-link constraint matrix εI − X_ab:
// tr(W C) ≤ 0 ⇔ ½‖x_a − x_b‖²_W ≥ ε for a trace-one W. Its eigenvalues are
// ε − 1 and ε, so DefiniteBoost's projections apply for 0 < ε < 1 (λmin < 0
// < λmax), and a trace-one W can satisfy it (W concentrated on e_a − e_b
// gives ½‖x_a − x_b‖² up to 1).
func FarConstraint(n, a, b int, eps float64) Sym {
	return Shift(Negate(DistPair{N: n, A: a, B: b}), eps)
}
