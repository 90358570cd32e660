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
	"github.com/psdlearn/psdlearn/errs"
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
		// (docs/howto-real-data.md); the model must then say so.
		{"boostmetric", psdlearn.BoostMetric{Common: common}, nil, false},
		{"psdboost", psdlearn.PSDBoost{Common: common, C: []float64{1, 10}}, []float64{1, 10}, true},
		{"frobmetric held-out C", psdlearn.FrobMetric{Common: common, C: []float64{0.1, 10}}, []float64{0.1, 10}, true},
		{"frobmetric validation C", psdlearn.FrobMetric{Common: psdlearn.Common{Standardize: true, Validation: te}, C: []float64{1, 100}}, []float64{1, 100}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tc.est.Fit(context.Background(), tr.X, tr.Y)
			// A capped solve returns its model with an error that says so.
			if err != nil && !(errors.Is(err, errs.ErrNotConverged) && m != nil && !m.Certificate.Converged) {
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
			learned := roundTripKNNError(t, m, tr, te)
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
		{"one fold", func() error {
			_, err := psdlearn.FrobMetric{Common: psdlearn.Common{Folds: 1}, C: []float64{1, 10}}.Fit(context.Background(), x, y)
			return err
		}},
		{"negative folds", func() error {
			_, err := psdlearn.FrobMetric{Common: psdlearn.Common{Folds: -2}, C: []float64{1}}.Fit(context.Background(), x, y)
			return err
		}},
		{"more folds than a class has rows", func() error {
			_, err := psdlearn.PSDBoost{Common: psdlearn.Common{Folds: 4}, C: []float64{1, 10}}.Fit(context.Background(), x, y)
			return err
		}},
		{"default folds, too few rows", func() error {
			_, err := psdlearn.FrobMetric{C: []float64{1, 10}}.Fit(context.Background(), x.Slice(0, 5, 0, 2).(*mat.Dense), []int{0, 0, 0, 1, 1})
			return err
		}},
		{"triplets and a labelled Validation set", func() error {
			ts, err := constraints.Triplets(x, y, 1)
			if err != nil {
				return err
			}
			_, err = psdlearn.FrobMetric{Common: psdlearn.Common{Validation: &data.Dataset{X: x, Y: y}}, C: []float64{1, 10}}.FitTriplets(context.Background(), x, ts)
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

// TestSimpleNPKL learns a kernel on iris from balanced pairs and checks
// that it is a valid kernel over the rows, that must-linked points end up
// closer than cannot-linked ones on average, and that the model survives a
// file round trip.
func TestSimpleNPKL(t *testing.T) {
	iris, err := datasets.Open("iris")
	if err != nil {
		t.Fatal(err)
	}
	pairs, err := constraints.BalancedPairs(iris.Y, 60, 60, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := psdlearn.SimpleNPKL{Standardize: true}.FitPairs(context.Background(), iris.X, pairs)
	if err != nil {
		t.Fatal(err)
	}
	if m.Kernel == nil || m.Certificate == nil {
		t.Fatalf("model %+v", m)
	}
	var must, cannot float64
	var nm, nc int
	for _, p := range pairs.List {
		d := m.Kernel.SqDistance(p.A, p.B)
		if p.Same {
			must, nm = must+d, nm+1
		} else {
			cannot, nc = cannot+d, nc+1
		}
	}
	if !(must/float64(nm) < cannot/float64(nc)) {
		t.Errorf("mean squared distance: must-link %.4g, cannot-link %.4g", must/float64(nm), cannot/float64(nc))
	}
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := model.Load(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if back.Kernel.At(0, 1) != m.Kernel.At(0, 1) {
		t.Error("kernel differs after a file round trip")
	}
	if _, err := (psdlearn.SimpleNPKL{}).FitPairs(context.Background(), iris.X, &constraints.Pairs{N: 3}); !errors.Is(err, psdlearn.ErrInvalid) {
		t.Errorf("pairs on the wrong number of points: %v", err)
	}
}

// TestMVUEmbed embeds a closed curve: the embedding is two-dimensional and
// keeps neighbour distances (the certificate's solve converged), and nil
// data is an invalid input.
func TestMVUEmbed(t *testing.T) {
	const n = 60
	x := mat.NewDense(n, 3, nil)
	for i := 0; i < n; i++ {
		a := 2 * math.Pi * float64(i) / n
		x.SetRow(i, []float64{math.Cos(a), math.Sin(a), 0.3 * math.Sin(2*a)})
	}
	emb, err := psdlearn.MVU{}.Embed(context.Background(), x)
	if err != nil {
		t.Fatal(err)
	}
	if r, c := emb.Coords.Dims(); r != n || c != 2 {
		t.Fatalf("embedding %d×%d, want %d×2", r, c, n)
	}
	for k, p := range emb.Edges {
		var d float64
		for j := 0; j < 2; j++ {
			e := emb.Coords.At(p.A, j) - emb.Coords.At(p.B, j)
			d += e * e
		}
		if math.Abs(d-emb.Dist2[k]) > 0.05*emb.Dist2[k] {
			t.Errorf("edge %v: embedded squared distance %.4g, original %.4g", p, d, emb.Dist2[k])
			break
		}
	}
	if _, err := (psdlearn.MVU{}).Embed(context.Background(), nil); !errors.Is(err, psdlearn.ErrInvalid) {
		t.Errorf("nil data: %v", err)
	}
}

// roundTripKNNError saves m, loads it back, requires Transform of the test
// rows to be identical from both, and returns the 3-NN test error in the
// model's coordinates.
func roundTripKNNError(t *testing.T, m *model.Model, tr, te *data.Dataset) float64 {
	t.Helper()
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
	e, err := eval.KNNError(nil, ztr, tr.Y, z1, te.Y, 3)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
