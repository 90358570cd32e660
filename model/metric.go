// Package model holds what psdlearn learns and stores: a Mahalanobis Metric
// (the PSD matrix M with a factor L, M = L Lᵀ), a low-rank Kernel
// K = V diag(λ) Vᵀ, and the model file that keeps either of them together
// with the preprocessing fitted on the training data (JSON with a format
// name and version; loading validates symmetry, finiteness and
// positive semidefiniteness).
package model

import (
	"errors"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/engine"
	"gonum.org/v1/gonum/mat"
)

// Tolerance is the relative tolerance of the PSD and symmetry checks: an
// eigenvalue λ ≥ −Tolerance·max|λ| counts as zero (and is clipped), and two
// mirrored entries may differ by Tolerance·max|M_ij|.
const Tolerance = 1e-8

// ErrInvalid is wrapped by errors about matrices that are not valid models:
// not symmetric, not finite, not PSD, or of mismatched dimensions.
var ErrInvalid = errors.New("model: invalid")

// Metric is the Mahalanobis metric d_M(x, y)² = (x − y)ᵀ M (x − y) of a
// symmetric PSD matrix M (D×D), with the factor L (D×r, M = L Lᵀ up to the
// clipping of eigenvalues within Tolerance of zero) whose r columns are
// √λ_i v_i for the positive eigenpairs of M by descending eigenvalue, so r is
// the numerical rank of M (r = 1 with a zero column when M = 0).
type Metric struct {
	M *mat.SymDense
	L *mat.Dense
}

// NewMetric validates m (finite, PSD within Tolerance) and factors it with
// engine.Default(). See NewMetricWith.
func NewMetric(m mat.Symmetric) (*Metric, error) { return NewMetricWith(nil, m) }

// NewMetricWith validates m — finite entries, no eigenvalue below
// −Tolerance·max|λ| — and computes the factor L from the eigendecomposition
// by the backend b (nil means engine.Default()). M keeps a copy of m.
func NewMetricWith(b engine.Backend, m mat.Symmetric) (*Metric, error) {
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
	eig, err := engine.Or(b).SymEig(cp, engine.AllRange(), true)
	if err != nil {
		return nil, fmt.Errorf("model: metric eigendecomposition: %w", err)
	}
	vals := eig.Values
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
		s := math.Sqrt(vals[i])
		for a := 0; a < d; a++ {
			l.Set(a, c, s*eig.Vectors.At(a, i))
		}
	}
	return &Metric{M: cp, L: l}, nil
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

// Dim returns D, the dimension of the input space.
func (m *Metric) Dim() int { return m.M.SymmetricDim() }

// Rank returns r, the number of columns of L.
func (m *Metric) Rank() int { _, c := m.L.Dims(); return c }

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
// metric's distances between the rows of x.
func (m *Metric) Transform(x *mat.Dense) (*mat.Dense, error) {
	return m.TransformWith(nil, x)
}

// TransformWith is Transform with the product done by the BLAS of backend b
// (nil means engine.Default()).
func (m *Metric) TransformWith(b engine.Backend, x *mat.Dense) (*mat.Dense, error) {
	if x == nil {
		return nil, fmt.Errorf("%w: nil data", ErrInvalid)
	}
	n, d := x.Dims()
	if d != m.Dim() {
		return nil, fmt.Errorf("%w: data has %d features, the metric is %d-dimensional", ErrInvalid, d, m.Dim())
	}
	r := m.Rank()
	out := mat.NewDense(n, r, nil)
	xr, lr, or := x.RawMatrix(), m.L.RawMatrix(), out.RawMatrix()
	engine.MulRows(engine.Or(b).BLAS(), n, r, d, xr.Data, xr.Stride, lr.Data, lr.Stride, or.Data, or.Stride)
	return out, nil
}

// PairSqDistances writes (x_a − x_b)ᵀ M (x_a − x_b) for every pair into dst
// (len(dst) == len(pairs)): one product X·L, then O(r) per pair.
func (m *Metric) PairSqDistances(b engine.Backend, dst []float64, x *mat.Dense, pairs []engine.Pair) error {
	b = engine.Or(b)
	z, err := m.TransformWith(b, x)
	if err != nil {
		return err
	}
	if err := b.PairSqDists(dst, z, pairs); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	return nil
}

// PairDistances is PairSqDistances followed by square roots: the metric
// distances of the pairs.
func (m *Metric) PairDistances(b engine.Backend, dst []float64, x *mat.Dense, pairs []engine.Pair) error {
	if err := m.PairSqDistances(b, dst, x, pairs); err != nil {
		return err
	}
	for i, v := range dst {
		dst[i] = math.Sqrt(math.Max(v, 0))
	}
	return nil
}
