package sparse_test

import (
	"testing"

	"github.com/psdlearn/psdlearn/data"
	_ "github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/lapack"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// BenchmarkKNNLetters compares the two exact strategies on real data
// (letters, standardised, 16 features): the evaluation search (5,000 test
// points against 10,500 training points) and the whole-set search.
//
//	go test -run XXX -bench KNNLetters ./sparse
func BenchmarkKNNLetters(b *testing.B) {
	ds, err := data.Load("builtin:letters", data.LoadOptions{})
	if err != nil {
		b.Skip(err)
	}
	st, err := data.FitStandardizer(ds.X)
	if err != nil {
		b.Fatal(err)
	}
	x, err := st.Apply(ds.X)
	if err != nil {
		b.Fatal(err)
	}
	train := x.Slice(0, 10500, 0, 16).(*mat.Dense)
	test := x.Slice(15000, 20000, 0, 16).(*mat.Dense)
	for _, tree := range []bool{false, true} {
		name := "screen"
		if tree {
			name = "tree"
		}
		b.Run("test-vs-train/"+name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := sparse.KNNStrategy(lapack.NativeBLAS, test, train, 3, false, tree); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("self-20000/"+name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := sparse.KNNStrategy(lapack.NativeBLAS, x, x, 3, true, tree); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
