package bench

import (
	"encoding/json"

	"github.com/psdlearn/psdlearn/internal/jsonnum"
)

// The report suites' JSON writes a figure that is not known (NaN: a cell
// the paper does not print, a C that gave no kernel) as null.

// MarshalJSON encodes m with numbers that are not finite as null.
func (m MeanSD) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Mean jsonnum.Float `json:"mean"`
		SD   jsonnum.Float `json:"sd"`
	}{jsonnum.Float(m.Mean), jsonnum.Float(m.SD)})
}

// MarshalJSON encodes c with numbers that are not finite as null.
func (c Table2Cell) MarshalJSON() ([]byte, error) {
	type plain Table2Cell
	return json.Marshal(struct {
		plain
		C            jsonnum.Float `json:"C"`
		LearnSeconds jsonnum.Float `json:"learn_seconds"`
		Bracket      jsonnum.Float `json:"bracket"`
	}{plain(c), jsonnum.Float(c.C), jsonnum.Float(c.LearnSeconds), jsonnum.Float(c.Bracket)})
}

// MarshalJSON encodes p with numbers that are not finite as null.
func (p Figure2Point) MarshalJSON() ([]byte, error) {
	type plain Figure2Point
	return json.Marshal(struct {
		plain
		Constraints jsonnum.Float `json:"constraints"`
		Seconds     jsonnum.Float `json:"seconds"`
	}{plain(p), jsonnum.Float(p.Constraints), jsonnum.Float(p.Seconds)})
}

// MarshalJSON encodes c with CSDP's optimum null when CSDP did not run.
func (c PSDBoostCurve) MarshalJSON() ([]byte, error) {
	type plain PSDBoostCurve
	return json.Marshal(struct {
		plain
		Optimum jsonnum.Float `json:"csdp_optimum"`
	}{plain(c), jsonnum.Float(c.Optimum)})
}
