package psdlearn_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/constraints"
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

// MEG learns a kernel over six objects from their squared distances: two
// groups of three points on a line (at 0, 1, 2 and 10, 11, 12). The
// distances are up to 144, so the kernel's trace must be large enough:
// Trace 200. On that scale the small distances move the trace-one kernel
// little per update; a larger learning rate than the paper's and many
// passes fit them.
func ExampleMEG() {
	pos := []float64{0, 1, 2, 10, 11, 12}
	var ds []psdlearn.Distance
	for a := range pos {
		for b := a + 1; b < len(pos); b++ {
			ds = append(ds, psdlearn.Distance{A: a, B: b, Y: (pos[a] - pos[b]) * (pos[a] - pos[b])})
		}
	}
	m, err := psdlearn.MEG{Trace: 200, Eta: 10, Passes: 1000}.FitDistances(context.Background(), len(pos), ds)
	if err != nil {
		panic(err)
	}
	fmt.Printf("squared distances: (0,1) %.1f, (0,2) %.1f, (0,5) %.1f\n",
		m.Kernel.SqDistance(0, 1), m.Kernel.SqDistance(0, 2), m.Kernel.SqDistance(0, 5))
	fmt.Println("converged:", m.Certificate.Converged, "-", m.Certificate.Reason)
	// Output:
	// squared distances: (0,1) 1.0, (0,2) 4.0, (0,5) 144.0
	// converged: false - online MEG: 1000 pass(es) over 15 examples, no convergence certificate
}

// DefiniteBoost learns a kernel over five objects from pairs: 0, 1 and 2
// are must-linked in a chain, 3 and 4 likewise, and 2 is cannot-linked to
// 3.
func ExampleDefiniteBoost() {
	pairs, err := constraints.NewPairs(5, []constraints.LabelledPair{
		{A: 0, B: 1, Same: true}, {A: 1, B: 2, Same: true}, {A: 3, B: 4, Same: true}, {A: 2, B: 3},
	})
	if err != nil {
		panic(err)
	}
	m, err := psdlearn.DefiniteBoost{}.FitPairs(context.Background(), pairs)
	if err != nil {
		panic(err)
	}
	fmt.Println("converged:", m.Certificate.Converged)
	// Under I/5 every squared distance is 2/5 = 0.4; must-links end within
	// Near·0.4 = 0.08, the cannot-link beyond Far·0.4 = 0.4.
	fmt.Printf("must-link (0,1) %.2f, cannot-link (2,3) %.2f\n", m.Kernel.SqDistance(0, 1), m.Kernel.SqDistance(2, 3))
	fmt.Println("0 closer to 2 than to 4:", m.Kernel.SqDistance(0, 2) < m.Kernel.SqDistance(0, 4))
	// Output:
	// converged: true
	// must-link (0,1) 0.08, cannot-link (2,3) 0.43
	// 0 closer to 2 than to 4: true
}

// The README's Go quick start: fit with the zero values (C chosen among
// the default list by 3-fold cross-validation), look at the choice, save,
// load and transform.
func ExampleRun() {
	iris, err := datasets.Open("iris") // or your own x (n×D *mat.Dense) and labels y
	if err != nil {
		panic(err)
	}
	r, err := psdlearn.Run(context.Background(),
		psdlearn.FrobMetric{Common: psdlearn.Common{Standardize: true}}, // zero values are the defaults
		psdlearn.Data{X: iris.X, Y: iris.Y})
	if err != nil { // errors.Is(err, errs.ErrNotConverged): r.Model is the best found
		panic(err)
	}
	fmt.Println(r.Selection, r.Searched, r.Certificate.Converged)
	path := filepath.Join(os.TempDir(), "psdlearn-example-metric.json")
	defer os.Remove(path)
	if err := r.Model.SaveFile(path); err != nil {
		panic(err)
	}

	// In the service (links no native library):
	served, err := model.LoadFile(path)
	if err != nil {
		panic(err)
	}
	z, err := served.Transform(iris.X) // Euclidean distances between rows of z are the metric's
	if err != nil {
		panic(err)
	}
	rows, _ := z.Dims()
	fmt.Println(rows, "rows transformed")
	// Output:
	// folds [0.1 1 10 100] true
	// 150 rows transformed
}

// AdaptiveGrid proposes the learner's list, then one value beyond the edge
// where the validation optimum sits strictly (here the largest C).
func ExampleAdaptiveGrid() {
	g := psdlearn.AdaptiveGrid{}
	start := []float64{0.1, 1, 10, 100}
	fmt.Println(g.Next(start, nil))
	scored := []psdlearn.Score{{C: 0.1, ValError: 0.3}, {C: 1, ValError: 0.2}, {C: 10, ValError: 0.15}, {C: 100, ValError: 0.1}}
	fmt.Println(g.Next(start, scored))
	// Output:
	// [0.1 1 10 100]
	// [1000]
}

// Run the SimpleNPKL paper's clustering protocol on iris: 20 repetitions,
// each with fresh must-link and cannot-link pairs sampled from the labels,
// a kernel learned from them and clustered by kernel k-means.
func ExampleCluster() {
	ds, err := datasets.Open("iris")
	if err != nil {
		panic(err)
	}
	rep, err := psdlearn.Cluster(context.Background(), ds.X, ds.Y, psdlearn.ClusterOptions{
		Neighbors: 5, Ratio: 0.7, Runs: 20, Seed: 1,
		Learn: npkl.Options{Loss: npkl.SquaredHinge, B: 1, C: 0.5},
	})
	if err != nil {
		panic(err)
	}
	fmt.Printf("accuracy %.1f ± %.1f %%\n", 100*rep.AccuracyMean, 100*rep.AccuracySD)
	// Output:
	// accuracy 97.7 ± 0.8 %
}
