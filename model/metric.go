package model

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Tolerance is the relative tolerance of the PSD and symmetry checks: an
// eigenvalue λ ≥ −Tolerance·max|λ| counts as zero (and is clipped), and two
// mirrored entries may differ by Tolerance·max|M_ij|.
const Tolerance = 1e-8

// ErrInvalid is wrapped by errors about matrices that are not valid models:
// not symmetric, not finite, not PSD, or of mismatched dimensions.
var ErrInvalid = errs.New("model: invalid", errs.ErrInvalid)

// Metric is the Mahalanobis metric d_M(x, y)² = (x − y)ᵀ M (x − y) of a
// symmetric PSD matrix M (D×D), with the factor L (D×r, M = L Lᵀ up to the
// clipping of eigenvalues within Tolerance of zero) whose r columns are
// √λ_i v_i for the positive eigenpairs of M by descending eigenvalue, so r is
// the numerical rank of M (r = 1 with a zero column when M = 0). Each column
// is signed so that its entry of largest magnitude (the first of equals) is
// positive.
//
// The package uses gonum only, and a model file holds the factor: once a
// model is saved, Transform and the distances are the same numbers in
// every program that loads it, whichever engine backend is compiled in,
// and a program that only loads models and transforms data links no
// native library. The factor itself comes from the eigensolver that built
// the Metric (NewMetric: gonum's; NewMetricFrom: the caller's, the
// training backend's during training), so two backends give factors that
// agree to their rounding.
type Metric struct {
	M *mat.SymDense
	L *mat.Dense
}

// NewMetric validates m — finite entries, no eigenvalue below
// −Tolerance·max|λ| — and computes the factor L from gonum's symmetric
// eigendecomposition, with the sign convention of Metric. M keeps a copy of
// m. The decomposition costs O(D³) in pure Go (about 1.7 s at D = 784 and
// 100 s at D = 2,048 on one core): NewMetricFrom takes it from a faster
// solver.
func NewMetric(m mat.Symmetric) (*Metric, error) {
	cp, err := finiteCopy(m)
	if err != nil {
		return nil, err
	}
	var es mat.EigenSym
	if !es.Factorize(cp, true) {
		return nil, fmt.Errorf("%w: metric eigendecomposition did not converge", ErrInvalid)
	}
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	return fromEigen(cp, es.Values(nil), &vecs)
}

// NewMetricFrom is NewMetric with the eigendecomposition computed by eig:
// eig receives the validated copy of m (finite entries, so a native solver
// may be called on it), which becomes the Metric's M and which it must not
// modify, and returns all D eigenvalues in ascending order
// and the orthonormal eigenvectors as the columns of a D×D matrix, as
// LAPACK's dsyevd and an engine backend's SymEig return them. The factor
// is built from them as NewMetric builds it and checked against m on
// random probe vectors (checkFactor), so a decomposition of another
// matrix, or one that is not orthonormal, is refused.
func NewMetricFrom(m mat.Symmetric, eig func(*mat.SymDense) (values []float64, vectors *mat.Dense, err error)) (*Metric, error) {
	cp, err := finiteCopy(m)
	if err != nil {
		return nil, err
	}
	values, vectors, err := eig(cp)
	if err != nil {
		return nil, fmt.Errorf("model: metric eigendecomposition: %w", err)
	}
	d := cp.SymmetricDim()
	if len(values) != d || vectors == nil {
		return nil, fmt.Errorf("%w: %d eigenvalues for a %d×%d metric, want all of them with their vectors", ErrInvalid, len(values), d, d)
	}
	if r, c := vectors.Dims(); r != d || c != d {
		return nil, fmt.Errorf("%w: eigenvectors %d×%d for a %d×%d metric", ErrDimension, r, c, d, d)
	}
	for i, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) || i > 0 && v < values[i-1] {
			return nil, fmt.Errorf("%w: eigenvalue %d = %v: want finite values in ascending order", ErrInvalid, i, v)
		}
	}
	met, err := fromEigen(cp, values, vectors)
	if err != nil {
		return nil, err
	}
	if err := met.checkFactor(); err != nil {
		return nil, err
	}
	return met, nil
}

// finiteCopy returns a copy of m after checking that it is not empty and
// its entries are finite.
func finiteCopy(m mat.Symmetric) (*mat.SymDense, error) {
	if m == nil || m.SymmetricDim() == 0 {
		return nil, fmt.Errorf("%w: empty metric matrix", ErrInvalid)
	}
	d := m.SymmetricDim()
	cp := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v := m.At(i, j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: metric entry (%d,%d) = %v", ErrInvalid, i, j, v)
			}
			cp.SetSym(i, j, v)
		}
	}
	return cp, nil
}

