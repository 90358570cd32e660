package sparse

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"
)

// KNNSplit finds, for every row i of q, its kIn nearest rows of ref inside
// the range [ranges[i][0], ranges[i][1]) and its kOut nearest rows outside
// it, in one pass of the GEMM screen over all pairs (see KNNBLAS): every
// product panel feeds two candidate lists per query, each re-ranked by exact
// distances and certified as in KNNBLAS (or, on data with many columns
// whose variance sits in a few, the prefix screen of KNNBLAS, with the same
// answers). With rows grouped by class, the
// range of a query being its own class, this gives labelled triplets'
// targets and impostors at the flops of one search (see KNNByClass).
//
// With self true, q and ref must be the same matrix and a row is never its
// own neighbour. id gives each reference row's identifier (nil: the row
// index). Neighbours are ordered by (squared distance, identifier), and the
// results hold identifiers: in.Row(i) and out.Row(i) are query i's. A query
// with fewer than kIn references in its range gets them all, and the rest
// of its row holds −1 with distance +Inf; likewise outside it. Distances
// are exact squared Euclidean distances, as in KNN. It uses gonum's BLAS
// when impl is nil.
func KNNSplit(impl blas.Float64, q, ref *mat.Dense, ranges [][2]int, id []int, kIn, kOut int, self bool) (in, out *Neighbors, err error) {
	if q == nil || ref == nil {
		return nil, nil, fmt.Errorf("sparse: KNNSplit: nil matrix")
	}
	nq, d := q.Dims()
	nr, dr := ref.Dims()
	if d != dr {
		return nil, nil, fmt.Errorf("sparse: KNNSplit: queries have %d columns, references %d", d, dr)
	}
	if self && q != ref {
		return nil, nil, fmt.Errorf("sparse: KNNSplit: self=true needs q and ref to be the same matrix")
	}
	if kIn < 0 || kOut < 0 {
		return nil, nil, fmt.Errorf("sparse: KNNSplit: kIn = %d, kOut = %d, want ≥ 0", kIn, kOut)
	}
	if len(ranges) != nq {
		return nil, nil, fmt.Errorf("sparse: KNNSplit: %d ranges for %d queries", len(ranges), nq)
	}
	for i, r := range ranges {
		if r[0] < 0 || r[0] > r[1] || r[1] > nr {
			return nil, nil, fmt.Errorf("sparse: KNNSplit: range [%d, %d) of query %d outside the %d references", r[0], r[1], i, nr)
		}
	}
	if id != nil && len(id) != nr {
		return nil, nil, fmt.Errorf("sparse: KNNSplit: %d identifiers for %d references", len(id), nr)
	}
	qr, rr := q.RawMatrix(), ref.RawMatrix()
	if err := checkFiniteRows("query", qr.Data, qr.Stride, nq, d); err != nil {
		return nil, nil, err
	}
	if !self {
		if err := checkFiniteRows("reference", rr.Data, rr.Stride, nr, d); err != nil {
			return nil, nil, err
		}
	}
	in = &Neighbors{K: kIn, Index: make([]int, nq*kIn), Dist: make([]float64, nq*kIn)}
	out = &Neighbors{K: kOut, Index: make([]int, nq*kOut), Dist: make([]float64, nq*kOut)}
	if nq == 0 {
		return in, out, nil
	}
	if nr == 0 {
		for i := 0; i < nq; i++ {
			writeRow(in, i, 0, nil)
			writeRow(out, i, 0, nil)
		}
		return in, out, nil
	}
	if impl == nil {
		impl = gonum.Implementation{}
	}
	plan := &searchPlan{self: self, kSame: kIn, kOther: kOut, ranges: ranges}
	res := &screenResult{same: in, other: out, id: id}
	if tryPrefixScreen(impl, qr, rr, nq, nr, d, plan, res) {
		return in, out, nil
	}
	if !screen32(impl, qr, rr, nq, nr, d, plan, res) {
		screen64(impl, qr, rr, nq, nr, d, plan, res)
	}
	return in, out, nil
}

// KNNByClass finds, for every row i of x, its kSame nearest rows of the same
// class (i itself excluded) and its kOther nearest rows of the other classes:
// KNNSplit with each row's class as its range. The rows of x must be grouped
// by class: class c occupies rows [start[c], start[c+1]), with start[0] = 0
// and the last entry the number of rows. id, the ordering, the results and
// their padding are as in KNNSplit.
func KNNByClass(impl blas.Float64, x *mat.Dense, start, id []int, kSame, kOther int) (same, other *Neighbors, err error) {
	if x == nil {
		return nil, nil, fmt.Errorf("sparse: KNNByClass: nil matrix")
	}
	n, _ := x.Dims()
	if len(start) < 2 || start[0] != 0 || start[len(start)-1] != n {
		return nil, nil, fmt.Errorf("sparse: KNNByClass: class boundaries must run from 0 to the %d rows", n)
	}
	ranges := make([][2]int, n)
	for c := 0; c+1 < len(start); c++ {
		if start[c+1] < start[c] {
			return nil, nil, fmt.Errorf("sparse: KNNByClass: class boundaries decrease at class %d", c)
		}
		for i := start[c]; i < start[c+1]; i++ {
			ranges[i] = [2]int{start[c], start[c+1]}
		}
	}
	return KNNSplit(impl, x, x, ranges, id, kSame, kOther, true)
}

// checkFiniteRows reports the first row of an n×d row-major matrix that
// holds NaN or Inf.
func checkFiniteRows(what string, data []float64, stride, n, d int) error {
	for i := 0; i < n; i++ {
		for _, v := range data[i*stride : i*stride+d] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("sparse: KNN: %s row %d has NaN or Inf", what, i)
			}
		}
	}
	return nil
}
