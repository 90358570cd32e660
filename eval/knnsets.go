package eval

import (
	"fmt"

	"github.com/psdlearn/psdlearn/engine"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// Queries is a labelled set of query points for FactorKNNErrors.
type Queries struct {
	X *mat.Dense
	Y []int
}

// FactorKNNErrors returns FactorKNNError for every query set in sets, in
// order; a nil factor l means the Euclidean metric (KNNError). The sets are
// mapped by X·L and searched in one k-NN pass over the training points
// instead of one pass each: the reference points are prepared once and the
// query blocks of all sets share both cores. A query's neighbours do not
// depend on the other queries, so every error equals the one-set call's. An
// empty set gets 0, as in KNNError.
func FactorKNNErrors(b engine.Backend, l *mat.Dense, trainX *mat.Dense, trainY []int, k int, sets ...Queries) ([]float64, error) {
	if trainX == nil {
		return nil, fmt.Errorf("%w: nil training data", ErrInvalid)
	}
	b = engine.Or(b)
	_, d := trainX.Dims()
	r := d
	if l != nil {
		ld, lr := l.Dims()
		if ld != d {
			return nil, fmt.Errorf("%w: training data has %d features, the factor %d rows", ErrInvalid, d, ld)
		}
		r = lr
	}
	total := 0
	for s, q := range sets {
		if q.X == nil {
			return nil, fmt.Errorf("%w: query set %d: nil data", ErrInvalid, s)
		}
		n, c := q.X.Dims()
		if c != d {
			return nil, fmt.Errorf("%w: query set %d has %d features, the training data %d", ErrInvalid, s, c, d)
		}
		if n != len(q.Y) {
			return nil, fmt.Errorf("%w: query set %d: %d points, %d labels", ErrInvalid, s, n, len(q.Y))
		}
		total += n
	}
	out := make([]float64, len(sets))
	if total == 0 {
		return out, nil
	}
	// Stack the sets (mapped by L) into one query matrix.
	z := mat.NewDense(total, r, nil)
	zr := z.RawMatrix()
	row := 0
	for _, q := range sets {
		n, _ := q.X.Dims()
		if n == 0 {
			continue
		}
		xr := q.X.RawMatrix()
		dst := zr.Data[row*zr.Stride:]
		if l == nil {
			for i := 0; i < n; i++ {
				copy(dst[i*zr.Stride:i*zr.Stride+d], xr.Data[i*xr.Stride:i*xr.Stride+d])
			}
		} else {
			lr := l.RawMatrix()
			b.BLAS().Dgemm(blas.NoTrans, blas.NoTrans, n, r, d, 1, xr.Data, xr.Stride, lr.Data, lr.Stride, 0, dst, zr.Stride)
		}
		row += n
	}
	ztr := trainX
	if l != nil {
		n, _ := trainX.Dims()
		ztr = mat.NewDense(max(n, 1), r, nil)
		if n == 0 {
			ztr = ztr.Slice(0, 0, 0, r).(*mat.Dense)
		} else {
			xr, lr, tr := trainX.RawMatrix(), l.RawMatrix(), ztr.RawMatrix()
			b.BLAS().Dgemm(blas.NoTrans, blas.NoTrans, n, r, d, 1, xr.Data, xr.Stride, lr.Data, lr.Stride, 0, tr.Data, tr.Stride)
		}
	}
	pred, err := KNNPredict(b, ztr, trainY, z, k)
	if err != nil {
		return nil, err
	}
	row = 0
	for s, q := range sets {
		n := len(q.Y)
		out[s] = errorRate(pred[row:row+n], q.Y)
		row += n
	}
	return out, nil
}
