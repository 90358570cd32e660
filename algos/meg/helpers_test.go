package meg

import (
	"math"
	"testing"

	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine"
	"gonum.org/v1/gonum/mat"
)

// loadWine opens the embedded wine data set, standardises the features
// (population standard deviation) and returns the data and labels.
func loadWine(t testing.TB) (*mat.Dense, []int) {
	t.Helper()
	d, err := datasets.Open("wine")
	if err != nil {
		t.Fatal(err)
	}
	x, y := mat.DenseCopyOf(d.X), d.Y
	n, p := x.Dims()
	for j := 0; j < p; j++ {
		var m, s float64
		for i := 0; i < n; i++ {
			m += x.At(i, j)
		}
		m /= float64(n)
		for i := 0; i < n; i++ {
			s += (x.At(i, j) - m) * (x.At(i, j) - m)
		}
		s = math.Sqrt(s / float64(n))
		for i := 0; i < n; i++ {
			x.Set(i, j, (x.At(i, j)-m)/s)
		}
	}
	return x, y
}

// wineSubset returns the rows every step-th row of wine (standardised on the
// full set) starting at offset, with their labels.
func wineSubset(t testing.TB, n, offset int) (*mat.Dense, []int) {
	t.Helper()
	x, y := loadWine(t)
	rows, p := x.Dims()
	step := rows / n
	sub := mat.NewDense(n, p, nil)
	ys := make([]int, n)
	for i := 0; i < n; i++ {
		r := (offset + i*step) % rows
		sub.SetRow(i, x.RawRowView(r))
		ys[i] = y[r]
	}
	return sub, ys
}

// targetKernel returns the trace-normalised RBF kernel over n wine objects
// with γ = scale / median squared distance.
func targetKernel(t testing.TB, n int, scale float64) (*mat.SymDense, []int) {
	t.Helper()
	x, y := wineSubset(t, n, 0)
	g, err := MedianGamma(x)
	if err != nil {
		t.Fatal(err)
	}
	k, err := RBFKernel(x, scale*g)
	if err != nil {
		t.Fatal(err)
	}
	u, err := TraceNormalize(k)
	if err != nil {
		t.Fatal(err)
	}
	return u, y
}

// checkTraceOnePD checks that w is symmetric (exactly, as a SymDense), has
// trace one within tol, and is positive definite: an independent
// eigendecomposition has a positive smallest eigenvalue and Cholesky succeeds.
func checkTraceOnePD(t *testing.T, b engine.Backend, w *mat.SymDense, tol float64, what string) {
	t.Helper()
	if tr := mat.Trace(w); math.Abs(tr-1) > tol {
		t.Fatalf("%s: trace %.17g, want 1 within %g", what, tr, tol)
	}
	e, err := b.SymEig(w, engine.EigRange{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !(e.Values[0] > 0) {
		t.Fatalf("%s: smallest eigenvalue %g is not positive", what, e.Values[0])
	}
	var ch mat.Cholesky
	if !ch.Factorize(w) {
		t.Fatalf("%s: Cholesky factorisation failed", what)
	}
}

// maxAbsDiff returns max_ij |a_ij − b_ij|.
func maxAbsDiff(a, b mat.Symmetric) float64 {
	var m float64
	n := a.SymmetricDim()
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			m = math.Max(m, math.Abs(a.At(i, j)-b.At(i, j)))
		}
	}
	return m
}
