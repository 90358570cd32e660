package sparse

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/psdlearn/psdlearn/internal/f32"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// The GEMM screen of the exact k-NN search. Every query block is compared
// with every reference panel through one GEMM (‖q‖² + ‖r‖² − 2 q·r); the
// best cand = k + knnSlack candidates of each query by this screened
// distance are kept in a short sorted list and re-ranked by exactly
// computed distances.
//
// The screen runs in single precision when the BLAS has SGEMM and the data's
// magnitudes allow it: half the memory traffic and twice the GEMM rate. It
// stays exact. Let W be the largest screened distance kept for a query (every
// reference left out screened at W or more) and E a bound on the screen's
// error on the pair of q and r, E = (d + 32)·2⁻²³·(‖q‖² + ‖r‖²) + 1e-36,
// covering the rounding of the data to float32, the norms, the d-term dot
// products and the final additions with a factor of two to spare. Every
// reference left out then has an exact distance above a bound B derived from
// W and E (leftOutBound), so when the k-th exact distance among the
// candidates is below B the k nearest are certified. A query that fails
// the test (ties or near-ties across the screen's error) is answered again
// by an exact double-precision pass over all references; on Fashion-MNIST
// (164 features) that is a few queries in ten thousand.

// float is the element type of a screen.
type float interface{ ~float32 | ~float64 }

// searchPlan says which candidate lists a screen keeps. A plain search keeps
// one list per query (other) of kOther + knnSlack candidates. A split search
// (KNNSplit, KNNByClass) keeps two: the nearest references in the query's
// range [ranges[qi][0], ranges[qi][1]) and the nearest outside it.
type searchPlan struct {
	self          bool
	kSame, kOther int      // neighbours wanted (a plain search: kOther)
	ranges        [][2]int // split search: each query's range (nil: a plain search)
}

// sameRange returns query qi's range ([0, 0) in a plain search).
func (p *searchPlan) sameRange(qi int) (lo, hi int) {
	if p.ranges == nil {
		return 0, 0
	}
	return p.ranges[qi][0], p.ranges[qi][1]
}

// avail returns how many references query qi has in its range and outside
// it (itself excluded in a self-search).
func (p *searchPlan) avail(qi, nr int) (same, other int) {
	lo, hi := p.sameRange(qi)
	same, other = hi-lo, nr-(hi-lo)
	if p.self {
		if qi >= lo && qi < hi {
			same--
		} else {
			other--
		}
	}
	return same, other
}

// want returns the neighbours wanted for query qi in its range and outside
// it, each at most what there is.
func (p *searchPlan) want(qi, nr int) (same, other int) {
	as, ao := p.avail(qi, nr)
	return min(p.kSame, as), min(p.kOther, ao)
}

// caps returns the sizes of query qi's candidate lists and how many
// references each could hold at most.
func (p *searchPlan) caps(qi, nr int) (same, other, availSame, availOther int) {
	availSame, availOther = p.avail(qi, nr)
	return min(p.kSame+knnSlack, availSame), min(p.kOther+knnSlack, availOther), availSame, availOther
}

// screenPanels runs the screen for query blocks [blo, bhi) and calls
// done(i, same, other) for every query with its candidates (dist holds the
// screened distance; same is empty in a plain search).
//
// next(row, rv, qv, worst, from) is nextBelow, or a faster equivalent.
func screenPanels[T float](gemm func(m, nc int, a []T, lda int, b []T, ldb int, c []T, ldc int),
	next func(row, rv []T, qv, worst T, from int) int,
	qd []T, qs int, rd []T, rs int, qn, rn []T, nq, nr int, plan *searchPlan,
	blo, bhi int, done func(qi int, same, other candList)) {
	ws := getScreenWork[T]()
	defer screenWork.Put(ws)
	prod, same, other := ws.prod, ws.same, ws.other
	for b := blo; b < bhi; b++ {
		q0 := b * knnQueryBlock
		q1 := min(q0+knnQueryBlock, nq)
		m := q1 - q0
		for i := range m {
			same[i], other[i] = same[i][:0], other[i][:0]
		}
		for r0 := 0; r0 < nr; r0 += knnRefBlock {
			r1 := min(r0+knnRefBlock, nr)
			nc := r1 - r0
			gemm(m, nc, qd[q0*qs:], qs, rd[r0*rs:], rs, prod, nc)
			for i := 0; i < m; i++ {
				scanQuery(next, prod[i*nc:i*nc+nc], rn[r0:r1], qn[q0+i], r0, q0+i, nr, plan, &same[i], &other[i])
			}
		}
		for i := 0; i < m; i++ {
			done(q0+i, same[i], other[i])
		}
	}
}

