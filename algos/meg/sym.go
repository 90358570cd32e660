package meg

import (
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// ErrInvalid is wrapped by errors about invalid arguments: mismatched
// dimensions, non-symmetric or non-finite matrices, bad options.
var ErrInvalid = errs.New("meg: invalid argument", errs.ErrInvalid)

// Sym is a symmetric d×d matrix used as an instance X_t of the online learner
// or as a constraint C_j of DefiniteBoost. The algorithms touch it only
// through these operations, so sparse and low-rank matrices are never
// densified. Implementations in this package: *Dense, *Sparse, *LowRank,
// DistPair, Shifted (from Shift) and Bounded (from WithBounds).
//
// Methods may panic on dimension mismatch; the algorithms check Dim first.
type Sym interface {
	// Dim returns d.
	Dim() int
	// Inner returns tr(W S) = Σ_ij W_ij S_ij for a d×d symmetric W.
	Inner(w *mat.SymDense) float64
	// DiagQuad writes dst[k] = v_kᵀ S v_k for every column v_k of the d×m
	// matrix v (len(dst) == m).
	DiagQuad(dst []float64, v *mat.Dense)
	// Rotate overwrites the m×m dst with vᵀ S v for a d×m matrix v with
	// orthonormal columns (shifts rely on vᵀ v = I).
	Rotate(dst *mat.SymDense, v *mat.Dense)
	// AddTo adds alpha·S to dst.
	AddTo(dst *mat.SymDense, alpha float64)
	// Extremes returns the smallest and the largest eigenvalue of S (or, for
	// Bounded, an interval that encloses the spectrum).
	Extremes(b engine.Backend) (lmin, lmax float64, err error)
}

// validator is implemented by the Sym types that can check their own contents.
type validator interface{ validate() error }

// checkSym checks that s is a valid symmetric matrix of dimension d.
func checkSym(s Sym, d int) error {
	if s == nil {
		return fmt.Errorf("%w: nil matrix", ErrInvalid)
	}
	if s.Dim() != d {
		return fmt.Errorf("%w: matrix is %d×%d, want %d×%d", ErrInvalid, s.Dim(), s.Dim(), d, d)
	}
	if v, ok := s.(validator); ok {
		return v.validate()
	}
	return nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// upper returns the raw row-major data and stride of a SymDense (gonum keeps
// the upper triangle).
func upper(s *mat.SymDense) ([]float64, int) {
	r := s.RawSymmetric()
	return r.Data, r.Stride
}

// symFrom copies the symmetrised square r into dst.
func symFrom(dst *mat.SymDense, r *mat.Dense) {
	m, _ := r.Dims()
	for a := 0; a < m; a++ {
		for b := a; b < m; b++ {
			dst.SetSym(a, b, 0.5*(r.At(a, b)+r.At(b, a)))
		}
	}
}

// Dense is a dense symmetric matrix.
type Dense struct {
	m *mat.SymDense
}

// NewDense returns a Dense holding a copy of m. It fails if m has NaN or Inf entries.
func NewDense(m mat.Symmetric) (*Dense, error) {
	if m == nil || m.SymmetricDim() == 0 {
		return nil, fmt.Errorf("%w: empty dense matrix", ErrInvalid)
	}
	n := m.SymmetricDim()
	c := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := m.At(i, j)
			if !finite(v) {
				return nil, fmt.Errorf("%w: dense entry (%d,%d) = %v", ErrInvalid, i, j, v)
			}
			c.SetSym(i, j, v)
		}
	}
	return &Dense{m: c}, nil
}

// Matrix returns the underlying matrix (not a copy).
func (s *Dense) Matrix() *mat.SymDense { return s.m }

// Dim returns d.
func (s *Dense) Dim() int { return s.m.SymmetricDim() }

// Inner returns tr(W S).
func (s *Dense) Inner(w *mat.SymDense) float64 {
	n := s.Dim()
	a, sa := upper(s.m)
	b, sb := upper(w)
	var tot float64
	for i := 0; i < n; i++ {
		tot += a[i*sa+i] * b[i*sb+i]
		var off float64
		ra, rb := a[i*sa+i+1:i*sa+n], b[i*sb+i+1:i*sb+n]
		for k, x := range ra {
			off += x * rb[k]
		}
		tot += 2 * off
	}
	return tot
}

