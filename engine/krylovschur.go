package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// KrylovSchurOptions configures KrylovSchur. The zero value selects the
// defaults documented per field.
type KrylovSchurOptions struct {
	// Block is the block size b: the operator is applied to b vectors at a
	// time. Zero selects 4 (on letters, 100 eigenpairs: b = 2, 4, 8, 16
	// took 1,984, 2,428, 3,652 and 5,828 products and 16.4, 12.1, 13.8
	// and 18.8 s; docs/eigen-sequences.md).
	Block int
	// Keep is the number of Ritz vectors kept at a restart (at least k).
	// Zero selects k + max(2b, k/5).
	Keep int
	// MaxBasis is the largest basis, at least Keep + 2b. Zero selects
	// Keep + max(8b, k) (about ARPACK's 2k + 1 for large k).
	MaxBasis int
	// Tol is ARPACK's test: a Ritz pair (θ, x) is accepted when
	// ‖A·x − θ·x‖ ≤ Tol·max(|θ|, ε^(2/3)). Zero selects machine precision.
	Tol float64
	// MaxRestarts bounds the restarts. Zero selects max(300, 10·n/MaxBasis)
	// capped at 10000.
	MaxRestarts int
	// Seed fixes the random starting block.
	Seed uint64
}

// KrylovSchur computes k eigenpairs of the symmetric operator op at the end
// of the spectrum chosen by which (SmallestAlgebraic or LargestAlgebraic)
// by the block Krylov–Schur method (Stewart 2001; Zhou and Saad 2008): a
// block Lanczos expansion with full reorthogonalisation and thick restarts
// that keep the best Ritz vectors. It needs somewhat more operator
// products than implicitly restarted Lanczos (ARPACK) but does its dense
// work in blocks: the operator is applied to b vectors at once (one pass
// over a BlockOperator's matrix), each new block is orthogonalised against
// the last two blocks and then the whole basis, reading the basis once or
// twice per block (basis.go's streaming kernels), and a restart is one
// GEMM. ARPACK reorthogonalises one vector at a time and applies its
// restarts column by column, reading the n×NCV basis hundreds of times per
// restart: for 100 eigenpairs of a 20,000-point graph that memory traffic,
// not the products, was 75% of the time, and this solver takes about 0.4
// of ARPACK's time there (docs/eigen-sequences.md).
//
// The Gram–Schmidt kernels are the same Go (and AVX2) code on every
// backend, and the restarts and projected eigenproblems run on b's BLAS
// and SymEig, so the native and pure-Go backends give twins of one
// algorithm. The residual norms come from the
// Krylov relation; the returned pairs are checked once more with fresh
// operator products, and a pair failing that check keeps the solve going.
// ctx is checked before every block of products. Values are returned
// ascending, as from Eigs; if MaxRestarts is reached the result holds the
// converged pairs with an *EigsNotConvergedError.
func KrylovSchur(ctx context.Context, b Backend, op Operator, k int, which Which, opt KrylovSchurOptions) (EigsResult, error) {
	var res EigsResult
	if op == nil {
		return res, fmt.Errorf("engine: KrylovSchur: nil operator: %w", ErrDimension)
	}
	n := op.Dim()
	bs := opt.Block
	if bs == 0 {
		bs = 4
	}
	keep := opt.Keep
	if keep == 0 {
		keep = k + max(2*bs, k/5)
	}
	maxBasis := opt.MaxBasis
	if maxBasis == 0 {
		maxBasis = keep + max(8*bs, k)
	}
	switch {
	case n < 1:
		return res, fmt.Errorf("engine: KrylovSchur: operator of dimension %d: %w", n, ErrDimension)
	case k < 1 || k > n:
		return res, fmt.Errorf("engine: KrylovSchur: k = %d for dimension %d: %w", k, n, ErrDimension)
	case which != SmallestAlgebraic && which != LargestAlgebraic:
		return res, fmt.Errorf("engine: KrylovSchur: which = %v, want SA or LA: %w", which, ErrDimension)
	case bs < 1 || keep < k || maxBasis < keep+2*bs:
		return res, fmt.Errorf("engine: KrylovSchur: Block = %d, Keep = %d, MaxBasis = %d for k = %d (want Block ≥ 1, Keep ≥ k, MaxBasis ≥ Keep + 2·Block): %w",
			bs, keep, maxBasis, k, ErrDimension)
	case opt.Tol != 0 && !(opt.Tol > 0 && opt.Tol < math.Inf(1)):
		return res, fmt.Errorf("engine: KrylovSchur: Tol = %g: %w", opt.Tol, ErrNotFinite)
	case opt.MaxRestarts < 0:
		return res, fmt.Errorf("engine: KrylovSchur: MaxRestarts = %d: %w", opt.MaxRestarts, ErrDimension)
	}
	if maxBasis > n {
		// A small problem: the whole space fits in the basis.
		return krylovSchurDense(ctx, b, op, k, which)
	}
	tol := opt.Tol
	if tol == 0 {
		tol = epsilon
	}
	maxRestarts := opt.MaxRestarts
	if maxRestarts == 0 {
		maxRestarts = min(10000, max(300, 10*n/maxBasis))
	}
	s := &krylovSchur{ctx: ctx, b: b, impl: b.BLAS(), op: op, n: n, bs: bs, rng: rand.New(rand.NewPCG(opt.Seed, 0x4b53))}
	s.v = mat.NewDense(n, maxBasis, nil)
	s.h = mat.NewDense(maxBasis, maxBasis, nil)

	// The starting block: random, orthonormalised.
	start := mat.NewDense(n, bs, nil)
	for i := range start.RawMatrix().Data {
		start.RawMatrix().Data[i] = s.rng.NormFloat64()
	}
	r0 := mat.NewDense(bs, bs, nil)
	s.orthonormalize(start, 0, r0)
	s.cols(0, bs).Copy(start)
	s.last = start
	cur := bs // basis columns; the last block's image is not known yet
	eps23 := math.Pow(epsilon, 2.0/3)
	for restart := 0; ; restart++ {
		// Expand until the basis is full.
		for cur+bs <= maxBasis {
			if err := s.expand(cur); err != nil {
				return res, err
			}
			cur += bs
		}
		// Rayleigh–Ritz on the part whose images are known.
		mk := cur - bs
		hk := mat.NewSymDense(mk, nil)
		for i := 0; i < mk; i++ {
			for j := i; j < mk; j++ {
				hk.SetSym(i, j, 0.5*(s.h.At(i, j)+s.h.At(j, i)))
			}
		}
		eig, err := b.SymEig(hk, AllRange(), true)
		if err != nil {
			return res, fmt.Errorf("engine: KrylovSchur: projected eigenproblem: %w", err)
		}
		// Wanted end first.
		order := make([]int, mk)
		for i := range order {
			order[i] = i
		}
		if which == LargestAlgebraic {
			sort.SliceStable(order, func(a, c int) bool { return eig.Values[order[a]] > eig.Values[order[c]] })
		}
		// Residual norms ‖R̃·y_i‖, R̃ the coupling of the last block.
		rt := s.h.Slice(mk, cur, 0, mk).(*mat.Dense)
		var ry mat.Dense
		ry.Mul(rt, eig.Vectors)
		resid := make([]float64, mk)
		for j := 0; j < mk; j++ {
			var ss float64
			for i := 0; i < bs; i++ {
				ss += ry.At(i, j) * ry.At(i, j)
			}
			resid[j] = math.Sqrt(ss)
		}
		conv := 0
		for _, j := range order[:k] {
			if resid[j] <= tol*math.Max(math.Abs(eig.Values[j]), eps23) {
				conv++
			}
		}
		if conv == k || restart >= maxRestarts {
			res.Iterations, res.OpApplies = restart, s.applies
			kk := conv
			if conv == k {
				kk = k
			}
			idx := order[:kk]
			if conv < k {
				// The converged ones only.
				idx = idx[:0]
				for _, j := range order[:k] {
					if resid[j] <= tol*math.Max(math.Abs(eig.Values[j]), eps23) {
						idx = append(idx, j)
					}
				}
			}
			if len(idx) == 0 {
				return res, &EigsNotConvergedError{Requested: k, Converged: 0, Iterations: restart}
			}
			x := s.ritzVectors(eig.Vectors, idx, mk)
			vals := make([]float64, len(idx))
			for t, j := range idx {
				vals[t] = eig.Values[j]
			}
			ok, err := s.verify(x, vals, tol, eps23)
			if err != nil {
				return res, err
			}
			if conv == k && !ok && restart < maxRestarts {
				// The Krylov relation's residuals drifted from the true ones:
				// keep iterating (the restart below keeps these vectors).
			} else {
				res.Values, res.Vectors = ascending(vals, x)
				res.OpApplies = s.applies
				if conv < k {
					return res, &EigsNotConvergedError{Requested: k, Converged: conv, Iterations: restart}
				}
				return res, nil
			}
		}
		// Thick restart: keep the best Ritz vectors and the last block.
		p := min(keep, mk)
		x := s.ritzVectors(eig.Vectors, order[:p], mk)
		last := mat.DenseCopyOf(s.cols(mk, cur))
		s.h.Zero()
		s.cols(0, p).Copy(x)
		s.cols(p, p+bs).Copy(last)
		s.last, s.prev = last, nil
		if p >= bs {
			s.prev = mat.DenseCopyOf(x.Slice(0, s.n, p-bs, p))
		}
		for t, j := range order[:p] {
			s.h.Set(t, t, eig.Values[j])
			for i := 0; i < bs; i++ {
				c := ry.At(i, j)
				s.h.Set(p+i, t, c)
				s.h.Set(t, p+i, c)
			}
		}
		cur = p + bs
	}
}

