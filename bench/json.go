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
		Paper   []jsonnum.Float `json:"dual_per_iteration_single_column"`
		Default []jsonnum.Float `json:"dual_per_iteration_default"`
		Optimum jsonnum.Float   `json:"csdp_optimum"`
	}{plain(c), jsonnum.Floats(c.Paper), jsonnum.Floats(c.Default), jsonnum.Float(c.Optimum)})
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
	p := struct {
		plain
		Paper   []*float64 `json:"dual_per_iteration_single_column"`
		Default []*float64 `json:"dual_per_iteration_default"`
	}{plain: plain{Optimum: math.NaN()}}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*c = PSDBoostCurve(p.plain)
	c.Paper, c.Default = floatsOrNaN(p.Paper), floatsOrNaN(p.Default)
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

// floatsOrNaN is the inverse of jsonnum.Floats for decoding: null entries
// become NaN.
func floatsOrNaN(v []*float64) []float64 {
	if v == nil {
		return nil
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = orNaN(x)
	}
	return out
}

// MarshalJSON encodes r with numbers that are not finite as null (a run
// that failed, BoostMetric's C).
func (r MPIScalingRow) MarshalJSON() ([]byte, error) {
	type plain MPIScalingRow
	return json.Marshal(struct {
		plain
		TrainSeconds  jsonnum.Float   `json:"train_seconds"`
		TotalSeconds  jsonnum.Float   `json:"total_seconds"`
		Speedup       jsonnum.Float   `json:"train_speedup"`
		IterSpeedup   jsonnum.Float   `json:"iteration_speedup"`
		TestError     jsonnum.Float   `json:"test_error"`
		ChosenC       jsonnum.Float   `json:"chosen_c"`
		Objective     jsonnum.Float   `json:"objective"`
		RankPeakRSSMB []jsonnum.Float `json:"rank_peak_rss_mb"`
	}{plain(r), jsonnum.Float(r.TrainSeconds), jsonnum.Float(r.TotalSeconds), jsonnum.Float(r.Speedup), jsonnum.Float(r.IterationSpeedup), jsonnum.Float(r.TestError),
		jsonnum.Float(r.ChosenC), jsonnum.Float(r.Objective), jsonnum.Floats(r.RankPeakRSSMB)})
}

// MarshalJSON encodes r with numbers that are not finite as null.
func (r BoostFig2Row) MarshalJSON() ([]byte, error) {
	type plain BoostFig2Row
	return json.Marshal(struct {
		plain
		Euclidean jsonnum.Float `json:"euclidean_test_error"`
	}{plain(r), jsonnum.Float(r.Euclidean)})
}

// MarshalJSON encodes f with numbers that are not finite as null.
func (f BoostFig1) MarshalJSON() ([]byte, error) {
	type plain BoostFig1
	return json.Marshal(struct {
		plain
		Eigenvalues []jsonnum.Float `json:"eigenvalues"`
		Circles     jsonnum.Float   `json:"circles_share"`
		TestError   jsonnum.Float   `json:"test_error"`
		Euclidean   jsonnum.Float   `json:"euclidean_test_error"`
	}{plain(f), jsonnum.Floats(f.Eigenvalues), jsonnum.Float(f.Circles), jsonnum.Float(f.TestError), jsonnum.Float(f.Euclidean)})
}

// MarshalJSON encodes p with numbers that are not finite as null.
func (p Table2Paper) MarshalJSON() ([]byte, error) {
	type plain Table2Paper
	return json.Marshal(struct {
		plain
		Seconds []jsonnum.Float `json:"seconds,omitempty"`
	}{plain(p), jsonnum.Floats(p.Seconds)})
}

// UnmarshalJSON decodes p with null numbers as NaN.
func (p *Table2Paper) UnmarshalJSON(b []byte) error {
	type plain Table2Paper
	var q struct {
		plain
		Seconds []*float64 `json:"seconds,omitempty"`
	}
	if err := json.Unmarshal(b, &q); err != nil {
		return err
	}
	*p = Table2Paper(q.plain)
	p.Seconds = floatsOrNaN(q.Seconds)
	return nil
}

// MarshalJSON encodes f with numbers that are not finite as null.
func (f Figure2) MarshalJSON() ([]byte, error) {
	type plain Figure2
	return json.Marshal(struct {
		plain
		Fractions []jsonnum.Float `json:"fractions"`
	}{plain(f), jsonnum.Floats(f.Fractions)})
}

// UnmarshalJSON decodes f with null numbers as NaN.
func (f *Figure2) UnmarshalJSON(b []byte) error {
	type plain Figure2
	var q struct {
		plain
		Fractions []*float64 `json:"fractions"`
	}
	if err := json.Unmarshal(b, &q); err != nil {
		return err
	}
	*f = Figure2(q.plain)
	f.Fractions = floatsOrNaN(q.Fractions)
	return nil
}

// MarshalJSON encodes r with numbers that are not finite as null.
func (r PhasesRow) MarshalJSON() ([]byte, error) {
	type plain PhasesRow
	return json.Marshal(struct {
		plain
		Seconds     jsonnum.Float `json:"seconds"`
		DGEMMGflops jsonnum.Float `json:"dgemm_gflops"`
	}{plain(r), jsonnum.Float(r.Seconds), jsonnum.Float(r.DGEMMGflops)})
}

// MarshalJSON encodes c with numbers that are not finite as null.
func (c MPICopies) MarshalJSON() ([]byte, error) {
	type plain MPICopies
	return json.Marshal(struct {
		plain
		AloneSeconds  jsonnum.Float `json:"alone_train_seconds"`
		AtOnceSeconds jsonnum.Float `json:"at_once_train_seconds"`
		Throughput    jsonnum.Float `json:"throughput"`
	}{plain(c), jsonnum.Float(c.AloneSeconds), jsonnum.Float(c.AtOnceSeconds), jsonnum.Float(c.Throughput)})
}

// MarshalJSON encodes c with numbers that are not finite as null.
func (c Ceiling) MarshalJSON() ([]byte, error) {
	type plain Ceiling
	return json.Marshal(struct {
		plain
		One     jsonnum.Float `json:"one_per_second"`
		Two     jsonnum.Float `json:"two_per_second"`
		Speedup jsonnum.Float `json:"speedup"`
	}{plain(c), jsonnum.Float(c.One), jsonnum.Float(c.Two), jsonnum.Float(c.Speedup)})
}
