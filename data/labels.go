package data

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// canonicalLabel returns the class name of a raw label and whether it is
// numeric. Numeric labels are canonicalised so that "1", "1.0" and "+1" are
// one class named "1".
func canonicalLabel(s string) (string, float64, bool) {
	s = strings.TrimSpace(s)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return s, 0, false
	}
	if v == 0 {
		v = 0 // fold −0 into 0
	}
	return strconv.FormatFloat(v, 'g', -1, 64), v, true
}

// sortClasses orders class names: numerically when every name is a number,
// else lexicographically. The order does not depend on the row order, so
// two files with the same classes get the same class indices.
func sortClasses(names []string) {
	numeric := true
	vals := make(map[string]float64, len(names))
	for _, n := range names {
		_, v, ok := canonicalLabel(n)
		if !ok {
			numeric = false
			break
		}
		vals[n] = v
	}
	if numeric {
		sort.Slice(names, func(i, j int) bool { return vals[names[i]] < vals[names[j]] })
		return
	}
	sort.Strings(names)
}

// labelEncoder maps raw label strings to class indices.
type labelEncoder struct {
	index map[string]int // canonical name → first-seen id
	names []string
	ids   []int // per row, first-seen id
}

func (e *labelEncoder) add(raw string) {
	if e.index == nil {
		e.index = map[string]int{}
	}
	name, _, _ := canonicalLabel(raw)
	id, ok := e.index[name]
	if !ok {
		id = len(e.names)
		e.index[name] = id
		e.names = append(e.names, name)
	}
	e.ids = append(e.ids, id)
}

// firstRecurs reports whether the class of the first row occurs in another
// row, and whether every other row's label is a number.
func (e *labelEncoder) firstRecurs() (recurs, othersNumeric bool) {
	if len(e.ids) == 0 {
		return false, false
	}
	id0 := e.ids[0]
	for _, id := range e.ids[1:] {
		if id == id0 {
			return true, false
		}
	}
	othersNumeric = true
	for id, name := range e.names {
		if id == id0 {
			continue
		}
		if _, _, ok := canonicalLabel(name); !ok {
			othersNumeric = false
		}
	}
	return false, othersNumeric
}

// dropFirst forgets the first row, and its class when no other row has it.
func (e *labelEncoder) dropFirst() {
	if len(e.ids) == 0 {
		return
	}
	id0 := e.ids[0]
	e.ids = e.ids[1:]
	for _, id := range e.ids {
		if id == id0 {
			return
		}
	}
	delete(e.index, e.names[id0])
	e.names = append(e.names[:id0], e.names[id0+1:]...)
	for i, id := range e.ids {
		if id > id0 {
			e.ids[i] = id - 1
		}
	}
	for n, id := range e.index {
		if id > id0 {
			e.index[n] = id - 1
		}
	}
}

// finish returns Y (indices into the sorted class list) and the class list.
func (e *labelEncoder) finish() ([]int, []string) {
	sorted := append([]string(nil), e.names...)
	sortClasses(sorted)
	pos := make(map[string]int, len(sorted))
	for i, n := range sorted {
		pos[n] = i
	}
	remap := make([]int, len(e.names))
	for id, n := range e.names {
		remap[id] = pos[n]
	}
	y := make([]int, len(e.ids))
	for i, id := range e.ids {
		y[i] = remap[id]
	}
	return y, sorted
}

// Validate checks that d is well formed: a non-empty finite X with one label
// per row, every label an index into Classes (when Classes is set) and ≥ 0.
func (d *Dataset) Validate() error {
	if d == nil || d.X == nil {
		return fmt.Errorf("%w: empty data set", ErrFormat)
	}
	n, dim := d.X.Dims()
	if len(d.Y) != n {
		return fmt.Errorf("%w: data set %q has %d rows and %d labels", ErrFormat, d.Name, n, len(d.Y))
	}
	for i, y := range d.Y {
		if y < 0 || (d.Classes != nil && y >= len(d.Classes)) {
			return fmt.Errorf("%w: data set %q: row %d has label index %d outside [0,%d)", ErrFormat, d.Name, i, y, len(d.Classes))
		}
	}
	raw := d.X.RawMatrix()
	for i := 0; i < n; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+dim] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: data set %q: X[%d,%d] = %v", ErrFormat, d.Name, i, j, v)
			}
		}
	}
	return nil
}

