package engine

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// The steps of BlockEigs: operator products, orthonormalisation,
// Rayleigh–Ritz, and the small dense helpers they share.

// lobpcg holds the state shared by BlockEigs's steps.
type lobpcg struct {
	ctx     context.Context
	b       Backend
	impl    blas.Float64
	op      Operator
	n       int
	sign    float64 // −1 computes the largest eigenvalues as the smallest of −A
	norm    float64 // the largest ‖A·v‖/‖v‖ of the products so far: the estimate of ‖A‖
	given   float64 // BlockEigsOptions.Scale
	applies int
}

// scale is the scale of the tolerance: the caller's, or the estimate of ‖A‖.
func (s *lobpcg) scale(given float64) float64 {
	if given > 0 {
		return given
	}
	return s.norm
}

// apply returns sign·A·v for every column of v.
func (s *lobpcg) apply(v *mat.Dense) (*mat.Dense, error) {
	_, c := v.Dims()
	out := mat.NewDense(s.n, c, nil)
	if bop, ok := s.op.(BlockOperator); ok {
		if s.ctx != nil {
			if err := s.ctx.Err(); err != nil {
				return nil, fmt.Errorf("engine: BlockEigs: %w", err)
			}
		}
		bop.ApplyBlock(out, v)
		s.applies += c
		an, vn := make([]float64, c), make([]float64, c)
		ro, rv := out.RawMatrix(), v.RawMatrix()
		for i := 0; i < s.n; i++ {
			orow, vrow := ro.Data[i*ro.Stride:i*ro.Stride+c], rv.Data[i*rv.Stride:i*rv.Stride+c]
			for j, d := range orow {
				if math.IsNaN(d) || math.IsInf(d, 0) {
					return nil, fmt.Errorf("engine: BlockEigs: the operator returned %v: %w", d, ErrNotFinite)
				}
				an[j] += d * d
				vn[j] += vrow[j] * vrow[j]
				orow[j] = s.sign * d
			}
		}
		for j := range an {
			if vn[j] > 0 {
				s.norm = math.Max(s.norm, math.Sqrt(an[j]/vn[j]))
			}
		}
		return out, nil
	}
	col, dst := make([]float64, s.n), make([]float64, s.n)
	for j := 0; j < c; j++ {
		if s.ctx != nil {
			if err := s.ctx.Err(); err != nil {
				return nil, fmt.Errorf("engine: BlockEigs: %w", err)
			}
		}
		mat.Col(col, j, v)
		s.op.Apply(dst, col)
		for i, d := range dst {
			if math.IsNaN(d) || math.IsInf(d, 0) {
				return nil, fmt.Errorf("engine: BlockEigs: the operator returned %v: %w", d, ErrNotFinite)
			}
			out.Set(i, j, s.sign*d)
		}
		s.applies++
		// ‖A·v_j‖/‖v_j‖ is a lower bound of ‖A‖ from a true product: the
		// estimate the tolerance is relative to (Ritz values from carried
		// images could be spoilt by their rounding).
		var an, vn float64
		for i, d := range dst {
			an += d * d
			vn += col[i] * col[i]
		}
		if vn > 0 {
			s.norm = math.Max(s.norm, math.Sqrt(an/vn))
		}
	}
	return out, nil
}

// residuals writes R = AX − X·diag(θ) and its column norms.
func (s *lobpcg) residuals(r *mat.Dense, norms []float64, x, ax *mat.Dense, theta []float64) {
	r.Copy(ax)
	for j, t := range theta {
		var ss float64
		for i := 0; i < s.n; i++ {
			v := r.At(i, j) - t*x.At(i, j)
			r.Set(i, j, v)
			ss += v * v
		}
		norms[j] = math.Sqrt(ss)
	}
}

// orthonormalize returns an orthonormal basis of the columns of v after
// projecting out the orthonormal blocks against; nil when nothing is left.
func (s *lobpcg) orthonormalize(v *mat.Dense, against []*mat.Dense) *mat.Dense {
	q, _, _ := s.orthonormalizePair(v, nil, against, nil)
	return q
}

