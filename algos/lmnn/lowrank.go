package lmnn

import (
	"fmt"

	"github.com/psdlearn/psdlearn/data"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// The low-rank parametrisation (Options.Rank = r > 0).
//
// The objective f is the same function of M; with M = L Lᵀ, L D×r, the
// chain rule gives ∇_L f = (G + Gᵀ)·L = 2·G·L for the symmetric subgradient
// G of f in M, the one the full-rank descent uses (Xᵀ L_W X, one
// WeightedGram per accepted step). A step is L ← L − α·2·G·L: M stays PSD by
// construction and no eigendecomposition is needed, only the D×D×r product
// and the n×D×r transform Z = X·L the objective needs anyway.
//
// (Written as the r×D map Lᵀ, M = (Lᵀ)ᵀLᵀ, the factor's gradient is
// 2·Lᵀ·G: the same matrix transposed.)

// initFactor sets the starting factor: the r leading principal axes of the
// normalised rows (data.FitPCA: descending variance, each axis signed so
// that its largest-magnitude entry is positive, hence deterministic), as
// orthonormal columns. M₀ = L₀L₀ᵀ is then the orthogonal projector onto
// those axes: the full-rank start M₀ = I restricted to them (with r = D,
// M₀ = I up to rounding). The axes are those of the normalised data, so a
// rescaling of the input by a power of two leaves them bit for bit.
func (s *solver) initFactor() error {
	pca, err := data.FitPCA(s.b, s.x, s.rank)
	if err != nil {
		return fmt.Errorf("lmnn: initial factor: %w", err)
	}
	s.l = pca.Components
	s.m = mat.NewSymDense(s.d, nil)
	s.m.SymOuterK(1, s.l)
	s.gl = mat.NewDense(s.d, s.rank, nil)
	return nil
}

// factorGradient sets s.gl = 2·G·L from s.grad (upper triangle) and s.l.
func (s *solver) factorGradient() {
	g, l, gl := s.grad.RawSymmetric(), s.l.RawMatrix(), s.gl.RawMatrix()
	s.impl.Dsymm(blas.Left, blas.Upper, s.d, s.rank, 2, g.Data, g.Stride, l.Data, l.Stride, 0, gl.Data, gl.Stride)
}

// factorStep writes L − α·∇_L into dst (D×r) and returns it.
func (s *solver) factorStep(dst *mat.Dense, alpha float64) *mat.Dense {
	l, gl, out := s.l.RawMatrix(), s.gl.RawMatrix(), dst.RawMatrix()
	for i := 0; i < s.d; i++ {
		lr := l.Data[i*l.Stride : i*l.Stride+s.rank]
		gr := gl.Data[i*gl.Stride : i*gl.Stride+s.rank]
		or := out.Data[i*out.Stride : i*out.Stride+s.rank]
		for j := range or {
			or[j] = lr[j] - alpha*gr[j]
		}
	}
	return dst
}

// iterNorm is the Frobenius norm of the iterate the steps move: M at full
// rank, L in the low-rank parametrisation.
func (s *solver) iterNorm() float64 {
	if s.rank > 0 {
		return mat.Norm(s.l, 2)
	}
	return normF(s.m)
}

// stepNorm is the Frobenius norm of the (sub)gradient in that iterate: G at
// full rank, 2·G·L in the low-rank parametrisation.
func (s *solver) stepNorm() float64 {
	if s.rank > 0 {
		return mat.Norm(s.gl, 2)
	}
	return normF(s.grad)
}
