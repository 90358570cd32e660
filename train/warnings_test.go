package train_test

import (
	"context"
	"math"
	"strings"
	"testing"

	_ "github.com/psdlearn/psdlearn/algos/frob" // registers frobmetric
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/train"
)

func TestWorseThanEuclidean(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		val, euclid float64
		warn        bool
	}{
		{0.30, 0.20, true},
		{0.20, 0.20, false}, // equal is not worse
		{0.10, 0.20, false},
		{nan, 0.20, false},
		{0.30, nan, false},
	} {
		w := train.WorseThanEuclidean("frobmetric", c.val, c.euclid, 26)
		if (w != "") != c.warn {
			t.Errorf("WorseThanEuclidean(%v, %v) = %q, want a warning: %v", c.val, c.euclid, w, c.warn)
		}
		if c.warn && !strings.Contains(w, "30.00%") || c.warn && !strings.Contains(w, "20.00%") {
			t.Errorf("warning %q does not give both errors", w)
		}
	}
}

// TestWorseThanEuclideanWarns runs FrobMetric on the raw wine features with
// a deliberately bad C (0.1: far too strong a regulariser for features
// whose scales span 0.13 to 300, the metric is then the proline axis)
// and requires the report to warn that its validation error is above the
// Euclidean one, and to report both; the data-following default does not
// warn.
func TestWorseThanEuclideanWarns(t *testing.T) {
	d, err := datasets.Open("wine")
	if err != nil {
		t.Fatal(err)
	}
	parts, err := data.Split(d, []float64{0.7, 0.15, 0.15}, 2)
	if err != nil {
		t.Fatal(err)
	}
	run := func(cs []float64) *train.Report {
		r, err := train.RunExperiment(context.Background(), train.Experiment{
			Algo: "frobmetric", Train: parts[0], Val: parts[1], Test: parts[2], Seed: 2,
			Options: train.Options{C: cs},
		})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	bad := run([]float64{0.1})
	if !(bad.ValError > bad.EuclideanValError) {
		t.Fatalf("C = 0.1: validation error %v not above the Euclidean %v: the test needs a worse model", bad.ValError, bad.EuclideanValError)
	}
	found := false
	for _, w := range bad.Warnings {
		found = found || strings.Contains(w, "above the Euclidean")
	}
	if !found {
		t.Errorf("C = 0.1: validation error %.4f above the Euclidean %.4f, warnings %q", bad.ValError, bad.EuclideanValError, bad.Warnings)
	}
	if testing.Short() {
		return
	}
	good := run(nil)
	if good.ValError > good.EuclideanValError {
		t.Errorf("default C policy: validation error %.4f above the Euclidean %.4f (C = %g of %v)", good.ValError, good.EuclideanValError, good.ChosenC, good.Searched)
	}
	for _, w := range good.Warnings {
		if strings.Contains(w, "above the Euclidean") {
			t.Errorf("default C policy warns: %s", w)
		}
	}
}
