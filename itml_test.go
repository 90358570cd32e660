package psdlearn_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/algos/itml"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/model"
)

// itmlSplit returns the even and the odd rows of a built-in data set.
func itmlSplit(t testing.TB, name string) (tr, test *data.Dataset) {
	t.Helper()
	d, err := datasets.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	var e, o []int
	for i := 0; i < d.Len(); i++ {
		if i%2 == 0 {
			e = append(e, i)
		} else {
			o = append(o, i)
		}
	}
	return d.Subset(e), d.Subset(o)
}

// itmlError is the 3-NN error on test of the model m fitted on tr.
func itmlError(t testing.TB, m *model.Model, tr, test *data.Dataset) float64 {
	t.Helper()
	ztr, err := m.Transform(tr.X)
	if err != nil {
		t.Fatal(err)
	}
	zte, err := m.Transform(test.X)
	if err != nil {
		t.Fatal(err)
	}
	e, err := eval.KNNError(nil, ztr, tr.Y, zte, test.Y, 3)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestITML(t *testing.T) {
	for _, tc := range []struct {
		name string
		est  psdlearn.ITML
	}{
		{"default gammas by folds", psdlearn.ITML{Common: psdlearn.Common{Standardize: true}}},
		{"one gamma", psdlearn.ITML{Common: psdlearn.Common{Standardize: true}, Gamma: []float64{30}}},
	} {
		for _, name := range []string{"iris", "wine"} {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				tr, test := itmlSplit(t, name)
				m, err := tc.est.Fit(context.Background(), tr.X, tr.Y)
				if err != nil {
					t.Fatal(err)
				}
				if m.Algo != "itml" || !m.Certificate.Converged || m.Info["gamma"] == nil {
					t.Errorf("model %s, certificate %+v, gamma %v", m.Algo, m.Certificate, m.Info["gamma"])
				}
				// γ → 0 keeps the prior, the identity on standardised rows.
				eucl, err := psdlearn.ITML{Common: psdlearn.Common{Standardize: true}, Iters: 1, Gamma: []float64{1e-300}}.Fit(context.Background(), tr.X, tr.Y)
				if err != nil {
					t.Fatal(err)
				}
				got, base := itmlError(t, m, tr, test), itmlError(t, eucl, tr, test)
				t.Logf("3-NN error %.4f, Euclidean (standardised) %.4f", got, base)
				if got > base {
					t.Errorf("3-NN error %.4f above the Euclidean %.4f", got, base)
				}
			})
		}
	}
}

func TestITMLFitPairs(t *testing.T) {
	tr, test := itmlSplit(t, "iris")
	ps, err := itml.LabelPairs(tr.Y, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := psdlearn.ITML{Common: psdlearn.Common{Standardize: true}, Gamma: []float64{itml.DefaultGamma}}.FitPairs(context.Background(), tr.X, ps)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Certificate.Converged || m.Info["gamma"] != itml.DefaultGamma || m.Preprocess == nil {
		t.Errorf("certificate %+v, info %v", m.Certificate, m.Info)
	}
	if e := itmlError(t, m, tr, test); e > 0.08 {
		t.Errorf("3-NN error %.4f", e)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (psdlearn.ITML{}).FitPairs(ctx, tr.X, ps); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled FitPairs: %v", err)
	}
	if _, err := (psdlearn.ITML{}).Fit(ctx, tr.X, tr.Y); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Fit: %v", err)
	}
}

func TestITMLErrors(t *testing.T) {
	tr, _ := itmlSplit(t, "iris")
	ps, _ := itml.LabelPairs(tr.Y, 0, 1)
	other, _ := constraints.NewPairs(3, []constraints.LabelledPair{{A: 0, B: 1, Same: true}})
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"Fit nil data", func() error { _, err := (psdlearn.ITML{}).Fit(ctx, nil, nil); return err }()},
		{"Fit short labels", func() error { _, err := (psdlearn.ITML{}).Fit(ctx, tr.X, tr.Y[1:]); return err }()},
		{"Fit negative gamma", func() error { _, err := (psdlearn.ITML{Gamma: []float64{-1}}).Fit(ctx, tr.X, tr.Y); return err }()},
		{"Fit negative iters", func() error { _, err := (psdlearn.ITML{Iters: -1}).Fit(ctx, tr.X, tr.Y); return err }()},
		{"FitPairs nil pairs", func() error { _, err := (psdlearn.ITML{}).FitPairs(ctx, tr.X, nil); return err }()},
		{"FitPairs other points", func() error { _, err := (psdlearn.ITML{}).FitPairs(ctx, tr.X, other); return err }()},
		{"FitPairs two gammas, hold-out share 1", func() error {
			_, err := (psdlearn.ITML{Common: psdlearn.Common{HoldOut: 1}, Gamma: []float64{1, 2}}).FitPairs(ctx, tr.X, ps)
			return err
		}()},
		{"FitPairs infinite gamma", func() error {
			_, err := (psdlearn.ITML{Gamma: []float64{math.Inf(1)}}).FitPairs(ctx, tr.X, ps)
			return err
		}()},
		{"FitPairs negative iters", func() error { _, err := (psdlearn.ITML{Iters: -2}).FitPairs(ctx, tr.X, ps); return err }()},
	} {
		if !errors.Is(tc.err, errs.ErrInvalid) {
			t.Errorf("%s: error %v, want ErrInvalid", tc.name, tc.err)
		}
	}
}

// ITML on iris: the metric closest to the identity (on standardised
// features) that keeps same-species pairs close and different-species
// pairs apart, with the trade-off chosen by 3-fold cross-validation.
func ExampleITML() {
	iris, err := datasets.Open("iris")
	if err != nil {
		panic(err)
	}
	m, err := psdlearn.ITML{Common: psdlearn.Common{Standardize: true}}.Fit(context.Background(), iris.X, iris.Y)
	if err != nil {
		panic(err)
	}
	fmt.Println("converged:", m.Certificate.Converged)
	fmt.Println("gammas tried:", m.Info["C"])
	z, err := m.Transform(iris.X)
	if err != nil {
		panic(err)
	}
	e, err := eval.LOOKNNError(nil, z, iris.Y, 3)
	if err != nil {
		panic(err)
	}
	fmt.Println("leave-one-out 3-NN error below 5%:", e < 0.05)
	// Output:
	// converged: true
	// gammas tried: [3 10 30]
	// leave-one-out 3-NN error below 5%: true
}
