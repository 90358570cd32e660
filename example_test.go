package psdlearn_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/model"
	"gonum.org/v1/gonum/mat"
)

// The whole service path: fit on all the data, save, load (loading needs no
// native library), then transform and measure distances from many
// goroutines at once.
func Example() {
	iris, err := datasets.Open("iris")
	if err != nil {
		panic(err)
	}
	m, err := psdlearn.BoostMetric{Common: psdlearn.Common{Standardize: true}}.Fit(context.Background(), iris.X, iris.Y)
	if err != nil {
		panic(err)
	}
	var file bytes.Buffer
	if err := m.Save(&file); err != nil {
		panic(err)
	}
	served, err := model.Load(&file)
	if err != nil {
		panic(err)
	}
	fmt.Println("converged:", served.Certificate.Converged)

	// Many goroutines share the loaded model: Transform and Distance only
	// read it.
	want, err := served.Transform(iris.X)
	if err != nil {
		panic(err)
	}
	var wg sync.WaitGroup
	agree := make([]bool, 8)
	for g := range agree {
		wg.Add(1)
		go func() {
			defer wg.Done()
			z, err := served.Transform(iris.X)
			if err != nil {
				return
			}
			agree[g] = mat.Equal(z, want)
		}()
	}
	wg.Wait()
	all := true
	for _, a := range agree {
		all = all && a
	}
	fmt.Println("goroutines agree:", all)

	// Distances between raw rows: prepare (standardise), then the metric.
	p, err := served.Prepare(iris.X)
	if err != nil {
		panic(err)
	}
	same := served.Metric.Distance(p.RawRowView(0), p.RawRowView(1))    // two setosas
	other := served.Metric.Distance(p.RawRowView(0), p.RawRowView(100)) // a setosa and a virginica
	fmt.Println("setosa closer to setosa:", same < other)
	// Output:
	// converged: true
	// goroutines agree: true
	// setosa closer to setosa: true
}
