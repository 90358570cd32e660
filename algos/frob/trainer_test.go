package frob

import (
	"context"
	"math"
	"testing"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine/enginetest"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/train"
	"gonum.org/v1/gonum/mat"
)

// TestTrainerChoosesCOnValidation runs the registered "frobmetric" trainer
// with a list of C values and checks its choice against independent runs:
// the chosen C has the lowest validation 3-NN error (ties to the smaller C),
// and the reported metric, error and gap are those of that run.
func TestTrainerChoosesCOnValidation(t *testing.T) {
	tr, err := train.Lookup("frobmetric")
	if err != nil {
		t.Fatal(err)
	}
	d := loadSet(t, "glass")
	parts, err := data.Split(d, []float64{0.7, 0.15, 0.15}, 3)
	if err != nil {
		t.Fatal(err)
	}
	ps := standardize(t, parts[0], parts[1], parts[2])
	trn, val := ps[0], ps[1]
	ts := tripletsOf(t, trn.X, trn.Y, 3)
	cs := []float64{0.1, 10, 1000}
	b := enginetest.Backends(t)[len(enginetest.Backends(t))-1]
	out, err := tr(context.Background(), train.Input{Train: trn, Val: val, Triplets: ts, K: 3, Backend: b, Options: train.Options{C: cs}})
	if err != nil {
		t.Fatal(err)
	}
	bestC, bestErr := math.NaN(), math.Inf(1)
	var bestM *mat.SymDense
	for _, c := range cs {
		res, err := Learn(context.Background(), trn.X, ts, MetricOptions{C: c, Backend: b})
		if err != nil {
			t.Fatal(err)
		}
		var zt, zv mat.Dense
		zt.Mul(trn.X, res.L)
		zv.Mul(val.X, res.L)
		e, err := eval.KNNError(b, &zt, trn.Y, &zv, val.Y, 3)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("C=%g: validation error %.4f, rel. gap %.3g", c, e, res.RelGap)
		if e < bestErr {
			bestC, bestErr, bestM = c, e, res.M
		}
	}
	if out.ChosenC != bestC || out.ValError != bestErr {
		t.Errorf("trainer chose C=%g (validation error %.4f), independent runs give C=%g (%.4f)", out.ChosenC, out.ValError, bestC, bestErr)
	}
	if !(out.DualityGap <= 1e-6) {
		t.Errorf("duality gap %.3g", out.DualityGap)
	}
	if !mat.EqualApprox(out.M, bestM, 1e-4*mat.Norm(bestM, math.Inf(1))) {
		t.Errorf("trainer metric differs from the independent run at C=%g", bestC)
	}
	if len(out.Curve) == 0 || out.Iterations == 0 {
		t.Errorf("no convergence record: %d iterations, %d curve points", out.Iterations, len(out.Curve))
	}
}

// TestTrainerNeedsValidation: a list of C values cannot be chosen among without validation rows.
func TestTrainerNeedsValidation(t *testing.T) {
	tr, err := train.Lookup("frobmetric")
	if err != nil {
		t.Fatal(err)
	}
	d := standardize(t, loadSet(t, "iris"))[0]
	ts := tripletsOf(t, d.X, d.Y, 3)
	if _, err := tr(context.Background(), train.Input{Train: d, Triplets: ts, Options: train.Options{C: []float64{1, 10}}}); err == nil {
		t.Error("no error for a C list without validation data")
	}
	out, err := tr(context.Background(), train.Input{Train: d, Triplets: ts, Options: train.Options{C: []float64{10}}})
	if err != nil {
		t.Fatal(err)
	}
	if out.ChosenC != 10 || !math.IsNaN(out.ValError) || !(out.DualityGap <= 1e-6) {
		t.Errorf("single C without validation: chosen %g, validation error %v, gap %v", out.ChosenC, out.ValError, out.DualityGap)
	}
}
