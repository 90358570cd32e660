package sparse

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/internal/countsort"
	"github.com/psdlearn/psdlearn/internal/f32"
	"github.com/psdlearn/psdlearn/internal/f64"
	"gonum.org/v1/gonum/mat"
)

// Pair is an unordered pair of point indices (rows of a data matrix).
type Pair struct{ A, B int }

// ErrInvalidGraph is wrapped by errors about malformed pairs or weights.
var ErrInvalidGraph = errs.New("sparse: invalid pair graph", errs.ErrInvalid)

// PairGraph is the sparsity pattern of a symmetric signed weight graph W on N
// points whose edges are a fixed list of pairs. Weights are set per pair with
// SetWeights (they may change every iteration while the pattern stays); the
// graph then represents W_ab = Σ of the weights of all pairs equal to {a,b}
// and its Laplacian L_W = Diag(W·1) − W.
//
// It is the data structure behind Â(u) = Σ_r u_r A_r = Xᵀ L_W X.
// A PairGraph is not safe for concurrent SetWeights; concurrent reads are
// safe. Clone gives each run its own weights on the shared, immutable
// pattern, which is how triplet sets stay safe to share (see
// constraints.TripletSet.GraphInto).
type PairGraph struct {
	n     int
	pairs []Pair
	lap   CSR   // Laplacian pattern: off-diagonal entries of W plus the diagonal, per row
	slotA []int // per pair: position of (A,B) in lap.Data
	slotB []int // per pair: position of (B,A) in lap.Data
	diag  []int // per row: position of (i,i) in lap.Data
	// The pairs behind every stored entry, CSR-style: the pairs of slot s
	// are slotPairs[slotPtr[s]:slotPtr[s+1]] (none for diagonal slots).
	// SetWeights gathers through them row by row, in parallel, instead of
	// scattering pair weights.
	slotPtr   []int
	slotPairs []int32
	// The stored entries in cache-blocked order for LaplacianMulDense: the
	// entries of row block b (blockRows consecutive rows) are
	// blk[blkPtr[b]:blkPtr[b+1]], sorted by column, then row.
	blkPtr []int
	blk    []blockEntry
	// rowNZ[i] reports that row i of L_W has a nonzero entry (set by
	// SetWeights); active lists those rows in increasing order.
	rowNZ  []bool
	active []int
}

// blockRows is the number of rows per block of LaplacianMulDense: 4096
// output rows of 164 columns are 5 MiB, which stay in cache while the
// block's entries read their input rows in increasing address order.
const blockRows = 4096

// blockEntry is one stored Laplacian entry: its row, its column and its
// position in lap.Data.
type blockEntry struct{ row, col, slot int32 }

// NewPairGraph builds the pattern for pairs on n points. Pairs must satisfy
// 0 ≤ A, B < n and A ≠ B; repeated pairs (in either order) are merged.
func NewPairGraph(n int, pairs []Pair) (*PairGraph, error) {
	if n <= 0 {
		return nil, fmt.Errorf("%w: %d points", ErrInvalidGraph, n)
	}
	if len(pairs) == 0 {
		return nil, fmt.Errorf("%w: no pairs", ErrInvalidGraph)
	}
	if n > math.MaxInt32/2 || len(pairs) > math.MaxInt32/4 {
		return nil, fmt.Errorf("%w: %d pairs on %d points: the pattern indexes its entries with 32 bits", ErrInvalidGraph, len(pairs), n)
	}
	for k, p := range pairs {
		if p.A < 0 || p.A >= n || p.B < 0 || p.B >= n {
			return nil, fmt.Errorf("%w: pair %d = (%d,%d) outside [0,%d)", ErrInvalidGraph, k, p.A, p.B, n)
		}
		if p.A == p.B {
			return nil, fmt.Errorf("%w: pair %d joins point %d to itself", ErrInvalidGraph, k, p.A)
		}
	}
	// Every stored entry of the Laplacian, (A,B) and (B,A) per pair and the
	// diagonal, sorted by (row, column) with two stable counting sorts (by
	// column, then by row): entries of repeated pairs end up adjacent, in
	// pair order. No per-row lists or comparison sorts: this runs once per
	// triplet set, serially.
	type entry struct {
		row, col int32
		pair     int32 // −1 for the diagonal
		sideB    bool  // the (B,A) entry of its pair
	}
	ne := 2*len(pairs) + n
	src := make([]entry, 0, ne)
	for i := 0; i < n; i++ {
		src = append(src, entry{int32(i), int32(i), -1, false})
	}
	for k, p := range pairs {
		src = append(src, entry{int32(p.A), int32(p.B), int32(k), false}, entry{int32(p.B), int32(p.A), int32(k), true})
	}
	dst := make([]entry, ne)
	count := countsort.Stable(dst, src, n, func(e entry) int { return int(e.col) }, nil)
	countsort.Stable(src, dst, n, func(e entry) int { return int(e.row) }, count)
	g := &PairGraph{n: n, pairs: append([]Pair(nil), pairs...), diag: make([]int, n), rowNZ: make([]bool, n)}
	g.lap = CSR{Rows: n, Cols: n, Indptr: make([]int, n+1)}
	g.slotA = make([]int, len(pairs))
	g.slotB = make([]int, len(pairs))
	g.slotPairs = make([]int32, 0, 2*len(pairs))
	g.slotPtr = make([]int, 1, ne+1)
	ind := make([]int, 0, ne)
	for t, e := range src {
		if t == 0 || e.row != src[t-1].row || e.col != src[t-1].col {
			ind = append(ind, int(e.col)) // a new stored entry
			g.slotPtr = append(g.slotPtr, len(g.slotPairs))
			g.lap.Indptr[e.row+1] = len(ind)
		}
		sl := len(ind) - 1
		switch {
		case e.pair < 0:
			g.diag[e.row] = sl
		case e.sideB:
			g.slotB[e.pair] = sl
		default:
			g.slotA[e.pair] = sl
		}
		if e.pair >= 0 {
			g.slotPairs = append(g.slotPairs, e.pair)
			g.slotPtr[len(g.slotPtr)-1] = len(g.slotPairs)
		}
	}
	g.lap.Ind = ind
	g.lap.Data = make([]float64, len(ind))
	g.blockOrder()
	return g, nil
}