// orthonormalizePair orthonormalises the columns of v against the
// orthonormal blocks against (whose images under A are aimages) and among
// themselves, and applies the same linear map to av, v's image under A, so
// that the pair stays consistent without new operator products (av may be
// nil). The columns are first scaled to unit length; then, twice, the
// blocks are projected out and the rank-revealing orthonormalisation SVQB
// (V ← V·U·Σ^(−1/2) on the eigenpairs of VᵀV) keeps the directions whose
// share is above a floor of their original length: the rest are dependent
// to rounding. It returns nil when no direction is left, and amp, the
// largest factor by which a unit direction was magnified.
func (s *lobpcg) orthonormalizePair(v, av *mat.Dense, against, aimages []*mat.Dense) (q, aq *mat.Dense, amp float64) {
	// A direction whose image is carried (av) keeps its share only above
	// 1e-4: the rounding of the carried image is amplified by the inverse
	// of that share, and a spoilt image would corrupt the Rayleigh–Ritz
	// values. Directions whose images are recomputed afterwards may go down
	// to 1e-7.
	floor := 1e-14
	if av != nil {
		floor = 1e-8
	}
	v = mat.DenseCopyOf(v)
	if av != nil {
		av = mat.DenseCopyOf(av)
	}
	_, c := v.Dims()
	for j := 0; j < c; j++ {
		nrm := mat.Norm(v.ColView(j), 2)
		if nrm == 0 {
			continue
		}
		scaleCol(v, j, 1/nrm)
		if av != nil {
			scaleCol(av, j, 1/nrm)
		}
	}
	for pass := 0; pass < 2; pass++ {
		_, c = v.Dims()
		for t, q := range against {
			coef := mat.NewDense(colsOf(q), c, nil)
			gemm(s.impl, blas.Trans, blas.NoTrans, 1, q, v, 0, coef)
			gemm(s.impl, blas.NoTrans, blas.NoTrans, -1, q, coef, 1, v)
			if av != nil {
				gemm(s.impl, blas.NoTrans, blas.NoTrans, -1, aimages[t], coef, 1, av)
			}
		}
		eg, err := s.projectedEig(v, v)
		if err != nil {
			return nil, nil, 0
		}
		var keep []int
		for i := len(eg.Values) - 1; i >= 0; i-- {
			if eg.Values[i] > floor {
				keep = append(keep, i)
			}
		}
		if len(keep) == 0 {
			return nil, nil, 0
		}
		t := mat.NewDense(c, len(keep), nil)
		for col, i := range keep {
			f := 1 / math.Sqrt(eg.Values[i])
			amp = math.Max(amp, f)
			for r := 0; r < c; r++ {
				t.Set(r, col, f*eg.Vectors.At(r, i))
			}
		}
		nq := mat.NewDense(s.n, len(keep), nil)
		gemm(s.impl, blas.NoTrans, blas.NoTrans, 1, v, t, 0, nq)
		v = nq
		if av != nil {
			naq := mat.NewDense(s.n, len(keep), nil)
			gemm(s.impl, blas.NoTrans, blas.NoTrans, 1, av, t, 0, naq)
			av = naq
		}
	}
	return v, av, amp
}

// rayleighRitz returns the m smallest Ritz pairs of the orthonormal basis.
func (s *lobpcg) rayleighRitz(basis, images []*mat.Dense, m int) ([]float64, *mat.Dense, *mat.Dense, error) {
	theta, c, err := s.rayleighRitzCoef(basis, images, m)
	if err != nil {
		return nil, nil, nil, err
	}
	return theta, combine(s.impl, basis, c), combine(s.impl, images, c), nil
}

// projectedEig returns the eigenpairs (ascending) of the symmetric part of
// aᵀb, a small matrix: a Gram matrix VᵀV, or a projection Sᵀ(AS).
func (s *lobpcg) projectedEig(a, b *mat.Dense) (Eigen, error) {
	c := colsOf(a)
	prod := mat.NewDense(c, c, nil)
	gemm(s.impl, blas.Trans, blas.NoTrans, 1, a, b, 0, prod)
	g := mat.NewSymDense(c, nil)
	for i := 0; i < c; i++ {
		for j := i; j < c; j++ {
			g.SetSym(i, j, 0.5*(prod.At(i, j)+prod.At(j, i)))
		}
	}
	return s.b.SymEig(g, AllRange(), true)
}

