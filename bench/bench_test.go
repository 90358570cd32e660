package bench

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn/engine"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{{[]float64{1}, 1}, {[]float64{1, 3}, 2}, {[]float64{1, 2, 10}, 2}, {[]float64{1, 2, 3, 100}, 2.5}} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestMarkdownRatio checks that the table reports go/native as the ratio of the medians.
func TestMarkdownRatio(t *testing.T) {
	var buf bytes.Buffer
	err := Markdown(&buf, []Result{
		{Suite: "s", Case: "c", Backend: "go", Size: 10, Median: 0.03, Runs: 3},
		{Suite: "s", Case: "c", Backend: "native", Size: 10, Median: 0.01, Runs: 3},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "| 3.00× |") {
		t.Errorf("table lacks the 3.00× ratio:\n%s", buf.String())
	}
}

// TestRunMeasures runs a real kernel case on every backend and checks that
// each result has a positive median and runs count, and no error.
func TestRunMeasures(t *testing.T) {
	var cases []Case
	for _, c := range KernelCases(1) {
		if c.Name == "symeig_top1" && c.Size == 100 {
			cases = append(cases, c)
		}
	}
	if len(cases) != 1 {
		t.Fatalf("found %d symeig_top1 cases of size 100", len(cases))
	}
	res, err := Run(context.Background(), "kernels", cases, Options{Runs: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(engine.Names()) {
		t.Fatalf("%d results for %d backends", len(res), len(engine.Names()))
	}
	for _, r := range res {
		if r.Error != "" || r.Runs != 3 || !(r.Median > 0) || r.Min > r.Median {
			t.Errorf("%s: %+v", r.Backend, r)
		}
	}
}

// TestAlgoCasesLetters checks that the algos suite has a letters case for
// every algorithm, that the filter selects exactly those, and that the
// kernel learners' subsets are small (no letters run here: they take minutes).
func TestAlgoCasesLetters(t *testing.T) {
	cases := AlgoCases(1)
	found := map[string]bool{}
	for _, c := range cases {
		if !c.matches("letters") {
			continue
		}
		algo, _, _ := strings.Cut(c.Name, " ")
		found[algo] = true
		if (algo == "meg" || algo == "definiteboost") && c.Size != megLettersObjects {
			t.Errorf("%s: %d objects, want the %d-object subset", c.Name, c.Size, megLettersObjects)
		}
		if algo == "psdboost" && !strings.Contains(c.Name, "iterations") {
			t.Errorf("%s: a truncated PSDBoost case must say so in its name", c.Name)
		}
	}
	for _, algo := range []string{"boostmetric", "frobmetric", "psdboost", "simplenpkl", "definiteboost", "meg"} {
		if !found[algo] {
			t.Errorf("no letters case for %s", algo)
		}
	}
}

// TestMarkdownRSS checks the peak RSS column: the peak with its baseline,
// or n/a where it was not measured.
func TestMarkdownRSS(t *testing.T) {
	var buf bytes.Buffer
	err := Markdown(&buf, []Result{
		{Suite: "s", Case: "c", Backend: "native", Size: 10, Median: 1, Runs: 1, PeakHeapMB: 40, PeakRSSMB: 812.4, BaseRSSMB: 95.2},
		{Suite: "s", Case: "c", Backend: "go", Size: 10, Median: 2, Runs: 1, PeakHeapMB: 41},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| peak Go heap | peak RSS (base) |", "go 41 MiB; native 40 MiB", "go n/a; native 812 MiB (base 95)"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}
}

// TestBoundedRun: a run within the limit keeps its outcome; one past it is
// unfinished whether or not it heeds its context; the caller's own
// cancellation is passed on, not reported as the limit.
func TestBoundedRun(t *testing.T) {
	quick := func(context.Context) (Outcome, error) { return Outcome{Iterations: 3}, nil }
	heeds := func(ctx context.Context) (Outcome, error) { <-ctx.Done(); return Outcome{}, ctx.Err() }
	ignores := func(context.Context) (Outcome, error) {
		time.Sleep(30 * time.Millisecond)
		return Outcome{Iterations: 5}, nil
	}
	if o, err := boundedRun(quick, time.Hour)(t.Context()); err != nil || o.Iterations != 3 {
		t.Errorf("quick: %+v, %v", o, err)
	}
	if o, err := boundedRun(quick, 0)(t.Context()); err != nil || o.Iterations != 3 {
		t.Errorf("no limit: %+v, %v", o, err)
	}
	for name, run := range map[string]func(context.Context) (Outcome, error){"heeds": heeds, "ignores": ignores} {
		o, err := boundedRun(run, 5*time.Millisecond)(t.Context())
		if err == nil || !strings.HasPrefix(err.Error(), "unfinished:") || o.Iterations != 0 {
			t.Errorf("%s: %+v, %v", name, o, err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := boundedRun(heeds, time.Hour)(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
