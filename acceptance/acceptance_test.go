package acceptance_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/model"
)

func open(t *testing.T, name string) *data.Dataset {
	t.Helper()
	d, err := datasets.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The zero value of PSDBoost fits: its four default C values are compared
// by cross-validation and the model is certified.
func TestZeroValuePSDBoost(t *testing.T) {
	iris := open(t, "iris")
	m, err := psdlearn.PSDBoost{}.Fit(context.Background(), iris.X, iris.Y)
	if err != nil {
		t.Fatal(err)
	}
	if m == nil || m.Metric == nil || !m.Certificate.Converged {
		t.Fatalf("model %+v", m)
	}
	z, err := m.Transform(iris.X)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := z.Dims(); r != iris.Len() {
		t.Errorf("%d rows transformed of %d", r, iris.Len())
	}
}

// A 50 ms deadline on a multi-C FrobMetric fit of glass returns the best
// model so far with an error matching both the deadline and
// errs.ErrNotConverged.
func TestDeadlineReturnsModel(t *testing.T) {
	glass := open(t, "glass")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	m, err := psdlearn.FrobMetric{Common: psdlearn.Common{Standardize: true}}.Fit(ctx, glass.X, glass.Y)
	if err == nil {
		t.Skip("the fit finished within 50 ms: nothing was interrupted")
	}
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, errs.ErrNotConverged) {
		t.Fatalf("error %v", err)
	}
	if m == nil || m.Metric == nil || !m.Certificate.Interrupted || m.Certificate.Converged {
		t.Fatalf("model %+v", m)
	}
}

// FitTriplets compares several C on held-out triplets: the scores differ
// from one C to another.
func TestFitTripletsScoresPerC(t *testing.T) {
	wine := open(t, "wine")
	ts, err := constraints.Triplets(wine.X, wine.Y, 3)
	if err != nil {
		t.Fatal(err)
	}
	m, err := psdlearn.FrobMetric{Common: psdlearn.Common{Standardize: true}}.FitTriplets(context.Background(), wine.X, ts)
	if err != nil {
		t.Fatal(err)
	}
	scores, _ := m.Info["val_errors"].([]float64)
	if len(scores) != len(psdlearn.DefaultFrobMetricC) {
		t.Fatalf("scores %v", m.Info["val_errors"])
	}
	// The typed result says the same.
	r, err := psdlearn.Run(context.Background(), psdlearn.FrobMetric{Common: psdlearn.Common{Standardize: true}}, psdlearn.Data{X: wine.X, Triplets: ts})
	if err != nil {
		t.Fatal(err)
	}
	distinct := map[float64]bool{}
	for i, s := range r.Scores {
		distinct[s.ValError] = true
		if s.ValError != scores[i] {
			t.Errorf("C = %g: typed score %v, model file %v", s.C, s.ValError, scores[i])
		}
	}
	if len(distinct) < 2 || r.Selection != psdlearn.SelectHeldOut {
		t.Errorf("selection %v, scores %+v", r.Selection, r.Scores)
	}
}

// A saved and reloaded model serves one row into the caller's buffer with
// no allocation, as a service's request loop needs.
func TestServeRowWithoutAllocating(t *testing.T) {
	wine := open(t, "wine")
	m, err := psdlearn.FrobMetric{Common: psdlearn.Common{Standardize: true}, C: []float64{10}}.Fit(context.Background(), wine.X, wine.Y)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.json")
	if err := m.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	served, err := model.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	row, dst := wine.X.RawRowView(0), make([]float64, served.OutputDim())
	allocs := testing.AllocsPerRun(100, func() {
		if err := served.TransformRowTo(dst, row); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("TransformRowTo made %v allocations per row, want 0", allocs)
	}
	if d, err := served.Distance(wine.X.RawRowView(0), wine.X.RawRowView(1)); err != nil || !(d > 0) {
		t.Errorf("distance %v (%v) between two different rows", d, err)
	}
	allocs = testing.AllocsPerRun(100, func() { _, _ = served.Distance(wine.X.RawRowView(0), wine.X.RawRowView(1)) })
	if allocs != 0 {
		t.Errorf("Distance made %v allocations, want 0", allocs)
	}
}
