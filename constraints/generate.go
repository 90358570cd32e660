package constraints

import (
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// Triplets generates the LMNN-style triplets of the experimental protocol on
// the rows of x with class labels y (values ≥ 0): for every point i its k
// nearest same-class points (targets j, excluding i itself) crossed with its
// k nearest points of any other class (impostors l), giving k² triplets
// (i, j, l) per point — 9 with k = 3. Neighbours are exact squared Euclidean
// nearest neighbours from one class-grouped search over all pairs
// (sparse.KNNByClass: BLAS-blocked, never an N×N matrix), or, for data of
// low intrinsic dimension with classes of 2,048 points or more, from
// per-class k-d tree searches. Equidistant targets and impostors are taken by
// lower row index; on the per-class path only, exact ties between two points
// of different other classes on the same side of the point's class (in label
// order) are resolved by label first.
//
// Order is deterministic: by i ascending, then target by ascending distance,
// then impostor by ascending distance.
//
// Small classes: a point whose class has s ≤ k points gets the s − 1 others
// as targets (none when s = 1, so it contributes no triplet); a point with
// fewer than k points outside its class gets them all as impostors. It is an
// error when k ≤ 0, when labels and rows disagree, when x holds NaN or Inf,
// when there is a single class (no impostors) or when no triplet results.
func Triplets(x *mat.Dense, y []int, k int) (*TripletSet, error) {
	return TripletsBLAS(nil, x, y, k)
}

// TripletsBLAS is Triplets with the distance GEMMs done by impl (for example
// a backend's BLAS()); nil means gonum's BLAS.
func TripletsBLAS(impl BLAS, x *mat.Dense, y []int, k int) (*TripletSet, error) {
	if x == nil {
		return nil, fmt.Errorf("%w: nil data", ErrInvalid)
	}
	n, d := x.Dims()
	if k <= 0 {
		return nil, fmt.Errorf("%w: k = %d, want k ≥ 1", ErrInvalid, k)
	}
	if len(y) != n {
		return nil, fmt.Errorf("%w: %d labels for %d points", ErrInvalid, len(y), n)
	}
	raw := x.RawMatrix()
	for i := 0; i < n; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+d] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: x[%d,%d] = %v", ErrInvalid, i, j, v)
			}
		}
	}
	if err := engine.CheckDistances("data", x); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	members, err := classMembers(y)
	if err != nil {
		return nil, err
	}
	if len(members) < 2 {
		return nil, fmt.Errorf("%w: triplets need at least two classes, the labels have %d", ErrInvalid, len(members))
	}
	// One copy of x with the rows grouped by class: each class is then a
	// contiguous block (a view for the target search) and the other classes
	// are the two blocks around it, so no per-class copies are made.
	order := make([]int, 0, n) // sorted position → original row
	starts := make([]int, len(members)+1)
	for c, idx := range members {
		starts[c] = len(order)
		order = append(order, idx...)
	}
	starts[len(members)] = n
	xs := subRows(x, order)
	targets := make([][]int, n)   // per point, ascending distance
	impostors := make([][]int, n) // per point, ascending distance
	largest := 0
	for _, m := range members {
		largest = max(largest, len(m))
	}
	if largest >= kdMinClass && sparse.KDTreePays(xs, k) {
		if err := perClassNeighbors(impl, xs, order, starts, k, targets, impostors); err != nil {
			return nil, err
		}
	} else {
		// One class-grouped search over all pairs (the usual case: high or
		// intrinsically high dimension, or small classes).
		same, other, err := sparse.KNNByClass(impl, xs, starts, order, k, k)
		if err != nil {
			return nil, fmt.Errorf("constraints: targets and impostors: %w", err)
		}
		for a, i := range order {
			targets[i] = validNeighbors(same, a)
			impostors[i] = validNeighbors(other, a)
		}
	}
	var ts []Triplet
	for i := 0; i < n; i++ {
		for _, j := range targets[i] {
			for _, l := range impostors[i] {
				ts = append(ts, Triplet{I: i, J: j, K: l})
			}
		}
	}
	if len(ts) == 0 {
		return nil, fmt.Errorf("%w: no triplets: every class has a single point", ErrInvalid)
	}
	return newTripletSet(n, ts)
}

// kdMinClass is the class size below which per-class k-d tree searches do
// not pay (sparse's kdMinQuery: a smaller class is searched by the screen
// anyway).
const kdMinClass = 2048