// DiagQuad writes dst[k] = v_kᵀ S v_k.
func (s *Dense) DiagQuad(dst []float64, v *mat.Dense) {
	n, m := v.Dims()
	var sv mat.Dense
	sv.Mul(s.m, v)
	for k := 0; k < m; k++ {
		var q float64
		for i := 0; i < n; i++ {
			q += v.At(i, k) * sv.At(i, k)
		}
		dst[k] = q
	}
}

// Rotate overwrites dst with vᵀ S v.
func (s *Dense) Rotate(dst *mat.SymDense, v *mat.Dense) {
	var sv, r mat.Dense
	sv.Mul(s.m, v)
	r.Mul(v.T(), &sv)
	symFrom(dst, &r)
}

// AddTo adds alpha·S to dst.
func (s *Dense) AddTo(dst *mat.SymDense, alpha float64) {
	n := s.Dim()
	a, sa := upper(s.m)
	b, sb := upper(dst)
	for i := 0; i < n; i++ {
		ra, rb := a[i*sa+i:i*sa+n], b[i*sb+i:i*sb+n]
		for k, x := range ra {
			rb[k] += alpha * x
		}
	}
}

// Extremes returns the extreme eigenvalues (one eigenvalue-only decomposition).
func (s *Dense) Extremes(b engine.Backend) (float64, float64, error) {
	e, err := engine.Or(b).SymEig(s.m, engine.EigRange{}, false)
	if err != nil {
		return 0, 0, fmt.Errorf("meg: dense extremes: %w", err)
	}
	return e.Values[0], e.Values[len(e.Values)-1], nil
}

// Sparse is a symmetric matrix stored as a sparse.CSR with both triangles.
type Sparse struct {
	a *sparse.CSR
}

// NewSparse wraps a (not copied). It fails unless a is square, its column
// indices are in range and ascending within rows, its values finite, and it is
// exactly symmetric (every stored a_ij has a_ji equal to it).
func NewSparse(a *sparse.CSR) (*Sparse, error) {
	if a == nil || a.Rows <= 0 {
		return nil, fmt.Errorf("%w: empty sparse matrix", ErrInvalid)
	}
	if a.Rows != a.Cols {
		return nil, fmt.Errorf("%w: sparse matrix is %d×%d, not square", ErrInvalid, a.Rows, a.Cols)
	}
	if len(a.Indptr) != a.Rows+1 || a.Indptr[0] != 0 || a.Indptr[a.Rows] != len(a.Data) || len(a.Ind) != len(a.Data) {
		return nil, fmt.Errorf("%w: malformed CSR arrays", ErrInvalid)
	}
	for i := 0; i < a.Rows; i++ {
		if a.Indptr[i+1] < a.Indptr[i] {
			return nil, fmt.Errorf("%w: CSR row pointers decrease at row %d", ErrInvalid, i)
		}
		for p := a.Indptr[i]; p < a.Indptr[i+1]; p++ {
			j := a.Ind[p]
			if j < 0 || j >= a.Cols || (p > a.Indptr[i] && j <= a.Ind[p-1]) {
				return nil, fmt.Errorf("%w: CSR column indices of row %d out of range or not ascending", ErrInvalid, i)
			}
			if !finite(a.Data[p]) {
				return nil, fmt.Errorf("%w: sparse entry (%d,%d) = %v", ErrInvalid, i, j, a.Data[p])
			}
		}
	}
	for i := 0; i < a.Rows; i++ {
		for p := a.Indptr[i]; p < a.Indptr[i+1]; p++ {
			if j := a.Ind[p]; a.At(j, i) != a.Data[p] {
				return nil, fmt.Errorf("%w: sparse matrix not symmetric at (%d,%d)", ErrInvalid, i, j)
			}
		}
	}
	return &Sparse{a: a}, nil
}

