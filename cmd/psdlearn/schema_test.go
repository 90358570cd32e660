package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/bench"
)

// TestJSONSchema: every command's --json output, and the error object,
// starts with "schema": "psdlearn/<command>/v1". Commands too slow for a
// test (bench, demo: their whole suites) are checked through emitJSON with
// their summary's shape; a new command must be added to the table.
func TestJSONSchema(t *testing.T) {
	dir := t.TempDir()
	metricPath, kernelPath := filepath.Join(dir, "m.json"), filepath.Join(dir, "k.json")
	cases := map[string][]string{
		"version":   {"version", "--json"},
		"train":     {"train", "--algo", "frobmetric", "--C", "1", "--data", "builtin:iris", "--quiet", "--json", "--out", metricPath},
		"cluster":   {"cluster", "--data", "builtin:iris", "--runs", "1", "--backend", "go", "--quiet", "--json", "--out", kernelPath},
		"eval":      {"eval", "--model", metricPath, "--data", "builtin:iris", "--json"},
		"transform": {"transform", "--model", metricPath, "--data", "builtin:iris", "--out", filepath.Join(dir, "z.csv"), "--json"},
		"kernel":    {"kernel", "--algo", "meg", "--steps", "50", "--objects", "10", "--checkpoints", "0", "--quiet", "--json"},
		"embed":     {"embed", "--data", "swissroll:60:3", "--iters", "20", "--quiet", "--json"},
		"predict":   {"predict", "--model", metricPath, "--data", "builtin:iris", "--ref", "builtin:iris", "--out", filepath.Join(dir, "p.csv"), "--json"},
		"bench":     nil,
		"demo":      nil,
	}
	// train and cluster first: eval and transform read their model files.
	names := []string{"train", "cluster"}
	for _, name := range commandNames() {
		if name != "train" && name != "cluster" {
			names = append(names, name)
		}
	}
	for _, name := range names {
		args, ok := cases[name]
		if !ok {
			t.Errorf("command %s: no case in TestJSONSchema", name)
			continue
		}
		var out string
		if args == nil {
			var buf bytes.Buffer
			env := &cmdEnv{stdout: &buf, command: name, json: true}
			var v any = benchSummaryOf("kernels", []bench.Result{{Median: math.NaN(), Metrics: map[string]float64{"x": math.NaN()}}}, nil)
			if name == "demo" {
				v = demoSummary{Metric: []demoMetricRun{{TestError: jsonFloat(math.NaN())}}, PeakRSSMB: jsonFloat(math.NaN())}
			}
			if err := emitJSON(env, v); err != nil {
				t.Fatal(err)
			}
			out = buf.String()
		} else {
			st, o, errs := runIO(args, "")
			if st != 0 {
				t.Fatalf("%s: status %d: %s %s", name, st, o, errs)
			}
			out = o
		}
		want := `{"schema":"psdlearn/` + name + `/v1"`
		if !strings.HasPrefix(out, want) {
			t.Errorf("%s: JSON output %.120q does not start with %s", name, out, want)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	st, out, _ := runIO([]string{"nosuchcommand", "--json"}, "")
	var e map[string]any
	if st != 2 || json.Unmarshal([]byte(out), &e) != nil || e["schema"] != "psdlearn/error/v1" || e["error"] == nil {
		t.Errorf("error object %q (status %d)", out, st)
	}
	if _, err := os.Stat(kernelPath); err != nil {
		t.Error(err)
	}
	// eval on a kernel model too.
	if ev := mustRun(t, "eval", "--model", kernelPath, "--data", "builtin:iris", "--json"); ev["schema"] != "psdlearn/eval/v1" {
		t.Errorf("eval of a kernel: %v", ev)
	}
}
