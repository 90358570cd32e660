package serve

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/psdlearn/psdlearn/internal/f64"
	"github.com/psdlearn/psdlearn/model"
	"gonum.org/v1/gonum/mat"
)

// Index answers k-nearest-neighbour queries of a metric model against a
// reference set. The reference rows are mapped into the learned space once,
// when the index is built, so that a query costs one TransformRowTo and a
// scan of Euclidean distances there (the model's metric distances).
//
// The scan is exact: a bounded heap keeps the k best rows, and a row's
// squared distance stops accumulating as soon as it reaches the k-th best
// (sums of squares only grow, also in floating point). To make that stop
// early, the index rotates the learned space onto the principal axes of
// the reference rows (an orthogonal map, which keeps every distance), so
// that the first coordinates carry the most of every distance, and stores
// the first 16 coordinates of all rows apart from the rest, contiguously:
// the scan reads them as one stream and touches the rest of a row only
// when the row is still a candidate. The distances it reports are those of
// the rotated coordinates: the metric distances up to rounding. Equal
// distances go to the lower reference row.
//
// An Index is immutable and safe for concurrent use; each goroutine brings
// its own Scratch.
type Index struct {
	model *model.Model
	// rot is the rotation R (r×r, row-major, orthonormal columns by
	// decreasing variance of the reference rows); a row z of the learned
	// space is stored as Rᵀz. nil: none (r = 1).
	rot []float64
	// The rotated reference rows, n×r, split by columns: head holds the
	// first h = min(16, r) coordinates of every row (n×h, row-major), tail
	// the other r − h (n×(r−h)).
	head, tail []float64
	n, r, h    int
	ids        []int32 // class of each row, an index into classes
	classes    []string
}

// headCols is the number of leading coordinates stored apart; a multiple
// of 4, so that the split sums assign coordinates to accumulators as one
// pass over the whole row does.
const headCols = 16

// NewIndex maps the rows of ref into m's learned space (on GOMAXPROCS
// goroutines, with Model.TransformTo, as a query is mapped), finds the
// principal axes of up to 10,000 of them, evenly spaced, and returns the
// index of the rotated rows. m must be a metric model with InputDim()
// features, ref finite with one label per row. It stops early when ctx is
// done. The index keeps m (which must not be modified afterwards) but not
// ref.X.
func NewIndex(ctx context.Context, m *model.Model, ref *Reference) (*Index, error) {
	r := m.OutputDim()
	if r == 0 {
		return nil, fmt.Errorf("%w: the model is not a metric model (no feature transform)", ErrInvalid)
	}
	if ref == nil || ref.X == nil || ref.X.IsEmpty() {
		return nil, fmt.Errorf("%w: empty reference set", ErrInvalid)
	}
	n, d := ref.X.Dims()
	if d != m.InputDim() {
		return nil, fmt.Errorf("%w: the reference set has %d features, the model expects %d", ErrInvalid, d, m.InputDim())
	}
	if len(ref.Labels) != n {
		return nil, fmt.Errorf("%w: %d reference rows, %d labels", ErrInvalid, n, len(ref.Labels))
	}
	if n > math.MaxInt32 {
		return nil, fmt.Errorf("%w: %d reference rows, at most %d", ErrInvalid, n, math.MaxInt32)
	}
	for i, l := range ref.Labels {
		if l == "" {
			return nil, fmt.Errorf("%w: reference row %d has no label", ErrInvalid, i)
		}
	}
	h := min(headCols, r)
	ix := &Index{model: m, n: n, r: r, h: h, head: make([]float64, n*h), tail: make([]float64, n*(r-h))}
	if err := ix.fitRotation(ref.X); err != nil {
		return nil, err
	}
	if err := ix.transform(ctx, ref.X); err != nil {
		return nil, err
	}
	ix.classes, ix.ids = classIDs(ref.Labels)
	return ix, nil
}

// rotationSample is the largest number of reference rows whose principal
// axes give the rotation.
const rotationSample = 10000