// fromEigen returns the Metric of m (kept, not copied) from its
// eigendecomposition (values ascending, vectors as columns): it refuses
// an eigenvalue below −Tolerance·max|λ| and builds L from the eigenpairs
// above Tolerance·max|λ|, by descending eigenvalue, each column signed as
// Metric says.
func fromEigen(m *mat.SymDense, vals []float64, vecs *mat.Dense) (*Metric, error) {
	d := m.SymmetricDim()
	scale := math.Max(math.Abs(vals[0]), math.Abs(vals[len(vals)-1]))
	if vals[0] < -Tolerance*scale {
		return nil, fmt.Errorf("%w: metric is not positive semidefinite: smallest eigenvalue %g, largest %g (tolerance %g relative)", ErrInvalid, vals[0], vals[len(vals)-1], Tolerance)
	}
	var cols []int
	for i := len(vals) - 1; i >= 0; i-- {
		if vals[i] > Tolerance*scale {
			cols = append(cols, i)
		}
	}
	r := max(len(cols), 1)
	l := mat.NewDense(d, r, nil)
	for c, i := range cols {
		s := math.Sqrt(vals[i]) * columnSign(vecs, i)
		for a := 0; a < d; a++ {
			l.Set(a, c, s*vecs.At(a, i))
		}
	}
	return &Metric{M: m, L: l}, nil
}

// checkForm checks that L has the form NewMetric gives it: columns by
// non-increasing norm (descending eigenvalues), each signed so that its
// entry of largest magnitude (the first of equals) is positive, and none
// below the clipping threshold, except the single zero column of M = 0.
func (m *Metric) checkForm() error {
	m = m.balanced()
	_, r := m.L.Dims()
	prev := math.Inf(1)
	var first float64
	for c := 0; c < r; c++ {
		col := mat.Col(nil, c, m.L)
		n := floats.Dot(col, col)
		if c == 0 {
			first = n
		}
		switch {
		case n > prev:
			return fmt.Errorf("%w: the factor's column %d is longer than column %d (want descending eigenvalues)", ErrInvalid, c, c-1)
		case n == 0 && r == 1:
			continue // M = 0 (checkFactor checks it)
		case !(n > Tolerance/2*first) || n == 0:
			return fmt.Errorf("%w: the factor's column %d has squared norm %g, below the clipping threshold %g of its largest", ErrInvalid, c, n, Tolerance)
		case columnSign(m.L, c) < 0:
			return fmt.Errorf("%w: the factor's column %d has a negative entry of largest magnitude (want the sign convention of Metric)", ErrInvalid, c)
		}
		prev = n
	}
	return nil
}

// probes is the number of random vectors checkFactor applies.
const probes = 3

// checkFactor checks L against M without a decomposition, on probes
// random vectors (a seed fixed by D, so the check is reproducible): for
// each z, ‖M z − L Lᵀ z‖ and, for z of length r, ‖Lᵀ L z − N z‖ (N the
// diagonal of the columns' squared norms: LᵀL is diagonal when the
// columns are orthogonal) must be within (2·Tolerance + 16·D·ε)·s·‖z‖,
// s = max(‖L₁‖², max|M_ij|) ≈ λmax. That is the eigenvalues NewMetric
// clips plus the rounding of a backward-stable eigensolver; a factor of
// another matrix, or with columns that are not orthogonal, fails it with
// probability one over the random draws.
// It runs on the balanced copy of m.
func (m *Metric) checkFactor() error { return m.balanced().checkScaledFactor() }

// balanced returns m, or, when its entries are far from 1 (beyond 2^±500
// in M, 2^±250 in L), a copy with M scaled by 2^−e and L by 2^−e/2 (exact
// powers of two, e even), so that the checks' products neither overflow
// nor underflow. The form of L and its consistency with M do not change.
func (m *Metric) balanced() *Metric {
	if e := factorExponent(m.M, m.L); e > 500 || e < -500 {
		e &^= 1
		return &Metric{M: scaledSym(m.M, -e), L: scaledDense(m.L, -e/2)}
	}
	return m
}

