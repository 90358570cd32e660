package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/psdlearn/psdlearn/bench"
	"github.com/psdlearn/psdlearn/engine"
)

// maxBenchRuns bounds --runs: a case reports only when its runs are done,
// so a count beyond it would look like a hang.
const maxBenchRuns = 10000

func init() {
	register(command{name: "bench", summary: "measure kernels or algorithms on every backend (median times, native/go ratios)", run: runBench})
}

// benchSuites maps a suite name to its cases.
var benchSuites = map[string]func(seed uint64) []bench.Case{
	"kernels": bench.KernelCases,
	"algos":   bench.AlgoCases,
	"serve":   bench.ServeCases, // the example service under load; docs/serving.md
}

// benchReports maps a suite name to a section that writes its own report
// (psdlearn against CSDP; SimpleNPKL's Table 2 and Figure 2; BoostMetric's
// Figure 2 and the phases profile, where --max-size is the largest input
// dimension).
var benchReports = map[string]benchReport{
	"boostfig2": bench.BoostFig2Section,
	"phases":    bench.PhasesSection,
	"sdp":       bench.SDPSection,
	"table2":    bench.Table2Section,
	"mpi":       bench.MPIScalingSection, // mpirun -np 1 and 2 (a -tags mpi binary); docs/mpi-scaling.md
}

// allBenchSuites lists every suite: the timed ones, the reports and
// papers (which has its own flags, see runPapers).
func allBenchSuites() []string {
	return append(append(sortedKeys(benchSuites), sortedKeys(benchReports)...), "papers")
}

// benchReport runs a report suite.
type benchReport func(ctx context.Context, o bench.ReportOptions) (bench.Report, error)

// benchFlags are the parsed flags of psdlearn bench (suites other than
// papers).
type benchFlags struct {
	suite, backends, caseFilter, plotDir, mdOut string
	backendSet                                  bool // --backend was given
	runs, maxSize                               int
	timeLimit                                   time.Duration
	warmup                                      bool
	seed                                        uint64
}

func runBench(ctx context.Context, env *cmdEnv, args []string) error {
	if papersSuite(args) {
		return runPapers(ctx, env, args)
	}
	f, err := parseBenchFlags(env, args)
	if err != nil {
		return err
	}
	if section, ok := benchReports[f.suite]; ok {
		if f.timeLimit != 0 {
			return usagef("bench: --time-limit applies to the suites %s", strings.Join(sortedKeys(benchSuites), ", "))
		}
		return runBenchReport(ctx, env, f, section)
	}
	if f.mdOut != "" {
		return usagef("bench: --md applies to the suites %s", strings.Join(sortedKeys(benchReports), ", "))
	}
	return runBenchSuite(ctx, env, f)
}

// parseBenchFlags parses and checks the flags of psdlearn bench.
func parseBenchFlags(env *cmdEnv, args []string) (*benchFlags, error) {
	fs := newFlagSet(env, "bench")
	suite := fs.String("suite", "kernels", "suite to run: "+strings.Join(allBenchSuites(), "|")+" (papers has its own flags: psdlearn bench --suite papers -h)")
	backends := fs.String("backend", strings.Join(engine.Names(), ","), "comma-separated backends to measure")
	runs := fs.Int("runs", bench.DefaultRuns, "timed runs per case (after one warm-up); the median is reported")
	maxSize := fs.Int("max-size", 0, "skip cases larger than this size (0: no limit; --suite boostfig2 and phases: the largest input dimension)")
	caseFilter := fs.String("case", "", "run only the cases whose name or detail contains this (case-insensitive), e.g. letters")
	timeLimit := fs.Duration("time-limit", 0, "suites "+strings.Join(sortedKeys(benchSuites), ", ")+": bound every run of a case, e.g. 2h; a run that reaches it is reported unfinished, without a result, and the next backend runs (0: no limit)")
	warmup := fs.Bool("warmup", true, "run each case once untimed before the timed runs (--warmup=false for long cases)")
	plotDir := fs.String("plot", "", "directory to write PNG charts into")
	seed := fs.Uint64("seed", 1, "random seed of the generated inputs")
	mdOut := fs.String("md", "", "suites "+strings.Join(sortedKeys(benchReports), ", ")+": also write the markdown report to this file (with --json, one run gives both)")
	if err := parseFlags(fs, "bench", args); err != nil {
		return nil, err
	}
	if *runs > maxBenchRuns {
		return nil, usagef("bench: --runs %d: at most %d timed runs per case (a case prints its line when its runs are done)", *runs, maxBenchRuns)
	}
	if *runs < 1 || *maxSize < 0 {
		return nil, usagef("bench: --runs %d, --max-size %d: want --runs ≥ 1 and --max-size ≥ 0 (0: no limit)", *runs, *maxSize)
	}
	if *timeLimit < 0 {
		return nil, usagef("bench: --time-limit %v: want a duration ≥ 0 (0: no limit)", *timeLimit)
	}
	f := &benchFlags{suite: *suite, backends: *backends, caseFilter: *caseFilter, plotDir: *plotDir, mdOut: *mdOut,
		runs: *runs, maxSize: *maxSize, timeLimit: *timeLimit, warmup: *warmup, seed: *seed}
	fs.Visit(func(fl *flag.Flag) {
		if fl.Name == "backend" {
			f.backendSet = true
		}
	})
	return f, nil
}

