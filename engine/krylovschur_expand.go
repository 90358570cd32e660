package engine

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// The expansion step of KrylovSchur: the block product, the block
// Gram–Schmidt against the basis (local pass, sketch test, projection on
// the whole basis when needed) and the block's orthonormalisation.

// apply returns A·x for the columns of x.
func (s *krylovSchur) apply(x *mat.Dense) (*mat.Dense, error) {
	if s.ctx != nil {
		if err := s.ctx.Err(); err != nil {
			return nil, fmt.Errorf("engine: KrylovSchur: %w", err)
		}
	}
	_, c := x.Dims()
	var out *mat.Dense
	if s.spare != nil && c == s.bs {
		out, s.spare = s.spare, nil // every entry is overwritten below
	} else {
		out = mat.NewDense(s.n, c, nil)
	}
	if bop, ok := s.op.(BlockOperator); ok {
		if raw := x.RawMatrix(); raw.Stride != raw.Cols {
			x = mat.DenseCopyOf(x) // a contiguous block for the operator
		}
		bop.ApplyBlock(out, x)
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
	// part of the relation), then against the whole basis only when the
	// sketch (orthsketch.go) estimates that the block has lost
	// orthogonality beyond s.skTol (on letters, 43% of the blocks: the
	// first after each restart, and then about every other block as
	// the loss regrows tenfold per block). That projection's subtraction
	// is skipped when every coefficient is below orthSkip of its
	// column's norm, and a second pass follows only if the first still
	// removed much (DGKS: some column lost more than 1 − 1/√2 of its
	// norm). The last two blocks are kept contiguous (s.prev, s.last):
	// read from the strided basis, this pass cost as much as the full
	// one.
	ctPrev, ctLast := localPass(w, s.prev, s.last)
	for l := 0; l < bs; l++ {
		for i := 0; i < bs; i++ {
			c.Set(cur-bs+i, l, ctLast[l*bs+i])
			if ctPrev != nil {
				c.Set(cur-2*bs+i, l, ctPrev[l*bs+i])
			}
		}
	}
	norms, small := s.sk.check(w, s.skTol)
	project := !small
	for pass := 0; project && pass < 2; pass++ {
		before := norms
		if pass > 0 {
			before = colNorms(w)
		}
		ct := projectRows(basis, w)
		if negligible(ct, cur, before, min(orthSkip, s.skTol)) {
			// The local pass left only rounding-level components:
			// subtracting them would not change the basis beyond
			// orthogonality to ~1e-12, and it is one of the two reads
			// of the basis.
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
	s.sk.add(w, cur)
	if s.prev != nil {
		s.spare = s.prev // the next block's product goes there
	}
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
	// cholQR may have applied its first pass before failing: W = W₁·R₁.
	r1 := mat.DenseCopyOf(r)
	defer func() {
		var rr mat.Dense
		rr.Mul(r, r1)
		r.Copy(&rr)
	}()
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

// cholQR orthonormalises w in place by CholQR2, writing R. It reports
// false when the block is too ill-conditioned for it: w is then unchanged
// and R the identity, or (if the second pass failed, which takes a NaN)
// w holds the first pass's W·R₁⁻¹ and r holds R₁.
func (s *krylovSchur) cholQR(w *mat.Dense, r *mat.Dense) bool {
	_, bs := w.Dims()
	r.Zero()
	for i := 0; i < bs; i++ {
		r.Set(i, i, 1)
	}
	var g mat.Dense
	for pass := 0; pass < 2; pass++ {
		g.SetRawMatrix(blas64General(bs, bs, projectRows(w, w)))
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
		solveUpperRows(w, &u)
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
	return true
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

// orthSkip bounds the coefficients of a block against the basis, relative
// to the block's column norms, below which the subtraction is skipped (or
// the sketch's level, if lower: for tolerances below 1e-10 the basis is
// kept orthogonal to machine precision).
const orthSkip = 1e-12

// negligible reports whether every coefficient ct[l·m + i] is at most
// lim times the norm of column l.
func negligible(ct []float64, m int, norms []float64, lim float64) bool {
	for l, nrm := range norms {
		bound := lim * nrm
		for _, c := range ct[l*m : (l+1)*m] {
			if !(math.Abs(c) <= bound) {
				return false
			}
		}
	}
	return true
}
