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
	// and 18.8 s; docs/algorithms/simplenpkl.md, "The eigensolver").
	Block int
	// Keep is the number of Ritz vectors kept at a restart (at least k).
	// Zero selects k + max(2b, k/5).
	Keep int
	// MaxBasis is the largest basis, at least Keep + 2b. Zero selects
	// Keep + max(8b, k) (about ARPACK's 2k + 1 for large k).
	MaxBasis int
	// Tol is ARPACK's test: a Ritz pair (θ, x) is accepted when
	// ‖A·x − θ·x‖ ≤ Tol·max(|θ|, ε^(2/3)), or when the residual is within
	// its own rounding, 256·ε·‖A‖ (‖A‖ estimated by the projected
	// matrix). Zero selects machine precision.
	Tol float64
	// MaxRestarts bounds the restarts. Zero selects max(300, 10·n/MaxBasis)
	// capped at 10000.
	MaxRestarts int
	// Seed fixes the random starting block.
	Seed uint64
	// Start, if not nil (n×c), seeds the starting block with a subspace
	// the wanted eigenvectors are expected to be near, such as the
	// previous solve's eigenvectors in a sequence of nearby problems: the
	// block is b random combinations of Start's columns plus a random
	// block of the same expected norm (so no direction is missed). On the
	// squared-hinge iterations of SimpleNPKL on letters this saves one
	// restart cycle of 24 (4% of the products); a Krylov method cannot use
	// more of a start than one block.
	Start *mat.Dense
}

// DenseKernels are the dense kernels KrylovSchur runs its restarts and
// projected eigenproblems on. Every Backend has them; a dense eigensolver
// that runs KrylovSchur on a matrix of its own passes its BLAS and its
// whole-spectrum SymEig (KrylovSchur asks SymEig for the whole spectrum of
// the projected matrix, and for an index range only when the basis would
// hold the whole space).
type DenseKernels interface {
	BLAS() blas.Float64
	SymEig(a mat.Symmetric, r EigRange, vectors bool) (Eigen, error)
}

// KrylovSchur computes k eigenpairs of the symmetric operator op at the end
// of the spectrum chosen by which (SmallestAlgebraic or LargestAlgebraic)
// by the block Krylov–Schur method (Stewart 2001; Zhou and Saad 2008): a
// block Lanczos expansion with full reorthogonalisation and thick restarts
// that keep the best Ritz vectors. It needs somewhat more operator
// products than implicitly restarted Lanczos (ARPACK) but does its dense
// work in blocks: the operator is applied to b vectors at once (one pass
// over a BlockOperator's matrix), each new block is orthogonalised against
// the last two blocks, and against the whole basis only when a random
// sketch of the basis (orthsketch.go) says it has lost orthogonality
// beyond a hundredth of Tol (basis.go's streaming kernels read the basis
// then), and a restart is one GEMM. ARPACK reorthogonalises one vector at
// a time and applies its restarts column by column, reading the n×NCV
// basis hundreds of times per restart: for 100 eigenpairs of a
// 20,000-point graph that memory traffic, not the products, was 75% of the
// time, and this solver takes about 0.3 of ARPACK's time there
// (docs/algorithms/simplenpkl.md, "The eigensolver").
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
func KrylovSchur(ctx context.Context, b DenseKernels, op Operator, k int, which Which, opt KrylovSchurOptions) (EigsResult, error) {
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
	case opt.Start != nil && !startOK(opt.Start, n):
		r, c := opt.Start.Dims()
		return res, fmt.Errorf("engine: KrylovSchur: Start is %d×%d for dimension %d, or not finite: %w", r, c, n, ErrDimension)
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
	if opt.Start != nil {
		if r, c := opt.Start.Dims(); r == n {
			g := mat.NewDense(c, bs, nil)
			for i := range g.RawMatrix().Data {
				g.RawMatrix().Data[i] = s.rng.NormFloat64()
			}
			var ws mat.Dense
			ws.Mul(opt.Start, g)
			noise := startNoise * math.Sqrt(float64(c)/float64(n))
			start.Scale(noise, start)
			start.Add(start, &ws)
		}
	}
	r0 := mat.NewDense(bs, bs, nil)
	s.orthonormalize(start, 0, r0)
	s.cols(0, bs).Copy(start)
	s.last = start
	s.sk = newOrthSketch(n, maxBasis, s.rng)
	s.skTol = sketchFactor * tol
	s.sk.reset(s.impl, s.cols(0, bs))
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
		// A pair is accepted at ARPACK's test or at the rounding floor of
		// its own residual, roundoffFactor·ε·‖H‖ (‖H‖ estimates ‖A‖: the
		// Krylov space holds both ends of the spectrum): with Tol = 0
		// (machine precision) the test alone can pass on the Krylov
		// relation but never on a recomputed residual.
		hnorm := 0.0
		for _, v := range eig.Values {
			hnorm = math.Max(hnorm, math.Abs(v))
		}
		floor := roundoffFactor * epsilon * hnorm
		accept := func(r, theta float64) bool { return r <= math.Max(tol*math.Max(math.Abs(theta), eps23), floor) }
		conv := 0
		for _, j := range order[:k] {
			if accept(resid[j], eig.Values[j]) {
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
					if accept(resid[j], eig.Values[j]) {
						idx = append(idx, j)
					}
				}
			}
			if len(idx) == 0 {
				return res, &EigsNotConvergedError{Requested: k, Converged: 0, Iterations: restart}
			}
			x := s.ritzVectors(eig.Vectors, idx, mk, nil)
			vals := make([]float64, len(idx))
			for t, j := range idx {
				vals[t] = eig.Values[j]
			}
			ok, err := s.verify(x, vals, accept)
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
		x := s.ritzVectors(eig.Vectors, order[:p], mk, s.scratch)
		s.scratch = x
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
		s.sk.reset(s.impl, s.cols(0, cur))
	}
}