// CSR returns the wrapped matrix.
func (s *Sparse) CSR() *sparse.CSR { return s.a }

// Dim returns d.
func (s *Sparse) Dim() int { return s.a.Rows }

// Inner returns tr(W S) in O(nnz).
func (s *Sparse) Inner(w *mat.SymDense) float64 {
	b, sb := upper(w)
	var tot float64
	for i := 0; i < s.a.Rows; i++ {
		for p := s.a.Indptr[i]; p < s.a.Indptr[i+1]; p++ {
			j := s.a.Ind[p]
			if i <= j {
				tot += s.a.Data[p] * b[i*sb+j]
			} else {
				tot += s.a.Data[p] * b[j*sb+i]
			}
		}
	}
	return tot
}

// DiagQuad writes dst[k] = v_kᵀ S v_k in O(nnz·m).
func (s *Sparse) DiagQuad(dst []float64, v *mat.Dense) {
	raw := v.RawMatrix()
	m := raw.Cols
	for k := range dst[:m] {
		dst[k] = 0
	}
	for i := 0; i < s.a.Rows; i++ {
		vi := raw.Data[i*raw.Stride : i*raw.Stride+m]
		for p := s.a.Indptr[i]; p < s.a.Indptr[i+1]; p++ {
			vj := raw.Data[s.a.Ind[p]*raw.Stride : s.a.Ind[p]*raw.Stride+m]
			x := s.a.Data[p]
			for k := range vi {
				dst[k] += x * vi[k] * vj[k]
			}
		}
	}
}

// Rotate overwrites dst with vᵀ S v in O(nnz·m + d·m²).
func (s *Sparse) Rotate(dst *mat.SymDense, v *mat.Dense) {
	raw := v.RawMatrix()
	m := raw.Cols
	sv := mat.NewDense(raw.Rows, m, nil)
	out := sv.RawMatrix()
	for i := 0; i < s.a.Rows; i++ {
		oi := out.Data[i*out.Stride : i*out.Stride+m]
		for p := s.a.Indptr[i]; p < s.a.Indptr[i+1]; p++ {
			vj := raw.Data[s.a.Ind[p]*raw.Stride : s.a.Ind[p]*raw.Stride+m]
			x := s.a.Data[p]
			for k := range oi {
				oi[k] += x * vj[k]
			}
		}
	}
	var r mat.Dense
	r.Mul(v.T(), sv)
	symFrom(dst, &r)
}

// AddTo adds alpha·S to dst in O(nnz).
func (s *Sparse) AddTo(dst *mat.SymDense, alpha float64) {
	b, sb := upper(dst)
	for i := 0; i < s.a.Rows; i++ {
		for p := s.a.Indptr[i]; p < s.a.Indptr[i+1]; p++ {
			if j := s.a.Ind[p]; i <= j {
				b[i*sb+j] += alpha * s.a.Data[p]
			}
		}
	}
}

// Extremes returns the extreme eigenvalues. Only the rows and columns that
// hold entries (the support J) are decomposed: the spectrum is that of the
// |J|×|J| submatrix, plus 0 when J is not everything.
func (s *Sparse) Extremes(b engine.Backend) (float64, float64, error) {
	n := s.a.Rows
	pos := make([]int, n)
	for i := range pos {
		pos[i] = -1
	}
	var supp []int
	for i := 0; i < n; i++ {
		for p := s.a.Indptr[i]; p < s.a.Indptr[i+1]; p++ {
			if s.a.Data[p] != 0 {
				if pos[i] < 0 {
					pos[i] = len(supp)
					supp = append(supp, i)
				}
				break
			}
		}
	}
	if len(supp) == 0 {
		return 0, 0, nil
	}
	sub := mat.NewSymDense(len(supp), nil)
	for _, i := range supp {
		for p := s.a.Indptr[i]; p < s.a.Indptr[i+1]; p++ {
			if j := s.a.Ind[p]; pos[j] >= 0 && pos[i] <= pos[j] {
				sub.SetSym(pos[i], pos[j], s.a.Data[p])
			}
		}
	}
	e, err := engine.Or(b).SymEig(sub, engine.EigRange{}, false)
	if err != nil {
		return 0, 0, fmt.Errorf("meg: sparse extremes: %w", err)
	}
	lo, hi := e.Values[0], e.Values[len(e.Values)-1]
	if len(supp) < n {
		lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	}
	return lo, hi, nil
}

