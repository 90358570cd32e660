package grid

import (
	"math"
	"slices"
	"testing"
)

// pts builds points from alternating values and errors.
func pts(v ...float64) []Point {
	var out []Point
	for i := 0; i+1 < len(v); i += 2 {
		out = append(out, Point{v[i], v[i+1]})
	}
	return out
}

func TestExtend(t *testing.T) {
	base := []float64{0.1, 1, 10, 100}
	for _, c := range []struct {
		name    string
		initial []float64
		step    float64
		max     int
		tried   []Point
		want    float64 // 0: done
	}{
		{"interior optimum", base, 0, 3, pts(0.1, .3, 1, .2, 10, .25, 100, .3), 0},
		{"top strictly best", base, 0, 3, pts(0.1, .3, 1, .2, 10, .15, 100, .1), 1000},
		{"top tied", base, 0, 3, pts(0.1, .3, 1, .2, 10, .1, 100, .1), 0},
		{"bottom strictly best", base, 0, 3, pts(0.1, .1, 1, .2, 10, .3, 100, .3), 0.01},
		{"bottom tied (same model below a threshold)", base, 0, 3, pts(0.1, .1, 1, .1, 10, .3, 100, .3), 0},
		{"extension improved: go on", base, 0, 3, pts(0.1, .3, 1, .2, 10, .15, 100, .1, 1000, .05), 1e4},
		{"extension no better: stop", base, 0, 3, pts(0.1, .3, 1, .2, 10, .15, 100, .1, 1000, .1), 0},
		{"extension worse: stop", base, 0, 3, pts(0.1, .3, 1, .2, 10, .15, 100, .1, 1000, .2), 0},
		{"three extensions made", base, 0, 3, pts(0.1, .3, 1, .2, 10, .15, 100, .1, 1000, .05, 1e4, .04, 1e5, .03), 0},
		{"two extensions made", base, 0, 3, pts(0.1, .3, 1, .2, 10, .15, 100, .1, 1000, .05, 1e4, .04), 1e5},
		{"downward, scaled", []float64{1e5, 1e6, 1e7, 1e8}, 0, 3, pts(1e5, .1, 1e6, .2, 1e7, .3, 1e8, .3), 1e4},
		{"no extension allowed", base, 0, 0, pts(0.1, .3, 1, .2, 10, .15, 100, .1), 0},
		{"step 2", base, 2, 3, pts(0.1, .3, 1, .2, 10, .15, 100, .1), 200},
		{"step 1 is no step", base, 1, 3, pts(0.1, .3, 1, .2, 10, .15, 100, .1), 0},
		{"NaN error", base, 0, 3, pts(0.1, math.NaN(), 1, .2, 10, .15, 100, .1), 0},
		{"one point", base, 0, 3, pts(100, .1), 0},
		{"unsorted input", base, 0, 3, pts(100, .1, 10, .15, 0.1, .3, 1, .2), 1000},
	} {
		got, ok := Extend(c.initial, c.tried, c.step, c.max)
		if ok != (c.want != 0) || ok && got != c.want {
			t.Errorf("%s: Extend = %v, %v; want %v", c.name, got, ok, c.want)
		}
	}
}

func TestFrobeniusScale(t *testing.T) {
	for _, c := range []struct {
		name string
		dev  []float64
		want float64
		err  bool
	}{
		{"standardised", []float64{1, 1, 1}, 1, false},
		{"constant feature ignored", []float64{1, 0, 1}, 1, false},
		{"no varying feature", []float64{0, 0}, 1, false},
		{"one small feature", []float64{0.1, 1}, (1e4 + 1) / 2, false},
		{"scaled up", []float64{2, 2}, 1.0 / 16, false},
		{"NaN", []float64{1, math.NaN()}, 0, true},
		{"negative", []float64{-1}, 0, true},
	} {
		got, err := FrobeniusScale(c.dev)
		if (err != nil) != c.err || !c.err && math.Abs(got-c.want) > 1e-12*c.want {
			t.Errorf("%s: FrobeniusScale = %v, %v; want %v (error %v)", c.name, got, err, c.want, c.err)
		}
	}
}

func TestFormat(t *testing.T) {
	if got := Format([]float64{0.1, 1, 1e9, 12345678}); got != "0.1, 1, 1e+09, 1.23457e+07" {
		t.Errorf("Format = %q", got)
	}
}

func TestScaleIfStandardisingHelps(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		scale, raw, std, want float64
	}{
		{1.5e10, 0.27, 0.04, 1.5e10}, // raw wine
		{46, 0.025, 0.096, 1},        // MNIST's principal components
		{12, 0.05, 0.05, 1},          // equal: unscaled
		{12, nan, 0.05, 1},
		{12, 0.05, nan, 1},
		{0.5, 0.3, 0.1, 1},
		{1.0001, 0.3, 0.1, 1}, // below one step of the grid
		{10, 0.3, 0.1, 10},
		{math.Inf(1), 0.3, 0.1, 1},
	} {
		if got := ScaleIfStandardisingHelps(c.scale, c.raw, c.std); got != c.want {
			t.Errorf("ScaleIfStandardisingHelps(%v, %v, %v) = %v, want %v", c.scale, c.raw, c.std, got, c.want)
		}
	}
}

func TestClearlyBetter(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		before, after float64
		n             int
		want          bool
	}{
		{0.30, 0.20, 100, true},       // SE 0.046
		{0.30, 0.27, 100, false},      // within one SE
		{0.0769, 0.0385, 26, false},   // one row of 26 is not clear
		{0.0204, 0.0180, 10000, true}, // SE 0.0014
		{0.0204, 0.0195, 10000, false},
		{0.2, 0.1, 0, false},
		{nan, 0.1, 10, false},
		{0.2, nan, 10, false},
	} {
		if got := ClearlyBetter(c.before, c.after, c.n); got != c.want {
			t.Errorf("ClearlyBetter(%v, %v, %d) = %v", c.before, c.after, c.n, got)
		}
	}
}

func TestUnion(t *testing.T) {
	for _, c := range []struct {
		base  []float64
		scale float64
		want  []float64
	}{
		{[]float64{0.1, 1, 10, 100}, 1e7, []float64{0.1, 1, 10, 100, 1e6, 1e7, 1e8, 1e9}},
		{[]float64{0.1, 1, 10, 100}, 1, []float64{0.1, 1, 10, 100}},
		{[]float64{1, 10}, 10, []float64{1, 10, 100}}, // overlap once
		{[]float64{1, 10}, 3, []float64{1, 3, 10, 30}},
	} {
		if got := Union(c.base, c.scale); !slices.Equal(got, c.want) {
			t.Errorf("Union(%v, %v) = %v, want %v", c.base, c.scale, got, c.want)
		}
	}
}
