package sparse

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// symScreen is the screen of a self-search, whose queries are its
// references (x, n rows of the given stride, with squared norms norms):
// the screened distance of rows i and j serves both. Every block of
// knnQueryBlock rows is compared, one GEMM panel at a time, with itself and
// the rows after it only: half the GEMM flops of screenPanels. A panel is
// scanned along its rows for the block's queries, and along its columns
// (transposed) for the later rows as queries against the block's rows, so
// every ordered pair is screened exactly once.
//
// The blocks are handed out to GOMAXPROCS workers in order (the first
// blocks carry the most panels), and each worker keeps candidate lists for
// every query, merged at the end into the best of their union. The
// certificate of screen32 holds for the merged lists as for one list: a
// reference that a worker left out screened at or above the worst
// candidate of that worker's full list, and so at or above the worst of
// the merged list, which keeps the best of a union that contains it.
//
// It returns each query's lists (same is empty in a plain search).
func symScreen[T float](gemm func(m, nc int, a []T, lda int, b []T, ldb int, c []T, ldc int),
	next func(row, rv []T, qv, worst T, from int) int,
	x []T, stride int, norms []T, n int, plan *searchPlan) (same, other []candList) {
	nb := (n + knnQueryBlock - 1) / knnQueryBlock
	workers := max(1, min(runtime.GOMAXPROCS(0), nb))
	type lists struct{ same, other []candList }
	per := make([]lists, workers)
	var nextBlock atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			l := lists{make([]candList, n), make([]candList, n)}
			allocLists(l.same, l.other, n, plan)
			per[w] = l
			prod := make([]T, knnQueryBlock*knnRefBlock)
			tr := make([]T, knnQueryBlock*knnRefBlock)
			for {
				b := int(nextBlock.Add(1)) - 1
				if b >= nb {
					return
				}
				i0 := b * knnQueryBlock
				i1 := min(i0+knnQueryBlock, n)
				m := i1 - i0
				for r0 := i0; r0 < n; r0 += knnRefBlock {
					r1 := min(r0+knnRefBlock, n)
					nc := r1 - r0
					gemm(m, nc, x[i0*stride:], stride, x[r0*stride:], stride, prod, nc)
					for i := 0; i < m; i++ {
						qi := i0 + i
						scanQuery(next, prod[i*nc:i*nc+nc], norms[r0:r1], norms[qi], r0, qi, n, plan, &l.same[qi], &l.other[qi])
					}
					// The columns after the block: rows r0+c ≥ i1 as
					// queries against the block's rows.
					c0 := max(i1-r0, 0)
					transposeCols(tr, prod, m, nc, c0)
					for c := c0; c < nc; c++ {
						qj := r0 + c
						scanQuery(next, tr[c*m:c*m+m], norms[i0:i1], norms[qj], i0, qj, n, plan, &l.same[qj], &l.other[qj])
					}
				}
			}
		}(w)
	}
	wg.Wait()
	same, other = per[0].same, per[0].other
	for w := 1; w < workers; w++ {
		ParallelRows(n, n*workers*16, func(lo, hi int) {
			for qi := lo; qi < hi; qi++ {
				mergeList(&same[qi], per[w].same[qi])
				mergeList(&other[qi], per[w].other[qi])
			}
		})
	}
	return same, other
}

// scanQuery offers query qi (squared norm qv) the references r0 … r0+len(row)−1
// of one screened product row (rv their squared norms, nr references in
// all), to its same-range list and its other list as the plan says.
func scanQuery[T float](next func(row, rv []T, qv, worst T, from int) int,
	row, rv []T, qv T, r0, qi, nr int, plan *searchPlan, same, other *candList) {
	nc := len(row)
	cs, co, _, _ := plan.caps(qi, nr)
	lo, hi := plan.sameRange(qi)
	a, z := min(max(lo-r0, 0), nc), min(max(hi-r0, 0), nc)
	scanSegment(next, row, rv, qv, 0, a, r0, qi, plan.self, other, co)
	scanSegment(next, row, rv, qv, a, z, r0, qi, plan.self, same, cs)
	scanSegment(next, row, rv, qv, z, nc, r0, qi, plan.self, other, co)
}

