package papers

import (
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/psdlearn/psdlearn/internal/jsonnum"
)

// The suite's JSON writes NaN (an unknown figure, the standard deviation
// of one run, the C of a method without one) as null; decoding restores
// it: every float field starts at NaN, which a null leaves in place.
// Encoding shadows each float field of a type by a field of the same JSON
// name at a shallower depth, which encoding/json prefers.

// MarshalJSON encodes f with numbers that are not finite as null.
func (f Figure) MarshalJSON() ([]byte, error) {
	type plain Figure
	return json.Marshal(struct {
		plain
		Mean jsonnum.Float `json:"mean"`
		SD   jsonnum.Float `json:"sd"`
	}{plain(f), jsonnum.Float(f.Mean), jsonnum.Float(f.SD)})
}

// MarshalJSON encodes c with numbers that are not finite as null.
func (c Cell) MarshalJSON() ([]byte, error) {
	type plain Cell
	return json.Marshal(struct {
		plain
		Values       []jsonnum.Float `json:"values"`
		Mean         jsonnum.Float   `json:"mean"`
		SD           jsonnum.Float   `json:"sd"`
		Tolerance    jsonnum.Float   `json:"tolerance"`
		Diff         jsonnum.Float   `json:"diff"`
		Z            jsonnum.Float   `json:"z"`
		Seconds      jsonnum.Float   `json:"seconds"`
		TrainSeconds jsonnum.Float   `json:"train_seconds"`
	}{plain(c), jsonnum.Floats(c.Values), jsonnum.Float(c.Mean), jsonnum.Float(c.SD), jsonnum.Float(c.Tolerance), jsonnum.Float(c.Diff), jsonnum.Float(c.Z), jsonnum.Float(c.Seconds), jsonnum.Float(c.TrainSeconds)})
}

// MarshalJSON encodes d with numbers that are not finite as null.
func (d RunDetail) MarshalJSON() ([]byte, error) {
	type plain RunDetail
	return json.Marshal(struct {
		plain
		TestError          jsonnum.Float   `json:"test_error"`
		ValError           jsonnum.Float   `json:"val_error"`
		EuclideanValError  jsonnum.Float   `json:"euclidean_val_error"`
		EuclideanTestError jsonnum.Float   `json:"euclidean_test_error"`
		ChosenC            jsonnum.Float   `json:"chosen_c"`
		Searched           []jsonnum.Float `json:"c_searched,omitempty"`
		Seconds            jsonnum.Float   `json:"seconds"`
		TrainSeconds       jsonnum.Float   `json:"train_seconds"`
	}{plain(d), jsonnum.Float(d.TestError), jsonnum.Float(d.ValError), jsonnum.Float(d.EuclideanValError), jsonnum.Float(d.EuclideanTestError), jsonnum.Float(d.ChosenC), jsonnum.Floats(d.Searched), jsonnum.Float(d.Seconds), jsonnum.Float(d.TrainSeconds)})
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
