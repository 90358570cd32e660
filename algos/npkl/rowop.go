package npkl

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/internal/f64"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// RowOperator holds rows [lo, lo+rows) of A = Σ_c w_c T_c E_{a_c b_c} − L as
// one CSR matrix: the Laplacian's entries and the constraints' merged, so
// that a product is one parallel pass over the rows instead of a pass over
// L followed by a serial scatter over the m constraints. Operator uses it
// for all the rows, and a distributed solver (package distributed) for the rows a
// process owns: both build the rows with the same code, so their products
// agree to the last bit. The values follow the weights (SetWeights); the
// pattern is fixed.
type RowOperator struct {
	m    sparse.CSR
	base []float64 // −L's values on m's pattern (zero where only constraints are)
	// pos[2c], pos[2c+1]: the entries of m that constraint c adds to, in
	// row a_c (column b_c) and row b_c (column a_c); −1 when that row is
	// not held.
	pos []int
	t   []float64
	// ind32 is m.Ind as int32 (n < 2³¹ is checked): the products read 12
	// bytes per entry instead of 16 (on letters, MulVec 1.0 ms against 1.7
	// ms per product).
	ind32 []int32
}

// NewRowOperator returns the rows of A held by a process: lapRows is rows
// [lo, lo+lapRows.Rows) of the n×n normalised Laplacian (global columns),
// pairs the constraints on the n points and w their weights.
func NewRowOperator(lapRows *sparse.CSR, lo int, pairs *constraints.Pairs, w []float64) (*RowOperator, error) {
	if lapRows == nil || lo < 0 || pairs == nil || pairs.N != lapRows.Cols || lo+lapRows.Rows > lapRows.Cols {
		return nil, fmt.Errorf("npkl: NewRowOperator: need rows [lo, lo+r) of an n×n Laplacian and constraints on its n points")
	}
	if err := checkPairs(lapRows.Cols, pairs); err != nil {
		return nil, err
	}
	if lapRows.Cols > math.MaxInt32 {
		return nil, fmt.Errorf("npkl: NewRowOperator: %d points: at most %d", lapRows.Cols, math.MaxInt32)
	}
	rows := lapRows.Rows
	m := pairs.Len()
	local := func(i int) bool { return i >= lo && i < lo+rows }
	// The constraints' columns per local row.
	extra := make([][]int, rows)
	for _, q := range pairs.List {
		if local(q.A) {
			extra[q.A-lo] = append(extra[q.A-lo], q.B)
		}
		if local(q.B) {
			extra[q.B-lo] = append(extra[q.B-lo], q.A)
		}
	}
	o := &RowOperator{t: pairs.T(), pos: make([]int, 2*m)}
	o.m = sparse.CSR{Rows: rows, Cols: lapRows.Cols, Indptr: make([]int, rows+1)}
	var cols []int
	for i := 0; i < rows; i++ {
		lc := lapRows.Ind[lapRows.Indptr[i]:lapRows.Indptr[i+1]]
		lv := lapRows.Data[lapRows.Indptr[i]:lapRows.Indptr[i+1]]
		cols = append(append(cols[:0], lc...), extra[i]...)
		slices.Sort(cols)
		cols = slices.Compact(cols)
		start := len(o.m.Ind)
		o.m.Ind = append(o.m.Ind, cols...)
		for range cols {
			o.base = append(o.base, 0)
		}
		for p, j := range lc {
			o.base[start+sort.SearchInts(cols, j)] = -lv[p]
		}
		o.m.Indptr[i+1] = len(o.m.Ind)
	}
	find := func(row, col int) int {
		r := row - lo
		ind := o.m.Ind[o.m.Indptr[r]:o.m.Indptr[r+1]]
		return o.m.Indptr[r] + sort.SearchInts(ind, col)
	}
	for c, q := range pairs.List {
		o.pos[2*c], o.pos[2*c+1] = -1, -1
		if local(q.A) {
			o.pos[2*c] = find(q.A, q.B)
		}
		if local(q.B) {
			o.pos[2*c+1] = find(q.B, q.A)
		}
	}
	o.m.Data = make([]float64, len(o.base))
	o.ind32 = make([]int32, len(o.m.Ind))
	for p, j := range o.m.Ind {
		o.ind32[p] = int32(j)
	}
	if err := o.SetWeights(w); err != nil {
		return nil, err
	}
	return o, nil
}

// SetWeights replaces the constraint weights w_c: each entry of the rows is
// −L_ij plus w_c·T_c/2 for the constraints on it, added in constraint order.
func (o *RowOperator) SetWeights(w []float64) error {
	if len(w) != len(o.t) {
		return fmt.Errorf("npkl: %d weights for %d constraints", len(w), len(o.t))
	}
	for c, v := range w {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("npkl: weight %d is %v", c, v)
		}
	}
	copy(o.m.Data, o.base)
	for c, v := range w {
		h := 0.5 * v * o.t[c]
		if p := o.pos[2*c]; p >= 0 {
			o.m.Data[p] += h
		}
		if p := o.pos[2*c+1]; p >= 0 {
			o.m.Data[p] += h
		}
	}
	return nil
}

