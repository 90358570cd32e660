package sparse

import (
	"math"
	"slices"

	"github.com/psdlearn/psdlearn/internal/f32"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// The prefix screen of a k-NN search. A squared distance is a sum over the
// coordinates, so its sum over the first t of them (in any fixed order) is
// a lower bound: a reference whose prefix distance already exceeds a
// query's k-th nearest distance cannot be among its k nearest. On data
// whose variance is concentrated in a few coordinates (principal
// components; the embedding X·L of a learned metric) a short prefix rules
// out nearly every reference: on MNIST's 164 principal components, the
// first 32 leave 0.45% of the training points within the third-nearest
// distance of a validation point, the first 48 0.12%.
//
// The search orders the coordinates by the references' variance and runs
// the single-precision GEMM of the plain screen (knnscreen.go) over the
// first t of them only. Every list of a query (one in a plain search; the
// query's range and the rest in a split one, searchPlan) keeps its k
// nearest found so far by exact distance, with U the k-th of them; the
// first segment of references a list sees seeds it with its k smallest
// screened prefix distances. A reference is then checked only if its
// screened prefix distance, less the screen's error bound (leftOutBound
// with t for the dimension), is at most U; a checked reference adds its
// float32 distance over the other coordinates, less that sum's error
// bound (prefixKappa), and only if the total is still at most U is its
// exact distance computed and offered.
//
// A reference left out has an exact distance above U when it is left out,
// so above the final k-th distance: the answer is the exact k nearest by
// (distance, identifier), the plain screen's, with no fallback. A pilot
// of prefixPilot queries counts the checks each prefix length would take
// and picks the length by a cost model against the plain screen (whose
// self-searches compute each pair once, symScreen), or declines.

// Prefix screen parameters.
const (
	prefixMinDim     = 48   // fewer columns: the plain screen
	prefixMinQueries = 512  // fewer queries do not pay for the pilot
	prefixMinRefs    = 4096 // nor fewer references
	prefixMaxK       = 64   // the first panel's 512 references seed the k nearest
	prefixPilot      = 8
	// prefixConcentrated: the pilot runs only if the half of the columns
	// of largest variance hold at least this fraction of it.
	prefixConcentrated = 0.9
	// The cost model, in GEMM multiply-adds: a (query, reference) pair's
	// scan and bookkeeping, and one check (a float32 distance over the
	// d − t other columns of a row not in cache: 72 ns for 132 columns,
	// against 0.03 ns a multiply-add).
	prefixPairCost    = 12
	prefixCheckBase   = 300
	prefixCheckPerCol = 20
	// prefixGain: the prefix screen runs only if its modelled cost is at
	// most this fraction of the plain screen's.
	prefixGain = 0.75
	// prefixKappa bounds the error of f32.SqDist on the float32 roundings
	// of rows a and b: |SqDist − ‖a − b‖²| ≤ prefixKappa·(‖a‖² + ‖b‖²) +
	// prefixAbs·d. The roundings of the inputs and of the differences
	// (relative 2⁻²⁴ each) give 2⁻²¹, the float64 sums far less; prefixAbs
	// covers the subnormals flushed to zero.
	prefixKappa = 0x1p-19
	prefixAbs   = 1e-30
)

// prefixLengths are the prefix lengths the pilot considers (below
// prefixGain·d).
var prefixLengths = []int{16, 24, 32, 48, 64, 96, 128, 192, 256}

// tryPrefixScreen answers a search by the prefix screen when the pilot
// finds it cheaper than the plain screen, and reports whether it did.
func tryPrefixScreen(impl blas.Float64, qr, rr blas64.General, nq, nr, d int, plan *searchPlan, res *screenResult) bool {
	s32, ok := impl.(blas.Float32)
	if !ok || d < prefixMinDim || nq < prefixMinQueries || nr < prefixMinRefs || max(plan.kSame, plan.kOther) > prefixMaxK {
		return false
	}
	perm, ok := varianceOrder(rr, nr, d)
	if !ok {
		return false
	}
	t := pilotPrefix(impl, qr, rr, nq, nr, d, plan, perm)
	if t == 0 {
		return false
	}
	return prefixScreen(s32, qr, rr, nq, nr, d, plan, res, perm, t)
}

// varianceOrder returns the columns of the n rows of r by decreasing
// variance (ties by index), and whether the first half of them hold at
// least prefixConcentrated of the total. The sums are shifted by the first
// row, one pass over the data.
func varianceOrder(r blas64.General, n, d int) ([]int, bool) {
	sum, sq := make([]float64, d), make([]float64, d)
	x0 := r.Data[:d]
	for i := 1; i < n; i++ {
		row := r.Data[i*r.Stride : i*r.Stride+d]
		for a, v := range row {
			e := v - x0[a]
			sum[a] += e
			sq[a] += e * e
		}
	}
	vr := make([]float64, d)
	for a := range vr {
		vr[a] = max(sq[a]-sum[a]*sum[a]/float64(n), 0)
	}
	perm := make([]int, d)
	for a := range perm {
		perm[a] = a
	}
	slices.SortStableFunc(perm, func(a, b int) int {
		switch {
		case vr[a] > vr[b]:
			return -1
		case vr[a] < vr[b]:
			return 1
		}
		return 0
	})
	var head, total float64
	for a, c := range perm {
		if a < d/2 {
			head += vr[c]
		}
		total += vr[c]
	}
	return perm, head >= prefixConcentrated*total
}

// pilotPrefix answers prefixPilot evenly spaced queries exactly and counts,
// for every candidate prefix length, the checks the search would take on
// them: the references whose prefix distance is within the k-th smallest
// distance among the references before them. It returns the length of
// least modelled cost, or 0 when none costs less than prefixGain times the
// plain screen. Its distances are in double precision by the norm
// expansion, an estimate: rounding only moves a count.
func pilotPrefix(impl blas.Float64, qr, rr blas64.General, nq, nr, d int, plan *searchPlan, perm []int) int {
	var ts []int
	for _, t := range prefixLengths {
		if float64(t) < prefixGain*float64(d) {
			ts = append(ts, t)
		}
	}
	np, tmax := prefixPilot, ts[len(ts)-1]
	q := make([]float64, np*d)  // the pilot queries, columns permuted
	q0 := make([]float64, np*d) // and as they are
	for p := range np {
		row := qr.Data[(p*nq/np)*qr.Stride:]
		gather(q[p*d:p*d+d], row, perm)
		copy(q0[p*d:p*d+d], row[:d])
	}
	// u[p·nr+j]: the bound reference j of pilot query p is checked
	// against, the k-th smallest distance to the references of its list
	// (the query's range or the others) before j, from the whole
	// distances: +Inf while that list is short, −Inf for the query itself.
	rb := make([]float64, nr*tmax) // the references' first tmax permuted columns
	rnorm := make([]float64, nr)
	ParallelRows(nr, nr*d, func(j0, j1 int) {
		buf := make([]float64, d)
		for j := j0; j < j1; j++ {
			gather(buf, rr.Data[j*rr.Stride:], perm)
			copy(rb[j*tmax:j*tmax+tmax], buf)
			rnorm[j] = sqNorm(buf)
		}
	})
	prod := make([]float64, np*nr)
	impl.Dgemm(blas.NoTrans, blas.Trans, np, nr, d, 1, q0, d, rr.Data, rr.Stride, 0, prod, nr)
	u := make([]float64, np*nr)
	var same, other candList
	for p := range np {
		qi := p * nq / np
		ks, ko := plan.want(qi, nr)
		lo, hi := plan.sameRange(qi)
		qn := sqNorm(q[p*d : p*d+d])
		same, other = same[:0], other[:0]
		for j := range nr {
			h, k := &other, ko
			if j >= lo && j < hi {
				h, k = &same, ks
			}
			switch {
			case plan.self && j == qi || k == 0:
				u[p*nr+j] = math.Inf(-1)
				continue
			case len(*h) < k:
				u[p*nr+j] = math.Inf(1)
			default:
				u[p*nr+j] = (*h)[0].dist
			}
			h.offer(cand2{max(qn+rnorm[j]-2*prod[p*nr+j], 0), j}, k)
		}
	}
	// The prefix distances, block of columns by block, and the checks.
	acc := make([]float64, np*nr)
	checks := make([]float64, len(ts))
	lo := 0
	for c, t := range ts {
		w := t - lo
		impl.Dgemm(blas.NoTrans, blas.Trans, np, nr, w, 1, q[lo:], d, rb[lo:], tmax, 0, prod, nr)
		for j := range nr {
			rnorm[j] = sqNorm(rb[j*tmax+lo : j*tmax+t])
		}
		n := 0
		for p := range np {
			qn := sqNorm(q[p*d+lo : p*d+t])
			for j := range nr {
				acc[p*nr+j] += max(qn+rnorm[j]-2*prod[p*nr+j], 0)
				if acc[p*nr+j] <= u[p*nr+j] {
					n++
				}
			}
		}
		checks[c] = float64(n) / float64(np)
		lo = t
	}
	// Per query: the plain screen's pass over d columns (half of them in a
	// self-search, whose GEMM serves both rows of a pair) against one over
	// t and the checks.
	plain := float64(d)
	if plan.self {
		plain /= 2
	}
	best, bestCost := 0, prefixGain*float64(nr)*(plain+prefixPairCost)
	for c, t := range ts {
		cost := float64(nr)*float64(t+prefixPairCost) + checks[c]*float64(prefixCheckBase+prefixCheckPerCol*(d-t))
		if cost < bestCost {
			best, bestCost = t, cost
		}
	}
	return best
}

// prefixScreen answers every query of plan into res by the prefix screen
// on the first t of the columns in the order perm. It reports false, doing
// nothing, when the data's magnitudes are outside what float32 represents
// with the error bounds.
func prefixScreen(s32 blas.Float32, qr, rr blas64.General, nq, nr, d int, plan *searchPlan, res *screenResult, perm []int, t int) bool {
	r := newPermuted(rr, nr, perm, t)
	q := r
	if !plan.self {
		q = newPermuted(qr, nq, perm, t)
	}
	if max(slices.Max(r.headNorm), slices.Max(r.restNorm), slices.Max(q.headNorm), slices.Max(q.restNorm)) > 1e30 {
		return false
	}
	s := &prefixSearch{qr: qr, rr: rr, q: q, r: r, d: d, t: t, plan: plan, id: res.id,
		rtmax: slices.Max(r.headNorm), kappa: float64(t+32) * 0x1p-23,
		relax: 1 + float64(d+4)*0x1p-52, restAbs: prefixAbs * float64(d-t)}
	nblocks := (nq + knnQueryBlock - 1) / knnQueryBlock
	ParallelRows(nblocks, nq*nr*t, func(blo, bhi int) {
		prod := make([]float32, knnQueryBlock*knnRefBlock)
		lists := make([]prefixLists, knnQueryBlock)
		for b := blo; b < bhi; b++ {
			q0 := b * knnQueryBlock
			m := min(q0+knnQueryBlock, nq) - q0
			for i := range m {
				lists[i].reset(plan, q0+i, nr)
			}
			for r0 := 0; r0 < nr; r0 += knnRefBlock {
				nc := min(r0+knnRefBlock, nr) - r0
				s32.Sgemm(blas.NoTrans, blas.Trans, m, nc, t, 1, q.x32[q0*d:], d, r.x32[r0*d:], d, 0, prod, nc)
				for i := 0; i < m; i++ {
					qi := q0 + i
					row := prod[i*nc : i*nc+nc]
					lo, hi := plan.sameRange(qi)
					a, z := min(max(lo-r0, 0), nc), min(max(hi-r0, 0), nc)
					l := &lists[i]
					s.segment(qi, row, r0, 0, a, &l.other)
					s.segment(qi, row, r0, a, z, &l.same)
					s.segment(qi, row, r0, z, nc, &l.other)
				}
			}
			for i := 0; i < m; i++ {
				qi := q0 + i
				if res.same != nil {
					lists[i].same.write(res.same, qi)
				}
				lists[i].other.write(res.other, qi)
			}
		}
	})
	return true
}

// prefixSearch is a prefix screen's data and error bounds.
type prefixSearch struct {
	qr, rr  blas64.General
	q, r    *permuted
	d, t    int
	plan    *searchPlan
	id      []int // reference row → identifier (nil: the row)
	rtmax   float64
	kappa   float64 // the prefix screen's relative error (screen32's, t columns)
	relax   float64 // 1 + the relative rounding of an exact distance
	restAbs float64
}

// prefixList is one list of a query: the k nearest found so far by
// (exact distance, identifier), worst first, and the references that
// seeded it.
type prefixList struct {
	k    int
	best candList
	seed candList
}

// prefixLists are a query's lists: same (its range) and other.
type prefixLists struct{ same, other prefixList }

func (l *prefixLists) reset(plan *searchPlan, qi, nr int) {
	ks, ko := plan.want(qi, nr)
	l.same = prefixList{k: ks, best: l.same.best[:0], seed: l.same.seed[:0]}
	l.other = prefixList{k: ko, best: l.other.best[:0], seed: l.other.seed[:0]}
}

// write sorts the list and writes it into row qi of out.
func (l *prefixList) write(out *Neighbors, qi int) {
	slices.SortFunc(l.best, cand2.compare)
	writeRow(out, qi, l.k, l.best)
}

// segment offers query qi the references r0+a … r0+b−1 of one product row
// for the list l. A list still short of its k first takes the segment's k
// smallest screened prefix distances as seeds, so that its bound is tight
// from its first segment on.
func (s *prefixSearch) segment(qi int, row []float32, r0, a, b int, l *prefixList) {
	if l.k == 0 || a >= b {
		return
	}
	q, r, d, t := s.q, s.r, s.d, s.t
	rv := r.head32[r0 : r0+len(row)]
	qv, qn, qrest := q.head32[qi], q.headNorm[qi], q.restNorm[qi]
	xq, qtail := s.qr.Data[qi*s.qr.Stride:qi*s.qr.Stride+d], q.x32[qi*d+t:qi*d+d]
	exact := func(rj int) cand2 {
		c := cand2{exactSqDist(xq, s.rr.Data[rj*s.rr.Stride:rj*s.rr.Stride+d]), rj}
		if s.id != nil {
			c.idx = s.id[rj]
		}
		return c
	}
	if len(l.best) < l.k {
		l.seed = l.seed[:0]
		scanSegment(nextBelow32, row, rv, qv, a, b, r0, qi, s.plan.self, &l.seed, l.k-len(l.best))
		for _, c := range l.seed {
			l.best.offer(exact(c.idx), l.k)
		}
	}
	u, worst := math.Inf(1), inf32
	if len(l.best) == l.k {
		u = l.best[0].dist * s.relax
		worst = screenCeiling(u, qn, s.rtmax, s.kappa)
	}
	row = row[:b]
	for j := nextBelow32(row, rv, qv, worst, a); j < b; j = nextBelow32(row, rv, qv, worst, j+1) {
		rj := r0 + j
		if s.plan.self && rj == qi || seeded(l.seed, rj) {
			continue
		}
		if len(l.best) == l.k {
			// The prefix's lower bound plus the rest's.
			lb := leftOutBound(float64(qv+rv[j]-2*row[j]), qn, s.rtmax, s.kappa)
			lb += f32.SqDist(qtail, r.x32[rj*d+t:rj*d+d]) - prefixKappa*(qrest+r.restNorm[rj]) - s.restAbs
			if lb > u {
				continue
			}
		}
		c := exact(rj)
		if len(l.best) == l.k && !c.less(l.best[0]) {
			continue
		}
		l.best.offer(c, l.k)
		if len(l.best) == l.k {
			u = l.best[0].dist * s.relax
			worst = screenCeiling(u, qn, s.rtmax, s.kappa)
		}
	}
}

// permuted holds n rows with their columns permuted, in float32, and the
// squared norms of their first t columns (double and float32) and of the
// others (double).
type permuted struct {
	x32                []float32 // n×d, contiguous
	head32             []float32
	headNorm, restNorm []float64
}

func newPermuted(x blas64.General, n int, perm []int, t int) *permuted {
	d := len(perm)
	p := &permuted{x32: make([]float32, n*d), head32: make([]float32, n),
		headNorm: make([]float64, n), restNorm: make([]float64, n)}
	ParallelRows(n, n*d, func(lo, hi int) {
		buf := make([]float64, d)
		for i := lo; i < hi; i++ {
			gather(buf, x.Data[i*x.Stride:], perm)
			p.headNorm[i], p.restNorm[i] = sqNorm(buf[:t]), sqNorm(buf[t:])
			dst := p.x32[i*d : i*d+d]
			f32.FromFloat64(dst, buf)
			var s float64
			for _, v := range dst[:t] {
				s += float64(v) * float64(v)
			}
			p.head32[i] = f32.Round(s)
		}
	})
	return p
}

var inf32 = f32.Round(math.Inf(1))

// screenCeiling returns the largest float32 screened prefix distance w
// whose bound leftOutBound(w, qn, rmax, kappa) is at most u, rounded up: a
// reference screened above it has an exact prefix distance above u.
func screenCeiling(u, qn, rmax, kappa float64) float32 {
	w := math.Min(u+kappa*(qn+rmax)+1e-36, u*(1+2*kappa)+3*kappa*qn+1e-36)
	c := f32.Round(w)
	if float64(c) < w {
		c = math.Nextafter32(c, inf32)
	}
	return c
}

// seeded reports whether reference j is among the seeds s.
func seeded(s candList, j int) bool {
	for _, c := range s {
		if c.idx == j {
			return true
		}
	}
	return false
}

// gather sets dst[a] = row[cols[a]].
func gather(dst, row []float64, cols []int) {
	for a, c := range cols {
		dst[a] = row[c]
	}
}

func sqNorm(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return s
}