// scanSegment offers the references r0+lo … r0+hi−1 of one product row to
// the candidate list h of at most capacity entries.
func scanSegment[T float](next func(row, rv []T, qv, worst T, from int) int,
	row, rv []T, qv T, lo, hi, r0, qi int, self bool, h *candList, capacity int) {
	if capacity == 0 || lo >= hi {
		return
	}
	// worst is the largest candidate distance once the list is full: next
	// skips the farther references (most of them) without a call per
	// reference. worst is a value of T (or +Inf), so comparing in T is
	// comparing in float64.
	worst := math.Inf(1)
	if len(*h) == capacity {
		worst = (*h)[0].dist
	}
	row, rv = row[:hi], rv[:hi]
	for j := next(row, rv, qv, T(worst), lo); j < hi; j = next(row, rv, qv, T(worst), j+1) {
		rj := r0 + j
		if self && rj == qi {
			continue
		}
		c := cand2{float64(qv + rv[j] - 2*row[j]), rj}
		if len(*h) < capacity {
			h.push(c)
			if len(*h) == capacity {
				worst = (*h)[0].dist
			}
		} else if c.less((*h)[0]) {
			h.replaceTop(c)
			worst = (*h)[0].dist
		}
	}
}

// screenBuffers is a goroutine's scratch for screenPanels: the GEMM's
// product panel (1 MB in float64) and the candidate lists. They are pooled:
// letters' triplet generation alone runs 78 searches, and allocating (and
// zeroing) the panels anew took about 80 MB per run.
type screenBuffers[T float] struct {
	prod        []T
	same, other []candList
}

var screenWork sync.Pool // *screenBuffers[float32] or *screenBuffers[float64]

func getScreenWork[T float]() *screenBuffers[T] {
	for {
		v := screenWork.Get()
		if v == nil {
			break
		}
		if ws, ok := v.(*screenBuffers[T]); ok {
			return ws
		}
		// The other precision's buffers: let them go (rare: one search
		// falls back to float64).
	}
	return &screenBuffers[T]{prod: make([]T, knnQueryBlock*knnRefBlock),
		same: make([]candList, knnQueryBlock), other: make([]candList, knnQueryBlock)}
}

// nextBelow returns the first j ≥ from with qv + rv[j] − 2·row[j] not above
// worst (the screened distance of reference j may enter the candidates), or
// len(row) if there is none. NaN passes: data so large that the screened
// distances overflow are then still ranked by their exact distances.
func nextBelow[T float](row, rv []T, qv, worst T, from int) int {
	rv = rv[:len(row)]
	for j := from; j < len(row); j++ {
		if !(qv+rv[j]-2*row[j] > worst) {
			return j
		}
	}
	return len(row)
}

// rerank replaces the candidates' screened distances by exact ones, sorts
// them by (distance, identifier) and writes the first k into row qi of out,
// padding it with −1 and +Inf up to out.K. id maps a reference row to its
// identifier (nil: the row itself).
func rerank(qr, rr blas64.General, d, k, qi int, c candList, id []int, out *Neighbors) {
	xq := qr.Data[qi*qr.Stride : qi*qr.Stride+d]
	for t := range c {
		c[t].dist = exactSqDist(xq, rr.Data[c[t].idx*rr.Stride:c[t].idx*rr.Stride+d])
		if id != nil {
			c[t].idx = id[c[t].idx]
		}
	}
	slices.SortFunc(c, cand2.compare)
	writeRow(out, qi, k, c)
}