// krylovSchur holds the state of one KrylovSchur solve.
type krylovSchur struct {
	ctx   context.Context
	b     Backend
	impl  blas.Float64
	op    Operator
	n, bs int
	v, h  *mat.Dense // basis (n×MaxBasis) and projected matrix
	// last and prev are contiguous copies of the basis's last block and
	// the one before (nil at the start).
	last, prev *mat.Dense
	rng        *rand.Rand
	applies    int
}

// cols returns columns [lo, hi) of the basis.
func (s *krylovSchur) cols(lo, hi int) *mat.Dense {
	return s.v.Slice(0, s.n, lo, hi).(*mat.Dense)
}

// apply returns A·x for the columns of x.
func (s *krylovSchur) apply(x *mat.Dense) (*mat.Dense, error) {
	if s.ctx != nil {
		if err := s.ctx.Err(); err != nil {
			return nil, fmt.Errorf("engine: KrylovSchur: %w", err)
		}
	}
	_, c := x.Dims()
	out := mat.NewDense(s.n, c, nil)
	if bop, ok := s.op.(BlockOperator); ok {
		bop.ApplyBlock(out, mat.DenseCopyOf(x))
	} else {
		col, dst := make([]float64, s.n), make([]float64, s.n)
		for j := 0; j < c; j++ {
			mat.Col(col, j, x)
			s.op.Apply(dst, col)
			out.SetCol(j, dst)
		}
	}
	s.applies += c
	for _, d := range out.RawMatrix().Data {
		if math.IsNaN(d) || math.IsInf(d, 0) {
			return nil, fmt.Errorf("engine: KrylovSchur: the operator returned %v: %w", d, ErrNotFinite)
		}
	}
	return out, nil
}

