// Package jsonnum encodes float64 values that are not finite as JSON null.
//
// encoding/json refuses NaN and ±Inf. A report type whose NaN means "not
// known" (a figure a paper does not give, the deviation of one run) shadows
// each of its float fields in its MarshalJSON with a Float of the same
// JSON name at a shallower depth, which encoding/json prefers:
//
//	func (c Cell) MarshalJSON() ([]byte, error) {
//		type plain Cell
//		return json.Marshal(struct {
//			plain
//			Mean jsonnum.Float `json:"mean"`
//		}{plain(c), jsonnum.Float(c.Mean)})
//	}
package jsonnum

import (
	"encoding/json"
	"math"
)

// Float is a float64 that encodes as null when it is not finite.
type Float float64

// MarshalJSON writes v as encoding/json writes a float64, or null.
func (v Float) MarshalJSON() ([]byte, error) {
	if !v.Finite() {
		return []byte("null"), nil
	}
	return json.Marshal(float64(v))
}

// Finite reports whether v is neither NaN nor infinite.
func (v Float) Finite() bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }

// Floats converts v for encoding (nil stays nil).
func Floats(v []float64) []Float {
	if v == nil {
		return nil
	}
	out := make([]Float, len(v))
	for i, x := range v {
		out[i] = Float(x)
	}
	return out
}
