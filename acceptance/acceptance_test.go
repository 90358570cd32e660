package acceptance_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/errs"
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
