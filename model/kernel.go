package model

import (
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// Kernel is a low-rank PSD kernel matrix on N points, K = V diag(λ) Vᵀ with
// V N×r and λ ≥ 0 (r ≥ 1). The N×N matrix is never formed.
type Kernel struct {
	V      *mat.Dense
	Lambda []float64
}

// NewKernel validates v and lambda — finite, len(lambda) = columns of v, no
// λ below −Tolerance·max|λ| (those within tolerance are clipped to zero) —
// and returns the kernel. It keeps v and a copy of lambda.
func NewKernel(v *mat.Dense, lambda []float64) (*Kernel, error) {
	if v == nil {
		return nil, fmt.Errorf("%w: nil kernel factor", ErrInvalid)
	}
	n, r := v.Dims()
	if len(lambda) != r {
		return nil, fmt.Errorf("%w: kernel factor is %d×%d with %d eigenvalues", ErrInvalid, n, r, len(lambda))
	}
	raw := v.RawMatrix()
	for i := 0; i < n; i++ {
		for j, x := range raw.Data[i*raw.Stride : i*raw.Stride+r] {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("%w: kernel factor entry (%d,%d) = %v", ErrInvalid, i, j, x)
			}
		}
	}
	scale := 0.0
	for _, l := range lambda {
		if math.IsNaN(l) || math.IsInf(l, 0) {
			return nil, fmt.Errorf("%w: kernel eigenvalue %v", ErrInvalid, l)
		}
		scale = math.Max(scale, math.Abs(l))
	}
	lam := make([]float64, r)
	for i, l := range lambda {
		if l < -Tolerance*scale {
			return nil, fmt.Errorf("%w: kernel is not positive semidefinite: eigenvalue %d is %g (largest |λ| %g)", ErrInvalid, i, l, scale)
		}
		lam[i] = math.Max(l, 0)
	}
	return &Kernel{V: v, Lambda: lam}, nil
}

// N returns the number of points.
func (k *Kernel) N() int { n, _ := k.V.Dims(); return n }

// Rank returns r, the number of stored eigenpairs.
func (k *Kernel) Rank() int { return len(k.Lambda) }

// At returns K_ij = Σ_c λ_c V_ic V_jc.
func (k *Kernel) At(i, j int) float64 {
	vi, vj := k.V.RawRowView(i), k.V.RawRowView(j)
	var s float64
	for c, l := range k.Lambda {
		s += l * vi[c] * vj[c]
	}
	return s
}

// Factor returns F = V diag(√λ) (N×r), so K = F Fᵀ: the rows of F are the
// points in the kernel's feature space (kernel k-means is k-means on them).
func (k *Kernel) Factor() *mat.Dense {
	n, r := k.V.Dims()
	f := mat.NewDense(n, r, nil)
	for i := 0; i < n; i++ {
		src, dst := k.V.RawRowView(i), f.RawRowView(i)
		for c, l := range k.Lambda {
			dst[c] = math.Sqrt(l) * src[c]
		}
	}
	return f
}

// SqDistance returns the squared feature-space distance K_ii + K_jj − 2K_ij.
func (k *Kernel) SqDistance(i, j int) float64 {
	vi, vj := k.V.RawRowView(i), k.V.RawRowView(j)
	var s float64
	for c, l := range k.Lambda {
		e := vi[c] - vj[c]
		s += l * e * e
	}
	return s
}

// PairSqDistances writes K_aa + K_bb − 2K_ab for every pair into dst.
func (k *Kernel) PairSqDistances(dst []float64, pairs []sparse.Pair) error {
	return pairSqDists(dst, k.Factor(), pairs)
}
