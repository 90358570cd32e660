package meg

import (
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/engine"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// expState is the eigendecomposition E = V diag(λ) Vᵀ of a symmetric exponent
// and the trace-one matrix it defines, W = exp(E)/tr exp(E) = V diag(p) Vᵀ,
// with p_k = exp(λ_k − λ_max) / Σ_j exp(λ_j − λ_max) (computed without overflow).
type expState struct {
	vals []float64  // ascending eigenvalues of E
	vecs *mat.Dense // eigenvectors (columns)
	p    []float64  // eigenvalues of W, same order, sum 1
	logZ float64    // log tr exp(E) = λ_max + log Σ exp(λ_k − λ_max)
}

// newExpState decomposes e with b.SymEig.
func newExpState(b engine.Backend, e *mat.SymDense) (*expState, error) {
	eg, err := b.SymEig(e, engine.EigRange{}, true)
	if err != nil {
		return nil, fmt.Errorf("meg: eigendecomposition of the exponent: %w", err)
	}
	n := len(eg.Values)
	top := eg.Values[n-1]
	p := make([]float64, n)
	var z float64
	for k, l := range eg.Values {
		p[k] = math.Exp(l - top)
		z += p[k]
	}
	for k := range p {
		p[k] /= z
	}
	return &expState{vals: eg.Values, vecs: eg.Vectors, p: p, logZ: top + math.Log(z)}, nil
}

// inner returns tr(W S) = Σ_k p_k v_kᵀ S v_k without forming W.
func (s *expState) inner(x Sym, scratch []float64) float64 {
	q := scratch[:len(s.p)]
	x.DiagQuad(q, s.vecs)
	var t float64
	for k, pk := range s.p {
		t += pk * q[k]
	}
	return t
}

// formW overwrites dst with W = V diag(p) Vᵀ = B Bᵀ, B = V diag(√p), using the
// backend's BLAS (dsyrk). dst must be d×d.
func (s *expState) formW(b engine.Backend, dst *mat.SymDense) {
	n := len(s.p)
	bm := mat.NewDense(n, n, nil)
	raw := bm.RawMatrix()
	vr := s.vecs.RawMatrix()
	for i := 0; i < n; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+n]
		vrow := vr.Data[i*vr.Stride : i*vr.Stride+n]
		for k := range row {
			row[k] = vrow[k] * math.Sqrt(s.p[k])
		}
	}
	w := dst.RawSymmetric()
	b.BLAS().Dsyrk(blas.Upper, blas.NoTrans, n, n, 1, raw.Data, raw.Stride, 0, w.Data, w.Stride)
}

// logOf returns log A for a symmetric positive definite A (from its
// eigendecomposition) and tr A. It fails if an eigenvalue is not positive.
func logOf(b engine.Backend, a mat.Symmetric) (*mat.SymDense, float64, error) {
	eg, err := b.SymEig(a, engine.EigRange{}, true)
	if err != nil {
		return nil, 0, fmt.Errorf("meg: eigendecomposition: %w", err)
	}
	n := len(eg.Values)
	out := mat.NewSymDense(n, nil)
	var tr float64
	for k, l := range eg.Values {
		if !(l > 0) {
			return nil, 0, fmt.Errorf("%w: matrix is not positive definite (eigenvalue %g)", ErrInvalid, l)
		}
		tr += l
		out.SymRankOne(out, math.Log(l), eg.Vectors.ColView(k))
	}
	return out, tr, nil
}

// initialExponent returns log(W1 / tr W1) for the given initial matrix, or
// −log(d)·I when w1 is nil.
func initialExponent(b engine.Backend, d int, w1 mat.Symmetric) (*mat.SymDense, error) {
	e := mat.NewSymDense(d, nil)
	if w1 == nil {
		for i := 0; i < d; i++ {
			e.SetSym(i, i, -math.Log(float64(d)))
		}
		return e, nil
	}
	if w1.SymmetricDim() != d {
		return nil, fmt.Errorf("%w: W1 is %d×%d, want %d×%d", ErrInvalid, w1.SymmetricDim(), w1.SymmetricDim(), d, d)
	}
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			if v := w1.At(i, j); !finite(v) {
				return nil, fmt.Errorf("%w: W1 entry (%d,%d) = %v", ErrInvalid, i, j, v)
			}
		}
	}
	l, tr, err := logOf(b, w1)
	if err != nil {
		return nil, fmt.Errorf("meg: W1: %w", err)
	}
	lt := math.Log(tr)
	for i := 0; i < d; i++ {
		l.SetSym(i, i, l.At(i, i)-lt)
	}
	return l, nil
}

// VonNeumann returns the von Neumann divergence
//
//	Δ(U, W) = tr(U log U − U log W − U + W)
//
// of a symmetric positive semidefinite U and a symmetric positive definite W
// (for trace-one arguments it is tr(U log U − U log W)). Eigenvalues of U
// within 1e-12·‖U‖ of zero count as zero (0·log 0 = 0); a clearly negative
// eigenvalue of U or a non-positive one of W is an error.
func VonNeumann(b engine.Backend, u, w mat.Symmetric) (float64, error) {
	b = engine.Or(b)
	if u == nil || w == nil || u.SymmetricDim() != w.SymmetricDim() || u.SymmetricDim() == 0 {
		return 0, fmt.Errorf("%w: von Neumann divergence needs two matrices of the same size", ErrInvalid)
	}
	ulogu, tru, err := entropyTerm(b, u)
	if err != nil {
		return 0, err
	}
	ew, err := b.SymEig(w, engine.EigRange{}, true)
	if err != nil {
		return 0, fmt.Errorf("meg: von Neumann divergence: %w", err)
	}
	var trw float64
	for _, l := range ew.Values {
		if !(l > 0) {
			return 0, fmt.Errorf("%w: von Neumann divergence: W is not positive definite (eigenvalue %g)", ErrInvalid, l)
		}
		trw += l
	}
	ud, err := NewDense(u)
	if err != nil {
		return 0, err
	}
	q := make([]float64, len(ew.Values))
	ud.DiagQuad(q, ew.Vectors)
	var ulogw float64
	for k, l := range ew.Values {
		ulogw += math.Log(l) * q[k]
	}
	return ulogu - ulogw - tru + trw, nil
}

// entropyTerm returns tr(U log U) and tr U for a symmetric PSD U.
func entropyTerm(b engine.Backend, u mat.Symmetric) (float64, float64, error) {
	eu, err := b.SymEig(u, engine.EigRange{}, false)
	if err != nil {
		return 0, 0, fmt.Errorf("meg: von Neumann divergence: %w", err)
	}
	n := len(eu.Values)
	scale := math.Max(math.Abs(eu.Values[0]), math.Abs(eu.Values[n-1]))
	var ulogu, tr float64
	for _, m := range eu.Values {
		if m < -1e-12*scale {
			return 0, 0, fmt.Errorf("%w: von Neumann divergence: U is not positive semidefinite (eigenvalue %g)", ErrInvalid, m)
		}
		tr += m
		if m > 0 {
			ulogu += m * math.Log(m)
		}
	}
	return ulogu, tr, nil
}
