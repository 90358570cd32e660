package psdlearn_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/model"
	"gonum.org/v1/gonum/mat"
)

// TestEstimators fits every estimator on wine's training rows and checks
// what a user relies on: a certified or converged model whose C is one of
// those offered, a file round trip that reproduces Transform bit for bit,
// and a test 3-NN error (through the model, on raw rows) no worse than
// Euclidean's by more than two test points.
func TestEstimators(t *testing.T) {
	wine, err := datasets.Open("wine")
	if err != nil {
		t.Fatal(err)
	}
	parts, err := data.Split(wine, []float64{0.7, 0.3}, 3)
	if err != nil {
		t.Fatal(err)
	}
	tr, te := parts[0], parts[1]
	common := psdlearn.Common{Standardize: true, Seed: 1}
	type fitter interface {
		Fit(context.Context, *mat.Dense, []int) (*model.Model, error)
	}
	for _, tc := range []struct {
		name      string
		est       fitter
		cs        []float64 // the C values offered (nil: none)
		certified bool      // the solve must reach its certificate
	}{
		// Stage-wise BoostMetric stops at its 500-iteration cap on wine
		// (docs/real-data.md); the model must then say so.
		{"boostmetric", psdlearn.BoostMetric{Common: common}, nil, false},
		{"psdboost", psdlearn.PSDBoost{Common: common, C: []float64{1, 10}}, []float64{1, 10}, true},
		{"frobmetric held-out C", psdlearn.FrobMetric{Common: common, C: []float64{0.1, 10}}, []float64{0.1, 10}, true},
		{"frobmetric validation C", psdlearn.FrobMetric{Common: psdlearn.Common{Standardize: true, Validation: te}, C: []float64{1, 100}}, []float64{1, 100}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tc.est.Fit(context.Background(), tr.X, tr.Y)
			if err != nil {
				t.Fatal(err)
			}
			switch cert := m.Certificate; {
			case cert == nil:
				t.Fatal("no certificate")
			case tc.certified && !cert.Converged:
				t.Errorf("certificate %+v, want converged", cert)
			case !cert.Converged && (cert.Reason == "" || len(cert.Warnings) == 0):
				t.Errorf("an uncertified model without reason or warning: %+v", cert)
			}
			if tc.cs != nil {
				c, _ := m.Info["chosen_c"].(float64)
				if c != tc.cs[0] && c != tc.cs[1] {
					t.Errorf("chosen C %v, not among %v", c, tc.cs)
				}
			}
			var buf bytes.Buffer
			if err := m.Save(&buf); err != nil {
				t.Fatal(err)
			}
			back, err := model.Load(&buf)
			if err != nil {
				t.Fatal(err)
			}
			z1, err := m.Transform(te.X)
			if err != nil {
				t.Fatal(err)
			}
			z2, err := back.Transform(te.X)
			if err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(z1, z2) {
				t.Error("Transform differs after a file round trip")
			}
			ztr, err := m.Transform(tr.X)
			if err != nil {
				t.Fatal(err)
			}
			learned, err := eval.KNNError(nil, ztr, tr.Y, z1, te.Y, 3)
			if err != nil {
				t.Fatal(err)
			}
			ptr, _ := m.Prepare(tr.X)
			pte, _ := m.Prepare(te.X)
			euclid, err := eval.KNNError(nil, ptr, tr.Y, pte, te.Y, 3)
			if err != nil {
				t.Fatal(err)
			}
			if learned > euclid+2/float64(te.Len())+1e-12 {
				t.Errorf("test 3-NN error %.4f, Euclidean %.4f", learned, euclid)
			}
		})
	}
}

// TestFitTriplets learns from caller-built triplets: the model must equal
// Fit's on the same rows, whose triplets are built the same way.
func TestFitTriplets(t *testing.T) {
	iris, err := datasets.Open("iris")
	if err != nil {
		t.Fatal(err)
	}
	ts, err := constraints.Triplets(iris.X, iris.Y, 3)
	if err != nil {
		t.Fatal(err)
	}
	est := psdlearn.FrobMetric{C: []float64{1}}
	a, err := est.FitTriplets(context.Background(), iris.X, ts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := est.Fit(context.Background(), iris.X, iris.Y)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.EqualApprox(a.Metric.M, b.Metric.M, 1e-12) {
		t.Error("FitTriplets and Fit disagree on the same triplets")
	}
}

func TestFitErrors(t *testing.T) {
	x := mat.NewDense(6, 2, []float64{0, 0, 1, 0, 0, 1, 5, 5, 6, 5, 5, 6})
	y := []int{0, 0, 0, 1, 1, 1}
	for _, tc := range []struct {
		name string
		fit  func() error
	}{
		{"nil data", func() error { _, err := psdlearn.BoostMetric{}.Fit(context.Background(), nil, y); return err }},
		{"labels", func() error { _, err := psdlearn.BoostMetric{}.Fit(context.Background(), x, y[:3]); return err }},
		{"C zero", func() error {
			_, err := psdlearn.FrobMetric{C: []float64{0}}.Fit(context.Background(), x, y)
			return err
		}},
		{"C NaN", func() error {
			_, err := psdlearn.PSDBoost{C: []float64{math.NaN()}}.Fit(context.Background(), x, y)
			return err
		}},
		{"K negative", func() error {
			_, err := psdlearn.BoostMetric{Common: psdlearn.Common{K: -1}}.Fit(context.Background(), x, y)
			return err
		}},
	} {
		if err := tc.fit(); !errors.Is(err, psdlearn.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", tc.name, err)
		}
	}
}