// writeRow writes the first k of the sorted candidates c into row qi of
// out and pads the row.
func writeRow(out *Neighbors, qi, k int, c candList) {
	K := out.K
	for t := 0; t < K; t++ {
		if t < k {
			out.Index[qi*K+t], out.Dist[qi*K+t] = c[t].idx, c[t].dist
		} else {
			out.Index[qi*K+t], out.Dist[qi*K+t] = -1, math.Inf(1)
		}
	}
}

// exactSqDist is the squared distance every strategy ranks by.
func exactSqDist(a, b []float64) float64 {
	var s float64
	for l, v := range a {
		e := v - b[l]
		s += e * e
	}
	return s
}

// screen64 is the double-precision screen.
func screen64(impl blas.Float64, qr, rr blas64.General, nq, nr, d int, plan *searchPlan, res *screenResult) {
	rnorm := rowSqNorms(rr, nr, d)
	qnorm := rnorm
	if !plan.self {
		qnorm = rowSqNorms(qr, nq, d)
	}
	gemm := func(m, nc int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
		impl.Dgemm(blas.NoTrans, blas.Trans, m, nc, d, 1, a, lda, b, ldb, 0, c, ldc)
	}
	done := func(qi int, same, other candList) {
		ks, ko := plan.want(qi, nr)
		if res.same != nil {
			rerank(qr, rr, d, ks, qi, same, res.id, res.same)
		}
		rerank(qr, rr, d, ko, qi, other, res.id, res.other)
	}
	if plan.self {
		same, other := symScreen(gemm, nextBelow[float64], qr.Data, qr.Stride, rnorm, nr, plan)
		ParallelRows(nq, nq*d*(plan.kSame+plan.kOther+2*knnSlack), func(lo, hi int) {
			for qi := lo; qi < hi; qi++ {
				done(qi, same[qi], other[qi])
			}
		})
		return
	}
	nblocks := (nq + knnQueryBlock - 1) / knnQueryBlock
	ParallelRows(nblocks, nq*nr*d, func(blo, bhi int) {
		screenPanels(gemm, nextBelow[float64], qr.Data, qr.Stride, rr.Data, rr.Stride, qnorm, rnorm, nq, nr, plan, blo, bhi, done)
	})
}

// screenResult is where a screen writes its answers: other for a plain
// search; same and other for a split one, whose neighbours are identified
// by id (nil: the row index).
type screenResult struct {
	same, other *Neighbors
	id          []int
}