// factorExponent returns the binary exponent of max(max|M_ij|, max|L_ij|²),
// 0 when both are zero.
func factorExponent(m *mat.SymDense, l *mat.Dense) int {
	var bm, bl float64
	d, r := l.Dims()
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			bm = math.Max(bm, math.Abs(m.At(i, j)))
		}
		for c := 0; c < r; c++ {
			bl = math.Max(bl, math.Abs(l.At(i, c)))
		}
	}
	switch {
	case bm == 0 && bl == 0:
		return 0
	case bl == 0:
		return math.Ilogb(bm)
	case bm == 0:
		return 2 * math.Ilogb(bl)
	}
	return max(math.Ilogb(bm), 2*math.Ilogb(bl))
}

// scaledSym returns a copy of m times 2^e.
func scaledSym(m *mat.SymDense, e int) *mat.SymDense {
	d := m.SymmetricDim()
	out := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			out.SetSym(i, j, math.Ldexp(m.At(i, j), e))
		}
	}
	return out
}

// scaledDense returns a copy of a times 2^e.
func scaledDense(a *mat.Dense, e int) *mat.Dense {
	r, c := a.Dims()
	out := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			out.Set(i, j, math.Ldexp(a.At(i, j), e))
		}
	}
	return out
}

// checkScaledFactor is checkFactor on entries of moderate magnitude.
func (m *Metric) checkScaledFactor() error {
	d, r := m.L.Dims()
	norms := make([]float64, r)
	for c := range norms {
		col := mat.Col(nil, c, m.L)
		norms[c] = floats.Dot(col, col)
	}
	s := norms[0]
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			s = math.Max(s, math.Abs(m.M.At(i, j)))
		}
	}
	tol := (2*Tolerance + 16*float64(d)*0x1p-52) * s
	rng := rand.New(rand.NewPCG(uint64(d), uint64(r)))
	z, y, mz, t := make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, r)
	zv, yv, mzv, tv := mat.NewVecDense(d, z), mat.NewVecDense(d, y), mat.NewVecDense(d, mz), mat.NewVecDense(r, t)
	for p := 0; p < probes; p++ {
		for i := range z {
			z[i] = rng.NormFloat64()
		}
		mzv.MulVec(m.M, zv)
		tv.MulVec(m.L.T(), zv)
		yv.MulVec(m.L, tv)
		if e := floats.Distance(mz, y, 2); !(e <= tol*floats.Norm(z, 2)) {
			return fmt.Errorf("%w: the factor L does not reproduce M: ‖M z − L Lᵀ z‖ = %.3g on a random z of norm %.3g, above the tolerance %.3g·‖z‖", ErrInvalid, e, floats.Norm(z, 2), tol)
		}
		zr := z[:r]
		yv.MulVec(m.L, mat.NewVecDense(r, zr))
		tv.MulVec(m.L.T(), yv)
		for c := range t {
			t[c] -= norms[c] * zr[c]
		}
		if e := floats.Norm(t, 2); !(e <= tol*floats.Norm(zr, 2)) {
			return fmt.Errorf("%w: the factor's columns are not orthogonal: ‖(LᵀL − diag) z‖ = %.3g on a random z of norm %.3g, above the tolerance %.3g·‖z‖", ErrInvalid, e, floats.Norm(zr, 2), tol)
		}
	}
	return nil
}

// columnSign returns the sign that makes column j's entry of largest
// magnitude (the first of equals) positive.
func columnSign(v *mat.Dense, j int) float64 {
	r, _ := v.Dims()
	big, sign := 0.0, 1.0
	for i := 0; i < r; i++ {
		if a := v.At(i, j); math.Abs(a) > big {
			big, sign = math.Abs(a), math.Copysign(1, a)
		}
	}
	return sign
}

// Identity returns the Euclidean metric M = I of dimension d.
func Identity(d int) *Metric {
	m := mat.NewSymDense(d, nil)
	l := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		m.SetSym(i, i, 1)
		l.Set(i, i, 1)
	}
	return &Metric{M: m, L: l}
}

// Dim returns D, the dimension of the input space (0 for a Metric not
// built by NewMetric or Identity).
func (m *Metric) Dim() int {
	if m == nil || m.M == nil {
		return 0
	}
	return m.M.SymmetricDim()
}

// Rank returns r, the number of columns of L.
func (m *Metric) Rank() int {
	if m == nil || m.L == nil {
		return 0
	}
	_, c := m.L.Dims()
	return c
}

// check refuses a Metric whose fields do not hold a D×D matrix M and its
// D×r factor L (a zero Metric, or one written as a literal).
func (m *Metric) check() error {
	if m == nil || m.M == nil || m.L == nil {
		return fmt.Errorf("%w: an empty metric (build it with NewMetric)", ErrInvalid)
	}
	if d, _ := m.L.Dims(); d != m.M.SymmetricDim() {
		return fmt.Errorf("%w: the metric's factor has %d rows for a %d-dimensional M", ErrDimension, d, m.M.SymmetricDim())
	}
	return nil
}

