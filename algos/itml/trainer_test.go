package itml

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/train"
)

func TestTrainer(t *testing.T) {
	tr, err := train.Lookup("itml")
	if err != nil {
		t.Fatal(err)
	}
	d := standardized(t, "wine")
	fit, val := alternate(d)
	ts, err := constraints.Triplets(fit.X, fit.Y, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		val        *data.Dataset
		cs         []float64
		candidates int
	}{
		{"default list on validation", val, nil, len(DefaultGammas)},
		{"default without validation", nil, nil, 0},
		{"given list", val, []float64{30, 1}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tr(context.Background(), train.Input{Train: fit, Val: tc.val, Triplets: ts, K: 3, Seed: 1, Options: train.Options{C: tc.cs}})
			if err != nil {
				t.Fatal(err)
			}
			if out.M == nil || !out.Converged || out.Reason == "" || len(out.Candidates) != tc.candidates || len(out.Warnings) != 0 {
				t.Errorf("output %+v", out)
			}
			if tc.val == nil && (out.ChosenC != DefaultGamma || !math.IsNaN(out.ValError)) {
				t.Errorf("without validation: γ %v, validation error %v", out.ChosenC, out.ValError)
			}
		})
	}
	// A cycle cap reports no convergence, with a warning and the reason.
	out, err := tr(context.Background(), train.Input{Train: fit, Triplets: ts, Options: train.Options{C: []float64{1e4}, Iters: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Converged || len(out.Warnings) != 1 || out.Iterations != 2 {
		t.Errorf("capped: converged %v, %d warnings, %d cycles", out.Converged, len(out.Warnings), out.Iterations)
	}
	// Without labels the constraints come from the triplets.
	unlabelled := &data.Dataset{X: fit.X}
	out, err = tr(context.Background(), train.Input{Train: unlabelled, Triplets: ts})
	if err != nil || out.M == nil {
		t.Errorf("from triplets: %v", err)
	}
	for name, in := range map[string]train.Input{
		"no data":               {Triplets: ts},
		"negative iters":        {Train: fit, Options: train.Options{Iters: -1}},
		"list without val":      {Train: fit, Options: train.Options{C: []float64{1, 2}}},
		"negative gamma":        {Train: fit, Options: train.Options{C: []float64{-1}}},
		"no labels or triplets": {Train: unlabelled},
	} {
		if _, err := tr(context.Background(), in); !errors.Is(err, errs.ErrInvalid) {
			t.Errorf("%s: error %v, want ErrInvalid", name, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tr(ctx, train.Input{Train: fit, Triplets: ts}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestTripletPairs(t *testing.T) {
	ts, err := constraints.NewTripletSet(4, []constraints.Triplet{{I: 0, J: 1, K: 2}, {I: 1, J: 0, K: 3}, {I: 2, J: 3, K: 0}})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := TripletPairs(ts)
	if err != nil {
		t.Fatal(err)
	}
	want := []constraints.LabelledPair{{A: 0, B: 1, Same: true}, {A: 0, B: 2}, {A: 1, B: 3}, {A: 2, B: 3, Same: true}}
	if len(ps.List) != len(want) {
		t.Fatalf("pairs %v, want %v", ps.List, want)
	}
	for r := range want {
		if ps.List[r] != want[r] {
			t.Errorf("pair %d = %v, want %v", r, ps.List[r], want[r])
		}
	}
}
