package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn/engine"
)

// tinyDeep is the deep protocol at smoke-test size.
var tinyDeep = DeepProtocol{Train: 400, Val: 100, Test: 200, Dim: 64, C: 10, K: 3}

// TestDeepCasesTiny runs the deep case at a tiny size on every backend and
// requires a certified FrobMetric solve at the one C given (the gap within
// its tolerance), the phases, both test errors, a rank within the
// dimension, the generated data named in the detail, and a wall time.
func TestDeepCasesTiny(t *testing.T) {
	cases := DeepCases(1, tinyDeep)
	if len(cases) != 1 || cases[0].Name != "deep subspace frobmetric C=10" || cases[0].Size != 400 ||
		!strings.Contains(cases[0].Detail, "subspace:700:64:1 rows:400,100,200") {
		t.Fatalf("cases %+v", cases)
	}
	res, err := Run(t.Context(), "algos", cases, Options{Runs: 1, NoWarmup: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(engine.Names()) {
		t.Fatalf("%d results for backends %v", len(res), engine.Names())
	}
	for _, r := range res {
		if r.Error != "" {
			t.Fatalf("%s on %s: %s", r.Case, r.Backend, r.Error)
		}
		m := r.Metrics
		for _, k := range []string{"phase_load", "phase_preprocess", "phase_triplets", "phase_train", "phase_solve_C=10", "phase_evaluation",
			"test_error", "euclidean_test_error", "val_error", "rank", "ratio_train", "dgemm_gflops"} {
			if _, ok := m[k]; !ok {
				t.Errorf("%s: no %s in %v", r.Backend, k, m)
			}
		}
		if m["converged"] != 1 || m["chosen_c"] != 10 || m["gap_tolerance"] != 1e-7 || !(m["duality_gap"] <= m["gap_tolerance"]) {
			t.Errorf("%s: converged %v at C = %v, gap %v (tolerance %v)", r.Backend, m["converged"], m["chosen_c"], m["duality_gap"], m["gap_tolerance"])
		}
		if !(m["phase_load"] > 0) || m["rank"] < 1 || m["rank"] > 64 || !(r.Median > 0) || r.Iterations < 1 {
			t.Errorf("%s: load %v s, rank %v, median %v s, %d iterations", r.Backend, m["phase_load"], m["rank"], r.Median, r.Iterations)
		}
	}
}

// TestDeepTimeLimit: a time limit shorter than the run reports the run as
// unfinished, with no time or metrics, on every backend in turn.
func TestDeepTimeLimit(t *testing.T) {
	res, err := Run(t.Context(), "algos", DeepCases(1, tinyDeep), Options{Runs: 1, NoWarmup: true, TimeLimit: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(engine.Names()) {
		t.Fatalf("%d results for backends %v", len(res), engine.Names())
	}
	for _, r := range res {
		if !strings.HasPrefix(r.Error, "unfinished: the time limit of 1ms ran out") || r.Median != 0 || r.Metrics != nil {
			t.Errorf("%s: error %q, median %v, metrics %v", r.Backend, r.Error, r.Median, r.Metrics)
		}
	}
}

// TestDeepBadProtocol: a protocol without training or test rows, or
// without a positive C, is refused when a run is set up.
func TestDeepBadProtocol(t *testing.T) {
	for _, p := range []DeepProtocol{
		{Train: 0, Val: 10, Test: 10, Dim: 64, C: 10, K: 3},
		{Train: 100, Val: -1, Test: 10, Dim: 64, C: 10, K: 3},
		{Train: 100, Val: 10, Test: 10, Dim: 64, C: 0, K: 3},
		{Train: 100, Val: 10, Test: 10, Dim: 8, C: 10, K: 3},
		{Train: 1 << 40, Val: 1 << 40, Test: 10, Dim: 64, C: 10, K: 3},
	} {
		if _, _, err := deepData(p, 1); err == nil {
			t.Errorf("%+v: no error", p)
		}
	}
}
