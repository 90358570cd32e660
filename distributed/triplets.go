package distributed

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// Shard is one rank's share of a distributed training problem: the triplets
// anchored at its rows, in global row numbers, and the rows of the other
// ranks that these triplets use (its halo).
type Shard struct {
	N      int // global number of rows
	Offset int // global number of this rank's first row
	Rows   int // number of this rank's rows (its rows are Offset … Offset+Rows−1)
	// Triplets are the triplets (I, J, K) with I one of this rank's rows, in
	// global row numbers and in the order of constraints.Triplets on the
	// whole data: the concatenation of every rank's Triplets in rank order is
	// that list.
	Triplets []constraints.Triplet
	// HaloIndex lists, ascending, the global numbers of the rows of other
	// ranks that Triplets use; Halo (len(HaloIndex)×D, nil when empty) holds
	// those rows.
	HaloIndex []int
	Halo      *mat.Dense
}

// cand is a neighbour candidate: its squared distance and its global row
// number.
type cand struct {
	d float64
	g int
}

// lessIdx orders targets and impostors: by distance, then by row.
func lessIdx(a, b cand) bool { return a.d < b.d || (a.d == b.d && a.g < b.g) }

// insert adds c to the list l kept sorted by less and bounded by k.
func insert(l []cand, c cand, k int, less func(a, b cand) bool) []cand {
	if k <= 0 || (len(l) == k && !less(c, l[k-1])) {
		return l
	}
	pos := sort.Search(len(l), func(i int) bool { return less(c, l[i]) })
	if len(l) < k {
		l = append(l, cand{})
	}
	copy(l[pos+1:], l[pos:len(l)-1])
	l[pos] = c
	return l
}

// layout returns every rank's row count and the offsets (prefix sums), from
// one Allgatherv.
func layout(comm mpi.Comm, rows int) (counts, offsets []int, err error) {
	p := comm.Size()
	ones := make([]int, p)
	for i := range ones {
		ones[i] = 1
	}
	all := make([]float64, p)
	if err := comm.Allgatherv([]float64{float64(rows)}, all, ones); err != nil {
		return nil, nil, fmt.Errorf("distributed: row counts: %w", err)
	}
	counts, offsets = make([]int, p), make([]int, p+1)
	for r, v := range all {
		counts[r] = int(v)
		offsets[r+1] = offsets[r] + counts[r]
	}
	return counts, offsets, nil
}

// passBlocks passes every rank's block round the ranks, in rank order:
// for q = 0 … P−1 with sizes[q] > 0, rank q fills a new buffer of sizes[q]
// float64s (fill), one Bcast from q hands it to every rank, and every rank
// (q included) runs visit(q, buf). A rank thus holds one visiting block at
// a time. The binding has no point-to-point: a ring of sends would move
// the same bytes. Every rank must pass the same sizes. After each visit
// the ranks agree (one scalar AllreduceMax) on whether any visit failed,
// so an error on one rank stops every rank at the same block instead of
// leaving the others waiting in the next Bcast: the failing rank returns
// its error, the others one wrapping ErrRemote.
func passBlocks(comm mpi.Comm, sizes []int, fill func(buf []float64), visit func(q int, buf []float64) error) error {
	for q, sz := range sizes {
		if sz == 0 {
			continue
		}
		buf := make([]float64, sz)
		if q == comm.Rank() {
			fill(buf)
		}
		if err := comm.Bcast(buf, q); err != nil {
			return fmt.Errorf("block of rank %d: %w", q, err)
		}
		verr := visit(q, buf)
		failed := 0.0
		if verr != nil {
			failed = 1
		}
		any, err := comm.AllreduceMaxScalar(failed)
		if err != nil {
			return fmt.Errorf("block of rank %d: %w", q, err)
		}
		if verr != nil {
			return verr
		}
		if any > 0 {
			return fmt.Errorf("%w: block of rank %d", ErrRemote, q)
		}
	}
	return nil
}

