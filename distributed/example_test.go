package distributed_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/distributed"
	"github.com/psdlearn/psdlearn/mpi"
)

// ExampleReadRows reads this process's part of a CSV file: under mpirun
// (mpi.Open in a -tags mpi build) each rank would read about 1/P of its
// bytes; alone, the process reads it all.
func ExampleReadRows() {
	dir, err := os.MkdirTemp("", "readrows")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "d.csv")
	if err := os.WriteFile(path, []byte("x,y,label\n1,2,a\n3,4,b\n5,6,a\n"), 0o644); err != nil {
		panic(err)
	}
	load := func(spec string) (*data.Dataset, error) { return data.Load(spec, data.LoadOptions{}) }
	rows, err := distributed.ReadRows(mpi.Single, path, data.LoadOptions{}, load, 1)
	if err != nil {
		panic(err)
	}
	fmt.Printf("rows %d–%d of %d, %d features, classes %v, %d bytes held\n", rows.Lo, rows.Lo+len(rows.Y)-1, rows.N, rows.Dim, rows.Classes, rows.HeldBytes())
	// Output: rows 0–2 of 3, 2 features, classes [a b], 72 bytes held
}

// ExampleExecutor runs the pipeline with the MPI execution mode: under
// mpirun every rank runs this same code and gets the same result, the one
// a single process gets.
func ExampleExecutor() {
	iris, err := datasets.Open("iris")
	if err != nil {
		panic(err)
	}
	parts, err := data.Split(iris, []float64{0.7, 0.15, 0.15}, 1)
	if err != nil {
		panic(err)
	}
	ex, ctx, err := distributed.NewExecutor(context.Background(), mpi.Single)
	if err != nil {
		panic(err)
	}
	l := psdlearn.FrobMetric{Common: psdlearn.Common{Standardize: true, Validation: parts[1], Executor: ex}}
	res, err := psdlearn.Run(ctx, l, psdlearn.Data{X: parts[0].X, Y: parts[0].Y, Test: parts[2]})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Certificate.Converged, len(res.Searched) > 1)
	// Output: true true
}
