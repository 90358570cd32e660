package model

import (
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/errs"
	"gonum.org/v1/gonum/mat"
)

// ErrDimension is wrapped by errors about data of the wrong size for a
// model: a vector or matrix with another number of features than the model
// expects. It matches ErrInvalid, errs.ErrDimension and errs.ErrInvalid.
var ErrDimension = errs.New("model: dimension mismatch", ErrInvalid, errs.ErrDimension)

// Distance returns the model's metric distance between two raw feature
// vectors: the preprocessing is applied to both first, then
// √((x − y)ᵀ M (x − y)) of the results, computed as ‖Lᵀx − Lᵀy‖ like
// PairDistances and Transform. a and b must have InputDim()
// entries (an error wrapping ErrDimension otherwise) and be finite (an
// error wrapping ErrInvalid); a kernel model has no distance between
// feature vectors (ErrInvalid). It never panics, allocates nothing and is
// safe for concurrent use; DistancesTo is its form for matrices of rows.
func (m *Model) Distance(a, b []float64) (float64, error) {
	rm, err := m.rowMap()
	if err != nil {
		return 0, err
	}
	if len(a) != rm.in || len(b) != rm.in {
		return 0, fmt.Errorf("%w: Distance: vectors of %d and %d features, the model expects %d", ErrDimension, len(a), len(b), rm.in)
	}
	if !finiteAll(a) || !finiteAll(b) {
		for i := range a {
			if !isFinite(a[i]) || !isFinite(b[i]) {
				return 0, fmt.Errorf("%w: Distance: feature %d is %v and %v, want finite numbers", ErrInvalid, i, a[i], b[i])
			}
		}
	}
	d, ok := rm.distance(a, b)
	if !ok {
		return 0, fmt.Errorf("%w: Distance: the coordinates overflow (an input far outside the model's range?)", ErrInvalid)
	}
	return d, nil
}

// PairDistances returns the model's metric distances between the raw rows
// of x named by pairs: out[k] = Distance(row pairs[k][0], row pairs[k][1]).
// The preprocessing and the product with L are applied once to the rows
// the pairs use. x must have InputDim() columns (ErrDimension otherwise),
// finite entries in those rows, and every index must lie in [0, rows of x)
// (ErrInvalid otherwise). No pairs give an empty slice. It never panics.
func (m *Model) PairDistances(x *mat.Dense, pairs [][2]int) ([]float64, error) {
	if err := m.checkMetric(); err != nil {
		return nil, err
	}
	if x == nil || x.IsEmpty() {
		return nil, fmt.Errorf("%w: PairDistances: no data", ErrInvalid)
	}
	n, d := x.Dims()
	if want := m.InputDim(); d != want {
		return nil, fmt.Errorf("%w: PairDistances: data has %d features, the model expects %d", ErrDimension, d, want)
	}
	// Compact the rows the pairs use, in order of first use.
	pos := make(map[int]int)
	var rows []int
	for k, p := range pairs {
		for _, i := range p {
			if i < 0 || i >= n {
				return nil, fmt.Errorf("%w: PairDistances: pair %d = (%d, %d) outside [0, %d)", ErrInvalid, k, p[0], p[1], n)
			}
			if _, ok := pos[i]; !ok {
				pos[i] = len(rows)
				rows = append(rows, i)
			}
		}
	}
	out := make([]float64, len(pairs))
	if len(pairs) == 0 {
		return out, nil
	}
	sub := mat.NewDense(len(rows), d, nil)
	for r, i := range rows {
		row := x.RawRowView(i)
		for j, v := range row {
			if !isFinite(v) {
				return nil, fmt.Errorf("%w: PairDistances: row %d feature %d is %v, want a finite number", ErrInvalid, i, j, v)
			}
		}
		sub.SetRow(r, row)
	}
	z, err := m.Transform(sub)
	if err != nil {
		return nil, err
	}
	_, r := z.Dims()
	for k, p := range pairs {
		a, b := z.RawRowView(pos[p[0]]), z.RawRowView(pos[p[1]])
		var s float64
		for c := 0; c < r; c++ {
			e := a[c] - b[c]
			s += e * e
		}
		out[k] = math.Sqrt(s)
	}
	return out, nil
}

// checkMetric reports an error unless m is a metric model.
func (m *Model) checkMetric() error {
	if m == nil || m.Metric == nil {
		kind := "nil"
		if m != nil {
			kind = fmt.Sprintf("%q", m.Kind)
		}
		return fmt.Errorf("%w: a %s model has no metric between feature vectors", ErrInvalid, kind)
	}
	return nil
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
