// Package data loads, splits and preprocesses labelled data sets for psdlearn:
// CSV, LIBSVM/SVMlight and MNIST-style IDX files; seeded train/validation/test
// splits and fixed row ranges; standardisation fitted on training rows; PCA.
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
