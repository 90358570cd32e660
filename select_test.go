package psdlearn

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/eval"
	"gonum.org/v1/gonum/mat"
)

// TestStratifiedFolds checks the fold assignment: a partition of the rows,
// every class spread evenly (⌊n_c/k⌋ or ⌈n_c/k⌉ rows per fold), fold sizes
// within one of each other, the same folds for the same seed, and errors
// for too few or too many folds.
func TestStratifiedFolds(t *testing.T) {
	unbalanced := []int{2, 0, 1, 1, 0, 2, 2, 0, 1, 2, 2, 2, 0, 1, 2}
	for _, tc := range []struct {
		name    string
		y       []int
		k       int
		wantErr bool
	}{
		{"three folds", unbalanced, 3, false},
		{"two folds", unbalanced, 2, false},
		{"as many folds as the smallest class", unbalanced, 4, false},
		{"more folds than the smallest class", unbalanced, 5, true},
		{"one fold", unbalanced, 1, true},
		{"no folds", unbalanced, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			folds, err := stratifiedFolds(tc.y, tc.k, 5)
			if tc.wantErr {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("err %v, want ErrInvalid", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(folds) != tc.k {
				t.Fatalf("%d folds, want %d", len(folds), tc.k)
			}
			seen := make([]int, len(tc.y))
			counts := map[int]int{}
			for _, c := range tc.y {
				counts[c]++
			}
			minSize, maxSize := len(tc.y), 0
			for f, rows := range folds {
				if !slices.IsSorted(rows) {
					t.Errorf("fold %d not ascending: %v", f, rows)
				}
				minSize, maxSize = min(minSize, len(rows)), max(maxSize, len(rows))
				per := map[int]int{}
				for _, r := range rows {
					seen[r]++
					per[tc.y[r]]++
				}
				for c, nc := range counts {
					if lo := nc / tc.k; per[c] < lo || per[c] > lo+1 {
						t.Errorf("fold %d has %d rows of class %d (of %d)", f, per[c], c, nc)
					}
				}
			}
			for r, s := range seen {
				if s != 1 {
					t.Errorf("row %d in %d folds", r, s)
				}
			}
			if maxSize-minSize > 1 {
				t.Errorf("fold sizes from %d to %d", minSize, maxSize)
			}
			again, _ := stratifiedFolds(tc.y, tc.k, 5)
			for f := range folds {
				if !slices.Equal(folds[f], again[f]) {
					t.Errorf("fold %d differs for the same seed", f)
				}
			}
		})
	}
	a, _ := stratifiedFolds(make([]int, 60), 3, 1)
	b, _ := stratifiedFolds(make([]int, 60), 3, 2)
	if slices.Equal(a[0], b[0]) {
		t.Error("seeds 1 and 2 give the same first fold")
	}
}

// TestKFoldChoosesC checks FrobMetric's choice of C by 3-fold
// cross-validation on iris against an explicit computation: a metric per
// fold and C fitted on the other folds with the public API, its 3-NN error
// on the fold through the model's Transform, the mean over the folds, the
// smallest mean (the smaller C on ties). The chosen C, the mean errors and
// the refit on all rows must agree, and the same seed must give the same
// model.
func TestKFoldChoosesC(t *testing.T) {
	iris, err := datasets.Open("iris")
	if err != nil {
		t.Fatal(err)
	}
	cs := []float64{100, 0.001, 1} // Fit sorts them
	const seed = 7
	ctx := context.Background()
	est := FrobMetric{Common: Common{Standardize: true, Seed: seed}, C: cs}
	m, err := est.Fit(ctx, iris.X, iris.Y)
	if err != nil {
		t.Fatal(err)
	}

	sorted := []float64{0.001, 1, 100}
	folds, err := stratifiedFolds(iris.Y, DefaultFolds, seed)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float64, len(sorted))
	for _, val := range folds {
		tr, te := iris.Subset(complement(iris.Len(), val)), iris.Subset(val)
		for i, c := range sorted {
			mf, err := FrobMetric{Common: Common{Standardize: true}, C: []float64{c}}.Fit(ctx, tr.X, tr.Y)
			if err != nil {
				t.Fatal(err)
			}
			ztr, err := mf.Transform(tr.X)
			if err != nil {
				t.Fatal(err)
			}
			zte, err := mf.Transform(te.X)
			if err != nil {
				t.Fatal(err)
			}
			e, err := eval.KNNError(nil, ztr, tr.Y, zte, te.Y, 3)
			if err != nil {
				t.Fatal(err)
			}
			want[i] += e / DefaultFolds
		}
	}
	best := 0
	for i := range want {
		if want[i] < want[best] {
			best = i
		}
	}
	got, _ := m.Info["val_errors"].([]float64)
	t.Logf("mean 3-fold errors %v (explicit %v), chosen C %v", got, want, m.Info["chosen_c"])
	if len(got) != len(want) {
		t.Fatalf("val_errors %v, want %v", m.Info["val_errors"], want)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("C = %g: mean error %v, explicit %v", sorted[i], got[i], want[i])
		}
	}
	if c := m.Info["chosen_c"]; c != sorted[best] {
		t.Errorf("chosen C %v, explicit %v", c, sorted[best])
	}
	if f := m.Info["folds"]; f != DefaultFolds {
		t.Errorf("folds %v, want %d", f, DefaultFolds)
	}
	if !slices.Equal(m.Info["C"].([]float64), sorted) {
		t.Errorf("C %v, want %v", m.Info["C"], sorted)
	}
	refit, err := FrobMetric{Common: Common{Standardize: true}, C: []float64{sorted[best]}}.Fit(ctx, iris.X, iris.Y)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(refit.Metric.M, m.Metric.M) {
		t.Error("the model is not the refit on all rows with the chosen C")
	}
	again, err := est.Fit(ctx, iris.X, iris.Y)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(again.Metric.M, m.Metric.M) || !slices.Equal(again.Info["val_errors"].([]float64), got) {
		t.Error("the same seed gives a different model")
	}
}

// TestFitWarnsWorseThanEuclidean chooses FrobMetric's C among deliberately
// bad values (0.1 and 0.2: far too strong a regulariser for the raw wine
// features, whose scales span 0.13 to 300) on a validation set, and
// requires the model to record both validation errors and its certificate
// to warn that the chosen model is worse than the Euclidean metric.
func TestFitWarnsWorseThanEuclidean(t *testing.T) {
	wine, err := datasets.Open("wine")
	if err != nil {
		t.Fatal(err)
	}
	parts, err := data.Split(wine, []float64{0.7, 0.3}, 2)
	if err != nil {
		t.Fatal(err)
	}
	m, err := FrobMetric{Common: Common{Validation: parts[1]}, C: []float64{0.1, 0.2}}.Fit(context.Background(), parts[0].X, parts[0].Y)
	if err != nil {
		t.Fatal(err)
	}
	val, euc := m.Info["val_error"].(float64), m.Info["euclidean_val_error"].(float64)
	if !(val > euc) {
		t.Fatalf("validation error %v not above the Euclidean %v: the test needs a worse model", val, euc)
	}
	found := false
	for _, w := range m.Certificate.Warnings {
		found = found || strings.Contains(w, "above the Euclidean")
	}
	if !found {
		t.Errorf("validation error %.4f above the Euclidean %.4f, warnings %q", val, euc, m.Certificate.Warnings)
	}
}
