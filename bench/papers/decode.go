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
