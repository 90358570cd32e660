package psdlearn

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/psdlearn/psdlearn/errs"
	"gonum.org/v1/gonum/mat"
)

// labelMap remaps the caller's labels, whatever their values, to dense
// codes 0..classes−1 in ascending order of the labels; labels first seen
// in validation or test rows get codes from classes on (they match no
// training row). No label is ever used as an index.
type labelMap struct {
	code map[int]int
	n    int // training classes
}

func newLabelMap(y []int) *labelMap {
	u := slices.Clone(y)
	slices.Sort(u)
	u = slices.Compact(u)
	m := &labelMap{code: make(map[int]int, len(u)), n: len(u)}
	for i, v := range u {
		m.code[v] = i
	}
	return m
}

func (m *labelMap) classes() int { return m.n }

// dense returns the codes of y; labels not seen in training get codes
// from classes() on.
func (m *labelMap) dense(y []int) []int {
	out := make([]int, len(y))
	next := m.n
	extra := map[int]int{}
	for i, v := range y {
		c, ok := m.code[v]
		if !ok {
			if c, ok = extra[v]; !ok {
				c = next
				extra[v] = c
				next++
			}
		}
		out[i] = c
	}
	return out
}

// checkFinite refuses a matrix with a NaN or an infinity.
func checkFinite(what string, x *mat.Dense) error {
	raw := x.RawMatrix()
	for i := 0; i < raw.Rows; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: %s[%d][%d] = %v, want finite values", ErrInvalid, what, i, j, v)
			}
		}
	}
	return nil
}

// isClassified reports whether err matches one of the errs conditions.
func isClassified(err error) bool {
	for _, c := range []error{errs.ErrInvalid, errs.ErrNotConverged, errs.ErrResource} {
		if errors.Is(err, c) {
			return true
		}
	}
	return false
}
