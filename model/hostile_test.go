package model

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/errs"
	"gonum.org/v1/gonum/mat"
)

// metricFile returns a metric model file with the given 2×2 matrix and
// preprocessing JSON (empty for none), followed by tail.
func metricFile(m [4]float64, pre, tail string) string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	p := ""
	if pre != "" {
		p = `,"preprocess":` + pre
	}
	return fmt.Sprintf(`{"format":"psdlearn-model","version":1,"kind":"metric"%s,"metric":{"dim":2,"m":[[%s,%s],[%s,%s]]}}%s`,
		p, f(m[0]), f(m[1]), f(m[2]), f(m[3]), tail)
}

// TestHostileModelFiles runs the reproducers of hostile model files.
func TestHostileModelFiles(t *testing.T) {
	id := [4]float64{1, 0, 0, 1}
	pca := func(comp, vars string) string {
		return `{"pca":{"mean":[0,0],"components":` + comp + `,"variances":` + vars + `}}`
	}
	for _, tc := range []struct {
		name string
		file string
		ok   bool
	}{
		{"plain", metricFile(id, "", "\n"), true},
		{"trailing white space", metricFile(id, "", " \n\t\r\n"), true},
		{"trailing text", metricFile(id, "", "\ngarbage"), false},
		{"trailing number", metricFile(id, "", " 1"), false},
		{"two models", metricFile(id, "", metricFile(id, "", "")), false},
		{"trailing brace", metricFile(id, "", "}"), false},
		{"PCA ok", metricFile(id, pca("[[1,0],[0,1]]", "[2,1]"), ""), true},
		{"PCA negative variance", metricFile(id, pca("[[1,0],[0,1]]", "[2,-1]"), ""), false},
		{"PCA components 1e308", metricFile(id, pca("[[1e308,0],[0,1e308]]", "[2,1]"), ""), false},
		{"PCA components not orthonormal", metricFile(id, pca("[[1,1],[0,1]]", "[2,1]"), ""), false},
		{"PCA components scaled", metricFile(id, pca("[[2,0],[0,2]]", "[2,1]"), ""), false},
		{"diagonal 1e308", metricFile([4]float64{1e308, 0, 0, 1}, "", ""), true},
		{"diagonal MaxFloat64", metricFile([4]float64{math.MaxFloat64, 0, 0, math.MaxFloat64}, "", ""), true},
		{"off-diagonal 1e308 pair", metricFile([4]float64{1e308, 1e307, 1e307, 1e308}, "", ""), true},
		{"standardizer huge mean", metricFile(id, `{"standardize":{"mean":[6e307,-6e307],"scale":[1e307,1]}}`, ""), true},
	} {
		m, err := Load(strings.NewReader(tc.file))
		if tc.ok {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil || m != nil {
			t.Errorf("%s: accepted", tc.name)
		} else if !errors.Is(err, ErrInvalid) && !strings.Contains(err.Error(), "pca") {
			t.Errorf("%s: error %v neither wraps ErrInvalid nor names the PCA", tc.name, err)
		}
	}
	// The 1e308 diagonal entry survives exactly.
	m, err := Load(strings.NewReader(metricFile([4]float64{1e308, 0, 0, 1}, "", "")))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Metric.M.At(0, 0); got != 1e308 {
		t.Errorf("diagonal entry loaded as %v, want 1e308", got)
	}
}

// TestHostileHugeMeans: finite features
// near 6e307 overflowed the mean to +Inf, so a pipeline fitted on valid data
// could not be saved or loaded. The means must be finite and right, and the
// model must round-trip.
func TestHostileHugeMeans(t *testing.T) {
	x := mat.NewDense(4, 2, []float64{
		6e307, 1,
		6e307, 2,
		5e307, 3,
		-6e307, 4,
	})
	p, err := data.FitPipeline(nil, x, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantMean := 6e307/4*2 + 5e307/4 - 6e307/4
	if got := p.Std.Mean[0]; math.Abs(got-wantMean) > 1e-12*wantMean {
		t.Errorf("mean %v, want %v", got, wantMean)
	}
	if !(p.Std.Scale[0] > 0) || math.IsInf(p.Std.Scale[0], 0) {
		t.Errorf("scale %v", p.Std.Scale[0])
	}
	z, err := p.Apply(x)
	if err != nil {
		t.Fatal(err)
	}
	// Standardised columns have mean 0 and unit deviation.
	for j := 0; j < 2; j++ {
		mean, ss := 0.0, 0.0
		for i := 0; i < 4; i++ {
			mean += z.At(i, j) / 4
		}
		for i := 0; i < 4; i++ {
			ss += (z.At(i, j) - mean) * (z.At(i, j) - mean) / 4
		}
		if math.Abs(mean) > 1e-12 || math.Abs(ss-1) > 1e-12 {
			t.Errorf("column %d standardised to mean %v, variance %v", j, mean, ss)
		}
	}
	met, err := NewMetric(mat.NewSymDense(2, []float64{1, 0, 0, 1}))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := (&Model{Kind: KindMetric, Metric: met, Preprocess: p}).Save(&buf); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(&buf); err != nil {
		t.Fatalf("model fitted on finite data does not load: %v", err)
	}
}

// TestNoPanicOnConstructibleValues: values a caller can build from the
// exported fields give errors, never panics: a nil matrix, a zero Metric,
// a zero Model, non-finite rows, and a file that is not JSON.
func TestNoPanicOnConstructibleValues(t *testing.T) {
	met, err := NewMetric(mat.NewSymDense(2, []float64{2, 0, 0, 1}))
	if err != nil {
		t.Fatal(err)
	}
	good := &Model{Kind: KindMetric, Metric: met}
	nan := mat.NewDense(1, 2, []float64{1, math.NaN()})
	inf := mat.NewDense(1, 2, []float64{math.Inf(-1), 0})
	for name, f := range map[string]func() error{
		"Model.Transform(nil)":  func() error { _, err := good.Transform(nil); return err },
		"Model.Prepare(nil)":    func() error { _, err := good.Prepare(nil); return err },
		"Metric.Transform(nil)": func() error { _, err := met.Transform(nil); return err },
		"zero Metric Transform": func() error { _, err := (&Metric{}).Transform(nan); return err },
		"zero Model Transform":  func() error { _, err := (&Model{}).Transform(nan); return err },
		"zero Metric in a Model": func() error {
			_, err := (&Model{Kind: KindMetric, Metric: &Metric{}}).Transform(mat.NewDense(1, 1, nil))
			return err
		},
		"Transform NaN":           func() error { _, err := good.Transform(nan); return err },
		"Transform -Inf":          func() error { _, err := met.Transform(inf); return err },
		"Load not JSON":           func() error { _, err := Load(strings.NewReader("this is not json")); return err },
		"Load truncated JSON":     func() error { _, err := Load(strings.NewReader(`{"format": "psdlearn-model"`)); return err },
		"zero Metric PairSqDists": func() error { return (&Metric{}).PairSqDistances(make([]float64, 0), nan, nil) },
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s panics: %v", name, r)
				}
			}()
			if err := f(); !errors.Is(err, errs.ErrInvalid) {
				t.Errorf("%s: error %v, want errs.ErrInvalid", name, err)
			}
		}()
	}
	if d := (&Metric{}).Dim(); d != 0 {
		t.Errorf("zero Metric Dim %d", d)
	}
}