// rayleighRitzCoef solves the projected eigenproblem Sᵀ(AS) c = θ c for
// the orthonormal basis S = [basis...] and returns the m smallest θ and
// their coefficient vectors (columns of c).
func (s *lobpcg) rayleighRitzCoef(basis, images []*mat.Dense, m int) ([]float64, *mat.Dense, error) {
	sb, ab := hcat(basis), hcat(images)
	_, c := sb.Dims()
	eg, err := s.projectedEig(sb, ab)
	if err != nil {
		return nil, nil, fmt.Errorf("engine: BlockEigs: Rayleigh–Ritz: %w", err)
	}
	m = min(m, c)
	theta := append([]float64(nil), eg.Values[:m]...)
	coef := mat.DenseCopyOf(eg.Vectors.Slice(0, c, 0, m))
	return theta, coef, nil
}

// fill stores the first k pairs (in the caller's sign) and the subspace.
func (s *lobpcg) fill(res *BlockEigsResult, x *mat.Dense, theta, rnorm []float64, k int) {
	res.OpApplies = s.applies
	res.Norm = s.norm
	if given := s.given; given > 0 {
		res.Norm = given
	}
	res.Subspace = mat.DenseCopyOf(x)
	vals := make([]float64, k)
	vecs := mat.NewDense(s.n, k, nil)
	order := make([]int, k)
	for i := range order {
		order[i] = i
		if s.sign < 0 {
			order[i] = k - 1 - i // ascending in the caller's sign
		}
	}
	res.Residuals = make([]float64, k)
	for t, j := range order {
		vals[t] = s.sign * theta[j]
		res.Residuals[t] = rnorm[j]
		for i := 0; i < s.n; i++ {
			vecs.Set(i, t, x.At(i, j))
		}
	}
	res.Values, res.Vectors = vals, vecs
}

// combine returns [blocks...]·c.
func combine(impl blas.Float64, blocks []*mat.Dense, c *mat.Dense) *mat.Dense {
	n, _ := blocks[0].Dims()
	_, m := c.Dims()
	out := mat.NewDense(n, m, nil)
	row := 0
	for _, b := range blocks {
		_, bc := b.Dims()
		gemm(impl, blas.NoTrans, blas.NoTrans, 1, b, c.Slice(row, row+bc, 0, m).(*mat.Dense), 1, out)
		row += bc
	}
	return out
}

// hcat returns the blocks side by side.
func hcat(blocks []*mat.Dense) *mat.Dense {
	if len(blocks) == 1 {
		return blocks[0]
	}
	n, _ := blocks[0].Dims()
	c := 0
	for _, b := range blocks {
		c += colsOf(b)
	}
	out := mat.NewDense(n, c, nil)
	col := 0
	for _, b := range blocks {
		bc := colsOf(b)
		out.Slice(0, n, col, col+bc).(*mat.Dense).Copy(b)
		col += bc
	}
	return out
}

// gemm computes c = alpha·op(a)·op(b) + beta·c with impl.
func gemm(impl blas.Float64, ta, tb blas.Transpose, alpha float64, a, b *mat.Dense, beta float64, c *mat.Dense) {
	ra, rb, rc := a.RawMatrix(), b.RawMatrix(), c.RawMatrix()
	k := ra.Cols
	if ta == blas.Trans {
		k = ra.Rows
	}
	if rc.Rows == 0 || rc.Cols == 0 {
		return
	}
	if k == 0 {
		if beta != 1 {
			c.Scale(beta, c)
		}
		return
	}
	impl.Dgemm(ta, tb, rc.Rows, rc.Cols, k, alpha, ra.Data, ra.Stride, rb.Data, rb.Stride, beta, rc.Data, rc.Stride)
}

func colsOf(a *mat.Dense) int { _, c := a.Dims(); return c }
func rowsOf(a *mat.Dense) int { r, _ := a.Dims(); return r }

func slicesMax(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}

func countBelow(v []float64, lim float64) int {
	c := 0
	for _, x := range v {
		if x <= lim {
			c++
		}
	}
	return c
}

// scaleCol multiplies column j of a by f.
func scaleCol(a *mat.Dense, j int, f float64) {
	r, _ := a.Dims()
	for i := 0; i < r; i++ {
		a.Set(i, j, f*a.At(i, j))
	}
}
