package papers

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
)

// The suite's JSON writes NaN (an unknown figure, the standard deviation
// of one run, the C of a method without one) as null; decoding restores
// it: every float field starts at NaN, which a null leaves in place.
// Encoding shadows each float field of a type by a field of the same JSON
// name at a shallower depth, which encoding/json prefers.

// number is a float64 that encodes a value that is not finite as null.
type number float64

// MarshalJSON writes v as encoding/json writes a float64, or null.
func (v number) MarshalJSON() ([]byte, error) {
	f := float64(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// numbers converts v for encoding.
func numbers(v []float64) []number {
	if v == nil {
		return nil
	}
	out := make([]number, len(v))
	for i, x := range v {
		out[i] = number(x)
	}
	return out
}

// MarshalJSON encodes f with numbers that are not finite as null.
func (f Figure) MarshalJSON() ([]byte, error) {
	type plain Figure
	return json.Marshal(struct {
		plain
		Mean number `json:"mean"`
		SD   number `json:"sd"`
	}{plain(f), number(f.Mean), number(f.SD)})
}

// MarshalJSON encodes c with numbers that are not finite as null.
func (c Cell) MarshalJSON() ([]byte, error) {
	type plain Cell
	return json.Marshal(struct {
		plain
		Values       []number `json:"values"`
		Mean         number   `json:"mean"`
		SD           number   `json:"sd"`
		Tolerance    number   `json:"tolerance"`
		Diff         number   `json:"diff"`
		Z            number   `json:"z"`
		Seconds      number   `json:"seconds"`
		TrainSeconds number   `json:"train_seconds"`
	}{plain(c), numbers(c.Values), number(c.Mean), number(c.SD), number(c.Tolerance), number(c.Diff), number(c.Z), number(c.Seconds), number(c.TrainSeconds)})
}

// MarshalJSON encodes d with numbers that are not finite as null.
func (d RunDetail) MarshalJSON() ([]byte, error) {
	type plain RunDetail
	return json.Marshal(struct {
		plain
		TestError          number   `json:"test_error"`
		ValError           number   `json:"val_error"`
		EuclideanValError  number   `json:"euclidean_val_error"`
		EuclideanTestError number   `json:"euclidean_test_error"`
		ChosenC            number   `json:"chosen_c"`
		Searched           []number `json:"c_searched,omitempty"`
		Seconds            number   `json:"seconds"`
		TrainSeconds       number   `json:"train_seconds"`
	}{plain(d), number(d.TestError), number(d.ValError), number(d.EuclideanValError), number(d.EuclideanTestError), number(d.ChosenC), numbers(d.Searched), number(d.Seconds), number(d.TrainSeconds)})
}

// UnmarshalJSON decodes f with null numbers as NaN.
func (f *Figure) UnmarshalJSON(b []byte) error {
	type plain Figure
	p := plain{Mean: math.NaN(), SD: math.NaN()}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*f = Figure(p)
	return nil
}

// UnmarshalJSON decodes c with null numbers as NaN.
func (c *Cell) UnmarshalJSON(b []byte) error {
	type plain Cell
	nan := math.NaN()
	p := plain{Mean: nan, SD: nan, Tolerance: nan, Diff: nan, Z: nan, Seconds: nan, TrainSeconds: nan}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*c = Cell(p)
	return nil
}

// UnmarshalJSON decodes d with null numbers as NaN.
func (d *RunDetail) UnmarshalJSON(b []byte) error {
	type plain RunDetail
	nan := math.NaN()
	p := plain{TestError: nan, ValError: nan, EuclideanValError: nan, EuclideanTestError: nan, ChosenC: nan, Seconds: nan, TrainSeconds: nan}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*d = RunDetail(p)
	return nil
}

// ReadTables decodes the tables of the suite's JSON output (the object
// `psdlearn bench --suite papers --json` prints).
func ReadTables(r io.Reader) ([]*Table, error) {
	var out struct {
		Tables []*Table `json:"tables"`
	}
	if err := json.NewDecoder(r).Decode(&out); err != nil {
		return nil, fmt.Errorf("papers: reading tables: %w", err)
	}
	if len(out.Tables) == 0 {
		return nil, fmt.Errorf("papers: reading tables: no \"tables\" in the input")
	}
	return out.Tables, nil
}
