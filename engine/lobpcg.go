package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// BlockEigsOptions configures BlockEigs. The zero value selects the defaults
// documented per field.
type BlockEigsOptions struct {
	// Start, when non-nil, is a starting subspace (n×s, any s ≥ 1): the Ritz
	// vectors of a previous, nearby problem (BlockEigsResult.Subspace). Its
	// columns need not be orthonormal; columns beyond s are random.
	Start *mat.Dense
	// Guard is the number of block columns beyond k, which speed up the
	// convergence of the k-th pair and carry the next call's warm start.
	// Zero selects max(2, k/4); negative is invalid.
	Guard int
	// Tol is the residual tolerance: the pair (θ, x) is accepted when
	// ‖A·x − θ·x‖ ≤ Tol·‖A‖, with ‖A‖ estimated by the largest ‖A·v‖/‖v‖
	// of the operator products made. Then |λ − θ| ≤ Tol·‖A‖. Zero selects 1e-8;
	// values below 1e-14, NaN or infinite are invalid.
	Tol float64
	// Scale, when positive, replaces the estimate of ‖A‖ in the tolerance:
	// pairs are accepted when ‖A·x − θ·x‖ ≤ Tol·Scale (a caller that knows
	// the scale of the eigenvalues it needs, as the SDP dual does).
	Scale float64
	// MaxIter bounds the number of block iterations. Zero selects 1000.
	MaxIter int
	// Seed fixes the random columns of the starting block.
	Seed uint64
}

// BlockEigsResult holds the k wanted eigenpairs (sorted ascending, as from
// Eigs) and the subspace to warm-start the next call with.
type BlockEigsResult struct {
	EigsResult
	// Subspace is the whole block of Ritz vectors (k + guard columns,
	// orthonormal): the Start of the next, nearby problem.
	Subspace *mat.Dense
	// Residuals are ‖A·x_i − θ_i·x_i‖ of the returned pairs, recomputed
	// with fresh operator products.
	Residuals []float64
	// Norm is the scale the tolerance was relative to: Scale, or the
	// estimate of ‖A‖.
	Norm float64
}

