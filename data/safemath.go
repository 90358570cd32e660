package data

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// ColumnMeans returns the mean of every column of x. The plain sum is used
// when it is finite (the common case, bit-for-bit the textbook formula);
// a column whose sum overflows, which happens for finite features near
// math.MaxFloat64/n, is summed again scaled by its largest magnitude, so
// every finite column has a finite mean.
func ColumnMeans(x *mat.Dense) []float64 {
	n, d := x.Dims()
	raw := x.RawMatrix()
	mean := make([]float64, d)
	for i := 0; i < n; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+d] {
			mean[j] += v
		}
	}
	for j := range mean {
		if finite(mean[j]) {
			mean[j] /= float64(n)
			continue
		}
		s := columnScale(raw, n, j)
		sum := 0.0
		for i := 0; i < n; i++ {
			sum += raw.Data[i*raw.Stride+j] / s
		}
		mean[j] = sum / float64(n) * s
	}
	return mean
}

// columnScale returns the largest magnitude in column j (1 for a zero column).
func columnScale(raw blas64.General, n, j int) float64 {
	s := 0.0
	for i := 0; i < n; i++ {
		s = math.Max(s, math.Abs(raw.Data[i*raw.Stride+j]))
	}
	if s == 0 {
		return 1
	}
	return s
}

// columnDeviation returns the population standard deviation of column j
// about mean, overflow-safely: the plain sum of squares when it is finite,
// else the sum of squares of the deviations scaled by the column's largest
// deviation.
func columnDeviation(raw blas64.General, n, j int, mean float64) float64 {
	ss := 0.0
	for i := 0; i < n; i++ {
		e := raw.Data[i*raw.Stride+j] - mean
		ss += e * e
	}
	if finite(ss) {
		return math.Sqrt(ss / float64(n))
	}
	// Deviations as v/s − mean/s, which cannot overflow for finite data.
	s := math.Max(columnScale(raw, n, j), math.Abs(mean)) // |v/s − mean/s| ≤ 2
	big := 0.0
	for i := 0; i < n; i++ {
		v := raw.Data[i*raw.Stride+j]
		big = math.Max(big, math.Abs(v/s-mean/s))
	}
	if big == 0 {
		return 0
	}
	ss = 0
	for i := 0; i < n; i++ {
		v := raw.Data[i*raw.Stride+j]
		e := (v/s - mean/s) / big
		ss += e * e
	}
	return math.Sqrt(ss/float64(n)) * big * s
}

// checkCovariance rejects a covariance matrix that overflowed: features whose
// deviations exceed about 1e154 have squares beyond float64.
func checkCovariance(cov *mat.SymDense) error {
	n := cov.SymmetricDim()
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			if v := cov.At(i, j); !finite(v) {
				return fmt.Errorf("data: pca: covariance entry (%d,%d) overflows float64 (feature values too large: standardize first)", i, j)
			}
		}
	}
	return nil
}
