package sparse

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// The exact k-NN search has two strategies with the same result:
//
//   - a blocked BLAS-3 screen (KNNBLAS's default): every query against every
//     reference through GEMM panels, the best k+8 candidates re-ranked by
//     exactly computed distances. Its cost is 2·nq·nr·d flops at the GEMM
//     rate, whatever the data.
//   - a k-d tree over the reference rows (this file): for data of low
//     intrinsic dimension it examines a small fraction of the references,
//     at the price of scalar loops and recursion (about 20× the GEMM screen's cost
//     per reference examined at 16 features). It pays on data such as the
//     3-D Swiss roll behind MVU's kNN graphs; on standardised letters (16
//     features) the evaluation search examines 3–12% of the references,
//     in the Euclidean and in the learned metrics, and the screen is faster
//     (BenchmarkKNNLetters).
//
// Both return the k smallest (exact distance, reference index) pairs, the
// distance computed by the same loop, so they agree bit for bit. KNNBLAS
// chooses the tree only when a pilot of evenly spaced queries shows that it
// costs less than the screen by the cost model below; otherwise (high or
// intrinsically high dimension) it keeps the GEMM screen. The choice depends
// only on the data, never on timing, so runs are reproducible.

const (
	kdLeafSize = 24   // reference rows per leaf
	kdMaxDim   = 32   // above this the tree is never tried
	kdMinRef   = 2048 // fewer references: the screen is cheap
	kdMinQuery = 2048 // fewer queries do not repay building the tree
	kdPilot    = 64   // queries in the pilot

	// The pilot's cost model, in multiply-adds per query. The tree pays
	// (distances + box distances)·(d + kdTreeOverhead): scalar loops,
	// recursion and the candidate list. The screen pays nr·(d + kdScreenOverhead) at
	// kdScreenSpeedup times the tree's rate: GEMM at full vector width,
	// then the write, re-read and scan of every screened distance, which
	// costs about as much as a 32-term dot product whatever d is. Calibrated
	// on 10,000 points (tree and screen timed against the pilot's fraction
	// of references examined, k = 3 and 6): Gaussian data in 6 and 8
	// dimensions and anisotropic Gaussians in 15 (scales 0.6ʲ…0.8ʲ, like a
	// learned metric's projection) all fit kdScreenSpeedup ≈ 52; the tree
	// breaks even near 4% of the references examined at d = 15 and 5% at
	// d = 6. The constant 56 leaves the tree a 7% margin. (It was 40, which
	// took the tree for FrobMetric's learned metric on letters: 4.3% examined,
	// and the search took twice the screen's time.) Swiss rolls (3 features)
	// examine 3% at N = 2,000 and take the tree, 3× faster.
	kdTreeOverhead   = 8
	kdScreenOverhead = 32
	kdScreenSpeedup  = 56
)

// kdTree is a k-d tree over a reordered copy of the reference rows, with a
// bounding box per node.
type kdTree struct {
	d     int
	pts   []float64 // n×d, rows in tree order
	idx   []int     // original reference index of each row in tree order
	nodes []kdNode
	box   []float64 // per node: d lower bounds then d upper bounds
}

type kdNode struct {
	lo, hi      int // rows [lo, hi) in tree order
	left, right int // child nodes; −1 for a leaf
}

func buildKDTree(ref blas64.General, nr, d int) *kdTree {
	t := &kdTree{d: d, pts: make([]float64, nr*d), idx: make([]int, nr)}
	for i := range t.idx {
		t.idx[i] = i
	}
	t.build(ref, 0, nr, make([]float64, nr))
	for i, r := range t.idx {
		copy(t.pts[i*d:(i+1)*d], ref.Data[r*ref.Stride:r*ref.Stride+d])
	}
	return t
}