// BlockEigs computes k eigenpairs of the symmetric operator op at the end of
// the spectrum chosen by which (SmallestAlgebraic or LargestAlgebraic) by
// the locally optimal block preconditioned conjugate gradient method
// (LOBPCG, Knyazev 2001) without preconditioner, with soft locking: every
// iteration runs the Rayleigh–Ritz procedure on [X, W, P] — the block, the
// residuals of its unconverged columns and the previous directions — each
// part orthonormalised against the others (with the rank-revealing
// orthonormalisation of Hetmaniuk and Lehoucq, which drops directions that
// have become dependent), and converged columns leave W and P but stay in
// the block. Unlike implicitly restarted Lanczos, which starts from one
// vector, it starts from a subspace: consecutive, nearby problems (the
// eigenproblems of a dual solver's evaluations) warm-start from the previous
// call's Subspace and need a few iterations instead of a cold solve.
//
// The dense work (tall-skinny products, the small Rayleigh–Ritz
// eigenproblems) runs on b's BLAS and SymEig, so the native backend's
// OpenBLAS and LAPACK and the pure-Go backend's gonum give the two twins of
// the same algorithm. The returned pairs' residuals are recomputed with
// fresh operator products before they are accepted. ctx is checked before
// every block of operator products. If MaxIter is reached the result holds
// the current Ritz pairs with an *EigsNotConvergedError.
func BlockEigs(ctx context.Context, b Backend, op Operator, k int, which Which, opt BlockEigsOptions) (BlockEigsResult, error) {
	var res BlockEigsResult
	if op == nil {
		return res, fmt.Errorf("engine: BlockEigs: nil operator: %w", ErrDimension)
	}
	n := op.Dim()
	guard := opt.Guard
	if guard == 0 {
		guard = max(2, k/4)
	}
	switch {
	case n < 1:
		return res, fmt.Errorf("engine: BlockEigs: operator of dimension %d: %w", n, ErrDimension)
	case k < 1 || k > n:
		return res, fmt.Errorf("engine: BlockEigs: k = %d for dimension %d: %w", k, n, ErrDimension)
	case guard < 0:
		return res, fmt.Errorf("engine: BlockEigs: Guard = %d: %w", opt.Guard, ErrDimension)
	case which != SmallestAlgebraic && which != LargestAlgebraic:
		return res, fmt.Errorf("engine: BlockEigs: which = %v, want SA or LA: %w", which, ErrDimension)
	case opt.Tol != 0 && !(opt.Tol >= 1e-14 && opt.Tol < math.Inf(1)):
		return res, fmt.Errorf("engine: BlockEigs: Tol = %g: %w", opt.Tol, ErrNotFinite)
	case !(opt.Scale >= 0 && opt.Scale < math.Inf(1)):
		return res, fmt.Errorf("engine: BlockEigs: Scale = %g: %w", opt.Scale, ErrNotFinite)
	case opt.MaxIter < 0:
		return res, fmt.Errorf("engine: BlockEigs: MaxIter = %d: %w", opt.MaxIter, ErrDimension)
	}
	if opt.Start != nil {
		if r, c := opt.Start.Dims(); r != n || c < 1 {
			return res, fmt.Errorf("engine: BlockEigs: Start is %d×%d for dimension %d: %w", r, c, n, ErrDimension)
		}
	}
	m := min(n, k+guard)
	tol := opt.Tol
	if tol == 0 {
		tol = 1e-8
	}
	maxIter := opt.MaxIter
	if maxIter == 0 {
		maxIter = 1000
	}
	s := &lobpcg{ctx: ctx, b: b, impl: b.BLAS(), op: op, n: n, sign: 1, given: opt.Scale}
	if which == LargestAlgebraic {
		s.sign = -1 // the smallest of −A
	}

	// The starting block: Start's columns, then random ones.
	x := mat.NewDense(n, m, nil)
	used := 0
	if opt.Start != nil {
		_, c := opt.Start.Dims()
		used = min(c, m)
		x.Slice(0, n, 0, used).(*mat.Dense).Copy(opt.Start.Slice(0, n, 0, used))
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x10bc9))
	for j := used; j < m; j++ {
		for i := 0; i < n; i++ {
			x.Set(i, j, 2*rng.Float64()-1)
		}
	}
	x = s.orthonormalize(x, nil)
	for x == nil || colsOf(x) < m {
		// The start was rank deficient: top up with random columns.
		have := 0
		if x != nil {
			have = colsOf(x)
		}
		y := mat.NewDense(n, m, nil)
		if have > 0 {
			y.Slice(0, n, 0, have).(*mat.Dense).Copy(x)
		}
		for j := have; j < m; j++ {
			for i := 0; i < n; i++ {
				y.Set(i, j, 2*rng.Float64()-1)
			}
		}
		x = s.orthonormalize(y, nil)
	}
	ax, err := s.apply(x)
	if err != nil {
		return res, err
	}
	theta, x, ax, err := s.rayleighRitz([]*mat.Dense{x}, []*mat.Dense{ax}, m)
	if err != nil {
		return res, err
	}
	var p, ap *mat.Dense
	r := mat.NewDense(n, m, nil)
	rnorm := make([]float64, m)
	for it := 1; ; it++ {
		s.residuals(r, rnorm, x, ax, theta)
		lim := tol * s.scale(opt.Scale)
		done := true
		var active []int
		for j := 0; j < m; j++ {
			if rnorm[j] > lim {
				active = append(active, j)
				if j < k {
					done = false
				}
			}
		}
		if done {
			// Accept only on residuals from fresh products: the block's
			// A·X is carried by recurrence.
			if ax, err = s.apply(x); err != nil {
				return res, err
			}
			s.residuals(r, rnorm, x, ax, theta)
			if slicesMax(rnorm[:k]) <= tol*s.scale(opt.Scale) {
				res.Iterations = it
				break
			}
			continue
		}
		if it > maxIter {
			res.Iterations = it - 1
			s.fill(&res, x, theta, rnorm, k)
			return res, &EigsNotConvergedError{Requested: k, Converged: countBelow(rnorm[:k], lim), Iterations: it - 1}
		}
		// W: the active residuals, orthonormal and orthogonal to X.
		w := mat.NewDense(n, len(active), nil)
		for t, j := range active {
			for i := 0; i < n; i++ {
				w.Set(i, t, r.At(i, j))
			}
		}
		w = s.orthonormalize(w, []*mat.Dense{x})
		if w == nil {
			// The residuals lie in span X to rounding: nothing to add.
			res.Iterations = it
			break
		}
		aw, err := s.apply(w)
		if err != nil {
			return res, err
		}
		basis, images := []*mat.Dense{x, w}, []*mat.Dense{ax, aw}
		if p != nil {
			var ap2 *mat.Dense
			var amp float64
			p, ap2, amp = s.orthonormalizePair(p, ap, []*mat.Dense{x, w}, []*mat.Dense{ax, aw})
			if p != nil && amp > 2 {
				// The orthonormalisation magnified P's directions, and with
				// them the rounding of the carried A·P: recompute it, or the
				// error compounds from one iteration to the next and spoils
				// the Rayleigh–Ritz values.
				if ap2, err = s.apply(p); err != nil {
					return res, err
				}
			}
			if p != nil {
				basis, images = append(basis, p), append(images, ap2)
			}
		}
		var c *mat.Dense
		theta, c, err = s.rayleighRitzCoef(basis, images, m)
		if err != nil {
			return res, err
		}
		xNew, axNew := combine(s.impl, basis, c), combine(s.impl, images, c)
		// P: the part of the update outside X, for the active columns.
		ca := mat.NewDense(rowsOf(c)-m, len(active), nil)
		for t, j := range active {
			for i := m; i < rowsOf(c); i++ {
				ca.Set(i-m, t, c.At(i, j))
			}
		}
		p, ap = combine(s.impl, basis[1:], ca), combine(s.impl, images[1:], ca)
		x, ax = xNew, axNew
		if it%25 == 0 {
			// Refresh A·X from fresh products now and then: the recurrence
			// accumulates rounding.
			if ax, err = s.apply(x); err != nil {
				return res, err
			}
		}
	}
	s.fill(&res, x, theta, rnorm, k)
	return res, nil
}

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
		gram := mat.NewDense(c, c, nil)
		gemm(s.impl, blas.Trans, blas.NoTrans, 1, v, v, 0, gram)
		g := mat.NewSymDense(c, nil)
		for i := 0; i < c; i++ {
			for j := i; j < c; j++ {
				g.SetSym(i, j, 0.5*(gram.At(i, j)+gram.At(j, i)))
			}
		}
		eg, err := s.b.SymEig(g, AllRange(), true)
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

// rayleighRitzCoef solves the projected eigenproblem Sᵀ(AS) c = θ c for
// the orthonormal basis S = [basis...] and returns the m smallest θ and
// their coefficient vectors (columns of c).
func (s *lobpcg) rayleighRitzCoef(basis, images []*mat.Dense, m int) ([]float64, *mat.Dense, error) {
	sb, ab := hcat(basis), hcat(images)
	_, c := sb.Dims()
	gram := mat.NewDense(c, c, nil)
	gemm(s.impl, blas.Trans, blas.NoTrans, 1, sb, ab, 0, gram)
	g := mat.NewSymDense(c, nil)
	for i := 0; i < c; i++ {
		for j := i; j < c; j++ {
			g.SetSym(i, j, 0.5*(gram.At(i, j)+gram.At(j, i)))
		}
	}
	eg, err := s.b.SymEig(g, AllRange(), true)
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