// SqDistance returns (x − y)ᵀ M (x − y) = ‖Lᵀ(x − y)‖². It panics if the
// lengths differ from Dim().
func (m *Metric) SqDistance(x, y []float64) float64 {
	d := m.Dim()
	if len(x) != d || len(y) != d {
		panic(fmt.Sprintf("model: SqDistance: vectors of lengths %d and %d for a %d-dimensional metric", len(x), len(y), d))
	}
	r := m.Rank()
	diff := make([]float64, d)
	for i := range diff {
		diff[i] = x[i] - y[i]
	}
	var s float64
	for c := 0; c < r; c++ {
		var z float64
		for i, v := range diff {
			z += v * m.L.At(i, c)
		}
		s += z * z
	}
	return s
}

// Distance returns the Mahalanobis distance √((x − y)ᵀ M (x − y)).
func (m *Metric) Distance(x, y []float64) float64 { return math.Sqrt(m.SqDistance(x, y)) }

// Transform returns X·L (n×r): Euclidean distances between its rows are the
// metric's distances between the rows of x. It uses gonum's BLAS, so its
// output does not depend on the program's engine backend.
func (m *Metric) Transform(x *mat.Dense) (*mat.Dense, error) {
	return m.TransformBLAS(nil, x)
}

// TransformBLAS is Transform with the product done by impl (nil: gonum),
// for example an engine backend's BLAS during training. Another BLAS may
// round differently in the last bits.
func (m *Metric) TransformBLAS(impl blas.Float64, x *mat.Dense) (*mat.Dense, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	if x == nil || x.IsEmpty() {
		return nil, fmt.Errorf("%w: no rows to transform", ErrInvalid) // gonum has no 0×r matrix
	}
	n, d := x.Dims()
	if d != m.Dim() {
		return nil, fmt.Errorf("%w: data has %d features, the metric is %d-dimensional", ErrDimension, d, m.Dim())
	}
	xr := x.RawMatrix()
	for i := 0; i < n; i++ {
		for j, v := range xr.Data[i*xr.Stride : i*xr.Stride+d] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: row %d, feature %d is %v", ErrInvalid, i, j, v)
			}
		}
	}
	if impl == nil {
		impl = gonum.Implementation{}
	}
	r := m.Rank()
	out := mat.NewDense(n, r, nil)
	lr, or := m.L.RawMatrix(), out.RawMatrix()
	impl.Dgemm(blas.NoTrans, blas.NoTrans, n, r, d, 1, xr.Data, xr.Stride, lr.Data, lr.Stride, 0, or.Data, or.Stride)
	return out, nil
}

// PairSqDistances writes (x_a − x_b)ᵀ M (x_a − x_b) for every pair into dst
// (len(dst) == len(pairs)): one product X·L, then O(r) per pair.
func (m *Metric) PairSqDistances(dst []float64, x *mat.Dense, pairs []sparse.Pair) error {
	z, err := m.Transform(x)
	if err != nil {
		return err
	}
	return pairSqDists(dst, z, pairs)
}

// PairDistances is PairSqDistances followed by square roots: the metric
// distances of the pairs.
func (m *Metric) PairDistances(dst []float64, x *mat.Dense, pairs []sparse.Pair) error {
	if err := m.PairSqDistances(dst, x, pairs); err != nil {
		return err
	}
	for i, v := range dst {
		dst[i] = math.Sqrt(math.Max(v, 0))
	}
	return nil
}

// pairSqDists writes ‖z_a − z_b‖² for every pair into dst.
func pairSqDists(dst []float64, z *mat.Dense, pairs []sparse.Pair) error {
	if len(dst) != len(pairs) {
		return fmt.Errorf("%w: %d outputs for %d pairs", ErrInvalid, len(dst), len(pairs))
	}
	n, r := z.Dims()
	zr := z.RawMatrix()
	for k, p := range pairs {
		if p.A < 0 || p.A >= n || p.B < 0 || p.B >= n {
			return fmt.Errorf("%w: pair %d = (%d, %d) outside [0, %d)", ErrInvalid, k, p.A, p.B, n)
		}
		a, b := zr.Data[p.A*zr.Stride:p.A*zr.Stride+r], zr.Data[p.B*zr.Stride:p.B*zr.Stride+r]
		var s float64
		for c, v := range a {
			e := v - b[c]
			s += e * e
		}
		dst[k] = s
	}
	return nil
}
