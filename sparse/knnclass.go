package sparse

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"
)

// KNNByClass finds, for every row i of x, its kSame nearest rows of the same
// class (i itself excluded) and its kOther nearest rows of the other classes,
// in one pass of the GEMM screen over all pairs of rows (see KNNBLAS): every
// product panel feeds two candidate lists per query, each re-ranked by exact
// distances and certified as in KNNBLAS. This is the search behind labelled
// triplets; one pass over the N² distances costs the same flops as a search
// per class, without the per-class calls, conversions and unbalanced blocks.
//
// The rows of x must be grouped by class: class c occupies rows
// [start[c], start[c+1]), with start[0] = 0 and the last entry the number of
// rows. id gives each row's identifier (nil: the row index). Neighbours are
// ordered by (squared distance, identifier), and the results hold
// identifiers: same.Row(i) and other.Row(i) are row i's. A row whose class
// has at most kSame other rows gets them all, and the rest of its row holds
// −1 with distance +Inf; likewise for fewer than kOther rows outside it.
// Distances are exact squared Euclidean distances, as in KNN. It uses
// gonum's BLAS when impl is nil.
func KNNByClass(impl blas.Float64, x *mat.Dense, start, id []int, kSame, kOther int) (same, other *Neighbors, err error) {
	if x == nil {
		return nil, nil, fmt.Errorf("sparse: KNNByClass: nil matrix")
	}
	n, d := x.Dims()
	if kSame < 0 || kOther < 0 {
		return nil, nil, fmt.Errorf("sparse: KNNByClass: kSame = %d, kOther = %d, want ≥ 0", kSame, kOther)
	}
	if len(start) < 2 || start[0] != 0 || start[len(start)-1] != n {
		return nil, nil, fmt.Errorf("sparse: KNNByClass: class boundaries must run from 0 to the %d rows", n)
	}
	class := make([]int32, n)
	for c := 0; c+1 < len(start); c++ {
		if start[c+1] < start[c] {
			return nil, nil, fmt.Errorf("sparse: KNNByClass: class boundaries decrease at class %d", c)
		}
		for i := start[c]; i < start[c+1]; i++ {
			class[i] = int32(c)
		}
	}
	if id != nil && len(id) != n {
		return nil, nil, fmt.Errorf("sparse: KNNByClass: %d identifiers for %d rows", len(id), n)
	}
	xr := x.RawMatrix()
	for i := 0; i < n; i++ {
		for _, v := range xr.Data[i*xr.Stride : i*xr.Stride+d] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, nil, fmt.Errorf("sparse: KNNByClass: row %d has NaN or Inf", i)
			}
		}
	}
	same = &Neighbors{K: kSame, Index: make([]int, n*kSame), Dist: make([]float64, n*kSame)}
	other = &Neighbors{K: kOther, Index: make([]int, n*kOther), Dist: make([]float64, n*kOther)}
	if n == 0 {
		return same, other, nil
	}
	if impl == nil {
		impl = gonum.Implementation{}
	}
	plan := &searchPlan{self: true, kSame: kSame, kOther: kOther, start: start, class: class}
	res := &screenResult{same: same, other: other, id: id}
	if !screen32(impl, xr, xr, n, n, d, plan, res) {
		screen64(impl, xr, xr, n, n, d, plan, res)
	}
	return same, other, nil
}