// expand applies A to the last block (columns [cur−b, cur)), orthogonalises
// the image against the basis and appends it as columns [cur, cur+b),
// filling the new entries of the projected matrix.
func (s *krylovSchur) expand(cur int) error {
	bs := s.bs
	w, err := s.apply(s.last)
	if err != nil {
		return err
	}
	basis := s.cols(0, cur)
	c := mat.NewDense(cur, bs, nil)
	// Block classical Gram–Schmidt: first against the last two blocks,
	// where the image has its large components (the block tridiagonal
	// part of the relation), then against the whole basis, whose
	// subtraction is skipped when every coefficient is below orthSkip of
	// its column's norm; a second pass only if the first still removed
	// much (DGKS: some column lost more than 1 − 1/√2 of its norm). The
	// basis is read once or twice per block in the usual case.
	// The last two blocks are kept contiguous (s.prev, s.last): read
	// from the strided basis, this pass cost as much as the full one.
	ctLast := projectRows(s.last, w)
	var ctPrev []float64
	if s.prev != nil {
		ctPrev = projectRows(s.prev, w)
		subtractRows(w, s.prev, ctPrev)
	}
	subtractRows(w, s.last, ctLast)
	for l := 0; l < bs; l++ {
		for i := 0; i < bs; i++ {
			c.Set(cur-bs+i, l, ctLast[l*bs+i])
			if ctPrev != nil {
				c.Set(cur-2*bs+i, l, ctPrev[l*bs+i])
			}
		}
	}
	for pass := 0; pass < 2; pass++ {
		before := colNorms(w)
		ct := projectRows(basis, w)
		if negligible(ct, cur, before) {
			// The local pass left only rounding-level components
			// (on letters, half the blocks): subtracting them would
			// not change the basis beyond orthogonality to ~1e-12,
			// and it is one of the two reads of the basis.
			break
		}
		subtractRows(w, basis, ct)
		for l := 0; l < bs; l++ {
			for i := 0; i < cur; i++ {
				c.Set(i, l, c.At(i, l)+ct[l*cur+i])
			}
		}
		after := colNorms(w)
		again := false
		for j := range after {
			if after[j] < 0.7071*before[j] {
				again = true
			}
		}
		if !again {
			break
		}
	}
	for i := 0; i < cur; i++ {
		for j := 0; j < bs; j++ {
			s.h.Set(i, cur-bs+j, c.At(i, j))
			s.h.Set(cur-bs+j, i, c.At(i, j))
		}
	}
	r := mat.NewDense(bs, bs, nil)
	s.orthonormalize(w, cur, r)
	s.cols(cur, cur+bs).Copy(w)
	s.prev, s.last = s.last, w
	for i := 0; i < bs; i++ {
		for j := 0; j < bs; j++ {
			s.h.Set(cur+i, cur-bs+j, r.At(i, j))
			s.h.Set(cur-bs+j, cur+i, r.At(i, j))
		}
	}
	return nil
}