// krylovSchur holds the state of one KrylovSchur solve.
type krylovSchur struct {
	ctx   context.Context
	b     DenseKernels
	impl  blas.Float64
	op    Operator
	n, bs int
	v, h  *mat.Dense // basis (n×MaxBasis) and projected matrix
	// last and prev are contiguous copies of the basis's last block and
	// the one before (nil at the start).
	last, prev *mat.Dense
	rng        *rand.Rand
	applies    int
	// spare is a free n×b block for the next product; scratch holds the
	// Ritz vectors of the last restart (copied into the basis).
	spare, scratch *mat.Dense
	// sk estimates a new block's coefficients against the basis, so that
	// most blocks skip the projection on the whole basis.
	sk    *orthSketch
	skTol float64
}

// cols returns columns [lo, hi) of the basis.
func (s *krylovSchur) cols(lo, hi int) *mat.Dense {
	return s.v.Slice(0, s.n, lo, hi).(*mat.Dense)
}

// ritzVectors returns V[:, :mk]·Y[:, idx], in dst if it has the size (its
// contents are overwritten), else in a new matrix.
func (s *krylovSchur) ritzVectors(y *mat.Dense, idx []int, mk int, dst *mat.Dense) *mat.Dense {
	sel := mat.NewDense(mk, len(idx), nil)
	for t, j := range idx {
		for i := 0; i < mk; i++ {
			sel.Set(i, t, y.At(i, j))
		}
	}
	x := dst
	if r, c := dstDims(dst); r != s.n || c != len(idx) {
		x = mat.NewDense(s.n, len(idx), nil)
	}
	rv, rs, rx := s.v.RawMatrix(), sel.RawMatrix(), x.RawMatrix()
	MulRows(s.impl, s.n, len(idx), mk, rv.Data, rv.Stride, rs.Data, rs.Stride, rx.Data, rx.Stride)
	return x
}

// verify recomputes ‖A·x − θ·x‖ with fresh products and reports whether
// every pair passes the test.
func (s *krylovSchur) verify(x *mat.Dense, vals []float64, accept func(r, theta float64) bool) (bool, error) {
	if len(vals) == 0 {
		return true, nil
	}
	ax, err := s.apply(x)
	if err != nil {
		return false, err
	}
	ss := make([]float64, len(vals))
	ra, rx := ax.RawMatrix(), x.RawMatrix()
	for i := 0; i < s.n; i++ {
		ar, xr := ra.Data[i*ra.Stride:i*ra.Stride+len(vals)], rx.Data[i*rx.Stride:i*rx.Stride+len(vals)]
		for j, th := range vals {
			d := ar[j] - th*xr[j]
			ss[j] += d * d
		}
	}
	ok := true
	for j, th := range vals {
		if !accept(math.Sqrt(ss[j]), th) {
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
	}
	ro, rx := out.RawMatrix(), x.RawMatrix()
	for i := 0; i < n; i++ {
		or, xr := ro.Data[i*ro.Stride:i*ro.Stride+len(vals)], rx.Data[i*rx.Stride:]
		for t, j := range idx {
			or[t] = xr[j]
		}
	}
	return v, out
}

// krylovSchurDense solves a problem small enough for the basis to hold the
// whole space: the operator is applied to the identity and the matrix
// decomposed densely.
func krylovSchurDense(ctx context.Context, b DenseKernels, op Operator, k int, which Which) (EigsResult, error) {
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

// startOK reports whether m has n rows, at least one column and finite
// entries.
func startOK(m *mat.Dense, n int) bool {
	r, c := m.Dims()
	if r != n || c < 1 {
		return false
	}
	for i := 0; i < r; i++ {
		for _, v := range m.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
	}
	return true
}

// dstDims returns the dimensions of m, zero for nil.
func dstDims(m *mat.Dense) (int, int) {
	if m == nil {
		return 0, 0
	}
	return m.Dims()
}

// roundoffFactor sets the residual below which a Ritz pair counts as
// converged whatever the tolerance: roundoffFactor·ε·‖A‖, about what the
// rounding of the product A·x and of the Ritz vector leaves (√m·ε·‖A‖ for
// m entries per row, √(basis)·ε·‖A‖ for the vector).
const roundoffFactor = 256

// epsilon is the unit round-off.
const epsilon = 0x1p-53
