package bench

import (
	"context"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"gonum.org/v1/gonum/mat"
)

// BoostFig1 is BoostMetric on the setting of the paper's Figure 1: the
// concentric circles in 10 dimensions (8 of noise), 1,000 training points
// whose 3-NN triplets number 9,000, as the paper's, and 400 test points.
type BoostFig1 struct {
	Dim      int `json:"dim"`
	Triplets int `json:"triplets"`
	// Eigenvalues are the three largest eigenvalues of the learned X
	// divided by its trace (the paper's: 0.542, 0.414, 0.007).
	Eigenvalues []float64 `json:"eigenvalues"`
	// Circles is the share of tr X on the two circle coordinates,
	// (X₁₁ + X₂₂)/tr X: 1 when the metric sees the circles only.
	Circles    float64 `json:"circles_share"`
	Iterations int     `json:"iterations"`
	Stop       string  `json:"stop"`
	// TestError and Euclidean are 3-NN test errors (fractions).
	TestError float64 `json:"test_error"`
	Euclidean float64 `json:"euclidean_test_error"`
}

// boostFig1Eigen are the eigenvalues of X the paper reports for Figure 1.
var boostFig1Eigen = []float64{0.542, 0.414, 0.007}

// BoostFigure1 runs stage-wise BoostMetric with the exponential loss (the
// paper's choice for Figure 1) on the Figure 1 setting of the circles.
func BoostFigure1(ctx context.Context, b engine.Backend, seed uint64) (*BoostFig1, error) {
	const dim, nTrain = 10, 1000
	b = engine.Or(b)
	x, y, err := datasets.ConcentricCircles(nTrain+BoostFig2Test, dim, datasets.CirclesNoise, seed)
	if err != nil {
		return nil, err
	}
	xTr := mat.DenseCopyOf(x.Slice(0, nTrain, 0, dim))
	xTe := mat.DenseCopyOf(x.Slice(nTrain, nTrain+BoostFig2Test, 0, dim))
	yTr, yTe := y[:nTrain], y[nTrain:]
	ts, err := constraints.TripletsBLAS(b.BLAS(), xTr, yTr, boostFig2K)
	if err != nil {
		return nil, err
	}
	res, err := boost.BoostMetric(ctx, xTr, ts, boost.Options{Loss: boost.Exp, Mode: boost.Stagewise, Backend: b, Seed: seed})
	if err != nil {
		return nil, fmt.Errorf("boostfig2: figure 1: %w", err)
	}
	f := &BoostFig1{Dim: dim, Triplets: ts.Len(), Iterations: res.Iterations, Stop: res.Stop.String(), TestError: math.NaN()}
	if f.Euclidean, err = eval.KNNError(b, xTr, yTr, xTe, yTe, boostFig2K); err != nil {
		return nil, err
	}
	m := res.Matrix(dim)
	tr := res.Trace()
	if tr <= 0 {
		return f, nil
	}
	var es mat.EigenSym
	if !es.Factorize(m, false) {
		return nil, fmt.Errorf("boostfig2: figure 1: eigendecomposition of X failed")
	}
	v := es.Values(nil)
	for i := len(v) - 1; i >= len(v)-3; i-- {
		f.Eigenvalues = append(f.Eigenvalues, v[i]/tr)
	}
	f.Circles = (m.At(0, 0) + m.At(1, 1)) / tr
	if f.TestError, err = eval.FactorKNNError(b, res.Factor(), xTr, yTr, xTe, yTe, boostFig2K); err != nil {
		return nil, err
	}
	return f, nil
}
