package psdlearn_test

import (
	"context"
	"sync"
	"testing"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/model"
	"gonum.org/v1/gonum/mat"
)

// TestConcurrentEstimators runs one value of the estimators FrobMetric
// (choosing C by cross-validation), MEG and DefiniteBoost
// from several goroutines at once: estimators are stateless, so every
// goroutine must get the model a lone call gets (run it with -race).
func TestConcurrentEstimators(t *testing.T) {
	iris, err := datasets.Open("iris")
	if err != nil {
		t.Fatal(err)
	}
	pairs, err := constraints.NewPairs(5, []constraints.LabelledPair{{A: 0, B: 1, Same: true}, {A: 1, B: 2, Same: true}, {A: 2, B: 3}})
	if err != nil {
		t.Fatal(err)
	}
	ds := []psdlearn.Distance{{A: 0, B: 1, Y: 0.1}, {A: 1, B: 2, Y: 0.2}, {A: 0, B: 3, Y: 0.6}, {A: 2, B: 3, Y: 0.5}}
	ctx := context.Background()
	frob := psdlearn.FrobMetric{Common: psdlearn.Common{Standardize: true, Seed: 4}, C: []float64{0.1, 10}}
	megEst := psdlearn.MEG{Passes: 3, Seed: 2}
	fits := []struct {
		name string
		fit  func() (*model.Model, error)
		same func(a, b *model.Model) bool
	}{
		{"frobmetric k-fold", func() (*model.Model, error) { return frob.Fit(ctx, iris.X, iris.Y) },
			func(a, b *model.Model) bool { return mat.Equal(a.Metric.M, b.Metric.M) }},
		{"meg", func() (*model.Model, error) { return megEst.FitDistances(ctx, 4, ds) },
			func(a, b *model.Model) bool { return mat.Equal(a.Kernel.V, b.Kernel.V) }},
		{"definiteboost", func() (*model.Model, error) { return psdlearn.DefiniteBoost{}.FitPairs(ctx, pairs) },
			func(a, b *model.Model) bool { return mat.Equal(a.Kernel.V, b.Kernel.V) }},
	}
	for _, f := range fits {
		t.Run(f.name, func(t *testing.T) {
			want, err := f.fit()
			if err != nil {
				t.Fatal(err)
			}
			const g = 4
			got := make([]*model.Model, g)
			errs := make([]error, g)
			var wg sync.WaitGroup
			for i := 0; i < g; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					got[i], errs[i] = f.fit()
				}()
			}
			wg.Wait()
			for i := range got {
				if errs[i] != nil {
					t.Fatalf("goroutine %d: %v", i, errs[i])
				}
				if !f.same(got[i], want) {
					t.Errorf("goroutine %d: a different model", i)
				}
			}
		})
	}
}
