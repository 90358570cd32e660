package constraints_test

import (
	"math/rand/v2"
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

// BenchmarkNewTripletSet indexes 450,000 random triplets on 50,000 points
// (MNIST's protocol size) with the contradiction check, and relabels them
// (as every FrobMetric solve does for locality).
func BenchmarkNewTripletSet(b *testing.B) {
	const n, m = 50000, 450000
	rng := rand.New(rand.NewPCG(1, 2))
	ts := make([]constraints.Triplet, 0, m)
	for len(ts) < m {
		i, j, k := rng.IntN(n), rng.IntN(n), rng.IntN(n)
		if i != j && i != k && j != k {
			ts = append(ts, constraints.Triplet{I: i, J: min(j, k), K: max(j, k)})
		}
	}
	perm := rng.Perm(n)
	b.Run("new", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := constraints.NewTripletSet(n, ts); err != nil {
				b.Fatal(err)
			}
		}
	})
	s, err := constraints.NewTripletSet(n, ts)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("relabel", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := s.Relabel(perm); err != nil {
				b.Fatal(err)
			}
		}
	})
}
