package bench

import (
	"math"
	"testing"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/engine/enginetest"
)

// TestFlopBounds checks the phase bounds against their formulas at the
// rates the function reports, and the ratios against the phase times.
func TestFlopBounds(t *testing.T) {
	for _, b := range enginetest.Backends(t) {
		rep := &psdlearn.Result{Algorithm: "frobmetric", NTrain: 1000, NVal: 200, NTest: 300, InputDim: 50, Dim: 20,
			Iterations: 7, Phases: psdlearn.Phases{Preprocess: 0.5, Triplets: 1, Train: 2, Evaluation: 3,
				Solves: []psdlearn.Solve{{Iterations: 10}, {Iterations: 30}}}}
		m := map[string]float64{}
		addFlopBounds(m, rep, b)
		dg, sg := m["dgemm_gflops"]*1e9, m["sgemm_gflops"]*1e9
		if !(dg > 0 && sg > 0) {
			t.Fatalf("%s: rates %v, %v", b.Name(), dg, sg)
		}
		want := map[string]float64{
			"preprocess": (2*1000*50*50 + 2*1500*50*20) / dg,
			"triplets":   2 * 1000 * 1000 * 20 / sg,
			"train":      40 * 4 * 1000 * 20 * 20 / dg, // both solves, two GEMMs each
			"evaluation": 2 * 2 * 500 * 1000 * 20 / sg,
		}
		secs := map[string]float64{"preprocess": 0.5, "triplets": 1, "train": 2, "evaluation": 3}
		for k, w := range want {
			if got := m["bound_"+k]; math.Abs(got-w) > 1e-12*w {
				t.Errorf("%s: bound_%s = %g, want %g", b.Name(), k, got, w)
			}
			if got := m["ratio_"+k]; math.Abs(got-secs[k]/w) > 1e-9*secs[k]/w {
				t.Errorf("%s: ratio_%s = %g, want %g", b.Name(), k, got, secs[k]/w)
			}
		}
	}
}