// build makes the node for idx[lo:hi] and returns its number. It splits at
// the median of the dimension of largest spread. keys is scratch space of
// length ≥ hi − lo.
func (t *kdTree) build(ref blas64.General, lo, hi int, keys []float64) int {
	d := t.d
	id := len(t.nodes)
	t.nodes = append(t.nodes, kdNode{lo: lo, hi: hi, left: -1, right: -1})
	b0 := len(t.box)
	for range d {
		t.box = append(t.box, math.Inf(1))
	}
	for range d {
		t.box = append(t.box, math.Inf(-1))
	}
	bmin, bmax := t.box[b0:b0+d], t.box[b0+d:b0+2*d]
	for _, r := range t.idx[lo:hi] {
		for l, v := range ref.Data[r*ref.Stride : r*ref.Stride+d] {
			if v < bmin[l] {
				bmin[l] = v
			}
			if v > bmax[l] {
				bmax[l] = v
			}
		}
	}
	if hi-lo <= kdLeafSize {
		return id
	}
	dim, spread := 0, -1.0
	for l := range bmin {
		if s := bmax[l] - bmin[l]; s > spread {
			dim, spread = l, s
		}
	}
	if spread <= 0 {
		return id // identical points: one leaf
	}
	mid := lo + (hi-lo)/2
	rows, ks := t.idx[lo:hi], keys[:hi-lo]
	for i, r := range rows {
		ks[i] = ref.Data[r*ref.Stride+dim]
	}
	selectRows(rows, ks, mid-lo)
	left := t.build(ref, lo, mid, keys)
	right := t.build(ref, mid, hi, keys)
	t.nodes[id].left, t.nodes[id].right = left, right
	return id
}

// selectRows reorders rows (and their keys alongside) so that rows[m] is
// the row of rank m by (key, row) and no row before it ranks above it, nor
// any after it below it (quickselect with a median-of-three pivot: linear
// time, deterministic).
func selectRows(rows []int, keys []float64, m int) {
	less := func(a, b int) bool {
		return keys[a] < keys[b] || (keys[a] == keys[b] && rows[a] < rows[b])
	}
	swap := func(a, b int) {
		rows[a], rows[b] = rows[b], rows[a]
		keys[a], keys[b] = keys[b], keys[a]
	}
	lo, hi := 0, len(rows)-1
	for hi > lo {
		mid := lo + (hi-lo)/2
		if less(mid, lo) {
			swap(mid, lo)
		}
		if less(hi, lo) {
			swap(hi, lo)
		}
		if less(hi, mid) {
			swap(hi, mid)
		}
		pk, pr := keys[mid], rows[mid]
		i, j := lo, hi
		for i <= j {
			for keys[i] < pk || (keys[i] == pk && rows[i] < pr) {
				i++
			}
			for pk < keys[j] || (pk == keys[j] && pr < rows[j]) {
				j--
			}
			if i <= j {
				swap(i, j)
				i++
				j--
			}
		}
		switch {
		case m <= j:
			hi = j
		case m >= i:
			lo = i
		default:
			return
		}
	}
}

// boxDist is a lower bound on the squared distance from q to node n's box,
// shrunk by a relative 1e-12 so that rounding never prunes a row whose
// computed distance ties the current k-th.
func (t *kdTree) boxDist(n int, q []float64) float64 {
	d := t.d
	bmin := t.box[2*d*n : 2*d*n+d]
	bmax := t.box[2*d*n+d : 2*d*(n+1)]
	var s float64
	for l, v := range q {
		if e := bmin[l] - v; e > 0 {
			s += e * e
		} else if e := v - bmax[l]; e > 0 {
			s += e * e
		}
	}
	return s * (1 - 1e-12)
}

// kdQuery holds the state of one query: a candList of the best k (distance,
// reference index) pairs and the count of distances computed.
type kdQuery struct {
	q     []float64
	self  int // reference index to skip, or −1
	k     int
	heap  candList // the best k so far, worst first
	evals int      // distances computed
	boxes int      // box distances computed
}

func (s *kdQuery) worst() float64 {
	if len(s.heap) < s.k {
		return math.Inf(1)
	}
	return s.heap[0].dist
}

func (s *kdQuery) offer(c cand2) {
	if len(s.heap) < s.k {
		s.heap.push(c)
	} else if c.less(s.heap[0]) {
		s.heap.replaceTop(c)
	}
}

