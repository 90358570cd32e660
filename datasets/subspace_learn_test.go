package datasets_test

import (
	"testing"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/data"
)

// TestSubspaceLearnedMetricWins: on subspace data FrobMetric (C = 10,
// through the library's front door, certified) classifies held-out points
// clearly better by 3-NN than the Euclidean metric, so that timing it
// there measures a metric worth learning. 400 training points in 128
// dimensions and 1,000 test points: the gap is about 0.18 at this seed,
// and the 0.1 required is over four standard errors of the difference.
func TestSubspaceLearnedMetricWins(t *testing.T) {
	d, err := data.Load("subspace:1400:128:1", data.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	parts, err := data.SplitRows(d, []int{400, 1000})
	if err != nil {
		t.Fatal(err)
	}
	l := psdlearn.FrobMetric{Common: psdlearn.Common{Standardize: true, K: 3, Seed: 1}, C: []float64{10}}
	r, err := psdlearn.Run(t.Context(), l, psdlearn.Data{X: parts[0].X, Y: parts[0].Y, Test: parts[1]})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Certificate.Converged {
		t.Errorf("not certified: %+v", r.Certificate)
	}
	if learned, euclid := r.Eval.TestError, r.Eval.EuclideanTestError; !(learned < euclid-0.1) {
		t.Errorf("3-NN test error: learned %.3f, Euclidean %.3f", learned, euclid)
	}
}
