// Package data loads, splits and preprocesses labelled data sets for psdlearn:
// CSV, LIBSVM/SVMlight and MNIST-style IDX files; seeded train/validation/test
// splits and fixed row ranges; standardisation fitted on training rows; PCA.
//
// # Resource limits
//
// A few bytes of input can describe a huge data set (a gzip bomb, an IDX
// header declaring 2³² images, a LIBSVM index of 4,194,304), so the loaders
// enforce three caps set in LoadOptions and report an error wrapping ErrLimit
// (and ErrFormat) when one is reached, before the memory is allocated:
//
//   - MaxElements, default DefaultMaxElements (2³⁰ values, 8 GiB of
//     float64), caps rows × features. It also bounds the parsers' own
//     working memory, which stays within a small multiple of it plus the
//     longest line: CSV values, LIBSVM non-zeros and rows (label-only lines
//     count), IDX bodies. IDX headers are checked before their bodies are
//     read, and a body is never read past its declared size.
//   - MaxInputBytes, default DefaultMaxInputBytes (1 GiB), caps the bytes
//     read from one input after gzip decompression.
//   - MaxFeatures, default none, caps the feature count as soon as a header
//     or an index reveals it; metric learning needs D×D matrices, so callers
//     that learn or apply a metric set it.
//
// Raise a cap by setting the field; the psdlearn command derives
// MaxElements and MaxFeatures from its memory limit (--max-memory, see
// package limits) and sets MaxInputBytes with --max-input. See
// docs/limits.md.
package data

import "gonum.org/v1/gonum/mat"

// Dataset is a labelled data matrix: row i of X is a point with class Y[i],
// an index into Classes (the original label strings).
type Dataset struct {
	Name    string
	X       *mat.Dense
	Y       []int
	Classes []string
}

// Len returns the number of points.
func (d *Dataset) Len() int {
	if d == nil || d.X == nil {
		return 0
	}
	r, _ := d.X.Dims()
	return r
}

// Dim returns the number of features.
func (d *Dataset) Dim() int {
	if d == nil || d.X == nil {
		return 0
	}
	_, c := d.X.Dims()
	return c
}
