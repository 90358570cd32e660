package engine

import (
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/errs"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// MaxRowNorm is the largest Euclidean row norm CheckDistances accepts,
// √(MaxFloat64/8) ≈ 4.7·10¹⁵³. Below it every term of a squared distance
// computed as ‖a‖² + ‖b‖² − 2a·b (the BLAS-blocked form of the k-NN, triplet
// and k-means kernels) and the distance itself are finite; above it a
// distance can overflow to +Inf or become NaN and silently corrupt every
// comparison made with it.
var MaxRowNorm = math.Sqrt(math.MaxFloat64 / 8)

// ErrDistanceOverflow is wrapped by the errors of CheckDistances.
var ErrDistanceOverflow = errs.New("engine: squared distances overflow float64", errs.ErrInvalid)

// CheckDistances returns an error wrapping ErrDistanceOverflow (and
// ErrNotFinite for NaN or Inf entries) if a row of x has a norm above
// MaxRowNorm, so that squared distances between its rows could overflow.
// Every path that ranks points by distance (triplet generation for
// training, k-NN evaluation, k-means) applies this one check. what names x
// in the message. The norms are computed without overflow.
func CheckDistances(what string, x *mat.Dense) error {
	if x == nil {
		return nil
	}
	n, d := x.Dims()
	raw := x.RawMatrix()
	for i := 0; i < n; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+d]
		if err := CheckFinite(fmt.Sprintf("%s row %d", what, i), row); err != nil {
			return fmt.Errorf("%w: %w", ErrDistanceOverflow, err)
		}
		if nrm := blas64.Nrm2(blas64.Vector{N: d, Data: row, Inc: 1}); nrm > MaxRowNorm {
			return fmt.Errorf("%w: %s row %d has norm %.3g, above %.3g (rescale or standardise the features)", ErrDistanceOverflow, what, i, nrm, MaxRowNorm)
		}
	}
	return nil
}
