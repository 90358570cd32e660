package main

import (
	"strings"
	"testing"
)

// TestBenchTimeLimit: with --time-limit shorter than any run, every case
// on every backend is reported unfinished — without metrics, its median
// null in JSON, "unfinished" rather than "error" in the markdown table —
// and the command still succeeds.
func TestBenchTimeLimit(t *testing.T) {
	args := []string{"bench", "--suite", "kernels", "--case", "lbfgsb", "--max-size", "100", "--runs", "1", "--warmup=false", "--time-limit", "1ns"}
	out := mustRun(t, append(args, "--json")...)
	results, _ := out["results"].([]any)
	if len(results) == 0 {
		t.Fatalf("no results: %v", out)
	}
	for _, r := range results {
		m := r.(map[string]any)
		if e, _ := m["error"].(string); !strings.HasPrefix(e, "unfinished: the time limit of 1ns ran out") || m["metrics"] != nil || m["median_seconds"] != nil {
			t.Errorf("%v on %v: error %q, median %v, metrics %v", m["case"], m["backend"], e, m["median_seconds"], m["metrics"])
		}
	}
	st, md, errs := runIO(args, "")
	if st != 0 || !strings.Contains(md, "| unfinished: the time limit of 1ns ran out") || strings.Contains(md, "error: unfinished") {
		t.Errorf("status %d, markdown %s, stderr %s", st, md, errs)
	}
}
