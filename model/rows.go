package model

import (
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/internal/f64"
	"github.com/psdlearn/psdlearn/preprocess"
	"gonum.org/v1/gonum/mat"
)

// The destination-buffer forms of Transform and Distance: TransformRowTo,
// TransformTo and DistancesTo write into the caller's memory, and Distance
// uses them. They allocate nothing on the heap: the intermediate
// coordinates (the PCA projection of a row, the two rows' coordinates in a
// distance) are held in fixed arrays on the goroutine's stack, chunk
// entries at a time. They compute the same arithmetic in the same order as
// Transform (gonum's GEMM of one row is a sequence of y += t·x updates with
// a multiply and an add, never a fused multiply-add, which is what f64.Axpy
// does), so their results agree with Transform's to the last bit wherever
// both use the same instructions.

// chunk is the number of intermediate coordinates held on the stack at a
// time: PCA components of a row, or output coordinates of a distance. A
// model with more is processed in several passes over its matrices.
const chunk = 256

// rowMap is a metric model's map from a raw row to its learned-space
// coordinates, as flat views of the model's matrices. Its shapes have been
// checked against each other; the values are the model's.
type rowMap struct {
	in  int                      // raw features
	std *preprocess.Standardizer // nil: no standardisation

	// PCA: (x − pcaMean)·C with C D×d (stride cs); comp == nil means none.
	pcaMean []float64
	comp    []float64
	cs, d   int

	// The factor L, lr×r with stride ls (lr the metric's dimension).
	l         []float64
	ls, lr, r int
}

// rowMap checks that m is a metric model whose parts fit together and
// returns its row map. It reads only shapes (O(1), no allocation unless it
// fails): the values were validated when the model was loaded or built, and
// the callers check every output for finiteness.
func (m *Model) rowMap() (rowMap, error) {
	var rm rowMap
	if m == nil || m.Metric == nil {
		kind := "nil"
		if m != nil {
			kind = fmt.Sprintf("%q", m.Kind)
		}
		return rm, fmt.Errorf("%w: a %s model has no feature transform", ErrInvalid, kind)
	}
	met := m.Metric
	if met.L == nil || met.M == nil {
		return rm, fmt.Errorf("%w: malformed metric (no matrix or no factor)", ErrInvalid)
	}
	lraw := met.L.RawMatrix()
	if lraw.Rows == 0 || lraw.Cols == 0 || lraw.Rows != met.M.SymmetricDim() {
		return rm, fmt.Errorf("%w: malformed metric: factor %d×%d for a %d-dimensional matrix", ErrInvalid, lraw.Rows, lraw.Cols, met.M.SymmetricDim())
	}
	rm.l, rm.ls, rm.lr, rm.r = lraw.Data, lraw.Stride, lraw.Rows, lraw.Cols
	out := rm.lr // the dimension the preprocessing must produce
	p := m.Preprocess
	if p.Empty() {
		rm.in = out
		return rm, nil
	}
	if s := p.Std; s != nil {
		if len(s.Mean) == 0 || len(s.Mean) != len(s.Scale) {
			return rm, fmt.Errorf("%w: malformed standardizer (mean and scale of lengths %d and %d)", ErrInvalid, len(s.Mean), len(s.Scale))
		}
		rm.std, rm.in = s, len(s.Mean)
	}
	if pc := p.PCA; pc != nil {
		if pc.Components == nil {
			return rm, fmt.Errorf("%w: malformed PCA (no components)", ErrInvalid)
		}
		c := pc.Components.RawMatrix()
		if c.Rows == 0 || c.Cols == 0 || c.Rows != len(pc.Mean) || (rm.std != nil && c.Rows != rm.in) {
			return rm, fmt.Errorf("%w: malformed PCA: components %d×%d, mean of %d, %d standardised features", ErrInvalid, c.Rows, c.Cols, len(pc.Mean), rm.in)
		}
		rm.pcaMean, rm.comp, rm.cs, rm.d, rm.in = pc.Mean, c.Data, c.Stride, c.Cols, c.Rows
		if rm.d != out {
			return rm, fmt.Errorf("%w: PCA yields %d features, the metric is %d-dimensional", ErrInvalid, rm.d, out)
		}
		return rm, nil
	}
	if rm.in != out {
		return rm, fmt.Errorf("%w: the standardizer has %d features, the metric is %d-dimensional", ErrInvalid, rm.in, out)
	}
	return rm, nil
}

