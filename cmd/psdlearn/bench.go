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
	if papersSuite(args) {
		return runPapers(ctx, env, args)
	}
	fs := newFlagSet(env, "bench")
	suite := fs.String("suite", "kernels", "suite to run: "+strings.Join(append(sortedKeys(benchSuites), "papers"), "|")+" (papers has its own flags: psdlearn bench --suite papers -h)")
	backends := fs.String("backend", strings.Join(engine.Names(), ","), "comma-separated backends to measure")
	runs := fs.Int("runs", 5, "timed runs per case (after one warm-up); the median is reported")
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
		return usagef("bench: unknown suite %q (available: %s)", *suite, strings.Join(append(sortedKeys(benchSuites), "papers"), ", "))
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
		return emitJSON(env, map[string]any{"suite": *suite, "results": results, "plots": plots, "machine": bench.Machine()})
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