// blockOrder fills blkPtr and blk. Within a row its entries keep their CSR
// (increasing column) order, so LaplacianMulDense sums every output row in
// the same order as a plain row-by-row product.
func (g *PairGraph) blockOrder() {
	nb := (g.n + blockRows - 1) / blockRows
	g.blkPtr = make([]int, nb+1)
	g.blk = make([]blockEntry, len(g.lap.Data))
	// A counting sort by column per block: rows are visited in increasing
	// order, so entries of one column stay in row order, and (col, row) is
	// sorted without comparisons (a comparison sort here took a quarter of
	// building letters' triplet set).
	next := make([]int, g.n+1)
	for b := 0; b < nb; b++ {
		lo, hi := b*blockRows, min((b+1)*blockRows, g.n)
		start := g.lap.Indptr[lo]
		clear(next)
		for _, c := range g.lap.Ind[start:g.lap.Indptr[hi]] {
			next[c+1]++
		}
		next[0] = start
		for c := 1; c <= g.n; c++ {
			next[c] += next[c-1]
		}
		for i := lo; i < hi; i++ {
			for p := g.lap.Indptr[i]; p < g.lap.Indptr[i+1]; p++ {
				c := g.lap.Ind[p]
				g.blk[next[c]] = blockEntry{int32(i), int32(c), int32(p)}
				next[c]++
			}
		}
		g.blkPtr[b+1] = g.lap.Indptr[hi]
	}
}

// N returns the number of points.
func (g *PairGraph) N() int { return g.n }

// Clone returns a graph with the same pattern and its own weights (a copy of
// g's current ones). The pattern — pairs, the Laplacian's structure and the
// blocked entry order — is shared: it never changes after NewPairGraph, so
// clones can be used from different goroutines, each setting its own
// weights. A clone costs the Laplacian's values and two per-row arrays.
func (g *PairGraph) Clone() *PairGraph {
	c := *g
	c.lap.Data = append([]float64(nil), g.lap.Data...)
	c.rowNZ = append([]bool(nil), g.rowNZ...)
	c.active = append([]int(nil), g.active...)
	return &c
}

// Pairs returns the pairs the graph was built from (shared; do not modify).
func (g *PairGraph) Pairs() []Pair { return g.pairs }

// NNZ returns the number of stored Laplacian entries (diagonal included).
func (g *PairGraph) NNZ() int { return len(g.lap.Data) }

// SetWeights sets the weight of every pair (len(w) == len(Pairs())) and
// rebuilds the Laplacian values. Weights may be of either sign.
func (g *PairGraph) SetWeights(w []float64) error {
	if len(w) != len(g.pairs) {
		return fmt.Errorf("%w: %d weights for %d pairs", ErrInvalidGraph, len(w), len(g.pairs))
	}
	for k, v := range w {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: weight %d is %v", ErrInvalidGraph, k, v)
		}
	}
	d, lap := g.lap.Data, &g.lap
	ParallelRows(g.n, 2*len(g.slotPairs), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			var deg float64
			nz := false
			for sl := lap.Indptr[i]; sl < lap.Indptr[i+1]; sl++ {
				var v float64
				for _, k := range g.slotPairs[g.slotPtr[sl]:g.slotPtr[sl+1]] {
					v += w[k]
				}
				d[sl] = -v
				deg += v
				nz = nz || v != 0
			}
			d[g.diag[i]] = deg
			g.rowNZ[i] = nz
		}
	})
	g.active = g.active[:0]
	for i, nz := range g.rowNZ {
		if nz {
			g.active = append(g.active, i)
		}
	}
	return nil
}

// ActiveRows returns, in increasing order, the rows of L_W that hold a
// nonzero entry under the current weights (shared; do not modify; it
// changes with SetWeights). Every other row of L_W·x is zero, and a nonzero
// entry (i, j) makes both i and j active, so (L_W·x) restricted to the
// active rows reads only the active rows of x.
func (g *PairGraph) ActiveRows() []int { return g.active }