// allocLists gives every query's lists their capacities (plan.caps) in one
// backing array.
func allocLists(same, other []candList, n int, plan *searchPlan) {
	total := 0
	for qi := 0; qi < n; qi++ {
		cs, co, _, _ := plan.caps(qi, n)
		total += cs + co
	}
	buf := make([]cand2, total)
	off := 0
	for qi := 0; qi < n; qi++ {
		cs, co, _, _ := plan.caps(qi, n)
		same[qi] = buf[off : off : off+cs]
		off += cs
		other[qi] = buf[off : off : off+co]
		off += co
	}
}

// mergeList offers the candidates of src to h, which keeps the best
// cap(h) of them; the two hold no common candidate.
func mergeList(h *candList, src candList) {
	for _, c := range src {
		h.offer(c, cap(*h))
	}
}

// transposeTile is the number of columns transposeCols copies per
// sweep down the rows, each sweep four rows at a time. A plain row-by-row
// transpose of a 256×512 panel writes at a stride of 1 KiB, which maps
// every write of a row to the same few cache sets: it took as long as the
// GEMM.
const transposeTile = 64

// transposeCols writes columns c0 … nc−1 of the m×nc row-major prod into
// tr, column c as tr[c*m : c*m+m]. In single precision on processors with
// AVX2 it moves 8×8 blocks through registers (transpose8AVX); the rest,
// and double precision, go by tiles of rows.
func transposeCols[T float](tr, prod []T, m, nc, c0 int) {
	if p32, ok := any(prod).([]float32); ok && useAVX2 {
		transposeCols32(any(tr).([]float32), p32, m, nc, c0)
		return
	}
	transposeTiles(tr, prod, m, nc, c0)
}

// transposeCols32 is transposeCols by 8×8 blocks, a tile of columns at a
// time, then the rows and columns left over.
func transposeCols32(tr, prod []float32, m, nc, c0 int) {
	m8, c8 := m&^7, c0+(nc-c0)&^7
	for j0 := c0; j0 < c8; j0 += transposeTile {
		j1 := min(j0+transposeTile, c8)
		for i := 0; i < m8; i += 8 {
			for c := j0; c < j1; c += 8 {
				transpose8AVX(tr[c*m+i:], m, prod[i*nc+c:], nc)
			}
		}
	}
	for i := m8; i < m; i++ {
		for c := c0; c < c8; c++ {
			tr[c*m+i] = prod[i*nc+c]
		}
	}
	for i := 0; i < m; i++ {
		for c := c8; c < nc; c++ {
			tr[c*m+i] = prod[i*nc+c]
		}
	}
}

// transposeTiles is transposeCols by tiles of transposeTile columns, four
// rows at a time.
func transposeTiles[T float](tr, prod []T, m, nc, c0 int) {
	for j0 := c0; j0 < nc; j0 += transposeTile {
		j1 := min(j0+transposeTile, nc)
		w := j1 - j0
		i := 0
		for ; i+4 <= m; i += 4 {
			r0 := prod[i*nc+j0 : i*nc+j1]
			r1 := prod[(i+1)*nc+j0 : (i+1)*nc+j0+w]
			r2 := prod[(i+2)*nc+j0 : (i+2)*nc+j0+w]
			r3 := prod[(i+3)*nc+j0 : (i+3)*nc+j0+w]
			for c := range r0 {
				o := (j0+c)*m + i
				d := tr[o : o+4 : o+4]
				d[0], d[1], d[2], d[3] = r0[c], r1[c], r2[c], r3[c]
			}
		}
		for ; i < m; i++ {
			for c, v := range prod[i*nc+j0 : i*nc+j1] {
				tr[(j0+c)*m+i] = v
			}
		}
	}
}