// LowRank is the symmetric matrix U diag(s) Uᵀ with U d×k (k usually ≪ d).
type LowRank struct {
	u *mat.Dense
	s []float64
}

// NewLowRank returns U diag(s) Uᵀ. u and s are copied; they must be finite
// and len(s) must equal the number of columns of u.
func NewLowRank(u mat.Matrix, s []float64) (*LowRank, error) {
	if u == nil {
		return nil, fmt.Errorf("%w: nil low-rank factor", ErrInvalid)
	}
	d, k := u.Dims()
	if d == 0 || k == 0 || len(s) != k {
		return nil, fmt.Errorf("%w: low-rank factor %d×%d with %d weights", ErrInvalid, d, k, len(s))
	}
	c := mat.DenseCopyOf(u)
	for i := 0; i < d; i++ {
		for j := 0; j < k; j++ {
			if !finite(c.At(i, j)) {
				return nil, fmt.Errorf("%w: low-rank factor entry (%d,%d) = %v", ErrInvalid, i, j, c.At(i, j))
			}
		}
	}
	for j, x := range s {
		if !finite(x) {
			return nil, fmt.Errorf("%w: low-rank weight %d = %v", ErrInvalid, j, x)
		}
	}
	return &LowRank{u: c, s: append([]float64(nil), s...)}, nil
}

// Dim returns d.
func (s *LowRank) Dim() int { r, _ := s.u.Dims(); return r }

// Inner returns tr(W S) = Σ_l s_l u_lᵀ W u_l in O(k d²).
func (s *LowRank) Inner(w *mat.SymDense) float64 {
	var wu mat.Dense
	wu.Mul(w, s.u)
	d, k := s.u.Dims()
	var tot float64
	for l := 0; l < k; l++ {
		var q float64
		for i := 0; i < d; i++ {
			q += s.u.At(i, l) * wu.At(i, l)
		}
		tot += s.s[l] * q
	}
	return tot
}

// DiagQuad writes dst[c] = Σ_l s_l (u_lᵀ v_c)² in O(k d m).
func (s *LowRank) DiagQuad(dst []float64, v *mat.Dense) {
	var p mat.Dense
	p.Mul(s.u.T(), v)
	k, m := p.Dims()
	for c := 0; c < m; c++ {
		var q float64
		for l := 0; l < k; l++ {
			x := p.At(l, c)
			q += s.s[l] * x * x
		}
		dst[c] = q
	}
}

// Rotate overwrites dst with Pᵀ diag(s) P, P = Uᵀ v.
func (s *LowRank) Rotate(dst *mat.SymDense, v *mat.Dense) {
	var p mat.Dense
	p.Mul(s.u.T(), v)
	k, m := p.Dims()
	for a := 0; a < m; a++ {
		for b := a; b < m; b++ {
			var q float64
			for l := 0; l < k; l++ {
				q += s.s[l] * p.At(l, a) * p.At(l, b)
			}
			dst.SetSym(a, b, q)
		}
	}
}

// AddTo adds alpha·U diag(s) Uᵀ to dst.
func (s *LowRank) AddTo(dst *mat.SymDense, alpha float64) {
	_, k := s.u.Dims()
	for l := 0; l < k; l++ {
		dst.SymRankOne(dst, alpha*s.s[l], s.u.ColView(l))
	}
}

