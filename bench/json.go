package bench

import (
	"encoding/json"
	"math"

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

// MarshalJSON encodes r with numbers that are not finite as null.
func (r SDPRow) MarshalJSON() ([]byte, error) {
	type plain SDPRow
	var metrics map[string]jsonnum.Float
	if r.Metrics != nil {
		metrics = make(map[string]jsonnum.Float, len(r.Metrics))
		for k, v := range r.Metrics {
			metrics[k] = jsonnum.Float(v)
		}
	}
	return json.Marshal(struct {
		plain
		Objective     jsonnum.Float            `json:"psdlearn_objective"`
		Seconds       jsonnum.Float            `json:"psdlearn_seconds"`
		RefObjective  jsonnum.Float            `json:"csdp_objective"`
		RefDual       jsonnum.Float            `json:"csdp_dual"`
		RefSeconds    jsonnum.Float            `json:"csdp_seconds"`
		Difference    jsonnum.Float            `json:"difference"`
		RelDiff       jsonnum.Float            `json:"relative_difference"`
		Bound         jsonnum.Float            `json:"bound"`
		Ratio         jsonnum.Float            `json:"time_ratio"`
		CPUSeconds    jsonnum.Float            `json:"psdlearn_cpu_seconds"`
		RefCPUSeconds jsonnum.Float            `json:"csdp_cpu_seconds"`
		CPURatio      jsonnum.Float            `json:"cpu_ratio"`
		Metrics       map[string]jsonnum.Float `json:"metrics,omitempty"`
	}{plain(r), jsonnum.Float(r.Objective), jsonnum.Float(r.Seconds), jsonnum.Float(r.RefObjective), jsonnum.Float(r.RefDual),
		jsonnum.Float(r.RefSeconds), jsonnum.Float(r.Difference), jsonnum.Float(r.RelDiff), jsonnum.Float(r.Bound),
		jsonnum.Float(r.Ratio), jsonnum.Float(r.CPUSeconds), jsonnum.Float(r.RefCPUSeconds), jsonnum.Float(r.CPURatio), metrics})
}

// Decoding restores what the encoders above write as null: every float
// field starts at NaN, which a null leaves in place.

// UnmarshalJSON decodes m with null numbers as NaN.
func (m *MeanSD) UnmarshalJSON(b []byte) error {
	var p struct {
		Mean *float64 `json:"mean"`
		SD   *float64 `json:"sd"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*m = MeanSD{orNaN(p.Mean), orNaN(p.SD)}
	return nil
}

// UnmarshalJSON decodes c with null numbers as NaN.
func (c *Table2Cell) UnmarshalJSON(b []byte) error {
	type plain Table2Cell
	nan := math.NaN()
	p := plain{C: nan, LearnSeconds: nan, Bracket: nan}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*c = Table2Cell(p)
	return nil
}

// UnmarshalJSON decodes p with null numbers as NaN.
func (p *Figure2Point) UnmarshalJSON(b []byte) error {
	type plain Figure2Point
	nan := math.NaN()
	q := plain{Constraints: nan, Seconds: nan}
	if err := json.Unmarshal(b, &q); err != nil {
		return err
	}
	*p = Figure2Point(q)
	return nil
}

// UnmarshalJSON decodes c with CSDP's optimum NaN when it is null.
func (c *PSDBoostCurve) UnmarshalJSON(b []byte) error {
	type plain PSDBoostCurve
	p := plain{Optimum: math.NaN()}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*c = PSDBoostCurve(p)
	return nil
}

// UnmarshalJSON decodes r with null numbers as NaN.
func (r *SDPRow) UnmarshalJSON(b []byte) error {
	type plain SDPRow
	nan := math.NaN()
	p := plain{Objective: nan, Seconds: nan, RefObjective: nan, RefDual: nan, RefSeconds: nan, Difference: nan, RelDiff: nan,
		Bound: nan, Ratio: nan, CPUSeconds: nan, RefCPUSeconds: nan, CPURatio: nan}
	var m struct {
		Metrics map[string]*float64 `json:"metrics"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	if m.Metrics != nil {
		p.Metrics = make(map[string]float64, len(m.Metrics))
		for k, v := range m.Metrics {
			p.Metrics[k] = orNaN(v)
		}
	}
	*r = SDPRow(p)
	return nil
}

func orNaN(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}