// fitRotation sets ix.rot to the principal axes of up to rotationSample
// evenly spaced rows of x in the learned space, by decreasing variance.
// Any orthogonal R keeps the distances; these make the leading coordinates
// carry the most of them.
func (ix *Index) fitRotation(x *mat.Dense) error {
	if ix.r == 1 {
		return nil
	}
	_, d := x.Dims()
	step := max(1, ix.n/rotationSample)
	ns := (ix.n + step - 1) / step
	sample := mat.NewDense(ns, d, nil)
	for i := 0; i < ns; i++ {
		sample.SetRow(i, x.RawRowView(i*step))
	}
	z := mat.NewDense(ns, ix.r, nil)
	if err := ix.model.TransformTo(z, sample); err != nil {
		return fmt.Errorf("serve: reference rows: %w", err)
	}
	for j := 0; j < ix.r; j++ {
		col := z.ColView(j)
		mean := mat.Sum(col) / float64(ns)
		for i := 0; i < ns; i++ {
			z.Set(i, j, z.At(i, j)-mean)
		}
	}
	var cov mat.SymDense
	cov.SymOuterK(1, z.T())
	var es mat.EigenSym
	if !es.Factorize(&cov, true) {
		return nil // keep the learned coordinates as they are
	}
	var v mat.Dense
	es.VectorsTo(&v) // columns by increasing eigenvalue
	ix.rot = make([]float64, ix.r*ix.r)
	for i := 0; i < ix.r; i++ {
		for j := 0; j < ix.r; j++ {
			ix.rot[i*ix.r+j] = v.At(i, ix.r-1-j)
		}
	}
	return nil
}

// rotate writes Rᵀz into dst (len r); without a rotation it copies z.
func (ix *Index) rotate(dst, z []float64) {
	if ix.rot == nil {
		copy(dst, z)
		return
	}
	clear(dst)
	for i, t := range z {
		if t != 0 {
			f64.Axpy(t, ix.rot[i*ix.r:(i+1)*ix.r], dst)
		}
	}
}

// transform fills ix.head and ix.tail with the rotated learned-space rows
// of x, in blocks of rows shared among GOMAXPROCS goroutines.
func (ix *Index) transform(ctx context.Context, x *mat.Dense) error {
	const block = 256
	workers := min(runtime.GOMAXPROCS(0), (ix.n+block-1)/block)
	next := make(chan int)
	errc := make(chan error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf, rot := make([]float64, block*ix.r), make([]float64, ix.r)
			for lo := range next {
				hi := min(lo+block, ix.n)
				dst := mat.NewDense(hi-lo, ix.r, buf[:(hi-lo)*ix.r])
				if err := ix.model.TransformTo(dst, x.Slice(lo, hi, 0, x.RawMatrix().Cols).(*mat.Dense)); err != nil {
					errc <- fmt.Errorf("serve: reference rows %d to %d: %w", lo, hi-1, err)
					return
				}
				t := ix.r - ix.h
				for i := lo; i < hi; i++ {
					ix.rotate(rot, dst.RawRowView(i-lo))
					copy(ix.head[i*ix.h:(i+1)*ix.h], rot[:ix.h])
					copy(ix.tail[i*t:(i+1)*t], rot[ix.h:])
				}
			}
		}()
	}
	var err error
feed:
	for lo := 0; lo < ix.n; lo += block {
		select {
		case next <- lo:
		case err = <-errc:
			break feed
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errc:
		default:
		}
	}
	return err
}

// Len returns the number of reference rows.
func (ix *Index) Len() int { return ix.n }

// Model returns the index's model.
func (ix *Index) Model() *model.Model { return ix.model }

// Classes returns the class names, in the order of the class indices
// Predict returns: sorted numerically when all are numbers, else
// lexicographically. The slice must not be modified.
func (ix *Index) Classes() []string { return ix.classes }

