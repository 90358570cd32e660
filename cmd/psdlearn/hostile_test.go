package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// hostileCase is a command line of issue 21 that must fail with a one-line
// error containing want, within a few seconds, without a panic.
type hostileCase struct {
	name string
	args []string
	want string
}

// runHostile runs each case in-process and checks the exit status, the
// message and the time taken.
func runHostile(t *testing.T, cases []hostileCase) {
	t.Helper()
	for _, tc := range cases {
		var stdout, stderr bytes.Buffer
		start := time.Now()
		status := runMain(context.Background(), tc.args, &stdout, &stderr)
		took := time.Since(start)
		msg := strings.TrimRight(stderr.String(), "\n")
		lines := strings.Split(msg, "\n")
		last := lines[len(lines)-1]
		switch {
		case status == 0:
			t.Errorf("%s: exit status 0 (stdout %q)", tc.name, stdout.String())
		case strings.Contains(msg, "internal error") || strings.Contains(msg, "panic") || strings.Contains(msg, "goroutine "):
			t.Errorf("%s: panic or internal error: %s", tc.name, msg)
		case !strings.HasPrefix(last, "psdlearn: "):
			t.Errorf("%s: last stderr line %q is not a one-line psdlearn error", tc.name, last)
		case !strings.Contains(last, tc.want):
			t.Errorf("%s: error %q does not mention %q", tc.name, last, tc.want)
		}
		if took > 5*time.Second {
			t.Errorf("%s: took %v, want an error within 5 s", tc.name, took)
		}
	}
}

// TestHostileLimits runs issue 21 item 7: negative or zero limits that were
// silently replaced by defaults (or reported as success) are usage errors.
func TestHostileLimits(t *testing.T) {
	runHostile(t, []hostileCase{
		{"frobmetric --iters -1", []string{"train", "--algo", "frobmetric", "--data", "builtin:iris", "--iters", "-1"}, "--iters -1"},
		{"boostmetric --passes -3", []string{"train", "--algo", "boostmetric", "--data", "builtin:iris", "--passes", "-3"}, "--passes -3"},
		{"embed --iters -5", []string{"embed", "--data", "swissroll:200", "--iters", "-5"}, "--iters -5"},
		{"embed --k 0", []string{"embed", "--data", "swissroll:200", "--k", "0"}, "--k 0"},
		{"embed --k -1", []string{"embed", "--data", "swissroll:200", "--k", "-1"}, "--k -1"},
		{"cluster --ratio 0", []string{"cluster", "--data", "builtin:iris", "--ratio", "0"}, "--ratio 0"},
		{"cluster --ratio 1.5", []string{"cluster", "--data", "builtin:iris", "--ratio", "1.5"}, "--ratio 1.5"},
		{"cluster --ratio NaN", []string{"cluster", "--data", "builtin:iris", "--ratio", "NaN"}, "--ratio NaN"},
		{"cluster --runs -5", []string{"cluster", "--data", "builtin:iris", "--runs", "-5"}, "--runs"},
		{"cluster --clusters -2", []string{"cluster", "--data", "builtin:iris", "--clusters", "-2"}, "--clusters"},
		{"eval --runs -5", []string{"eval", "--model", "m.json", "--data", "builtin:iris", "--runs", "-5"}, "--runs -5"},
		{"eval --clusters -2", []string{"eval", "--model", "m.json", "--data", "builtin:iris", "--clusters", "-2"}, "--clusters -2"},
		{"eval --k 0", []string{"eval", "--model", "m.json", "--data", "builtin:iris", "--k", "0"}, "--k 0"},
		{"bench --max-size -1", []string{"bench", "--max-size", "-1"}, "--max-size -1"},
		{"bench --runs 0", []string{"bench", "--runs", "0"}, "--runs 0"},
		{"bench --case nomatch", []string{"bench", "--case", "nomatch-zzz", "--runs", "1"}, "no case"},
	})
}

// TestHostileCLP runs issue 21 item 1 through the CLI: C = 1e25 aborted the
// process inside CLP.
func TestHostileCLP(t *testing.T) {
	for _, backend := range []string{"native", "go"} {
		if _, err := resolveBackend(backend); err != nil {
			continue
		}
		runHostile(t, []hostileCase{
			{"psdboost --C 1e25 " + backend, []string{"train", "--algo", "psdboost", "--data", "builtin:iris", "--C", "1e25", "--backend", backend}, "C = 1e+25"},
			{"boostmetric --loss hinge --C 1e25 " + backend, []string{"train", "--algo", "boostmetric", "--loss", "hinge", "--data", "builtin:iris", "--C", "1e25", "--backend", backend}, "1e+25"},
		})
	}
}