// perClassNeighbors fills targets and impostors (indexed by original row)
// with one search per class and side, each of which may take a k-d tree:
// for data of low intrinsic dimension with large classes (sparse.KDTreePays)
// this costs far less than the N² screen of KNNByClass.
func perClassNeighbors(impl BLAS, xs *mat.Dense, order, starts []int, k int, targets, impostors [][]int) error {
	n, d := xs.Dims()
	for c := 0; c+1 < len(starts); c++ {
		lo, hi := starts[c], starts[c+1]
		in := xs.Slice(lo, hi, 0, d).(*mat.Dense)
		if kt := min(k, hi-lo-1); kt > 0 {
			nb, err := knn(impl, in, in, kt, true)
			if err != nil {
				return fmt.Errorf("constraints: targets: %w", err)
			}
			for a := 0; a < hi-lo; a++ {
				row, _ := nb.Row(a)
				t := make([]int, kt)
				for q, r := range row {
					t[q] = order[lo+r]
				}
				targets[order[lo+a]] = t
			}
		}
		ki := min(k, n-(hi-lo))
		var before, after *sparse.Neighbors
		var err error
		if kb := min(ki, lo); kb > 0 {
			if before, err = knn(impl, in, xs.Slice(0, lo, 0, d).(*mat.Dense), kb, false); err != nil {
				return fmt.Errorf("constraints: impostors: %w", err)
			}
		}
		if ka := min(ki, n-hi); ka > 0 {
			if after, err = knn(impl, in, xs.Slice(hi, n, 0, d).(*mat.Dense), ka, false); err != nil {
				return fmt.Errorf("constraints: impostors: %w", err)
			}
		}
		for a := 0; a < hi-lo; a++ {
			impostors[order[lo+a]] = mergeNearest(ki, before, a, order[:lo], after, a, order[hi:])
		}
	}
	return nil
}

// validNeighbors returns row a's neighbour identifiers, without the padding
// of a class too small to give them all.
func validNeighbors(nb *sparse.Neighbors, a int) []int {
	idx, _ := nb.Row(a)
	out := make([]int, 0, len(idx))
	for _, j := range idx {
		if j >= 0 {
			out = append(out, j)
		}
	}
	return out
}

// BLAS is the level-3 BLAS used for the neighbour searches, such as
// engine.Backend.BLAS().
type BLAS = blas.Float64

// mergeNearest merges the neighbour lists of query a in two searches (either
// may be nil), whose reference rows map to original rows by ra and rb, and
// returns the k nearest original rows by (distance, original row).
func mergeNearest(k int, na *sparse.Neighbors, a int, ra []int, nb *sparse.Neighbors, b int, rb []int) []int {
	var ia, ib []int
	var da, db []float64
	if na != nil {
		ia, da = na.Row(a)
	}
	if nb != nil {
		ib, db = nb.Row(b)
	}
	out := make([]int, 0, k)
	p, q := 0, 0
	for len(out) < k && (p < len(ia) || q < len(ib)) {
		takeA := q >= len(ib)
		if p < len(ia) && q < len(ib) {
			takeA = da[p] < db[q] || (da[p] == db[q] && ra[ia[p]] < rb[ib[q]])
		}
		if takeA {
			out = append(out, ra[ia[p]])
			p++
		} else {
			out = append(out, rb[ib[q]])
			q++
		}
	}
	return out
}

func knn(impl BLAS, q, ref *mat.Dense, k int, self bool) (*sparse.Neighbors, error) {
	if impl == nil {
		return sparse.KNN(q, ref, k, self)
	}
	return sparse.KNNBLAS(impl, q, ref, k, self)
}

// classMembers groups row indices by label (ascending within a class).
func classMembers(y []int) ([][]int, error) {
	maxY := -1
	for i, c := range y {
		if c < 0 {
			return nil, fmt.Errorf("%w: label %d of point %d is negative", ErrInvalid, c, i)
		}
		maxY = max(maxY, c)
	}
	members := make([][]int, maxY+1)
	for i, c := range y {
		members[c] = append(members[c], i)
	}
	// Drop label values that no point uses.
	out := members[:0]
	for _, m := range members {
		if len(m) > 0 {
			out = append(out, m)
		}
	}
	return out, nil
}

// subRows copies the given rows of x into a new matrix.
func subRows(x *mat.Dense, rows []int) *mat.Dense {
	_, d := x.Dims()
	out := mat.NewDense(len(rows), d, nil)
	for a, r := range rows {
		out.SetRow(a, x.RawRowView(r))
	}
	return out
}
