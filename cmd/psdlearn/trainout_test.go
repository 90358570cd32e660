package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/model"
)

// decodeOne decodes the single JSON object of out.
func decodeOne(t *testing.T, out string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decoding %q: %v", out, err)
	}
	if dec.More() {
		t.Fatalf("more than one JSON value: %q", out)
	}
	return m
}

// TestTrainCappedRunWarns: a deliberately capped
// run: exit 0, one warning line on stderr per uncertified solve, the same
// warnings and "converged": false in the JSON, and a model file whose
// certificate says not converged with the gap and its tolerance. With one
// C the capped solve is the model's; with the default list every
// candidate the cap stops short of the selection tolerance warns too.
func TestTrainCappedRunWarns(t *testing.T) {
	out := filepath.Join(t.TempDir(), "m.json")
	st, stdout, stderr := runCLI(t, "train", "--algo", "frobmetric", "--data", "builtin:iris", "--C", "10", "--iters", "3", "--json", "--out", out)
	if st != 0 {
		t.Fatalf("status %d\nstdout %s\nstderr %s", st, stdout, stderr)
	}
	m := decodeOne(t, stdout)
	if conv, ok := m["converged"].(bool); !ok || conv {
		t.Errorf("converged = %v, want false", m["converged"])
	}
	warns := checkWarnings(t, stdout, stderr, m)
	for _, w := range warns {
		// A capped model may also be worse than the Euclidean metric on
		// the validation rows, which is said too.
		if strings.Contains(w, "above the Euclidean") {
			continue
		}
		if !strings.Contains(w, "iteration limit") || !strings.Contains(w, "not certified") {
			t.Errorf("warning %q", w)
		}
	}
	gap := field(t, m, "duality_gap")
	if !(gap > 1e-7) {
		t.Errorf("capped run has duality gap %g, not above the tolerance", gap)
	}
	// The phases: the one C solved once, timed, and the stages in order.
	ph, _ := m["phases"].(map[string]any)
	for _, k := range []string{"load", "preprocess", "triplets", "train", "evaluation"} {
		if v, ok := ph[k].(float64); !ok || v < 0 || math.IsNaN(v) {
			t.Errorf("phases.%s = %v", k, ph[k])
		}
	}
	solves, _ := ph["solves"].([]any)
	if len(solves) != 1 || solves[0].(map[string]any)["converged"] != false {
		t.Fatalf("solves %v, want one, not converged", ph["solves"])
	}
	checkSolves(t, solves, ph)
	mf, err := model.LoadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	c := mf.Certificate
	if c == nil || c.Converged || c.Interrupted || c.Gap != gap || c.Tolerance != 1e-7 || c.Reason != "iteration limit" {
		t.Errorf("model certificate %+v, want not converged, gap %g, tolerance 1e-7", c, gap)
	}

	// The default list: every candidate solved once under the cap, then the
	// chosen one again towards the certificate; each candidate the cap
	// stopped short of the selection tolerance warns, naming the cap.
	st, stdout, stderr = runCLI(t, "train", "--algo", "frobmetric", "--data", "builtin:iris", "--iters", "3", "--json")
	if st != 0 {
		t.Fatalf("status %d\nstdout %s\nstderr %s", st, stdout, stderr)
	}
	m = decodeOne(t, stdout)
	warns = checkWarnings(t, stdout, stderr, m)
	cands, _ := m["candidates"].([]any)
	stopped := 0
	for _, c := range cands {
		if c.(map[string]any)["converged"] == false {
			stopped++
		}
	}
	capWarns := 0
	for _, w := range warns {
		if strings.Contains(w, "candidate not solved to the selection tolerance (iteration limit)") {
			capWarns++
		}
	}
	if stopped == 0 || capWarns != stopped {
		t.Errorf("%d candidates stopped by the cap, %d warnings about them: %q", stopped, capWarns, warns)
	}
	ph, _ = m["phases"].(map[string]any)
	solves, _ = ph["solves"].([]any)
	searched, _ := m["c_searched"].([]any)
	if len(searched) < len(psdlearn.DefaultFrobMetricC) || len(cands) != len(searched) || len(solves) != len(searched)+1 {
		t.Fatalf("%d solves for %d values of C searched (%d candidates), want one per value (at least the %d defaults) and the chosen one's: %v",
			len(solves), len(searched), len(cands), len(psdlearn.DefaultFrobMetricC), ph["solves"])
	}
	checkSolves(t, solves, ph)
}