// runBenchReport runs a report suite, which compares psdlearn with
// something else on one backend: the default one unless --backend names one.
func runBenchReport(ctx context.Context, env *cmdEnv, f *benchFlags, section benchReport) error {
	name := ""
	if f.backendSet {
		name = f.backends
	}
	if strings.Contains(name, ",") {
		return usagef("bench: --suite %s runs on one backend; --backend %q names several", f.suite, name)
	}
	b, err := resolveBackend(name)
	if err != nil {
		return err
	}
	rep, err := section(ctx, bench.ReportOptions{Backend: b, Seed: f.seed, MaxSize: f.maxSize, Case: f.caseFilter, PlotDir: f.plotDir, Progress: newProgress(env).event})
	if errors.Is(err, bench.ErrCase) {
		return usagef("%v", err)
	}
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if f.mdOut != "" {
		if err := writeReportMarkdown(f.mdOut, rep); err != nil {
			return fmt.Errorf("bench: --md: %w", err)
		}
	}
	if env.json {
		return emitJSON(env, rep)
	}
	return rep.Markdown(env.stdout)
}

// runBenchSuite runs a timed suite on every backend of --backend and
// prints the medians, as markdown or JSON, with their plots.
func runBenchSuite(ctx context.Context, env *cmdEnv, f *benchFlags) error {
	cases, ok := benchSuites[f.suite]
	if !ok {
		return usagef("bench: unknown suite %q (available: %s)", f.suite, strings.Join(allBenchSuites(), ", "))
	}
	var bs []engine.Backend
	for _, name := range strings.Split(f.backends, ",") {
		b, err := resolveBackend(strings.TrimSpace(name))
		if err != nil {
			return err
		}
		bs = append(bs, b)
	}
	results, err := bench.Run(ctx, f.suite, cases(f.seed), bench.Options{Backends: bs, Runs: f.runs, MaxSize: f.maxSize, Case: f.caseFilter, NoWarmup: !f.warmup, TimeLimit: f.timeLimit, Progress: newProgress(env).event})
	if err != nil {
		return err
	}
	if len(results) == 0 {
		return fmt.Errorf("bench: no case of suite %q matches --case %q and --max-size %d", f.suite, f.caseFilter, f.maxSize)
	}
	var plots []string
	if f.plotDir != "" {
		plotter := bench.PlotScaling
		if f.suite == "algos" {
			plotter = bench.PlotCurves
		}
		if plots, err = plotter(f.plotDir, results); err != nil {
			return err
		}
	}
	if env.json {
		return emitJSON(env, benchSummaryOf(f.suite, results, plots))
	}
	fmt.Fprintf(env.stdout, "## %s (%s)\n\n", f.suite, bench.Machine())
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
		if r.Error != "" {
			// Failed, skipped or unfinished: no time was measured.
			br.Median, br.Min = jsonFloat(math.NaN()), jsonFloat(math.NaN())
		}
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

// writeReportMarkdown writes a report section's markdown to path.
func writeReportMarkdown(path string, rep bench.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := rep.Markdown(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