// Extremes returns the extreme eigenvalues from a k×k problem: with U = QR,
// the nonzero spectrum is that of R diag(s) Rᵀ; 0 is added when k < d.
func (s *LowRank) Extremes(b engine.Backend) (float64, float64, error) {
	d, k := s.u.Dims()
	var small *mat.SymDense
	if k >= d {
		small = mat.NewSymDense(d, nil)
		s.AddTo(small, 1)
	} else {
		var qr mat.QR
		qr.Factorize(s.u)
		var r mat.Dense
		qr.RTo(&r)
		rk := r.Slice(0, k, 0, k)
		small = mat.NewSymDense(k, nil)
		for l := 0; l < k; l++ {
			small.SymRankOne(small, s.s[l], mat.NewVecDense(k, mat.Col(nil, l, rk)))
		}
	}
	e, err := engine.Or(b).SymEig(small, engine.EigRange{}, false)
	if err != nil {
		return 0, 0, fmt.Errorf("meg: low-rank extremes: %w", err)
	}
	lo, hi := e.Values[0], e.Values[len(e.Values)-1]
	if k < d {
		lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	}
	return lo, hi, nil
}

// DistPair is the d×d matrix X_ab of the paper's kernel experiments: 0.5 at
// (a,a) and (b,b), −0.5 at (a,b) and (b,a), zero elsewhere. tr(W X_ab) =
// ½(W_aa + W_bb − 2W_ab) is half the squared distance of objects a and b in
// the feature space of the kernel W. Its eigenvalues are 1 and 0.
type DistPair struct {
	N    int // the dimension d
	A, B int // the two objects, 0 ≤ A, B < N, A ≠ B
}

// Dim returns d.
func (p DistPair) Dim() int { return p.N }

func (p DistPair) validate() error {
	if p.A < 0 || p.A >= p.N || p.B < 0 || p.B >= p.N || p.A == p.B {
		return fmt.Errorf("%w: distance pair (%d,%d) invalid for %d objects", ErrInvalid, p.A, p.B, p.N)
	}
	return nil
}

// Inner returns ½(W_aa + W_bb − 2W_ab).
func (p DistPair) Inner(w *mat.SymDense) float64 {
	b, sb := upper(w)
	i, j := min(p.A, p.B), max(p.A, p.B)
	return 0.5*(b[i*sb+i]+b[j*sb+j]) - b[i*sb+j]
}

// DiagQuad writes dst[k] = ½(v_ak − v_bk)².
func (p DistPair) DiagQuad(dst []float64, v *mat.Dense) {
	raw := v.RawMatrix()
	va := raw.Data[p.A*raw.Stride : p.A*raw.Stride+raw.Cols]
	vb := raw.Data[p.B*raw.Stride : p.B*raw.Stride+raw.Cols]
	for k := range va {
		x := va[k] - vb[k]
		dst[k] = 0.5 * x * x
	}
}

// Rotate overwrites dst with ½ c cᵀ, c_k = v_ak − v_bk.
func (p DistPair) Rotate(dst *mat.SymDense, v *mat.Dense) {
	raw := v.RawMatrix()
	va := raw.Data[p.A*raw.Stride : p.A*raw.Stride+raw.Cols]
	vb := raw.Data[p.B*raw.Stride : p.B*raw.Stride+raw.Cols]
	c := make([]float64, raw.Cols)
	for k := range c {
		c[k] = va[k] - vb[k]
	}
	out, so := upper(dst)
	for a := range c {
		row := out[a*so : a*so+raw.Cols]
		for b := a; b < len(c); b++ {
			row[b] = 0.5 * c[a] * c[b]
		}
	}
}

// AddTo adds alpha·X_ab to dst.
func (p DistPair) AddTo(dst *mat.SymDense, alpha float64) {
	b, sb := upper(dst)
	i, j := min(p.A, p.B), max(p.A, p.B)
	b[i*sb+i] += 0.5 * alpha
	b[j*sb+j] += 0.5 * alpha
	b[i*sb+j] -= 0.5 * alpha
}

// Extremes returns (0, 1).
func (p DistPair) Extremes(engine.Backend) (float64, float64, error) { return 0, 1, nil }

// Shifted is S + σI; see Shift.
type Shifted struct {
	S     Sym
	Sigma float64
}

// Shift returns S + σI. The kernel experiment's constraints are
// Shift(DistPair{d, a, b}, −ε): tr(W C) ≤ 0 ⇔ ½‖x_a − x_b‖² ≤ ε tr W.
func Shift(s Sym, sigma float64) Shifted { return Shifted{S: s, Sigma: sigma} }