// orthonormalize makes the columns of w (already orthogonal to the first
// cur basis columns) orthonormal, w = Q·R with R upper triangular written
// into r: by CholQR2 (two Cholesky QR passes: a b×b Gram matrix, its
// Cholesky factor and a triangular solve, all BLAS-3) when the block is
// well conditioned, otherwise by modified Gram–Schmidt with one
// reorthogonalisation, where a column that vanishes (the block Krylov space
// lost a dimension) is replaced by a random direction orthogonal to the
// basis and to the previous columns, with a zero row in R: the relation
// A·V = V·H + Q·R then still holds.
func (s *krylovSchur) orthonormalize(w *mat.Dense, cur int, r *mat.Dense) {
	if s.cholQR(w, r) {
		return
	}
	r.Zero()
	_, bs := w.Dims()
	raw := w.RawMatrix()
	colDot := func(i, j int) float64 {
		var d float64
		for t := 0; t < s.n; t++ {
			row := raw.Data[t*raw.Stride:]
			d += row[i] * row[j]
		}
		return d
	}
	axpyCol := func(a float64, i, j int) { // w_j += a·w_i
		for t := 0; t < s.n; t++ {
			row := raw.Data[t*raw.Stride:]
			row[j] += a * row[i]
		}
	}
	for j := 0; j < bs; j++ {
		orig := math.Sqrt(colDot(j, j))
		for pass := 0; pass < 2; pass++ {
			for i := 0; i < j; i++ {
				d := colDot(i, j)
				r.Set(i, j, r.At(i, j)+d)
				axpyCol(-d, i, j)
			}
		}
		nrm := math.Sqrt(colDot(j, j))
		if nrm <= 1e-10*orig || nrm == 0 {
			// Deflation: a random direction orthogonal to everything so far.
			col := make([]float64, s.n)
			for t := range col {
				col[t] = s.rng.NormFloat64()
			}
			cv := mat.NewVecDense(s.n, col)
			for pass := 0; pass < 2; pass++ {
				if cur > 0 {
					basis := s.cols(0, cur)
					var coef, proj mat.VecDense
					coef.MulVec(basis.T(), cv)
					proj.MulVec(basis, &coef)
					cv.SubVec(cv, &proj)
				}
				w.SetCol(j, col)
				for i := 0; i < j; i++ {
					axpyCol(-colDot(i, j), i, j)
				}
				mat.Col(col, j, w)
			}
			nrm = math.Sqrt(colDot(j, j))
			r.Set(j, j, 0)
		} else {
			r.Set(j, j, nrm)
		}
		for t := 0; t < s.n; t++ {
			raw.Data[t*raw.Stride+j] /= nrm
		}
	}
}

