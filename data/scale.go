package data

import (
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/errs"
	"gonum.org/v1/gonum/mat"
)

// ErrNoSpread is wrapped by RMSDeviation and Normalize when every row of the
// data is the same point: there is no distance to learn a metric from.
var ErrNoSpread = errs.New("data: all points are identical", errs.ErrInvalid)

// ErrScale is wrapped by Normalize when the data's scale s puts a metric in
// the data's units, which scales as 1/s², outside the normal floating-point
// range (s outside about [1e-154, 1e154]): rescale the data first.
var ErrScale = errs.New("data: the data's scale puts a metric in its units outside the floating-point range", errs.ErrInvalid)

// minNormal is the smallest positive normal float64, 2⁻¹⁰²².
const minNormal = 0x1p-1022

// RMSDeviation returns the root mean square deviation of the entries of x
// from their column means,
//
//	s = √( Σ_ij (x_ij − μ_j)² / (n·d) ),
//
// the data's own length scale: 1 for standardised data without constant
// features, and c·s for the data multiplied by c. It is computed without
// overflow or underflow for any finite x (the entries are first divided by
// the largest magnitude). It fails on non-finite entries, wrapping
// ErrNoSpread when all rows are equal, and wrapping ErrScale when every
// entry is subnormal (no distance survives the rounding).
func RMSDeviation(x *mat.Dense) (float64, error) {
	if x == nil {
		return 0, fmt.Errorf("data: RMS deviation of a nil matrix")
	}
	n, d := x.Dims()
	raw := x.RawMatrix()
	var amax float64
	for i := 0; i < n; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+d] {
			if !finite(v) {
				return 0, fmt.Errorf("data: RMS deviation: x[%d,%d] = %v", i, j, v)
			}
			amax = math.Max(amax, math.Abs(v))
		}
	}
	if amax == 0 {
		return 0, fmt.Errorf("%w (%d×%d zeros)", ErrNoSpread, n, d)
	}
	if amax < minNormal {
		// Differences of subnormal numbers lose their digits and their
		// squares are zero: no distance between the points survives.
		return 0, fmt.Errorf("%w: every value is subnormal (the largest magnitude is %g, below the smallest normal number %g), so every distance between points underflows to 0: multiply the data by a large factor (e.g. 1e300) first", ErrScale, amax, minNormal)
	}
	inv := 1 / amax
	if math.IsInf(inv, 0) { // amax barely normal
		inv = math.Ldexp(1, -math.Ilogb(amax))
	}
	mean := make([]float64, d)
	for i := 0; i < n; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+d] {
			mean[j] += v * inv
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	var ss float64
	for i := 0; i < n; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+d] {
			e := v*inv - mean[j]
			ss += e * e
		}
	}
	s := math.Sqrt(ss/float64(n*d)) / inv
	if !(s > 0) {
		return 0, fmt.Errorf("%w (%d rows)", ErrNoSpread, n)
	}
	return s, nil
}

// Normalize returns x/s in a new matrix and s = RMSDeviation(x). The metric
// learners train on x/s, so the same data at any scale gives the same
// problem: a metric M̃ learned on x/s is the metric M = M̃/s² on x
// (distances (a−b)ᵀM(a−b) are unchanged), and its factor L̃ is L = L̃/s.
// It fails, wrapping ErrScale, when M̃/s² cannot be represented: s² or 1/s²
// outside the normal range of float64.
func Normalize(x *mat.Dense) (*mat.Dense, float64, error) {
	s, err := RMSDeviation(x)
	if err != nil {
		return nil, 0, err
	}
	if s2 := s * s; math.IsInf(s2, 0) || s2 < 0x1p-1022 || math.IsInf(1/s2, 0) {
		return nil, 0, fmt.Errorf("%w: RMS deviation %g", ErrScale, s)
	}
	n, d := x.Dims()
	out := mat.NewDense(n, d, nil)
	raw, o := x.RawMatrix(), out.RawMatrix()
	for i := 0; i < n; i++ {
		src, dst := raw.Data[i*raw.Stride:i*raw.Stride+d], o.Data[i*o.Stride:i*o.Stride+d]
		for j, v := range src {
			dst[j] = v / s
		}
	}
	return out, s, nil
}

// RelativeDeviations returns the standard deviation of every column of x
// divided by RMSDeviation(x): the feature scales of the normalised data
// x/s (all 1 for standardised data without constant features; 0 for a
// constant column). Their squares average to 1 over the columns. It fails
// like RMSDeviation.
func RelativeDeviations(x *mat.Dense) ([]float64, error) {
	s, err := RMSDeviation(x)
	if err != nil {
		return nil, err
	}
	n, d := x.Dims()
	raw := x.RawMatrix()
	// As in RMSDeviation, the entries are divided by the largest magnitude
	// first, so that no sum overflows.
	var amax float64
	for i := 0; i < n; i++ {
		for _, v := range raw.Data[i*raw.Stride : i*raw.Stride+d] {
			amax = math.Max(amax, math.Abs(v))
		}
	}
	inv := 1 / amax
	if math.IsInf(inv, 0) {
		inv = math.Ldexp(1, -math.Ilogb(amax))
	}
	mean := make([]float64, d)
	for i := 0; i < n; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+d] {
			mean[j] += v * inv
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	dev := make([]float64, d)
	for i := 0; i < n; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+d] {
			e := v*inv - mean[j]
			dev[j] += e * e
		}
	}
	si := s * inv
	for j := range dev {
		dev[j] = math.Sqrt(dev[j]/float64(n)) / si
	}
	return dev, nil
}