// checkWarnings checks that the JSON's warnings are the stderr warning
// lines, in order, and returns them.
func checkWarnings(t *testing.T, stdout, stderr string, m map[string]any) []string {
	t.Helper()
	warns, _ := m["warnings"].([]any)
	if len(warns) == 0 {
		t.Fatalf("no warnings in %s", stdout)
	}
	var warnLines []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if strings.HasPrefix(l, "psdlearn: warning: ") {
			warnLines = append(warnLines, strings.TrimPrefix(l, "psdlearn: warning: "))
		}
	}
	if len(warnLines) != len(warns) {
		t.Fatalf("%d warning lines on stderr for %d JSON warnings:\n%s", len(warnLines), len(warns), stderr)
	}
	var out []string
	for i, w := range warns {
		s, _ := w.(string)
		if s != warnLines[i] {
			t.Errorf("warning %d: JSON %q, stderr %q", i, s, warnLines[i])
		}
		out = append(out, s)
	}
	return out
}

// checkSolves checks that every solve is timed, within the cap of 3
// iterations, and inside the training phase.
func checkSolves(t *testing.T, solves []any, ph map[string]any) {
	t.Helper()
	var sum float64
	for _, s := range solves {
		sv := s.(map[string]any)
		sec, _ := sv["seconds"].(float64)
		if !(sec > 0) || sv["iterations"].(float64) > 3 {
			t.Errorf("solve %v", sv)
		}
		sum += sec
	}
	if train := ph["train"].(float64); sum > train {
		t.Errorf("solves take %g s, more than the training phase %g s", sum, train)
	}
}

// TestTrainConvergedNoWarnings: an uncapped run that reaches its
// certificate says so, with an empty warning list and nothing on stderr.
func TestTrainConvergedNoWarnings(t *testing.T) {
	for _, algo := range []string{"frobmetric", "boostmetric"} {
		st, stdout, stderr := runCLI(t, "train", "--algo", algo, "--data", "builtin:iris", "--C", map[string]string{"frobmetric": "1", "boostmetric": ""}[algo], "--json")
		if st != 0 {
			t.Fatalf("%s: status %d: %s %s", algo, st, stdout, stderr)
		}
		m := decodeOne(t, stdout)
		if m["converged"] != true || m["interrupted"] != false {
			t.Errorf("%s: converged %v, interrupted %v", algo, m["converged"], m["interrupted"])
		}
		if w, ok := m["warnings"].([]any); !ok || len(w) != 0 {
			t.Errorf("%s: warnings %v, want []", algo, m["warnings"])
		}
		if strings.Contains(stderr, "warning") {
			t.Errorf("%s: stderr %q", algo, stderr)
		}
	}
}

// TestTrainInterruptWritesBest: a
// cancellation after the first C of letters has been validated writes a
// loadable model marked interrupted and not converged — the validated
// C = 1 model — prints the summary with "interrupted": true and exits 130,
// within a second of the cancellation.
func TestTrainInterruptWritesBest(t *testing.T) {
	if testing.Short() {
		t.Skip("letters: a few seconds")
	}
	out := filepath.Join(t.TempDir(), "m.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelledAt time.Time
	trainProgressHook = func(msg string) {
		if cancelledAt.IsZero() && strings.HasPrefix(msg, "frobmetric C=1:") && strings.Contains(msg, "validation") {
			cancelledAt = time.Now()
			cancel()
		}
	}
	defer func() { trainProgressHook = nil }()
	var stdout, stderr bytes.Buffer
	st := runMain(ctx, []string{"train", "--algo", "frobmetric", "--data", "builtin:letters", "--split", "rows:10500,4500,5000",
		"--standardize", "--out", out, "--json"}, &stdout, &stderr)
	if cancelledAt.IsZero() {
		t.Fatalf("never cancelled (status %d): %s", st, stderr.String())
	}
	if d := time.Since(cancelledAt); d > time.Second {
		t.Errorf("returned %v after the cancellation, want ≤ 1 s", d)
	}
	if st != exitInterrupted {
		t.Fatalf("status %d, want %d\nstdout %s\nstderr %s", st, exitInterrupted, stdout.String(), stderr.String())
	}
	m := decodeOne(t, stdout.String())
	if m["interrupted"] != true || m["converged"] != false || m["model"] != out {
		t.Errorf("interrupted %v, converged %v, model %v", m["interrupted"], m["converged"], m["model"])
	}
	if c := field(t, m, "chosen_c"); c != 1 {
		t.Errorf("chosen C %g, want the validated C = 1", c)
	}
	if !strings.Contains(stderr.String(), "psdlearn: warning: frobmetric: interrupted") || !strings.Contains(stderr.String(), "context canceled") {
		t.Errorf("stderr %q", stderr.String())
	}
	mf, err := model.LoadFile(out)
	if err != nil {
		t.Fatalf("the interrupted run's model does not load: %v", err)
	}
	c := mf.Certificate
	if c == nil || c.Converged || !c.Interrupted {
		t.Fatalf("certificate %+v, want interrupted and not converged", c)
	}
	if mf.Metric == nil || mf.Metric.Dim() != 16 || mf.Preprocess == nil {
		t.Errorf("model: metric %v, preprocessing %v", mf.Metric, mf.Preprocess)
	}
}