// feature returns feature i of the raw row x after standardisation and PCA
// centring: the multiplier of row i of C (or of L without PCA).
func (rm *rowMap) feature(i int, v float64) float64 {
	if rm.std != nil {
		v = rm.std.ApplyFeature(i, v)
	}
	if rm.comp != nil {
		v -= rm.pcaMean[i]
	}
	return v
}

// apply writes output coordinates j0 … j1−1 of the finite raw row x
// (len rm.in) into dst (len j1 − j0). With PCA it holds up to chunk
// components at a time in buf (len chunk); without, buf is not used.
func (rm *rowMap) apply(dst, x []float64, j0, j1 int, buf []float64) {
	clear(dst)
	if rm.comp == nil {
		for i, v := range x {
			if t := rm.feature(i, v); t != 0 {
				f64.Axpy(t, rm.l[i*rm.ls+j0:i*rm.ls+j1], dst)
			}
		}
		return
	}
	for k0 := 0; k0 < rm.d; k0 += chunk {
		k1 := min(k0+chunk, rm.d)
		p := buf[:k1-k0]
		clear(p)
		for i, v := range x {
			if t := rm.feature(i, v); t != 0 {
				f64.Axpy(t, rm.comp[i*rm.cs+k0:i*rm.cs+k1], p)
			}
		}
		for k, t := range p {
			if t != 0 {
				row := (k0 + k) * rm.ls
				f64.Axpy(t, rm.l[row+j0:row+j1], dst)
			}
		}
	}
}

// applyRow writes all the coordinates of x into dst, with a stack buffer
// for the PCA components if the model has a PCA (Go zeroes a stack array
// where it is declared, so the plain case does without).
func (rm *rowMap) applyRow(dst, x []float64) {
	if rm.comp == nil {
		rm.apply(dst, x, 0, rm.r, nil)
		return
	}
	var buf [chunk]float64
	rm.apply(dst, x, 0, rm.r, buf[:])
}

// finiteAll reports whether every entry of v is finite, without a branch
// per entry: v·0 is 0 for a finite v and NaN otherwise.
func finiteAll(v []float64) bool {
	var s float64
	for _, x := range v {
		s += x * 0
	}
	return s == 0
}

// firstNonFinite returns the index of the first entry of v that is NaN or
// ±Inf, or −1.
func firstNonFinite(v []float64) int {
	for i, x := range v {
		if !isFinite(x) {
			return i
		}
	}
	return -1
}

// OutputDim returns r, the number of coordinates Transform gives per row
// (the number of columns of the metric's factor L); 0 for a kernel model or
// a malformed one.
func (m *Model) OutputDim() int {
	rm, err := m.rowMap()
	if err != nil {
		return 0
	}
	return rm.r
}

// TransformRowTo writes the learned-space coordinates of one raw row x into
// dst: the model's preprocessing, then Lᵀ, the same numbers as the
// corresponding row of Transform. x must have InputDim() entries and dst
// OutputDim() (an error wrapping ErrDimension otherwise); x must be finite
// (an error wrapping ErrInvalid naming the first bad feature), and so must
// the result (an input far outside the training data's range can overflow).
// dst must not overlap x; on error its content is unspecified.
//
// It allocates nothing and is safe for concurrent use, as long as nobody
// modifies the model meanwhile: it is the call to make per request in a
// service (see also TransformTo and Distance).
func (m *Model) TransformRowTo(dst, x []float64) error {
	rm, err := m.rowMap()
	if err != nil {
		return err
	}
	if len(x) != rm.in || len(dst) != rm.r {
		return fmt.Errorf("%w: TransformRowTo: a row of %d features into %d coordinates, the model maps %d features to %d", ErrDimension, len(x), len(dst), rm.in, rm.r)
	}
	if !finiteAll(x) {
		j := firstNonFinite(x)
		return fmt.Errorf("%w: TransformRowTo: feature %d is %v, want a finite number", ErrInvalid, j, x[j])
	}
	rm.applyRow(dst, x)
	if !finiteAll(dst) {
		return fmt.Errorf("%w: TransformRowTo: the coordinates overflow (an input far outside the model's range?)", ErrInvalid)
	}
	return nil
}