// Triplets generates, on rows sharded across the ranks of comm, the
// triplets constraints.Triplets generates on the whole data: rank p passes
// its contiguous block of rows xLocal (rows Offset… in the global order,
// rank 0 first) with their labels yLocal, and gets the triplets anchored at
// its rows (k nearest same-class targets × k nearest other-class impostors
// per point, exact squared Euclidean distances, the same tie rules) and the
// halo rows they use.
//
// No rank ever holds all of X: the blocks go round the ranks one at a time
// (rank q broadcasts its rows and labels, every rank updates the running
// neighbour lists of its points with them, and copies the rows of the
// block's points that are still candidates into its halo), so a rank holds
// its own block, one visiting block and at most 2k candidate rows per
// point. Each visiting block is searched with one sparse.KNNSplit of the
// rank's rows against it (a point's range being its class there), which
// ranks ties by global row as constraints.Triplets does: an exact search,
// O(Rows·N·D) per rank with the GEMM screen.
//
// Every rank must call it with the same k and the same number of columns;
// a rank may have no rows.
func Triplets(comm mpi.Comm, xLocal *mat.Dense, yLocal []int, k int) (*Shard, error) {
	if comm == nil {
		return nil, fmt.Errorf("%w: nil communicator", ErrInvalid)
	}
	rows, d := 0, 0
	if xLocal != nil {
		rows, d = xLocal.Dims()
	}
	// Local checks, then agreement on them: an error on one rank must stop
	// every rank before the exchange starts.
	var lerr error
	switch {
	case k <= 0:
		lerr = fmt.Errorf("%w: k = %d, want k ≥ 1", ErrInvalid, k)
	case len(yLocal) != rows:
		lerr = fmt.Errorf("%w: %d labels for %d rows", ErrInvalid, len(yLocal), rows)
	case rows > 0:
		if err := engine.CheckDistances("data", xLocal); err != nil {
			lerr = fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		for i, c := range yLocal {
			if c < 0 && lerr == nil {
				lerr = fmt.Errorf("%w: label %d of local row %d is negative", ErrInvalid, c, i)
			}
		}
	}
	maxY := -1
	for _, c := range yLocal {
		maxY = max(maxY, c)
	}
	// One Allreduce agrees on the errors, the column count and the labels'
	// range: every rank sends [failed, d, −d, maxY].
	agree := []float64{0, float64(d), -float64(d), float64(maxY)}
	if lerr != nil {
		agree[0] = 1
	}
	if rows == 0 {
		agree[1], agree[2] = math.Inf(-1), math.Inf(-1)
	}
	if err := comm.AllreduceMax(agree); err != nil {
		return nil, fmt.Errorf("distributed: triplets: %w", err)
	}
	if lerr != nil {
		return nil, lerr
	}
	if agree[0] != 0 {
		return nil, fmt.Errorf("%w: triplets: another rank refused its input", ErrRemote)
	}
	if agree[1] != -agree[2] {
		return nil, fmt.Errorf("%w: the ranks' data have %g to %g columns", ErrInvalid, -agree[2], agree[1])
	}
	if math.IsInf(agree[1], -1) {
		return nil, fmt.Errorf("%w: no rank has data", ErrInvalid)
	}
	d = int(agree[1])
	nLabels := int(agree[3]) + 1
	counts, offsets, err := layout(comm, rows)
	if err != nil {
		return nil, err
	}
	p, me := comm.Size(), comm.Rank()
	n := offsets[p]
	// Global class sizes fix how many targets and impostors each point gets.
	sizes := make([]float64, nLabels)
	for _, c := range yLocal {
		sizes[c]++
	}
	if err := comm.AllreduceSum(sizes); err != nil {
		return nil, fmt.Errorf("distributed: class sizes: %w", err)
	}
	classes := 0
	for _, s := range sizes {
		if s > 0 {
			classes++
		}
	}
	if classes < 2 {
		return nil, fmt.Errorf("%w: triplets need at least two classes, the labels have %d", ErrInvalid, classes)
	}
	kt := make([]int, rows) // targets per point
	ki := make([]int, rows) // impostors per point
	for i, c := range yLocal {
		sz := int(sizes[c])
		kt[i] = min(k, sz-1)
		ki[i] = min(k, n-sz)
	}
	tgt := make([][]cand, rows)
	imp := make([][]cand, rows)
	halo := map[int][]float64{}
	var xr mat.RawMatrixer
	var local *classBlocks // this rank's rows grouped by class
	if rows > 0 {
		xr = xLocal
		raw := xLocal.RawMatrix()
		flat := make([]float64, rows*d)
		for i := 0; i < rows; i++ {
			copy(flat[i*d:(i+1)*d], raw.Data[i*raw.Stride:i*raw.Stride+d])
		}
		local = groupByClass(flat, d, yLocal)
	}
	blockSizes := make([]int, p)
	for q, nq := range counts {
		blockSizes[q] = nq*d + nq // the visiting block: rows then labels
	}
	fill := func(buf []float64) {
		raw := xr.RawMatrix()
		for i := 0; i < rows; i++ {
			copy(buf[i*d:(i+1)*d], raw.Data[i*raw.Stride:i*raw.Stride+d])
			buf[rows*d+i] = float64(yLocal[i])
		}
	}
	err = passBlocks(comm, blockSizes, fill, func(q int, buf []float64) error {
		if rows == 0 {
			return nil
		}
		nq := counts[q]
		block, labels := buf[:nq*d], buf[nq*d:]
		var bs *classBlocks
		if q == me {
			bs = local
		} else {
			lab := make([]int, nq)
			for j, v := range labels {
				lab[j] = int(v)
			}
			bs = groupByClass(block, d, lab)
		}
		// One split search of the local rows (grouped by class) against the
		// block: the range of a point is its class in the block.
		ranges := make([][2]int, rows)
		for a := range ranges {
			lo, hi := bs.rangeOf(local.labels[a])
			ranges[a] = [2]int{lo, hi}
		}
		id := make([]int, nq)
		for pos, j := range bs.order {
			id[pos] = offsets[q] + j
		}
		same, other, err := sparse.KNNSplit(nil, local.x, bs.x, ranges, id, k, k, q == me)
		if err != nil {
			return fmt.Errorf("distributed: triplets: %w", err)
		}
		for a := 0; a < rows; a++ {
			i := local.order[a]
			for _, side := range []struct {
				nb   *sparse.Neighbors
				list *[]cand
				k    int
			}{{same, &tgt[i], kt[i]}, {other, &imp[i], ki[i]}} {
				idx, dd := side.nb.Row(a)
				for t, g := range idx {
					if g >= 0 {
						*side.list = insert(*side.list, cand{dd[t], g}, side.k, lessIdx)
					}
				}
			}
		}
		if q == me {
			return nil
		}
		// Keep the rows of this block that are candidates now, and drop
		// the halo rows no list refers to any more.
		used := map[int]bool{}
		for i := 0; i < rows; i++ {
			for _, l := range [][]cand{tgt[i], imp[i]} {
				for _, c := range l {
					if c.g < offsets[me] || c.g >= offsets[me+1] {
						used[c.g] = true
					}
				}
			}
		}
		for g := range halo {
			if !used[g] {
				delete(halo, g)
			}
		}
		for g := range used {
			if g >= offsets[q] && g < offsets[q+1] {
				if _, ok := halo[g]; !ok {
					j := g - offsets[q]
					halo[g] = slices.Clone(block[j*d : (j+1)*d])
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("distributed: triplets: %w", err)
	}
	sh := &Shard{N: n, Offset: offsets[me], Rows: rows}
	for i := 0; i < rows; i++ {
		gi := offsets[me] + i
		for _, t := range tgt[i] {
			for _, l := range imp[i] {
				sh.Triplets = append(sh.Triplets, constraints.Triplet{I: gi, J: t.g, K: l.g})
			}
		}
	}
	// The halo rows the final lists use (candidates evicted by a later
	// block were pruned when it came).
	need := map[int]bool{}
	for _, t := range sh.Triplets {
		for _, g := range []int{t.J, t.K} {
			if g < offsets[me] || g >= offsets[me+1] {
				need[g] = true
			}
		}
	}
	for g := range need {
		sh.HaloIndex = append(sh.HaloIndex, g)
	}
	sort.Ints(sh.HaloIndex)
	if len(sh.HaloIndex) > 0 {
		sh.Halo = mat.NewDense(len(sh.HaloIndex), d, nil)
		for a, g := range sh.HaloIndex {
			sh.Halo.SetRow(a, halo[g])
		}
	}
	total, err := comm.AllreduceSumScalar(float64(len(sh.Triplets)))
	if err != nil {
		return nil, fmt.Errorf("distributed: triplets: %w", err)
	}
	if total == 0 {
		return nil, fmt.Errorf("%w: no triplets: every class has a single point", ErrInvalid)
	}
	return sh, nil
}

// classBlocks is a block of rows sorted by (label, row): the rows of label c
// are x's rows ranges[c][0] … ranges[c][1]−1, the rows of the labels below
// it all the rows before, of the labels above all the rows after: the
// layout constraints.Triplets searches in.
type classBlocks struct {
	x      *mat.Dense // sorted rows
	order  []int      // sorted position → row of the block
	labels []int      // sorted position → label
	ranges [][2]int   // label → [lo, hi) of sorted positions
}

// groupByClass sorts the n = len(labels) rows of the row-major block by
// (label, row).
func groupByClass(block []float64, d int, labels []int) *classBlocks {
	n := len(labels)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return labels[order[a]] < labels[order[b]] })
	nl := 0
	for _, c := range labels {
		nl = max(nl, c+1)
	}
	cb := &classBlocks{x: mat.NewDense(n, d, nil), order: order, labels: make([]int, n), ranges: make([][2]int, nl)}
	raw := cb.x.RawMatrix()
	for c := range cb.ranges {
		cb.ranges[c] = [2]int{-1, -1}
	}
	for pos, j := range order {
		copy(raw.Data[pos*raw.Stride:pos*raw.Stride+d], block[j*d:(j+1)*d])
		c := labels[j]
		cb.labels[pos] = c
		if cb.ranges[c][0] < 0 {
			cb.ranges[c][0] = pos
		}
		cb.ranges[c][1] = pos + 1
	}
	// Labels without rows: an empty range where they would sort.
	next := n
	for c := nl - 1; c >= 0; c-- {
		if cb.ranges[c][0] < 0 {
			cb.ranges[c] = [2]int{next, next}
		}
		next = cb.ranges[c][0]
	}
	return cb
}

// rangeOf returns the sorted positions of label c, [n, n) past the labels.
func (cb *classBlocks) rangeOf(c int) (int, int) {
	if c < len(cb.ranges) {
		return cb.ranges[c][0], cb.ranges[c][1]
	}
	n, _ := cb.x.Dims()
	return n, n
}
