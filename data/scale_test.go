package data

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestStandardizerTinyScale: a feature whose values are all of order 1e-14
// varies; the constant-feature test is relative to its own magnitude, so it
// is standardised like the same feature in other units.
func TestStandardizerTinyScale(t *testing.T) {
	for _, c := range []float64{1e-14, 1, 1e10} {
		x := mat.NewDense(4, 2, []float64{1 * c, 5, 2 * c, 5, 3 * c, 5, 4 * c, 5})
		s, err := FitStandardizer(x)
		if err != nil {
			t.Fatal(err)
		}
		want := math.Sqrt(1.25) * c
		if math.Abs(s.Scale[0]-want) > 1e-12*want {
			t.Errorf("factor %g: scale of the varying feature %g, want %g", c, s.Scale[0], want)
		}
		if s.Scale[1] != 1 {
			t.Errorf("factor %g: constant feature got scale %g, want 1", c, s.Scale[1])
		}
	}
}

// TestRMSDeviation checks the normaliser against the direct formula, its
// exact scaling by powers of two, and its errors.
func TestRMSDeviation(t *testing.T) {
	x := mat.NewDense(3, 2, []float64{1, 10, 2, 20, 6, 60})
	// Column deviations² 14/3 and 1400/3: s² = (14/3 + 1400/3)/2.
	want := math.Sqrt((14.0/3 + 1400.0/3) / 2)
	s, err := RMSDeviation(x)
	if err != nil || math.Abs(s-want) > 1e-14*want {
		t.Fatalf("RMSDeviation = %v, %v; want %v", s, err, want)
	}
	for _, c := range []float64{0x1p-1000, 0x1p-30, 0x1p900} {
		var xc mat.Dense
		xc.Scale(c, x)
		sc, err := RMSDeviation(&xc)
		if err != nil || sc != c*s {
			t.Errorf("factor %g: %v, %v; want exactly %v", c, sc, err, c*s)
		}
	}
	for _, c := range []float64{0x1p-100, 0x1p-30, 0x1p60} {
		var xc mat.Dense
		xc.Scale(c, x)
		n, _, err := Normalize(&xc)
		n1, _, _ := Normalize(x)
		if err != nil || !mat.Equal(n, n1) {
			t.Errorf("factor %g: normalised data differ (%v)", c, err)
		}
	}
	huge := mat.NewDense(2, 1, []float64{-1.5e308, 1.5e308})
	if s, err := RMSDeviation(huge); err != nil || math.IsInf(s, 0) || s != 1.5e308 {
		t.Errorf("huge data: %v, %v", s, err)
	}
	// A metric in the units of such data (∝ 1/s²) underflows, and one for
	// data of scale 1e-160 overflows: Normalize refuses both.
	for _, c := range []float64{1e160, 1e-160} {
		var xc mat.Dense
		xc.Scale(c, x)
		if _, _, err := Normalize(&xc); !errors.Is(err, ErrScale) {
			t.Errorf("scale %g: %v, want ErrScale", c, err)
		}
	}
	if _, _, err := Normalize(huge); !errors.Is(err, ErrScale) {
		t.Errorf("huge data: %v, want ErrScale", err)
	}
	if _, err := RMSDeviation(mat.NewDense(3, 2, []float64{7, 7, 7, 7, 7, 7})); !errors.Is(err, ErrNoSpread) {
		t.Errorf("identical rows: %v, want ErrNoSpread", err)
	}
	if _, err := RMSDeviation(mat.NewDense(1, 1, []float64{math.NaN()})); err == nil {
		t.Error("NaN accepted")
	}
}

func TestRelativeDeviations(t *testing.T) {
	for _, c := range []struct {
		name string
		rows [][]float64
		want []float64
	}{
		// Columns of deviations 1 and 3 (and a constant one): s² = (1+9+0)/3.
		{"spread", [][]float64{{1, 10, 5}, {-1, 4, 5}}, []float64{1 / math.Sqrt(10.0/3), 3 / math.Sqrt(10.0/3), 0}},
		{"equal scales", [][]float64{{2, -2}, {-2, 2}}, []float64{1, 1}},
		{"huge values", [][]float64{{1e300, 3e300}, {-1e300, -3e300}}, []float64{1 / math.Sqrt(5), 3 / math.Sqrt(5)}},
	} {
		var x *mat.Dense
		for i, r := range c.rows {
			if x == nil {
				x = mat.NewDense(len(c.rows), len(r), nil)
			}
			x.SetRow(i, r)
		}
		got, err := RelativeDeviations(x)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var sq float64
		for j := range got {
			if math.Abs(got[j]-c.want[j]) > 1e-14 {
				t.Errorf("%s: column %d: %v, want %v", c.name, j, got[j], c.want[j])
			}
			sq += got[j] * got[j]
		}
		if math.Abs(sq/float64(len(got))-1) > 1e-14 {
			t.Errorf("%s: squares average to %v, want 1", c.name, sq/float64(len(got)))
		}
	}
	if _, err := RelativeDeviations(mat.NewDense(2, 2, []float64{1, 1, 1, 1})); err == nil {
		t.Error("constant data: no error")
	}
}
