package sparse

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"

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
// error, E = (d + 32)·2⁻²³·(‖q‖² + max ‖r‖²) + 1e-36, covering the rounding
// of the data to float32, the norms, the d-term dot products and the final
// additions with a factor of two to spare. A reference left out then has an
// exact distance above W − E, so when the k-th exact distance among the
// candidates is below W − E the k nearest are certified. A query that fails
// the test (ties or near-ties across the screen's error) is answered again
// by an exact double-precision pass over all references; on Fashion-MNIST
// (164 features) that is a few queries in ten thousand.

// float is the element type of a screen.
type float interface{ ~float32 | ~float64 }

// screenPanels runs the screen for query blocks [blo, bhi) and calls
// done(i, list) for every query with its candidates (dist holds the
// screened distance).
//
// next(row, rv, qv, worst, from) is nextBelow, or a faster equivalent.
func screenPanels[T float](gemm func(m, nc int, a []T, lda int, b []T, ldb int, c []T, ldc int),
	next func(row, rv []T, qv, worst T, from int) int,
	qd []T, qs int, rd []T, rs int, qn, rn []T, nq, nr, cand int, self bool,
	blo, bhi int, done func(qi int, h candList)) {
	ws := getScreenWork[T]()
	defer screenWork.Put(ws)
	prod, lists := ws.prod, ws.lists
	for b := blo; b < bhi; b++ {
		q0 := b * knnQueryBlock
		q1 := min(q0+knnQueryBlock, nq)
		m := q1 - q0
		for i := range lists[:m] {
			lists[i] = lists[i][:0]
		}
		for r0 := 0; r0 < nr; r0 += knnRefBlock {
			r1 := min(r0+knnRefBlock, nr)
			nc := r1 - r0
			gemm(m, nc, qd[q0*qs:], qs, rd[r0*rs:], rs, prod, nc)
			for i := 0; i < m; i++ {
				h := &lists[i]
				qi := q0 + i
				qv := qn[qi]
				row := prod[i*nc : i*nc+nc]
				rv := rn[r0:r1]
				// worst is the largest candidate distance once the list
				// is full: next skips the farther references (most of
				// them) without a call per reference. worst is a value of
				// T (or +Inf), so comparing in T is comparing in float64.
				worst := math.Inf(1)
				if len(*h) == cand {
					worst = (*h)[0].dist
				}
				for j := next(row, rv, qv, T(worst), 0); j < nc; j = next(row, rv, qv, T(worst), j+1) {
					dist := float64(qv + rv[j] - 2*row[j])
					rj := r0 + j
					if self && rj == qi {
						continue
					}
					c := cand2{dist, rj}
					if len(*h) < cand {
						h.push(c)
						if len(*h) == cand {
							worst = (*h)[0].dist
						}
					} else if c.less((*h)[0]) {
						h.replaceTop(c)
						worst = (*h)[0].dist
					}
				}
			}
		}
		for i := 0; i < m; i++ {
			done(q0+i, lists[i])
		}
	}
}

// screenBuffers is a goroutine's scratch for screenPanels: the GEMM's
// product panel (1 MB in float64) and the candidate lists. They are pooled:
// letters' triplet generation alone runs 78 searches, and allocating (and
// zeroing) the panels anew took about 80 MB per run.
type screenBuffers[T float] struct {
	prod  []T
	lists []candList
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
	return &screenBuffers[T]{prod: make([]T, knnQueryBlock*knnRefBlock), lists: make([]candList, knnQueryBlock)}
}