// Dim returns d.
func (s Shifted) Dim() int { return s.S.Dim() }

func (s Shifted) validate() error {
	if !finite(s.Sigma) {
		return fmt.Errorf("%w: shift %v", ErrInvalid, s.Sigma)
	}
	return checkSym(s.S, s.S.Dim())
}

// Inner returns tr(W S) + σ tr W.
func (s Shifted) Inner(w *mat.SymDense) float64 {
	b, sb := upper(w)
	var tr float64
	for i := 0; i < s.Dim(); i++ {
		tr += b[i*sb+i]
	}
	return s.S.Inner(w) + s.Sigma*tr
}

// DiagQuad writes dst[k] = v_kᵀ S v_k + σ‖v_k‖².
func (s Shifted) DiagQuad(dst []float64, v *mat.Dense) {
	s.S.DiagQuad(dst, v)
	raw := v.RawMatrix()
	for i := 0; i < raw.Rows; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols]
		for k, x := range row {
			dst[k] += s.Sigma * x * x
		}
	}
}

// Rotate overwrites dst with vᵀ S v + σI (v has orthonormal columns).
func (s Shifted) Rotate(dst *mat.SymDense, v *mat.Dense) {
	s.S.Rotate(dst, v)
	out, so := upper(dst)
	for i := 0; i < dst.SymmetricDim(); i++ {
		out[i*so+i] += s.Sigma
	}
}

// AddTo adds alpha·(S + σI) to dst.
func (s Shifted) AddTo(dst *mat.SymDense, alpha float64) {
	s.S.AddTo(dst, alpha)
	b, sb := upper(dst)
	for i := 0; i < s.Dim(); i++ {
		b[i*sb+i] += alpha * s.Sigma
	}
}

// Extremes returns the extremes of S shifted by σ.
func (s Shifted) Extremes(b engine.Backend) (float64, float64, error) {
	lo, hi, err := s.S.Extremes(b)
	return lo + s.Sigma, hi + s.Sigma, err
}

// Bounded is a Sym whose Extremes returns a given interval [Lmin, Lmax]
// instead of computing the spectrum; see WithBounds.
type Bounded struct {
	S          Sym
	Lmin, Lmax float64
}

// WithBounds returns s with the spectral interval [lmin, lmax], which must
// enclose its eigenvalues. DefiniteBoost's approximate projection and its
// Theorem 4.1 bound hold for any enclosing interval with lmin < 0 < lmax; the
// AdaBoost reduction uses [−1, 1] for hypotheses with values in [−1, 1].
func WithBounds(s Sym, lmin, lmax float64) Bounded { return Bounded{S: s, Lmin: lmin, Lmax: lmax} }

// Dim returns d.
func (s Bounded) Dim() int { return s.S.Dim() }

func (s Bounded) validate() error {
	if !finite(s.Lmin) || !finite(s.Lmax) || s.Lmin > s.Lmax {
		return fmt.Errorf("%w: spectral bounds [%v, %v]", ErrInvalid, s.Lmin, s.Lmax)
	}
	return checkSym(s.S, s.S.Dim())
}

// Inner returns tr(W S).
func (s Bounded) Inner(w *mat.SymDense) float64 { return s.S.Inner(w) }

// DiagQuad writes dst[k] = v_kᵀ S v_k.
func (s Bounded) DiagQuad(dst []float64, v *mat.Dense) { s.S.DiagQuad(dst, v) }

// Rotate overwrites dst with vᵀ S v.
func (s Bounded) Rotate(dst *mat.SymDense, v *mat.Dense) { s.S.Rotate(dst, v) }

// AddTo adds alpha·S to dst.
func (s Bounded) AddTo(dst *mat.SymDense, alpha float64) { s.S.AddTo(dst, alpha) }

// Extremes returns (Lmin, Lmax).
func (s Bounded) Extremes(engine.Backend) (float64, float64, error) { return s.Lmin, s.Lmax, nil }
