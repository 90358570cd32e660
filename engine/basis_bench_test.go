package engine

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func benchBlock(n, b int, rng *rand.Rand) *mat.Dense {
	m := mat.NewDense(n, b, nil)
	for i := range m.RawMatrix().Data {
		m.RawMatrix().Data[i] = rng.NormFloat64()
	}
	return m
}

// BenchmarkLocalPass times KrylovSchur's local pass at letters' size.
func BenchmarkLocalPass(bm *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	w, prev, last := benchBlock(20000, 4, rng), benchBlock(20000, 4, rng), benchBlock(20000, 4, rng)
	for bm.Loop() {
		localPass(w, prev, last)
	}
}

// BenchmarkSketch times the sketch's update and check at letters' size.
func BenchmarkSketch(bm *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	w := benchBlock(20000, 4, rng)
	o := newOrthSketch(20000, 220, rng)
	for bm.Loop() {
		o.add(w, 8)
		o.check(w, 1e-10)
	}
}

func BenchmarkSketchAdd(bm *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	w := benchBlock(20000, 4, rng)
	o := newOrthSketch(20000, 220, rng)
	for bm.Loop() {
		o.add(w, 8)
	}
}

// BenchmarkProjectRows times VᵀW for a letters-sized basis (170 columns of
// a 220-column allocation) and a block of four.
func BenchmarkProjectRows(bm *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	v := benchBlock(20000, 220, rng).Slice(0, 20000, 0, 170).(*mat.Dense)
	w := benchBlock(20000, 4, rng)
	for bm.Loop() {
		projectRows(v, w)
	}
}

// BenchmarkSolveUpperRows times CholQR's triangular solve on a block of
// four at letters' size.
func BenchmarkSolveUpperRows(bm *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	w := benchBlock(20000, 4, rng)
	u := mat.NewTriDense(4, mat.Upper, []float64{1, 0.1, 0.2, 0.3, 0, 1, 0.1, 0.2, 0, 0, 1, 0.1, 0, 0, 0, 1})
	for bm.Loop() {
		solveUpperRows(w, u)
	}
}