// Laplacian returns the current Laplacian L_W as a CSR matrix sharing the
// graph's storage: it changes with SetWeights and must not be modified.
func (g *PairGraph) Laplacian() *CSR { return &g.lap }

// LaplacianMulRows overwrites dst (len(rows)×c) with the given rows of
// L_W·x for an n×c dense x: row k of dst is row rows[k] of the product,
// summed in increasing column order like LaplacianMulDense. Zero entries are
// skipped, so with rows = ActiveRows() the cost is that of the nonzero
// entries only.
func (g *PairGraph) LaplacianMulRows(dst *mat.Dense, rows []int, x *mat.Dense) {
	r, c := x.Dims()
	if r != g.n {
		panic(fmt.Sprintf("sparse: LaplacianMulRows: x has %d rows, graph has %d points", r, g.n))
	}
	if dr, dc := dst.Dims(); dr != len(rows) || dc != c {
		panic("sparse: LaplacianMulRows: dst dimension mismatch")
	}
	xr, dr := x.RawMatrix(), dst.RawMatrix()
	lap := &g.lap
	ParallelRows(len(rows), 2*c*len(lap.Data)*len(rows)/g.n, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			i := rows[k]
			out := dr.Data[k*dr.Stride : k*dr.Stride+c]
			for q := range out {
				out[q] = 0
			}
			for sl := lap.Indptr[i]; sl < lap.Indptr[i+1]; sl++ {
				if v := lap.Data[sl]; v != 0 {
					j := lap.Ind[sl]
					f64.Axpy(v, xr.Data[j*xr.Stride:j*xr.Stride+c], out)
				}
			}
		}
	})
}

// LaplacianMulDense overwrites dst (h×c, h ≤ n) with the first h rows of
// L_W·x for an n×c dense x (all of it when h = n). Blocks of rows are shared among goroutines; within a block the entries
// are visited by increasing column, so the rows of x are read in address
// order while the block's output rows stay in cache (the row-by-row product
// reads x at random and is memory-bound on large graphs). Each output row
// is summed in increasing column order, as in a row-by-row product.
func (g *PairGraph) LaplacianMulDense(dst, x *mat.Dense) {
	r, c := x.Dims()
	if r != g.n {
		panic(fmt.Sprintf("sparse: LaplacianMulDense: x has %d rows, graph has %d points", r, g.n))
	}
	h, dc := dst.Dims()
	if h > r || dc != c {
		panic("sparse: LaplacianMulDense: dst dimension mismatch")
	}
	xr, dr := x.RawMatrix(), dst.RawMatrix()
	data := g.lap.Data
	nb := (h + blockRows - 1) / blockRows
	block := func(b int) {
		for i := b * blockRows; i < min((b+1)*blockRows, h); i++ {
			out := dr.Data[i*dr.Stride : i*dr.Stride+c]
			for k := range out {
				out[k] = 0
			}
		}
		for _, e := range g.blk[g.blkPtr[b]:g.blkPtr[b+1]] {
			if v := data[e.slot]; v != 0 && int(e.row) < h {
				row, col := int(e.row), int(e.col)
				f64.Axpy(v, xr.Data[col*xr.Stride:col*xr.Stride+c], dr.Data[row*dr.Stride:row*dr.Stride+c])
			}
		}
	}
	g.forBlocks(nb, len(data)*c*h/r, block)
}

// LaplacianMulDense32 is LaplacianMulDense in single precision: dst = L_W·x
// for row-major n×c float32 matrices (dst and x must not overlap), with the
// Laplacian's values rounded to float32 and every product and sum done in
// float32, in the same order as LaplacianMulDense. It reads and writes half
// the bytes; BoostMetric's mixed-precision Gram uses it.
func (g *PairGraph) LaplacianMulDense32(dst, x []float32, c int) {
	if len(x) != g.n*c || len(dst) != g.n*c {
		panic(fmt.Sprintf("sparse: LaplacianMulDense32: %d and %d values for %d×%d", len(x), len(dst), g.n, c))
	}
	data := g.lap.Data
	g.forBlocks(len(g.blkPtr)-1, len(data)*c, func(b int) {
		clear(dst[b*blockRows*c : min((b+1)*blockRows, g.n)*c])
		for _, e := range g.blk[g.blkPtr[b]:g.blkPtr[b+1]] {
			if v := data[e.slot]; v != 0 {
				row, col := int(e.row), int(e.col)
				f32.Axpy(f32.Round(v), x[col*c:col*c+c], dst[row*c:row*c+c])
			}
		}
	})
}

// forBlocks runs block(b) for the first nb row blocks of the blocked entry
// order, on parallel goroutines that take the next block as they finish one
// when the work (about flops) is large enough.
func (g *PairGraph) forBlocks(nb, flops int, block func(b int)) {
	p := min(runtime.GOMAXPROCS(0), nb)
	if p <= 1 || flops < parallelThreshold {
		for b := 0; b < nb; b++ {
			block(b)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < p; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := int(next.Add(1) - 1); b < nb; b = int(next.Add(1) - 1) {
				block(b)
			}
		}()
	}
	wg.Wait()
}