// Neighbor is a reference row found by a query.
type Neighbor struct {
	Row      int     // index of the row in the reference set
	Class    int     // its class, an index into Classes
	Distance float64 // the model's metric distance to the query
}

// cand is a heap entry: a reference row and its squared distance.
type cand struct {
	d2  float64
	row int32
}

// Scratch is the working memory of one query at a time: the query's
// coordinates and its neighbours. The zero value is ready to use; it grows
// to the largest model and k it has served and then allocates nothing.
// Give each goroutine its own, or take them from a sync.Pool.
type Scratch struct {
	z, zr []float64 // the query's coordinates, learned and rotated
	heap  []cand
	nb    []Neighbor
}

// Predict classifies the raw row x by a majority vote of its k nearest
// reference rows in the learned space; a tied vote goes to the lowest class
// index (the rule of psdlearn's k-NN evaluation). It returns the class and
// the neighbours, nearest first, in s's memory (valid until s is used
// again). x must be a finite row of InputDim() features (the errors of
// Model.TransformRowTo otherwise) and k in [1, Len()] (ErrInvalid).
func (ix *Index) Predict(s *Scratch, x []float64, k int) (class int, nb []Neighbor, err error) {
	if k < 1 || k > ix.n {
		return 0, nil, fmt.Errorf("%w: k = %d outside [1, %d]", ErrInvalid, k, ix.n)
	}
	if cap(s.z) < ix.r {
		s.z = make([]float64, ix.r)
	}
	z := s.z[:ix.r]
	if err := ix.model.TransformRowTo(z, x); err != nil {
		return 0, nil, err
	}
	nb = ix.search(s, z, k)
	return vote(nb), nb, nil
}

// Search returns the k nearest reference rows of z, a point already in the
// learned space (OutputDim() coordinates, finite), nearest first, in s's
// memory. k must be in [1, Len()].
func (ix *Index) Search(s *Scratch, z []float64, k int) ([]Neighbor, error) {
	if k < 1 || k > ix.n {
		return nil, fmt.Errorf("%w: k = %d outside [1, %d]", ErrInvalid, k, ix.n)
	}
	if len(z) != ix.r {
		return nil, fmt.Errorf("%w: a point of %d coordinates, the index has %d", ErrInvalid, len(z), ix.r)
	}
	for j, v := range z {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: coordinate %d is %v", ErrInvalid, j, v)
		}
	}
	return ix.search(s, z, k), nil
}

// rotated returns Rᵀz in s's memory.
func (ix *Index) rotated(s *Scratch, z []float64) []float64 {
	if cap(s.zr) < ix.r {
		s.zr = make([]float64, ix.r)
	}
	zr := s.zr[:ix.r]
	ix.rotate(zr, z)
	return zr
}

// search rotates the learned-space point z, scans every reference row
// with a bounded max-heap of the k best (squared distance, row) pairs and
// returns them sorted, nearest first.
func (ix *Index) search(s *Scratch, z []float64, k int) []Neighbor {
	if cap(s.heap) < k {
		s.heap, s.nb = make([]cand, k), make([]Neighbor, k)
	}
	z = ix.rotated(s, z)
	h := s.heap[:k]
	for i := range h {
		h[i] = cand{ix.sqDist(z, i, math.Inf(1)), int32(i)}
	}
	for i := k/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	worst := h[0].d2
	for i := k; i < ix.n; i++ {
		// A row at the worst distance loses: its index is higher.
		if d2 := ix.sqDist(z, i, worst); d2 < worst {
			h[0] = cand{d2, int32(i)}
			siftDown(h, 0)
			worst = h[0].d2
		}
	}
	// Heap sort: the worst goes to the end.
	for end := k - 1; end > 0; end-- {
		h[0], h[end] = h[end], h[0]
		siftDown(h[:end], 0)
	}
	nb := s.nb[:k]
	for i, c := range h {
		nb[i] = Neighbor{Row: int(c.row), Class: int(ix.ids[c.row]), Distance: math.Sqrt(c.d2)}
	}
	return nb
}

