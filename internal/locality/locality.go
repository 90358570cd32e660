// Package locality renumbers a learner's training points so that points
// joined by triplet pairs are stored near each other (see
// constraints.TripletSet.LocalityOrder). The learners that multiply by the
// triplet graph's Laplacian at every iteration (BoostMetric, PSDBoost,
// FrobMetric) train on the renumbered copy: the weighted Gram Xᵀ L_W X and
// every per-triplet quantity are unchanged by a renumbering, so only the
// order of floating-point sums, and the memory traffic, change.
package locality

import (
	"fmt"

	"github.com/psdlearn/psdlearn/constraints"
	"gonum.org/v1/gonum/mat"
)

// MinBytes is the size of the data matrix from which Apply renumbers: below
// it the matrix stays in the last-level cache whatever the order, and the
// copy would not pay. Tests lower it to exercise the renumbered path.
var MinBytes = 16 << 20

// Apply returns x and ts renumbered for locality when x is at least MinBytes
// large, and x and ts themselves otherwise. Triplet r of the returned set is
// triplet r of ts, so per-triplet vectors need no translation; the rows of
// the returned matrix are a copy (x is not modified).
func Apply(x *mat.Dense, ts *constraints.TripletSet) (*mat.Dense, *constraints.TripletSet, error) {
	n, d := x.Dims()
	if n*d*8 < MinBytes || n != ts.N {
		return x, ts, nil
	}
	perm := ts.LocalityOrder()
	rts, err := ts.Relabel(perm)
	if err != nil {
		return nil, nil, fmt.Errorf("locality: %w", err)
	}
	out := mat.NewDense(n, d, nil)
	src, dst := x.RawMatrix(), out.RawMatrix()
	for k, p := range perm {
		copy(dst.Data[k*dst.Stride:k*dst.Stride+d], src.Data[p*src.Stride:p*src.Stride+d])
	}
	return out, rts, nil
}
