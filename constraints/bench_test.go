package constraints_test

import (
	"testing"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/lapack"
)

// BenchmarkTripletsLetters generates the protocol's 94,500 letters triplets
// (10,500 standardised training points, k = 3) with each BLAS.
func BenchmarkTripletsLetters(b *testing.B) {
	d, err := datasets.Open("letters")
	if err != nil {
		b.Fatal(err)
	}
	parts, _ := data.SplitRows(d, []int{10500})
	p, _ := data.FitPipeline(nil, parts[0].X, true, 0)
	x, _ := p.Apply(parts[0].X)
	for _, bc := range []struct {
		name string
		impl constraints.BLAS
	}{{"go", lapack.GoBLAS}, {"native", lapack.NativeBLAS}} {
		b.Run(bc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				ts, err := constraints.TripletsBLAS(bc.impl, x, parts[0].Y, 3)
				if err != nil || ts.Len() != 94500 {
					b.Fatal(ts.Len(), err)
				}
			}
		})
	}
}
