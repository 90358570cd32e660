package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/psdlearn/psdlearn/bench"
	"github.com/psdlearn/psdlearn/engine"
)

func init() {
	register(command{name: "bench", summary: "measure kernels or algorithms on every backend (median times, native/go ratios)", run: runBench})
}

// benchSuites maps a suite name to its cases.
var benchSuites = map[string]func(seed uint64) []bench.Case{
	"kernels": bench.KernelCases,
	"algos":   bench.AlgoCases,
}

func runBench(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "bench")
	suite := fs.String("suite", "kernels", "suite to run: "+strings.Join(sortedKeys(benchSuites), "|"))
	backends := fs.String("backend", strings.Join(engine.Names(), ","), "comma-separated backends to measure")
	runs := fs.Int("runs", bench.DefaultRuns, "timed runs per case (after one warm-up); the median is reported")
	maxSize := fs.Int("max-size", 0, "skip cases larger than this size (0: no limit)")
	caseFilter := fs.String("case", "", "run only the cases whose name or detail contains this (case-insensitive), e.g. letters")
	warmup := fs.Bool("warmup", true, "run each case once untimed before the timed runs (--warmup=false for long cases)")
	plotDir := fs.String("plot", "", "directory to write PNG charts into")
	seed := fs.Uint64("seed", 1, "random seed of the generated inputs")
	if err := parseFlags(fs, "bench", args); err != nil {
		return err
	}
	if *runs < 1 || *maxSize < 0 {
		return usagef("bench: --runs %d, --max-size %d: want --runs ≥ 1 and --max-size ≥ 0 (0: no limit)", *runs, *maxSize)
	}
	cases, ok := benchSuites[*suite]
	if !ok {
		return usagef("bench: unknown suite %q (available: %s)", *suite, strings.Join(sortedKeys(benchSuites), ", "))
	}
	var bs []engine.Backend
	for _, name := range strings.Split(*backends, ",") {
		b, err := resolveBackend(strings.TrimSpace(name))
		if err != nil {
			return err
		}
		bs = append(bs, b)
	}
	results, err := bench.Run(ctx, *suite, cases(*seed), bench.Options{Backends: bs, Runs: *runs, MaxSize: *maxSize, Case: *caseFilter, NoWarmup: !*warmup, Progress: newProgress(env).event})
	if err != nil {
		return err
	}
	if len(results) == 0 {
		return fmt.Errorf("bench: no case of suite %q matches --case %q and --max-size %d", *suite, *caseFilter, *maxSize)
	}
	var plots []string
	if *plotDir != "" {
		plotter := bench.PlotScaling
		if *suite == "algos" {
			plotter = bench.PlotCurves
		}
		if plots, err = plotter(*plotDir, results); err != nil {
			return err
		}
	}
	if env.json {
		return emitJSON(env, benchSummaryOf(*suite, results, plots))
	}
	fmt.Fprintf(env.stdout, "## %s (%s)\n\n", *suite, bench.Machine())
	if err := bench.Markdown(env.stdout, results); err != nil {
		return err
	}
	for _, p := range plots {
		fmt.Fprintf(env.stdout, "\nplot: %s", p)
	}
	fmt.Fprintln(env.stdout)
	return nil
}

// benchSummary is the JSON output of psdlearn bench.
type benchSummary struct {
	Suite   string        `json:"suite"`
	Results []benchResult `json:"results"`
	Plots   []string      `json:"plots"`
	Machine string        `json:"machine"`
}

// benchResult is one bench.Result in the JSON output: its figures are
// null where they are not numbers (a case that failed, a metric that does
// not apply).
type benchResult struct {
	Suite        string               `json:"suite"`
	Case         string               `json:"case"`
	Backend      string               `json:"backend"`
	Size         int                  `json:"size"`
	Detail       string               `json:"detail,omitempty"`
	Runs         int                  `json:"runs"`
	Median       jsonFloat            `json:"median_seconds"`
	Min          jsonFloat            `json:"min_seconds"`
	Iterations   int                  `json:"iterations,omitempty"`
	PerIteration jsonFloat            `json:"seconds_per_iteration,omitempty"`
	Metrics      map[string]jsonFloat `json:"metrics,omitempty"`
	PeakHeapMB   jsonFloat            `json:"peak_heap_mb"`
	PeakRSSMB    jsonFloat            `json:"peak_rss_mb,omitempty"`
	BaseRSSMB    jsonFloat            `json:"base_rss_mb,omitempty"`
	Curve        []jsonFloat          `json:"curve,omitempty"`
	Error        string               `json:"error,omitempty"`
}

// benchSummaryOf is the JSON summary of a bench run.
func benchSummaryOf(suite string, results []bench.Result, plots []string) benchSummary {
	sum := benchSummary{Suite: suite, Plots: plots, Machine: bench.Machine()}
	for _, r := range results {
		br := benchResult{Suite: r.Suite, Case: r.Case, Backend: r.Backend, Size: r.Size, Detail: r.Detail, Runs: r.Runs,
			Median: jsonFloat(r.Median), Min: jsonFloat(r.Min), Iterations: r.Iterations, PerIteration: jsonFloat(r.PerIteration),
			PeakHeapMB: jsonFloat(r.PeakHeapMB), PeakRSSMB: jsonFloat(r.PeakRSSMB), BaseRSSMB: jsonFloat(r.BaseRSSMB),
			Curve: jsonFloats(r.Curve), Error: r.Error}
		if r.Metrics != nil {
			br.Metrics = make(map[string]jsonFloat, len(r.Metrics))
			for k, v := range r.Metrics {
				br.Metrics[k] = jsonFloat(v)
			}
		}
		sum.Results = append(sum.Results, br)
	}
	return sum
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
