package engine

import (
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/lapack"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// weightedGram computes dst = Xᵀ (L_W X): a parallel sparse product L_W·X
// (O(nnz·D)) followed by one level-3 GEMM (O(N·D²)). The two stages run one
// after the other, so goroutines and BLAS threads never overlap.
func weightedGram(impl lapack.BLAS, dst *mat.SymDense, x *mat.Dense, g *PairGraph) error {
	if x == nil || g == nil || dst == nil {
		return fmt.Errorf("%w: nil argument to WeightedGram", ErrDimension)
	}
	n, d := x.Dims()
	if n != g.N() {
		return fmt.Errorf("%w: WeightedGram: x has %d rows, graph has %d points", ErrDimension, n, g.N())
	}
	if dst.SymmetricDim() != d {
		return fmt.Errorf("%w: WeightedGram: dst is %d×%d, want %d×%d", ErrDimension, dst.SymmetricDim(), dst.SymmetricDim(), d, d)
	}
	lx := mat.NewDense(n, d, nil)
	g.LaplacianMulDense(lx, x)
	xr, lr := x.RawMatrix(), lx.RawMatrix()
	out := make([]float64, d*d)
	impl.Dgemm(blas.Trans, blas.NoTrans, d, d, n, 1, xr.Data, xr.Stride, lr.Data, lr.Stride, 0, out, d)
	raw := dst.RawSymmetric()
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			// Xᵀ L X is symmetric in exact arithmetic; average the two triangles.
			raw.Data[i*raw.Stride+j] = 0.5 * (out[i*d+j] + out[j*d+i])
		}
	}
	return nil
}

// pairQuadForms computes (x_a−x_b)ᵀ M (x_a−x_b) = (x_a−x_b)·(y_a−y_b) with
// Y = X M from one GEMM: O(N·D² + pairs·D), and no cancellation from
// expanding the quadratic form.
func pairQuadForms(impl lapack.BLAS, dst []float64, x *mat.Dense, m mat.Symmetric, pairs []Pair) error {
	if x == nil || m == nil {
		return fmt.Errorf("%w: nil argument to PairQuadForms", ErrDimension)
	}
	n, d := x.Dims()
	if m.SymmetricDim() != d {
		return fmt.Errorf("%w: PairQuadForms: x has %d columns, M is %d×%d", ErrDimension, d, m.SymmetricDim(), m.SymmetricDim())
	}
	if len(dst) != len(pairs) {
		return fmt.Errorf("%w: PairQuadForms: %d outputs for %d pairs", ErrDimension, len(dst), len(pairs))
	}
	if err := checkPairs(pairs, n); err != nil {
		return err
	}
	full := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v := m.At(i, j)
			full[i*d+j], full[j*d+i] = v, v
		}
	}
	xr := x.RawMatrix()
	y := make([]float64, n*d)
	impl.Dgemm(blas.NoTrans, blas.NoTrans, n, d, d, 1, xr.Data, xr.Stride, full, d, 0, y, d)
	sparse.ParallelRows(len(pairs), len(pairs)*d*3, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			p := pairs[k]
			xa, xb := xr.Data[p.A*xr.Stride:p.A*xr.Stride+d], xr.Data[p.B*xr.Stride:p.B*xr.Stride+d]
			ya, yb := y[p.A*d:p.A*d+d], y[p.B*d:p.B*d+d]
			var s float64
			for i := range xa {
				s += (xa[i] - xb[i]) * (ya[i] - yb[i])
			}
			dst[k] = s
		}
	})
	return nil
}

// pairSqDists computes ‖z_a − z_b‖² for every pair.
func pairSqDists(dst []float64, z *mat.Dense, pairs []Pair) error {
	if z == nil {
		return fmt.Errorf("%w: nil argument to PairSqDists", ErrDimension)
	}
	n, r := z.Dims()
	if len(dst) != len(pairs) {
		return fmt.Errorf("%w: PairSqDists: %d outputs for %d pairs", ErrDimension, len(dst), len(pairs))
	}
	if err := checkPairs(pairs, n); err != nil {
		return err
	}
	zr := z.RawMatrix()
	sparse.ParallelRows(len(pairs), len(pairs)*r*2, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			p := pairs[k]
			za, zb := zr.Data[p.A*zr.Stride:p.A*zr.Stride+r], zr.Data[p.B*zr.Stride:p.B*zr.Stride+r]
			var s float64
			for i := range za {
				t := za[i] - zb[i]
				s += t * t
			}
			dst[k] = s
		}
	})
	return nil
}

func checkPairs(pairs []Pair, n int) error {
	for k, p := range pairs {
		if p.A < 0 || p.A >= n || p.B < 0 || p.B >= n {
			return fmt.Errorf("%w: pair %d = (%d,%d) outside [0,%d)", ErrDimension, k, p.A, p.B, n)
		}
	}
	return nil
}

// CheckFinite returns an error wrapping ErrNotFinite if x holds NaN or Inf.
func CheckFinite(what string, x []float64) error {
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: %s[%d] = %v", ErrNotFinite, what, i, v)
		}
	}
	return nil
}
