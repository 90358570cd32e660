package model

import (
	"errors"
	"math"
	"testing"

	"github.com/psdlearn/psdlearn/errs"
	"gonum.org/v1/gonum/mat"
)

func TestModelDistance(t *testing.T) {
	m := provenanceModel(t)
	x := randDense(11, 6, 2)
	z, err := m.Transform(x)
	if err != nil {
		t.Fatal(err)
	}
	pairs := [][2]int{{0, 1}, {2, 5}, {4, 4}, {5, 0}}
	got, err := m.PairDistances(x, pairs)
	if err != nil {
		t.Fatal(err)
	}
	for k, p := range pairs {
		// Reference: the metric applied to the standardised rows.
		a := []float64{(x.At(p[0], 0) - 1) / 2, (x.At(p[0], 1) + 2) / 0.5}
		b := []float64{(x.At(p[1], 0) - 1) / 2, (x.At(p[1], 1) + 2) / 0.5}
		want := m.Metric.Distance(a, b)
		d, err := m.Distance(x.RawRowView(p[0]), x.RawRowView(p[1]))
		if err != nil {
			t.Fatal(err)
		}
		zd := math.Hypot(z.At(p[0], 0)-z.At(p[1], 0), z.At(p[0], 1)-z.At(p[1], 1))
		if math.Abs(got[k]-want) > 1e-12*math.Max(1, want) || d != got[k] || math.Abs(zd-want) > 1e-12*math.Max(1, want) {
			t.Errorf("pair %v: PairDistances %v, Distance %v, Transform %v, want %v", p, got[k], d, zd, want)
		}
	}
	if out, err := m.PairDistances(x, nil); err != nil || out == nil || len(out) != 0 {
		t.Errorf("no pairs: %v, %v", out, err)
	}
}

func TestModelDistanceErrors(t *testing.T) {
	m := provenanceModel(t)
	kern, _ := NewKernel(randDense(1, 3, 1), []float64{1})
	km := &Model{Kind: KindKernel, Kernel: kern}
	x := randDense(2, 4, 2)
	nan := mat.DenseCopyOf(x)
	nan.Set(3, 1, math.NaN())
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"short vector", second(m.Distance([]float64{1}, []float64{1, 2})), errs.ErrDimension},
		{"long vector", second(m.Distance([]float64{1, 2}, []float64{1, 2, 3})), ErrDimension},
		{"nil vectors", second(m.Distance(nil, nil)), ErrDimension},
		{"NaN", second(m.Distance([]float64{1, math.NaN()}, []float64{1, 2})), ErrInvalid},
		{"Inf", second(m.Distance([]float64{1, 2}, []float64{math.Inf(-1), 2})), ErrInvalid},
		{"kernel model", second(km.Distance([]float64{1}, []float64{1})), ErrInvalid},
		{"nil model", second((*Model)(nil).Distance([]float64{1}, []float64{1})), ErrInvalid},
		{"columns", second(m.PairDistances(randDense(2, 4, 3), [][2]int{{0, 1}})), errs.ErrDimension},
		{"nil data", second(m.PairDistances(nil, [][2]int{{0, 1}})), ErrInvalid},
		{"empty data", second(m.PairDistances(&mat.Dense{}, nil)), ErrInvalid},
		{"index", second(m.PairDistances(x, [][2]int{{0, 1}, {1, 4}})), ErrInvalid},
		{"negative index", second(m.PairDistances(x, [][2]int{{-1, 1}})), ErrInvalid},
		{"NaN row", second(m.PairDistances(nan, [][2]int{{0, 3}})), ErrInvalid},
		{"kernel pairs", second(km.PairDistances(x, [][2]int{{0, 1}})), errs.ErrInvalid},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: error %v, want one wrapping %v", tc.name, tc.err, tc.want)
		}
	}
	// A NaN in a row no pair uses is not looked at.
	if _, err := m.PairDistances(nan, [][2]int{{0, 1}}); err != nil {
		t.Errorf("NaN in an unused row: %v", err)
	}
	// Without preprocessing the metric's own dimension counts.
	plain := &Model{Kind: KindMetric, Metric: Identity(3)}
	if _, err := plain.Distance([]float64{1, 2}, []float64{1, 2}); !errors.Is(err, ErrDimension) {
		t.Errorf("identity metric, 2 features: %v", err)
	}
	if d, err := plain.Distance([]float64{0, 3, 0}, []float64{4, 0, 0}); err != nil || d != 5 {
		t.Errorf("identity metric: %v, %v, want 5", d, err)
	}
}

func second[T any](_ T, err error) error { return err }