// cholQR orthonormalises w by CholQR2, writing R; it reports false, leaving
// w unchanged, when the block is too ill-conditioned for it.
func (s *krylovSchur) cholQR(w *mat.Dense, r *mat.Dense) bool {
	_, bs := w.Dims()
	q := mat.DenseCopyOf(w)
	r.Zero()
	for i := 0; i < bs; i++ {
		r.Set(i, i, 1)
	}
	var g mat.Dense
	for pass := 0; pass < 2; pass++ {
		g.SetRawMatrix(blas64General(bs, bs, projectRows(q, q)))
		sym := mat.NewSymDense(bs, nil)
		for i := 0; i < bs; i++ {
			for j := i; j < bs; j++ {
				sym.SetSym(i, j, 0.5*(g.At(i, j)+g.At(j, i)))
			}
		}
		var ch mat.Cholesky
		if !ch.Factorize(sym) {
			return false
		}
		var u mat.TriDense
		ch.UTo(&u)
		lo, hi := math.Inf(1), 0.0
		for i := 0; i < bs; i++ {
			d := math.Abs(u.At(i, i))
			lo, hi = math.Min(lo, d), math.Max(hi, d)
		}
		if pass == 0 && !(lo > 1e-6*hi) {
			// cond(W) above ~1e6: CholQR would lose orthogonality.
			return false
		}
		solveUpperRows(q, &u)
		// R ← U·R.
		var nr mat.Dense
		nr.Mul(&u, r)
		r.Copy(&nr)
		if pass == 0 && lo > 0.1*hi {
			// A well-conditioned block (Cholesky diagonal within a
			// factor 10): one pass leaves orthogonality to about
			// ε·cond², and the second would only read it again.
			break
		}
	}
	w.Copy(q)
	return true
}

// ritzVectors returns V[:, :mk]·Y[:, idx].
func (s *krylovSchur) ritzVectors(y *mat.Dense, idx []int, mk int) *mat.Dense {
	sel := mat.NewDense(mk, len(idx), nil)
	for t, j := range idx {
		for i := 0; i < mk; i++ {
			sel.Set(i, t, y.At(i, j))
		}
	}
	x := mat.NewDense(s.n, len(idx), nil)
	rv, rs, rx := s.v.RawMatrix(), sel.RawMatrix(), x.RawMatrix()
	MulRows(s.impl, s.n, len(idx), mk, rv.Data, rv.Stride, rs.Data, rs.Stride, rx.Data, rx.Stride)
	return x
}