// NumClasses returns the number of classes: len(Classes), or 1 + the largest
// label when Classes is not set.
func (d *Dataset) NumClasses() int {
	if d.Classes != nil {
		return len(d.Classes)
	}
	m := 0
	for _, y := range d.Y {
		if y+1 > m {
			m = y + 1
		}
	}
	return m
}

// ClassCounts returns the number of points of each class.
func (d *Dataset) ClassCounts() []int {
	c := make([]int, d.NumClasses())
	for _, y := range d.Y {
		if y >= 0 && y < len(c) {
			c[y]++
		}
	}
	return c
}

// Subset returns a new data set holding copies of the given rows, in order.
// It panics if an index is out of range.
func (d *Dataset) Subset(rows []int) *Dataset {
	_, dim := d.X.Dims()
	out := &Dataset{Name: d.Name, Classes: d.Classes, Y: make([]int, len(rows))}
	if len(rows) == 0 {
		return out
	}
	x := mat.NewDense(len(rows), dim, nil)
	for i, r := range rows {
		x.SetRow(i, d.X.RawRowView(r))
		out.Y[i] = d.Y[r]
	}
	out.X = x
	return out
}

// WithX returns a data set with the same name, labels and classes and the
// data matrix x (which must have Len() rows). Preprocessing uses it.
func (d *Dataset) WithX(x *mat.Dense) *Dataset {
	return &Dataset{Name: d.Name, X: x, Y: d.Y, Classes: d.Classes}
}

// UnifyClasses re-indexes the labels of the given data sets, in place, onto
// one shared class list: the union of their Classes, ordered as Load orders
// classes (numerically when all are numbers, else lexicographically). Use it
// when a training and a test set were loaded from different files. Every
// data set must have Classes set.
func UnifyClasses(ds ...*Dataset) error {
	seen := map[string]bool{}
	var all []string
	for _, d := range ds {
		if d == nil || d.Classes == nil {
			return fmt.Errorf("%w: UnifyClasses: data set without class names", ErrFormat)
		}
		for _, c := range d.Classes {
			if !seen[c] {
				seen[c] = true
				all = append(all, c)
			}
		}
	}
	sortClasses(all)
	pos := make(map[string]int, len(all))
	for i, c := range all {
		pos[c] = i
	}
	for _, d := range ds {
		for i, y := range d.Y {
			if y < 0 || y >= len(d.Classes) {
				return fmt.Errorf("%w: UnifyClasses: data set %q row %d has label index %d outside [0,%d)", ErrFormat, d.Name, i, y, len(d.Classes))
			}
		}
	}
	for _, d := range ds {
		y := make([]int, len(d.Y))
		for i, v := range d.Y {
			y[i] = pos[d.Classes[v]]
		}
		d.Y = y
		d.Classes = all
	}
	return nil
}

// SharedRows returns how many rows of other are exact copies (the same
// float64 bits) of a row of ref: rows a k-NN reference holds already, each
// its own nearest neighbour. Both must have the same number of features.
func SharedRows(ref, other *Dataset) int {
	if ref == nil || other == nil || ref.X == nil || other.X == nil || ref.Dim() != other.Dim() {
		return 0
	}
	seen := make(map[string]struct{}, ref.Len())
	key := func(row []float64) string {
		b := make([]byte, 0, 8*len(row))
		for _, v := range row {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
		return string(b)
	}
	for i := 0; i < ref.Len(); i++ {
		seen[key(ref.X.RawRowView(i))] = struct{}{}
	}
	shared := 0
	for i := 0; i < other.Len(); i++ {
		if _, ok := seen[key(other.X.RawRowView(i))]; ok {
			shared++
		}
	}
	return shared
}

// MissingClasses returns the classes of other's rows that no row of train
// has, and the number of other's rows with them. Both must share a class
// list (one data set split, or UnifyClasses).
func MissingClasses(train, other *Dataset) (classes []string, rows int) {
	if train == nil || other == nil {
		return nil, 0
	}
	have := map[int]bool{}
	for _, y := range train.Y {
		have[y] = true
	}
	missing := map[int]bool{}
	for _, y := range other.Y {
		if !have[y] {
			rows++
			if !missing[y] {
				missing[y] = true
				name := fmt.Sprint(y)
				if y >= 0 && y < len(other.Classes) {
					name = other.Classes[y]
				}
				classes = append(classes, name)
			}
		}
	}
	sort.Strings(classes)
	return classes, rows
}