// nextBelow returns the first j ≥ from with qv + rv[j] − 2·row[j] not above
// worst (the screened distance of reference j may enter the candidates), or
// len(row) if there is none.
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
// them by (distance, index) and writes the first k into out.
func rerank(qr, rr blas64.General, d, k, qi int, c candList, out *Neighbors) {
	xq := qr.Data[qi*qr.Stride : qi*qr.Stride+d]
	for t := range c {
		c[t].dist = exactSqDist(xq, rr.Data[c[t].idx*rr.Stride:c[t].idx*rr.Stride+d])
	}
	slices.SortFunc(c, cand2.compare)
	for t := 0; t < k; t++ {
		out.Index[qi*k+t] = c[t].idx
		out.Dist[qi*k+t] = c[t].dist
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
func screen64(impl blas.Float64, qr, rr blas64.General, nq, nr, d, k, cand int, self bool, out *Neighbors) {
	rnorm := rowSqNorms(rr, nr, d)
	qnorm := rnorm
	if !self {
		qnorm = rowSqNorms(qr, nq, d)
	}
	gemm := func(m, nc int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
		impl.Dgemm(blas.NoTrans, blas.Trans, m, nc, d, 1, a, lda, b, ldb, 0, c, ldc)
	}
	nblocks := (nq + knnQueryBlock - 1) / knnQueryBlock
	ParallelRows(nblocks, nq*nr*d, func(blo, bhi int) {
		screenPanels(gemm, nextBelow[float64], qr.Data, qr.Stride, rr.Data, rr.Stride, qnorm, rnorm, nq, nr, cand, self, blo, bhi,
			func(qi int, h candList) { rerank(qr, rr, d, k, qi, h, out) })
	})
}

// screen32 is the single-precision screen with its certificate; it reports
// false, doing nothing, when impl has no SGEMM or the data's magnitudes are
// outside what float32 represents with the error bound above.
func screen32(impl blas.Float64, qr, rr blas64.General, nq, nr, d, k, cand int, self bool, out *Neighbors) bool {
	s32, ok := impl.(blas.Float32)
	if !ok {
		return false
	}
	rnorm := rowSqNorms(rr, nr, d)
	qnorm := rnorm
	if !self {
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
	if !self {
		r32 = toFloat32(rr, nr, d)
	}
	qn32 := rowSqNorms32(q32, nq, d)
	rn32 := qn32
	if !self {
		rn32 = rowSqNorms32(r32, nr, d)
	}
	kappa := float64(d+32) * 0x1p-23
	gemm := func(m, nc int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
		s32.Sgemm(blas.NoTrans, blas.Trans, m, nc, d, 1, a, lda, b, ldb, 0, c, ldc)
	}
	nblocks := (nq + knnQueryBlock - 1) / knnQueryBlock
	ParallelRows(nblocks, nq*nr*d/2, func(blo, bhi int) {
		var all candList // scratch of the exact fallback
		screenPanels(gemm, nextBelow32, q32, d, r32, d, qn32, rn32, nq, nr, cand, self, blo, bhi,
			func(qi int, h candList) {
				full := len(h) == cand && cand < nr-boolInt(self)
				w := 0.0
				if full {
					w = h[0].dist // the largest screened distance kept
				}
				rerank(qr, rr, d, k, qi, h, out)
				if !full || out.Dist[qi*k+k-1] < w-(kappa*(qnorm[qi]+rmax)+1e-36) {
					return
				}
				screenFallbacks.Add(1)
				all = exactKNN(qr, rr, nr, d, k, qi, self, all, out)
			})
	})
	return true
}

// exactKNN answers query qi by exact distances to every reference.
func exactKNN(qr, rr blas64.General, nr, d, k, qi int, self bool, buf candList, out *Neighbors) candList {
	xq := qr.Data[qi*qr.Stride : qi*qr.Stride+d]
	h := buf[:0]
	for j := 0; j < nr; j++ {
		if self && j == qi {
			continue
		}
		c := cand2{exactSqDist(xq, rr.Data[j*rr.Stride:j*rr.Stride+d]), j}
		if len(h) < k {
			h.push(c)
		} else if c.less(h[0]) {
			h.replaceTop(c)
		}
	}
	slices.SortFunc(h, cand2.compare)
	for t := 0; t < k; t++ {
		out.Index[qi*k+t] = h[t].idx
		out.Dist[qi*k+t] = h[t].dist
	}
	return h
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func toFloat32(r blas64.General, n, d int) []float32 {
	out := make([]float32, n*d)
	for i := 0; i < n; i++ {
		for j, v := range r.Data[i*r.Stride : i*r.Stride+d] {
			out[i*d+j] = float32(v)
		}
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
		out[i] = float32(s)
	}
	return out
}

// push and replaceTop keep the candidates sorted from the worst down (by
// (dist, idx), descending), so h[0] is the worst, as a max-heap's root
// would be: with the dozen candidates of a search, an insertion that
// shifts a few entries costs less than a heap's sift with its unpredictable
// branches.
func (h *candList) push(c cand2) {
	s := append(*h, c)
	i := len(s) - 1
	for i > 0 && s[i-1].less(c) {
		s[i] = s[i-1]
		i--
	}
	s[i] = c
	*h = s
}

// replaceTop replaces the worst candidate h[0] by c, which must not be worse.
func (h candList) replaceTop(c cand2) {
	i := 0
	for i+1 < len(h) && c.less(h[i+1]) {
		h[i] = h[i+1]
		i++
	}
	h[i] = c
}

// screenFallbacks counts the queries the single-precision screen could not
// certify (tests read it).
var screenFallbacks atomic.Int64
