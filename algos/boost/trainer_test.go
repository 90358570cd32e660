package boost

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/progress"
	"github.com/psdlearn/psdlearn/train"
	"gonum.org/v1/gonum/mat"
)

// trainInput splits iris 70/15/15, standardises it on the training part and
// generates the training triplets.
func trainInput(t *testing.T, opts train.Options) train.Input {
	t.Helper()
	d, err := datasets.Open("iris")
	if err != nil {
		t.Fatal(err)
	}
	parts, err := data.Split(d, []float64{0.7, 0.15, 0.15}, 1)
	if err != nil {
		t.Fatal(err)
	}
	std, err := data.Standardize(parts[0], parts[1])
	if err != nil {
		t.Fatal(err)
	}
	tr, va := std[0].X, std[1].X
	b := engine.Default()
	ts, err := makeTriplets(b, tr, parts[0].Y, 3)
	if err != nil {
		t.Fatal(err)
	}
	var lines int
	return train.Input{
		Train: parts[0].WithX(tr), Val: parts[1].WithX(va), Triplets: ts, K: 3, Backend: b, Options: opts,
		Progress: func(progress.Event) { lines++ },
	}
}

func TestTrainers(t *testing.T) {
	names := strings.Join(train.Names(), ",")
	if !strings.Contains(names, "boostmetric") || !strings.Contains(names, "psdboost") {
		t.Fatalf("trainers registered: %s", names)
	}
	tests := []struct {
		algo string
		opts train.Options
		gap  bool // a duality gap is reported
	}{
		{"boostmetric", train.Options{}, false},
		{"boostmetric", train.Options{Loss: "logistic", Mode: "corrective", Iters: 30}, false},
		{"boostmetric", train.Options{Passes: 2, Iters: 50}, false},
		{"boostmetric", train.Options{Loss: "hinge", C: []float64{10}}, true},
		{"psdboost", train.Options{C: []float64{2, 10}}, true},
		{"psdboost", train.Options{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.algo+"/"+tc.opts.Loss+tc.opts.Mode, func(t *testing.T) {
			in := trainInput(t, tc.opts)
			tr, err := train.Lookup(tc.algo)
			if err != nil {
				t.Fatal(err)
			}
			out, err := tr(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if out.M == nil || out.M.SymmetricDim() != 4 {
				t.Fatalf("M = %v", out.M)
			}
			if ev := spectrum(t, out.M); ev[0] < -1e-10*ev[len(ev)-1] {
				t.Errorf("M not PSD: eigenvalues %g", ev)
			}
			// The validation error is reported when a C was chosen on
			// it (PSDBoost with several values), else NaN.
			chose := tc.gap && len(tc.opts.C) != 1
			if out.Iterations < 1 || len(out.Curve) == 0 || math.IsNaN(out.ValError) == chose {
				t.Errorf("iterations %d, curve %d, validation error %g", out.Iterations, len(out.Curve), out.ValError)
			}
			if tc.gap {
				if !(math.Abs(out.DualityGap) <= 1e-8) || math.IsNaN(out.ChosenC) {
					t.Errorf("duality gap %g, chosen C %g", out.DualityGap, out.ChosenC)
				}
				if math.Abs(mat.Trace(out.M)-1) > 1e-9 {
					t.Errorf("tr M = %g, want 1", mat.Trace(out.M))
				}
				if len(tc.opts.C) > 0 && out.ChosenC != tc.opts.C[0] && out.ChosenC != tc.opts.C[len(tc.opts.C)-1] {
					t.Errorf("chosen C %g not among %v", out.ChosenC, tc.opts.C)
				}
			} else if !math.IsNaN(out.DualityGap) || !math.IsNaN(out.ChosenC) {
				t.Errorf("duality gap %g, chosen C %g: want NaN", out.DualityGap, out.ChosenC)
			}
			t.Logf("%s %+v: %d iterations, objective %.6g, validation error %.4f, C %g", tc.algo, tc.opts, out.Iterations, out.Objective, out.ValError, out.ChosenC)
		})
	}
}

func TestTrainerErrors(t *testing.T) {
	tests := []struct {
		algo  string
		opts  train.Options
		noVal bool
	}{
		{"boostmetric", train.Options{Loss: "square"}, false},
		{"boostmetric", train.Options{Mode: "sideways"}, false},
		{"boostmetric", train.Options{C: []float64{1}}, false},
		{"boostmetric", train.Options{Iters: -1}, false},
		{"psdboost", train.Options{Loss: "exp"}, false},
		{"psdboost", train.Options{Passes: 2}, false},
		{"psdboost", train.Options{C: []float64{1, 2}}, true},
		{"psdboost", train.Options{C: []float64{1e-6}}, false},
	}
	for _, tc := range tests {
		in := trainInput(t, tc.opts)
		if tc.noVal {
			in.Val = nil
		}
		tr, _ := train.Lookup(tc.algo)
		if _, err := tr(context.Background(), in); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s %+v: error %v, want ErrInvalid", tc.algo, tc.opts, err)
		}
	}
}