// search visits node n if its box can hold a better candidate, the nearer
// child first.
func (t *kdTree) search(n int, s *kdQuery, lb float64) {
	if lb > s.worst() {
		return
	}
	nd := &t.nodes[n]
	if nd.left < 0 {
		d := t.d
		for i := nd.lo; i < nd.hi; i++ {
			r := t.idx[i]
			if r == s.self {
				continue
			}
			xr := t.pts[i*d : (i+1)*d]
			var sum float64
			for l, v := range s.q {
				e := v - xr[l]
				sum += e * e
			}
			s.evals++
			if sum <= s.worst() {
				s.offer(cand2{sum, r})
			}
		}
		return
	}
	s.boxes += 2
	bl, br := t.boxDist(nd.left, s.q), t.boxDist(nd.right, s.q)
	if bl <= br {
		t.search(nd.left, s, bl)
		t.search(nd.right, s, br)
	} else {
		t.search(nd.right, s, br)
		t.search(nd.left, s, bl)
	}
}

// knn writes the k nearest references of query row qi (original index, for
// self-exclusion) into idx and dist, sorted by (distance, index), and
// returns its cost in the units of tryKDTree (kdCost).
func (t *kdTree) knn(s *kdQuery, q []float64, qi int, idx []int, dist []float64) int {
	s.q, s.self, s.heap, s.evals, s.boxes = q, qi, s.heap[:0], 0, 0
	t.search(0, s, t.boxDist(0, q))
	h := s.heap
	slices.SortFunc(h, cand2.compare)
	for j, c := range h {
		idx[j], dist[j] = c.idx, c.dist
	}
	return (s.evals + s.boxes) * (t.d + kdTreeOverhead)
}

// tryKDTree answers the query with a k-d tree when a pilot shows that the
// tree examines few references; it reports false (and leaves out untouched)
// when the GEMM screen should be used instead.
func tryKDTree(qr, rr blas64.General, nq, nr, d, k int, self bool, out *Neighbors) bool {
	if d > kdMaxDim || nr < kdMinRef || nq < kdMinQuery {
		return false
	}
	t := buildKDTree(rr, nr, d)
	selfIdx := func(i int) int {
		if self {
			return i
		}
		return -1
	}
	cost, ok := t.pilot(qr, nq, nr, d, k, self, out)
	if !ok {
		return false
	}
	step := nq / kdPilot
	ParallelRows(nq, nq*cost/kdPilot, func(lo, hi int) {
		s := &kdQuery{k: k, heap: make(candList, 0, k)}
		for i := lo; i < hi; i++ {
			if i%step == 0 && i/step < kdPilot {
				continue // answered by the pilot
			}
			t.knn(s, qr.Data[i*qr.Stride:i*qr.Stride+d], selfIdx(i), out.Index[i*k:(i+1)*k], out.Dist[i*k:(i+1)*k])
		}
	})
	return true
}

// pilot answers kdPilot evenly spaced queries with the tree, writing their
// answers into out, and reports the distances and box tests they took and
// whether the tree costs less than the screen by the cost model above.
func (t *kdTree) pilot(qr blas64.General, nq, nr, d, k int, self bool, out *Neighbors) (cost int, ok bool) {
	s := &kdQuery{k: k, heap: make(candList, 0, k)}
	budget := kdPilot * nr * (d + kdScreenOverhead) / kdScreenSpeedup
	step := nq / kdPilot
	for p := 0; p < kdPilot; p++ {
		i := p * step
		selfIdx := -1
		if self {
			selfIdx = i
		}
		cost += t.knn(s, qr.Data[i*qr.Stride:i*qr.Stride+d], selfIdx, out.Index[i*k:(i+1)*k], out.Dist[i*k:(i+1)*k])
		if cost > budget {
			return cost, false // stop the pilot as soon as the tree has lost
		}
	}
	return cost, true
}

// KDTreePays reports whether KNNBLAS would answer a k-nearest-neighbour
// self-search of x's rows from a k-d tree rather than the GEMM screen (the
// same size limits and pilot). Searches that restrict the references, such
// as labelled triplets' per-class searches, use it to choose between a tree
// per class and one class-grouped screen (KNNByClass).
func KDTreePays(x *mat.Dense, k int) bool {
	n, d := x.Dims()
	if d > kdMaxDim || n < kdMinRef || n < kdMinQuery || k <= 0 || k >= n {
		return false
	}
	xr := x.RawMatrix()
	out := &Neighbors{K: k, Index: make([]int, n*k), Dist: make([]float64, n*k)}
	_, ok := buildKDTree(xr, n, d).pilot(xr, n, n, d, k, true, out)
	return ok
}