// screen32 is the single-precision screen with its certificate; it reports
// false, doing nothing, when impl has no SGEMM or the data's magnitudes are
// outside what float32 represents with the error bound above.
func screen32(impl blas.Float64, qr, rr blas64.General, nq, nr, d int, plan *searchPlan, res *screenResult) bool {
	s32, ok := impl.(blas.Float32)
	if !ok {
		return false
	}
	rnorm := rowSqNorms(rr, nr, d)
	qnorm := rnorm
	if !plan.self {
		qnorm = rowSqNorms(qr, nq, d)
	}
	rmax := 0.0
	for _, v := range rnorm {
		rmax = math.Max(rmax, v)
	}
	qmax := 0.0
	for _, v := range qnorm {
		qmax = math.Max(qmax, v)
	}
	// Squared norms within float32's range with a wide margin (the
	// screened sums stay finite); data near the origin are handled by
	// the absolute term of E and the fallback.
	if rmax > 1e30 || qmax > 1e30 {
		return false
	}
	q32 := toFloat32(qr, nq, d)
	r32 := q32
	if !plan.self {
		r32 = toFloat32(rr, nr, d)
	}
	qn32 := rowSqNorms32(q32, nq, d)
	rn32 := qn32
	if !plan.self {
		rn32 = rowSqNorms32(r32, nr, d)
	}
	kappa := float64(d+32) * 0x1p-23
	gemm := func(m, nc int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
		s32.Sgemm(blas.NoTrans, blas.Trans, m, nc, d, 1, a, lda, b, ldb, 0, c, ldc)
	}
	// newDone returns a goroutine's answer to one query from its
	// candidates, with its own scratch.
	newDone := func() func(qi int, same, other candList) {
		var all candList // scratch of the exact fallback
		// finish re-ranks one list of query qi, kept from the references
		// in [lo, hi) (outside it when outside is set), and answers the
		// query again exactly when the screen cannot certify it.
		finish := func(qi int, h candList, k, capacity, avail, lo, hi int, outside bool, out *Neighbors) {
			full := len(h) == capacity && capacity < avail
			w := 0.0
			if full {
				w = h[0].dist // the largest screened distance kept
			}
			rerank(qr, rr, d, k, qi, h, res.id, out)
			if !full || out.Dist[qi*out.K+k-1] < leftOutBound(w, qnorm[qi], rmax, kappa) {
				return
			}
			screenFallbacks.Add(1)
			all = exactKNN(qr, rr, d, k, qi, lo, hi, outside, plan.self, res.id, all, out)
		}
		return func(qi int, same, other candList) {
			ks, ko := plan.want(qi, nr)
			cs, co, as, ao := plan.caps(qi, nr)
			lo, hi := plan.sameRange(qi)
			if res.same != nil && ks > 0 {
				finish(qi, same, ks, cs, as, lo, hi, false, res.same)
			} else if res.same != nil {
				writeRow(res.same, qi, 0, nil)
			}
			if ko > 0 {
				finish(qi, other, ko, co, ao, lo, hi, true, res.other)
			} else {
				writeRow(res.other, qi, 0, nil)
			}
		}
	}
	if plan.self {
		same, other := symScreen(gemm, nextBelow32, q32, d, qn32, nq, plan)
		ParallelRows(nq, nq*d*(plan.kSame+plan.kOther+2*knnSlack), func(lo, hi int) {
			done := newDone()
			for qi := lo; qi < hi; qi++ {
				done(qi, same[qi], other[qi])
			}
		})
		return true
	}
	nblocks := (nq + knnQueryBlock - 1) / knnQueryBlock
	ParallelRows(nblocks, nq*nr*d/2, func(blo, bhi int) {
		screenPanels(gemm, nextBelow32, q32, d, r32, d, qn32, rn32, nq, nr, plan, blo, bhi, newDone())
	})
	return true
}

// exactKNN answers query qi by exact distances to every reference in
// [lo, hi) (outside it when outside is set), identified by id.
func exactKNN(qr, rr blas64.General, d, k, qi, lo, hi int, outside, self bool, id []int, buf candList, out *Neighbors) candList {
	xq := qr.Data[qi*qr.Stride : qi*qr.Stride+d]
	h := buf[:0]
	offer := func(j int) {
		if self && j == qi {
			return
		}
		ident := j
		if id != nil {
			ident = id[j]
		}
		h.offer(cand2{exactSqDist(xq, rr.Data[j*rr.Stride:j*rr.Stride+d]), ident}, k)
	}
	if outside {
		for j := 0; j < lo; j++ {
			offer(j)
		}
		for j := hi; j < rr.Rows; j++ {
			offer(j)
		}
	} else {
		for j := lo; j < hi; j++ {
			offer(j)
		}
	}
	slices.SortFunc(h, cand2.compare)
	writeRow(out, qi, k, h)
	return h
}