// Rows returns the number of rows held.
func (o *RowOperator) Rows() int { return o.m.Rows }

// MulVec writes the held rows of A·x into dst (len(dst) = Rows(), len(x) = n).
func (o *RowOperator) MulVec(dst, x []float64) {
	a := &o.m
	if len(dst) != a.Rows || len(x) != a.Cols {
		panic(fmt.Sprintf("npkl: MulVec: len(dst) = %d, len(x) = %d, operator rows %d×%d", len(dst), len(x), a.Rows, a.Cols))
	}
	sparse.ParallelRows(a.Rows, len(a.Data), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			ind := o.ind32[a.Indptr[i]:a.Indptr[i+1]]
			val := a.Data[a.Indptr[i]:a.Indptr[i+1]]
			// Even and odd entries in two sums, added at the end: the
			// order of f64.SpDot4, so that MulBlock's columns are MulVec's.
			var even, odd float64
			p := 0
			for ; p+2 <= len(ind); p += 2 {
				even += val[p] * x[ind[p]]
				odd += val[p+1] * x[ind[p+1]]
			}
			if p < len(ind) {
				even += val[p] * x[ind[p]]
			}
			dst[i] = even + odd
		}
	})
}

// MulBlock writes the held rows of A·x into dst (Rows()×c) for x (n×c):
// one pass over the rows per four columns, in parallel. Each column is
// bit for bit MulVec's.
func (o *RowOperator) MulBlock(dst, x *mat.Dense) {
	rx, rd := x.RawMatrix(), dst.RawMatrix()
	if rx.Rows != o.m.Cols || rd.Rows != o.m.Rows || rd.Cols != rx.Cols {
		panic(fmt.Sprintf("npkl: MulBlock: x is %d×%d, dst %d×%d, operator rows %d×%d", rx.Rows, rx.Cols, rd.Rows, rd.Cols, o.m.Rows, o.m.Cols))
	}
	c := rx.Cols
	l := 0
	if c == 4 && rx.Stride == 4 {
		// KrylovSchur's block: x is already the contiguous n×4 panel.
		o.mulPanel(rd.Data, rd.Stride, rx.Data)
		l = 4
	}
	var panel []float64
	for ; l+4 <= c; l += 4 {
		if panel == nil {
			panel = make([]float64, 4*rx.Rows)
		}
		for i := 0; i < rx.Rows; i++ {
			copy(panel[4*i:4*i+4], rx.Data[i*rx.Stride+l:i*rx.Stride+l+4])
		}
		o.mulPanel(rd.Data[l:], rd.Stride, panel)
	}
	if l == c {
		return
	}
	col, out := make([]float64, rx.Rows), make([]float64, rd.Rows)
	for ; l < c; l++ {
		for i := range col {
			col[i] = rx.Data[i*rx.Stride+l]
		}
		o.MulVec(out, col)
		for i, v := range out {
			rd.Data[i*rd.Stride+l] = v
		}
	}
}

// mulPanel writes the held rows of A·x into the first four columns of dst
// (row stride ld) for the contiguous n×4 panel x: one 256-bit multiply and
// add per entry (f64.SpDot4, int32 indices; on letters about 1.1 ms per
// panel against 2.5–2.9 ms for four columns in scalar Go loops).
func (o *RowOperator) mulPanel(dst []float64, ld int, x []float64) {
	a := &o.m
	sparse.ParallelRows(a.Rows, 4*len(a.Data), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			p, q := a.Indptr[i], a.Indptr[i+1]
			d := f64.SpDot4(a.Data[p:q], o.ind32[p:q], x)
			copy(dst[i*ld:i*ld+4], d[:])
		}
	})
}

// chebPanel is one step of the Chebyshev recurrence fused into a block
// product, for contiguous n×4 panels and an operator holding all its rows:
// dst = (A·x − c·x)·s when prev is nil, and (A·x − c·x)·s − prev
// otherwise (dst may be prev, not x). Each entry is rounded as the
// product followed by that update in separate passes, so it gives chebOp's
// unfused bits while reading the panels once, on every core.
func (o *RowOperator) chebPanel(dst, x, prev []float64, c, s float64) {
	a := &o.m
	if a.Rows != a.Cols || len(x) != 4*a.Rows || len(dst) != len(x) || (prev != nil && len(prev) != len(x)) {
		panic(fmt.Sprintf("npkl: chebPanel: panels of %d, %d and %d for %d×%d rows", len(dst), len(x), len(prev), a.Rows, a.Cols))
	}
	sparse.ParallelRows(a.Rows, 4*len(a.Data), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			p, q := a.Indptr[i], a.Indptr[i+1]
			d := f64.SpDot4(a.Data[p:q], o.ind32[p:q], x)
			xi, di := x[4*i:4*i+4:4*i+4], dst[4*i:4*i+4:4*i+4]
			if prev == nil {
				for l := range 4 {
					di[l] = (d[l] - c*xi[l]) * s
				}
				continue
			}
			pi := prev[4*i : 4*i+4 : 4*i+4]
			for l := range 4 {
				di[l] = (d[l]-c*xi[l])*s - pi[l]
			}
		}
	})
}