// TransformTo writes Transform(x) into dst, row by row, without allocating:
// dst must be (rows of x)×OutputDim(), or empty, in which case it is
// resized (which allocates). x must have InputDim() columns and finite
// entries. The errors are those of TransformRowTo, naming the row; dst must
// not be x or share its memory, and on error its content is unspecified.
//
// For whole data sets Transform, which multiplies matrices blockwise, is
// faster; TransformTo is for the few rows of a request, into a reused
// buffer. It is safe for concurrent use.
func (m *Model) TransformTo(dst, x *mat.Dense) error {
	rm, err := m.rowMap()
	if err != nil {
		return err
	}
	if dst == nil || x == nil || x.IsEmpty() {
		return fmt.Errorf("%w: TransformTo: nil destination or no data", ErrInvalid)
	}
	if dst == x {
		return fmt.Errorf("%w: TransformTo: the destination is the input", ErrInvalid)
	}
	n, d := x.Dims()
	if dst.IsEmpty() {
		if d != rm.in {
			return fmt.Errorf("%w: TransformTo: data has %d features, the model expects %d", ErrDimension, d, rm.in)
		}
		dst.ReuseAs(n, rm.r)
	}
	if dn, dr := dst.Dims(); d != rm.in || dn != n || dr != rm.r {
		return fmt.Errorf("%w: TransformTo: %d×%d data into a %d×%d destination, the model maps %d features to %d", ErrDimension, n, d, dn, dr, rm.in, rm.r)
	}
	for i := 0; i < n; i++ {
		row, out := x.RawRowView(i), dst.RawRowView(i)
		if !finiteAll(row) {
			j := firstNonFinite(row)
			return fmt.Errorf("%w: TransformTo: row %d feature %d is %v, want a finite number", ErrInvalid, i, j, row[j])
		}
		rm.applyRow(out, row)
		if !finiteAll(out) {
			return fmt.Errorf("%w: TransformTo: the coordinates of row %d overflow (an input far outside the model's range?)", ErrInvalid, i)
		}
	}
	return nil
}

// distance returns the metric distance between the finite raw rows a and b
// as ‖Lᵀa′ − Lᵀb′‖ (a′, b′ preprocessed), summing the squares in coordinate
// order like PairDistances; ok is false when a row's coordinates are not
// finite. A small model without PCA gets small stack buffers: Go zeroes
// them on every call.
func (rm *rowMap) distance(a, b []float64) (d float64, ok bool) {
	const small = 32
	if rm.comp == nil && rm.r <= small {
		var za, zb [small]float64
		return rm.distanceBuf(a, b, za[:], zb[:], nil)
	}
	var buf, za, zb [chunk]float64
	return rm.distanceBuf(a, b, za[:], zb[:], buf[:])
}

// distanceBuf is distance with coordinates held in za and zb (of equal
// length) and PCA components in buf, len(za) coordinates at a time.
func (rm *rowMap) distanceBuf(a, b, za, zb, buf []float64) (d float64, ok bool) {
	var s float64
	for j0 := 0; j0 < rm.r; j0 += len(za) {
		j1 := min(j0+len(za), rm.r)
		ca, cb := za[:j1-j0], zb[:j1-j0]
		rm.apply(ca, a, j0, j1, buf)
		rm.apply(cb, b, j0, j1, buf)
		if !finiteAll(ca) || !finiteAll(cb) {
			return 0, false
		}
		for c, v := range ca {
			e := v - cb[c]
			s += e * e
		}
	}
	return math.Sqrt(s), true
}

// DistancesTo writes the model's metric distance between row i of a and
// row i of b into dst[i], for every row: Distance, row by row, without
// allocating. a and b must have InputDim() columns and len(dst) rows each,
// with finite entries; the errors are those of Distance, naming the row. It
// is safe for concurrent use.
func (m *Model) DistancesTo(dst []float64, a, b *mat.Dense) error {
	rm, err := m.rowMap()
	if err != nil {
		return err
	}
	if a == nil || b == nil || a.IsEmpty() || b.IsEmpty() {
		return fmt.Errorf("%w: DistancesTo: no data", ErrInvalid)
	}
	na, da := a.Dims()
	nb, db := b.Dims()
	if da != rm.in || db != rm.in || na != nb || len(dst) != na {
		return fmt.Errorf("%w: DistancesTo: %d×%d and %d×%d data into %d distances, the model expects %d features", ErrDimension, na, da, nb, db, len(dst), rm.in)
	}
	for i := range dst {
		ra, rb := a.RawRowView(i), b.RawRowView(i)
		if !finiteAll(ra) || !finiteAll(rb) {
			return fmt.Errorf("%w: DistancesTo: row %d is not finite", ErrInvalid, i)
		}
		d, ok := rm.distance(ra, rb)
		if !ok {
			return fmt.Errorf("%w: DistancesTo: the coordinates of row %d overflow (an input far outside the model's range?)", ErrInvalid, i)
		}
		dst[i] = d
	}
	return nil
}