// verify recomputes ‖A·x − θ·x‖ with fresh products and reports whether
// every pair passes the test.
func (s *krylovSchur) verify(x *mat.Dense, vals []float64, tol, eps23 float64) (bool, error) {
	if len(vals) == 0 {
		return true, nil
	}
	ax, err := s.apply(x)
	if err != nil {
		return false, err
	}
	ok := true
	for j, th := range vals {
		var ss float64
		for i := 0; i < s.n; i++ {
			d := ax.At(i, j) - th*x.At(i, j)
			ss += d * d
		}
		if math.Sqrt(ss) > tol*math.Max(math.Abs(th), eps23) {
			ok = false
		}
	}
	return ok, nil
}

// ascending returns the pairs sorted by ascending value.
func ascending(vals []float64, x *mat.Dense) ([]float64, *mat.Dense) {
	idx := make([]int, len(vals))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, c int) bool { return vals[idx[a]] < vals[idx[c]] })
	n, _ := x.Dims()
	v := make([]float64, len(vals))
	out := mat.NewDense(n, len(vals), nil)
	for t, j := range idx {
		v[t] = vals[j]
		for i := 0; i < n; i++ {
			out.Set(i, t, x.At(i, j))
		}
	}
	return v, out
}

// krylovSchurDense solves a problem small enough for the basis to hold the
// whole space: the operator is applied to the identity and the matrix
// decomposed densely.
func krylovSchurDense(ctx context.Context, b Backend, op Operator, k int, which Which) (EigsResult, error) {
	var res EigsResult
	n := op.Dim()
	a := mat.NewSymDense(n, nil)
	e, col := make([]float64, n), make([]float64, n)
	for j := 0; j < n; j++ {
		if ctx != nil {
			if err := ctx.Err(); err != nil {
				return res, fmt.Errorf("engine: KrylovSchur: %w", err)
			}
		}
		clear(e)
		e[j] = 1
		op.Apply(col, e)
		for i := 0; i <= j; i++ {
			if math.IsNaN(col[i]) || math.IsInf(col[i], 0) {
				return res, fmt.Errorf("engine: KrylovSchur: the operator returned %v: %w", col[i], ErrNotFinite)
			}
			a.SetSym(i, j, col[i])
		}
	}
	r := EigRange{Kind: RangeIndices, IL: 0, IU: k - 1}
	if which == LargestAlgebraic {
		r = EigRange{Kind: RangeIndices, IL: n - k, IU: n - 1}
	}
	eig, err := b.SymEig(a, r, true)
	if err != nil {
		return res, fmt.Errorf("engine: KrylovSchur: %w", err)
	}
	res.Values, res.Vectors, res.OpApplies = eig.Values, eig.Vectors, n
	return res, nil
}

// colNorms returns the column norms of w.
func colNorms(w *mat.Dense) []float64 {
	raw := w.RawMatrix()
	out := make([]float64, raw.Cols)
	for i := 0; i < raw.Rows; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols] {
			out[j] += v * v
		}
	}
	for j, v := range out {
		out[j] = math.Sqrt(v)
	}
	return out
}

// epsilon is the unit round-off.
const epsilon = 0x1p-53

// orthSkip bounds the coefficients of a block against the basis, relative
// to the block's column norms, below which the subtraction is skipped.
const orthSkip = 1e-12

// negligible reports whether every coefficient ct[l·m + i] is at most
// orthSkip times the norm of column l.
func negligible(ct []float64, m int, norms []float64) bool {
	for l, nrm := range norms {
		lim := orthSkip * nrm
		for _, c := range ct[l*m : (l+1)*m] {
			if !(math.Abs(c) <= lim) {
				return false
			}
		}
	}
	return true
}