func toFloat32(r blas64.General, n, d int) []float32 {
	out := make([]float32, n*d)
	for i := 0; i < n; i++ {
		f32.FromFloat64(out[i*d:i*d+d], r.Data[i*r.Stride:i*r.Stride+d])
	}
	return out
}

func rowSqNorms32(x []float32, n, d int) []float32 {
	out := make([]float32, n)
	for i := 0; i < n; i++ {
		var s float64
		for _, v := range x[i*d : (i+1)*d] {
			s += float64(v) * float64(v)
		}
		out[i] = f32.Round(s)
	}
	return out
}

// offer offers c to h, which keeps the k best candidates (worst first).
func (h *candList) offer(c cand2, k int) {
	if len(*h) < k {
		h.push(c)
	} else if k > 0 && c.less((*h)[0]) {
		h.replaceTop(c)
	}
}

// push and replaceTop keep h[0] the worst candidate (by (dist, idx)), the
// root of a max-heap. A list of at most sortedMax candidates is kept sorted
// from the worst down: with the dozen candidates of a k-NN search, an
// insertion that shifts a few entries costs less than a heap's sift with
// its unpredictable branches. A longer list is a binary max-heap (a sorted
// list is one, so a list turns into a heap as it grows past sortedMax):
// LMNN's impostor search keeps 88, and its sorted insertions took longer
// than the GEMM. A list only grows or is emptied, so one of at most
// sortedMax entries has only ever been sorted. Readers that need the order
// sort the list.
const sortedMax = 24

func (h *candList) push(c cand2) {
	s := append(*h, c)
	i := len(s) - 1
	if i >= sortedMax {
		// Sift up.
		for i > 0 {
			p := (i - 1) / 2
			if !s[p].less(c) {
				break
			}
			s[i] = s[p]
			i = p
		}
		s[i] = c
		*h = s
		return
	}
	for i > 0 && s[i-1].less(c) {
		s[i] = s[i-1]
		i--
	}
	s[i] = c
	*h = s
}

// replaceTop replaces the worst candidate h[0] by c, which must not be worse.
func (h candList) replaceTop(c cand2) {
	n := len(h)
	i := 0
	if n > sortedMax {
		// Sift down.
		for {
			l := 2*i + 1
			if l >= n {
				break
			}
			if r := l + 1; r < n && h[l].less(h[r]) {
				l = r
			}
			if !c.less(h[l]) {
				break
			}
			h[i] = h[l]
			i = l
		}
		h[i] = c
		return
	}
	for i+1 < n && c.less(h[i+1]) {
		h[i] = h[i+1]
		i++
	}
	h[i] = c
}

// leftOutBound is a lower bound on the exact squared distance of every
// reference a query with squared norm qn left out of its screened list, w the
// largest screened distance kept, given the per-pair screen error
// κ·(‖q‖² + ‖r‖²) + 1e-36 and rmax the largest ‖r‖². It is the larger of
// two bounds. The uniform one, w − κ(‖q‖² + rmax) − 1e-36, is tight when the
// references have similar norms. The relative one does not see rmax: with
// δ the exact distance, ‖r‖² ≤ (‖q‖ + √δ)² ≤ 2‖q‖² + 2δ, so the error is at
// most κ(3‖q‖² + 2δ) + 1e-36 and a screened value of at least w gives
// δ ≥ (w − 3κ‖q‖² − 1e-36)/(1 + 2κ). Standardised raw pixels need it: a
// pixel lit in a handful of images standardises to hundreds, so rmax is
// hundreds of times a typical norm, and the uniform bound sent 6,782 of
// MNIST's 100,000 candidate lists (784 features) to the exact fallback.
func leftOutBound(w, qn, rmax, kappa float64) float64 {
	return max(w-(kappa*(qn+rmax)+1e-36), (w-3*kappa*qn-1e-36)/(1+2*kappa))
}

// screenFallbacks counts the queries the single-precision screen could not
// certify (tests read it).
var screenFallbacks atomic.Int64
