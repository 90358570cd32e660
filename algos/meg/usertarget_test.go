package meg

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/psdlearn/psdlearn/engine"

	"gonum.org/v1/gonum/mat"
)

func TestNewKernelTarget(t *testing.T) {
	k := mat.NewDense(3, 3, []float64{2, 1, 0, 1, 2, 0, 0, 0, 2})
	tg, err := NewKernelTarget(k, []int{0, 0, 1}, KernelTargetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tg.Objects() != 3 || math.Abs(mat.Trace(tg.U)-1) > 1e-15 || tg.U.At(0, 1) != 1.0/6 {
		t.Fatalf("objects %d, trace %v, U01 %v", tg.Objects(), mat.Trace(tg.U), tg.U.At(0, 1))
	}
	if math.IsNaN(tg.NN.LOO) {
		t.Fatalf("labelled target without 1-NN error")
	}
	nolab, err := NewKernelTarget(k, nil, KernelTargetOptions{})
	if err != nil || !math.IsNaN(nolab.NN.Mean) || nolab.Labelled() {
		t.Fatalf("unlabelled: %v, NN %v", err, nolab.NN)
	}
	for name, bad := range map[string]mat.Matrix{
		"rect":    mat.NewDense(2, 3, nil),
		"asym":    mat.NewDense(2, 2, []float64{1, 0.5, 0.4, 1}),
		"not psd": mat.NewDense(2, 2, []float64{1, 2, 2, 1}),
		"nan":     mat.NewDense(2, 2, []float64{1, 0, 0, math.NaN()}),
		"zero":    mat.NewDense(2, 2, nil),
		"one":     mat.NewDense(1, 1, []float64{1}),
	} {
		if _, err := NewKernelTarget(bad, nil, KernelTargetOptions{}); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: error %v", name, err)
		}
	}
}

// TestFarConstraint: Negate flips the spectrum and the inner product, and
// DefiniteBoost with a cannot-link and a must-link reaches a W meeting both.
func TestFarConstraint(t *testing.T) {
	const d = 4
	far := FarConstraint(d, 0, 1, 0.4)
	lo, hi, err := far.Extremes(nil)
	if err != nil || math.Abs(lo-(-0.6)) > 1e-15 || math.Abs(hi-0.4) > 1e-15 {
		t.Fatalf("extremes %v %v %v", lo, hi, err)
	}
	w := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		w.SetSym(i, i, 0.25)
	}
	if got := far.Inner(w); math.Abs(got-(0.4-0.25)) > 1e-15 {
		t.Fatalf("tr(W C) = %v, want 0.15", got)
	}
	dense, _ := NewDense(mat.NewSymDense(d, []float64{1, 2, 0, 0, 2, -1, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0}))
	neg := Negate(dense)
	l1, h1, _ := dense.Extremes(nil)
	l2, h2, _ := neg.Extremes(nil)
	if l2 != -h1 || h2 != -l1 || neg.Inner(w) != -dense.Inner(w) {
		t.Fatalf("negation: [%v,%v] vs [%v,%v]", l1, h1, l2, h2)
	}
	for _, p := range []Projection{Approximate, Exact} {
		cons := []Sym{far, NearConstraint(d, 2, 3, 0.05)}
		res, err := DefiniteBoost(context.Background(), cons, BoostOptions{Projection: p, Tol: 1e-10})
		if err != nil || !res.Converged {
			t.Fatalf("%v: %v, converged %v", p, err, res != nil && res.Converged)
		}
		if h := HalfSqDist(res.W, 0, 1); h < 0.4-1e-9 {
			t.Errorf("%v: cannot-link ½|x0-x1|^2 = %v < 0.4", p, h)
		}
		if h := HalfSqDist(res.W, 2, 3); h > 0.05+1e-9 {
			t.Errorf("%v: must-link ½|x2-x3|^2 = %v > 0.05", p, h)
		}
	}
}

func TestRunOnlineExamples(t *testing.T) {
	tg, err := NewObjectTarget(4, nil, KernelTargetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seq, err := NewDistances(4, []engine.Pair{{A: 0, B: 1}, {A: 2, B: 3}}, []float64{1, 0.5})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := RunOnline(context.Background(), tg, OnlineOptions{Examples: seq})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Steps != 2 || rep.Bounded || !math.IsNaN(rep.ComparatorLoss) || !math.IsNaN(rep.NN.Mean) || rep.Eta != 2 {
		t.Fatalf("report %+v", rep)
	}
	if _, err := RunOnline(context.Background(), tg, OnlineOptions{Steps: 5}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("no examples, no kernel: %v", err)
	}
	if _, err := NewDistances(4, []engine.Pair{{A: 1, B: 1}}, []float64{1}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("i == j: %v", err)
	}
	if _, err := NewDistances(4, []engine.Pair{{A: 0, B: 1}}, []float64{math.NaN()}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("NaN: %v", err)
	}
}
