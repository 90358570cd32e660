package jsonnum

import (
	"encoding/json"
	"math"
	"testing"
)

func TestFloat(t *testing.T) {
	type cell struct {
		Mean float64 `json:"mean"`
		Runs int     `json:"runs"`
	}
	for _, c := range []struct {
		in   cell
		want string
	}{
		{cell{1.5, 3}, `{"runs":3,"mean":1.5}`},
		{cell{math.NaN(), 1}, `{"runs":1,"mean":null}`},
		{cell{math.Inf(-1), 0}, `{"runs":0,"mean":null}`},
	} {
		type plain cell
		b, err := json.Marshal(struct {
			plain
			Mean Float `json:"mean"`
		}{plain(c.in), Float(c.in.Mean)})
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("%+v encodes as %s, want %s", c.in, b, c.want)
		}
	}
	b, err := json.Marshal(Floats([]float64{1, math.NaN()}))
	if err != nil || string(b) != "[1,null]" {
		t.Errorf("Floats: %s, %v", b, err)
	}
	if Floats(nil) != nil {
		t.Error("Floats(nil) is not nil")
	}
}