// sqDist returns ‖z − row i‖² as sqDistFrom sums it over the whole row, or
// some value ≥ bound as soon as a partial sum reaches it: first over the
// row's head, then, if it is still below, over its tail.
func (ix *Index) sqDist(z []float64, i int, bound float64) float64 {
	if ix.h < headCols {
		return sqDistFrom(z, ix.head[i*ix.h:(i+1)*ix.h], 0, 0, 0, 0, bound)
	}
	q, x := z[:headCols:headCols], ix.head[i*headCols:(i+1)*headCols:(i+1)*headCols]
	var s0, s1, s2, s3 float64
	for j := 0; j < headCols; j += 4 {
		t0, t1, t2, t3 := q[j]-x[j], q[j+1]-x[j+1], q[j+2]-x[j+2], q[j+3]-x[j+3]
		s0 += t0 * t0
		s1 += t1 * t1
		s2 += t2 * t2
		s3 += t3 * t3
	}
	if p := (s0 + s1) + (s2 + s3); p >= bound || ix.r == headCols {
		return p
	}
	t := ix.r - headCols
	return sqDistFrom(z[headCols:], ix.tail[i*t:(i+1)*t], s0, s1, s2, s3, bound)
}

// worse reports whether a ranks after b: farther, or as far with a higher row.
func worse(a, b cand) bool { return a.d2 > b.d2 || a.d2 == b.d2 && a.row > b.row }

// siftDown restores the max-heap order (by worse) below i.
func siftDown(h []cand, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && worse(h[r], h[l]) {
			c = r
		}
		if !worse(h[c], h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// sqDistFrom returns s + ‖a − b‖², with s the sum of four accumulators
// s0 … s3 of a previous part of the vectors: element i goes into
// accumulator i mod 4 (a part must start at a multiple of 4), the last
// len(a) mod 4 into the first, and the sum is (s0 + s1) + (s2 + s3) — the
// order of f64.SqDist over the whole vectors. It returns a partial sum
// ≥ bound as soon as one, checked every 16 elements, reaches bound:
// rounding is monotone, so the full sum could not be smaller.
func sqDistFrom(a, b []float64, s0, s1, s2, s3, bound float64) float64 {
	b = b[:len(a)]
	i := 0
	for ; i+16 <= len(a); i += 16 {
		x, y := a[i:i+16:i+16], b[i:i+16:i+16]
		for j := 0; j < 16; j += 4 {
			t0, t1, t2, t3 := x[j]-y[j], x[j+1]-y[j+1], x[j+2]-y[j+2], x[j+3]-y[j+3]
			s0 += t0 * t0
			s1 += t1 * t1
			s2 += t2 * t2
			s3 += t3 * t3
		}
		if p := (s0 + s1) + (s2 + s3); p >= bound {
			return p
		}
	}
	for ; i+4 <= len(a); i += 4 {
		t0, t1, t2, t3 := a[i]-b[i], a[i+1]-b[i+1], a[i+2]-b[i+2], a[i+3]-b[i+3]
		s0 += t0 * t0
		s1 += t1 * t1
		s2 += t2 * t2
		s3 += t3 * t3
	}
	for ; i < len(a); i++ {
		t := a[i] - b[i]
		s0 += t * t
	}
	return (s0 + s1) + (s2 + s3)
}

// row returns the rotated reference row i (for tests).
func (ix *Index) row(i int) []float64 {
	t := ix.r - ix.h
	return append(append([]float64(nil), ix.head[i*ix.h:(i+1)*ix.h]...), ix.tail[i*t:(i+1)*t]...)
}

// vote returns the majority class of nb; a tie goes to the lowest class.
func vote(nb []Neighbor) int {
	best, count := -1, 0
	for _, a := range nb {
		c := 0
		for _, b := range nb {
			if b.Class == a.Class {
				c++
			}
		}
		if c > count || c == count && a.Class < best {
			best, count = a.Class, c
		}
	}
	return best
}
