// Package bench measures psdlearn's numerical kernels and algorithms on every
// backend and reports medians, native/go ratios, markdown and JSON tables and
// PNG charts. It backs `psdlearn bench`.
//
// A measurement runs a case a fixed number of times after one warm-up run and
// reports the median wall time, so that a noisy shared machine disturbs the
// figures less than a mean would; ratios are computed from medians taken in
// the same run. Long cases can skip the warm-up (Options.NoWarmup).
//
// Memory is reported two ways: the peak Go heap, sampled during the timed
// runs, and the peak resident set of the process during a run, which also
// counts what C libraries allocate (see rss.go for the mechanism and its
// fallback where it is unavailable).
package bench

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/metrics"
	"sort"
	"strings"
	"time"

	"github.com/psdlearn/psdlearn/engine"
	_ "github.com/psdlearn/psdlearn/engine/backends" // registers the "go" and "native" backends

	"github.com/psdlearn/psdlearn/progress"
)

// Result is one measured case.
type Result struct {
	Suite   string  `json:"suite"`
	Case    string  `json:"case"`
	Backend string  `json:"backend"`
	Size    int     `json:"size"`
	Detail  string  `json:"detail,omitempty"`
	Runs    int     `json:"runs"`
	Median  float64 `json:"median_seconds"`
	Min     float64 `json:"min_seconds"`
	// Iterations is the number of solver iterations per run, when the case has them.
	Iterations int `json:"iterations,omitempty"`
	// PerIteration is Median / Iterations, when Iterations > 0.
	PerIteration float64 `json:"seconds_per_iteration,omitempty"`
	// Metrics are case-specific figures of the last run (test error,
	// clustering accuracy, …).
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// PeakHeapMB is the largest Go heap (live and unswept objects) sampled
	// every 2 ms during the timed runs, in MiB. Memory allocated in C (LAPACK
	// workspaces, ARPACK, CLP) is not included.
	PeakHeapMB float64 `json:"peak_heap_mb"`
	// PeakRSSMB is the largest resident set of the process during a timed
	// run, in MiB, C allocations included; BaseRSSMB is the resident set
	// just before that run (after a GC that returned free memory to the
	// OS), so PeakRSSMB − BaseRSSMB is what the run added. Both are 0 (and
	// omitted from JSON) where the kernel's high-water mark cannot be reset:
	// see rss.go.
	PeakRSSMB float64 `json:"peak_rss_mb,omitempty"`
	BaseRSSMB float64 `json:"base_rss_mb,omitempty"`
	// Curve is a convergence curve of the last run (objective per iteration), if any.
	Curve []float64 `json:"curve,omitempty"`
	// Error says why the case has no figures: its error, "skipped: …"
	// when its data are missing, or "unfinished: …" when Options.TimeLimit
	// ran out.
	Error string `json:"error,omitempty"`
}

// Outcome is what one run of a case reports besides its time.
type Outcome struct {
	Iterations int
	Metrics    map[string]float64
	Curve      []float64
}

// DefaultRuns is the number of timed runs per case.
const DefaultRuns = 5

// Options control a benchmark run.
type Options struct {
	Backends []engine.Backend // nil means every registered backend
	Runs     int              // timed runs per case after a warm-up; 0 means DefaultRuns
	// MaxSize skips cases larger than this (0: no limit); used for quick runs.
	MaxSize int
	// Case, if not empty, keeps only the cases whose name or detail
	// contains it (case-insensitive), e.g. "letters".
	Case string
	// NoWarmup skips the untimed warm-up run; for long cases measured once.
	NoWarmup bool
	// TimeLimit, if positive, bounds every run of a case (the warm-up
	// too): the run's context is cancelled when it runs out, and a run that
	// reaches it is reported in Result.Error as "unfinished: …", without
	// a time or metrics; the next backend or case runs after it.
	TimeLimit time.Duration
	// Progress, if non-nil, receives an event per finished case.
	Progress progress.Func
}

// Case is a benchmark case at one size: Setup prepares the inputs for a
// backend and returns the function to time, which reports its Outcome.
type Case struct {
	Name   string
	Size   int
	Detail string
	Setup  func(b engine.Backend) (run func(ctx context.Context) (Outcome, error), err error)
	// Once marks a case that measures itself (a load test): it runs once,
	// without the warm-up run, on one backend (the default one if listed,
	// else the first).
	Once bool
}

// Run measures every case on every backend.
func Run(ctx context.Context, suite string, cases []Case, opt Options) ([]Result, error) {
	backends := opt.Backends
	if backends == nil {
		for _, n := range engine.Names() {
			b, _ := engine.Get(n)
			backends = append(backends, b)
		}
	}
	runs := opt.Runs
	if runs <= 0 {
		runs = DefaultRuns
	}
	var out []Result
	for _, c := range cases {
		if opt.MaxSize > 0 && c.Size > opt.MaxSize {
			continue
		}
		if !c.matches(opt.Case) {
			continue
		}
		bs, n, warm := backends, runs, !opt.NoWarmup
		if c.Once {
			bs, n, warm = onceBackend(backends), 1, false
		}
		for _, b := range bs {
			if err := ctx.Err(); err != nil {
				return out, err
			}
			r := Result{Suite: suite, Case: c.Name, Backend: b.Name(), Size: c.Size, Detail: c.Detail}
			m, err := measure(ctx, c, b, n, warm, opt.TimeLimit)
			r.PeakHeapMB, r.PeakRSSMB, r.BaseRSSMB = m.peakHeap, m.peakRSS, m.baseRSS
			if err != nil {
				r.Error = err.Error()
			} else {
				times := m.times
				sort.Float64s(times)
				r.Runs = len(times)
				r.Median = median(times)
				r.Min = times[0]
				r.Iterations, r.Metrics, r.Curve = m.last.Iterations, m.last.Metrics, m.last.Curve
				if r.Iterations > 0 {
					r.PerIteration = r.Median / float64(r.Iterations)
				}
				if ev := r.Metrics["evaluations"]; ev > 0 {
					// Cases that count dual evaluations (MVU) also get the
					// time per evaluation, next to products_per_eval.
					r.Metrics["seconds_per_eval"] = r.Median / ev
				}
			}
			out = append(out, r)
			if say := progress.Printf(opt.Progress, "bench"); say != nil {
				if r.Error != "" {
					say("bench %s %s size=%d backend=%s: %s", suite, c.Name, c.Size, b.Name(), r.Error)
				} else {
					say("bench %s %s size=%d backend=%s: median %s, peak heap %.0f MiB, peak RSS %s", suite, c.Name, c.Size, b.Name(), fmtSeconds(r.Median), r.PeakHeapMB, fmtRSS(r))
				}
			}
		}
	}
	return out, nil
}

// onceBackend returns the backend a Once case runs on: the default one
// if it is among backends, else the first.
func onceBackend(backends []engine.Backend) []engine.Backend {
	def := engine.Default()
	for _, b := range backends {
		if def != nil && b.Name() == def.Name() {
			return []engine.Backend{b}
		}
	}
	return backends[:min(1, len(backends))]
}

// matches reports whether the case's name or detail contains sub, ignoring case.
func (c Case) matches(sub string) bool {
	if sub == "" {
		return true
	}
	return strings.Contains(strings.ToLower(c.Name+" "+c.Detail), strings.ToLower(sub))
}

// measurement is what measure observed.
type measurement struct {
	times            []float64
	last             Outcome
	peakHeap         float64 // MiB
	peakRSS, baseRSS float64 // MiB; 0 when unsupported
}

// measure sets c up on b, runs it once untimed if warmup, then runs times
// timed runs, each bounded by limit when it is positive (see boundedRun).
// Before each timed run it resets the resident-set high-water mark; the
// peak RSS reported is the largest over the runs, with the baseline of
// that run.
func measure(ctx context.Context, c Case, b engine.Backend, runs int, warmup bool, limit time.Duration) (measurement, error) {
	var m measurement
	run, err := c.Setup(b)
	if err != nil {
		return m, err
	}
	run = boundedRun(run, limit)
	if warmup {
		if _, err := run(ctx); err != nil {
			return m, err
		}
	}
	runtime.GC()
	stop := make(chan struct{})
	peak := make(chan float64)
	go sampleHeap(stop, peak)
	defer func() {
		if stop != nil {
			close(stop)
			<-peak
		}
	}()
	m.times = make([]float64, 0, min(runs, 64)) // runs is the user's: no allocation by it
	rssOK := true
	for i := 0; i < runs; i++ {
		base, ok := startPeakRSS()
		start := time.Now()
		o, err := run(ctx)
		if err != nil {
			return m, err
		}
		m.times = append(m.times, time.Since(start).Seconds())
		hwm, okHWM := peakRSS()
		rssOK = rssOK && ok && okHWM
		if rssOK && hwm > m.peakRSS {
			m.peakRSS, m.baseRSS = hwm, base
		}
		m.last = o
	}
	if !rssOK {
		m.peakRSS, m.baseRSS = 0, 0
	}
	close(stop)
	m.peakHeap = <-peak
	stop = nil
	return m, nil
}

// boundedRun returns run with every call bounded by limit (run itself
// when limit ≤ 0): its context is cancelled after limit, and a call that
// has not returned by then — stopped by the cancellation or not — reports
// an "unfinished: …" error instead of its outcome, since it did not finish
// within the limit. A cancellation of the caller's own context is passed
// on as it is.
func boundedRun(run func(context.Context) (Outcome, error), limit time.Duration) func(context.Context) (Outcome, error) {
	if limit <= 0 {
		return run
	}
	return func(ctx context.Context) (Outcome, error) {
		rctx, cancel := context.WithTimeout(ctx, limit)
		defer cancel()
		start := time.Now()
		o, err := run(rctx)
		if ctx.Err() == nil && rctx.Err() != nil {
			return Outcome{}, fmt.Errorf("unfinished: the time limit of %v ran out after %v of the run; no result", limit, time.Since(start).Round(time.Millisecond))
		}
		return o, err
	}
}

// sampleHeap samples the Go heap every 2 ms until stop is closed and then
// sends the largest value seen, in MiB.
func sampleHeap(stop <-chan struct{}, peak chan<- float64) {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var max uint64
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		metrics.Read(s)
		if v := s[0].Value.Uint64(); v > max {
			max = v
		}
		select {
		case <-stop:
			peak <- float64(max) / (1 << 20)
			return
		case <-tick.C:
		}
	}
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return 0.5 * (sorted[n/2-1] + sorted[n/2])
}

func fmtSeconds(s float64) string {
	switch {
	case s == 0:
		return "-"
	case s < 1e-3:
		return fmt.Sprintf("%.1f µs", s*1e6)
	case s < 1:
		return fmt.Sprintf("%.2f ms", s*1e3)
	}
	return fmt.Sprintf("%.3f s", s)
}

// fmtRSS formats a result's peak resident set and its baseline, e.g.
// "812 MiB (base 95)", or "n/a" when it was not measured.
func fmtRSS(r Result) string {
	if r.PeakRSSMB <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f MiB (base %.0f)", r.PeakRSSMB, r.BaseRSSMB)
}

// Markdown writes results as a table with one row per case and size, one
// column per backend, the native/go ratio of medians when both ran, the
// peak Go heap and the peak resident set with its baseline per backend, and
// the case metrics.
//
// The serve suite's results get a table of their own (throughput, latency
// percentiles, errors and memory per endpoint).
func Markdown(w io.Writer, results []Result) error {
	if isServe(results) {
		return serveMarkdown(w, results)
	}
	type key struct {
		suite, name string
		size        int
	}
	var keys []key
	byKey := map[key]map[string]Result{}
	var backends []string
	seenB := map[string]bool{}
	for _, r := range results {
		k := key{r.Suite, r.Case, r.Size}
		if byKey[k] == nil {
			byKey[k] = map[string]Result{}
			keys = append(keys, k)
		}
		byKey[k][r.Backend] = r
		if !seenB[r.Backend] {
			seenB[r.Backend] = true
			backends = append(backends, r.Backend)
		}
	}
	sort.Strings(backends)
	var sb strings.Builder
	sb.WriteString("| case | size | detail |")
	for _, b := range backends {
		fmt.Fprintf(&sb, " %s median |", b)
	}
	hasRatio := seenB["native"] && seenB["go"]
	if hasRatio {
		sb.WriteString(" go/native |")
	}
	sb.WriteString(" per iteration | peak Go heap | peak RSS (base) | results |\n|---|---:|---|")
	for range backends {
		sb.WriteString("---:|")
	}
	if hasRatio {
		sb.WriteString("---:|")
	}
	sb.WriteString("---|---|---|---|\n")
	for _, k := range keys {
		rs := byKey[k]
		detail := ""
		for _, r := range rs {
			detail = r.Detail
		}
		fmt.Fprintf(&sb, "| %s | %d | %s |", k.name, k.size, detail)
		var per []string
		for _, b := range backends {
			r, ok := rs[b]
			switch {
			case !ok:
				sb.WriteString(" |")
			case strings.HasPrefix(r.Error, "unfinished:"):
				fmt.Fprintf(&sb, " %s |", r.Error) // the time limit, not a failure
			case r.Error != "":
				fmt.Fprintf(&sb, " error: %s |", r.Error)
			default:
				fmt.Fprintf(&sb, " %s |", fmtSeconds(r.Median))
				if r.PerIteration > 0 {
					per = append(per, fmt.Sprintf("%s %s (%d it)", b, fmtSeconds(r.PerIteration), r.Iterations))
				}
			}
		}
		if hasRatio {
			n, g := rs["native"], rs["go"]
			if n.Median > 0 && g.Median > 0 {
				fmt.Fprintf(&sb, " %.2f× |", g.Median/n.Median)
			} else {
				sb.WriteString(" |")
			}
		}
		var heaps, rss []string
		for _, b := range backends {
			if r, ok := rs[b]; ok && r.Error == "" {
				heaps = append(heaps, fmt.Sprintf("%s %.0f MiB", b, r.PeakHeapMB))
				rss = append(rss, b+" "+fmtRSS(r))
			}
		}
		fmt.Fprintf(&sb, " %s | %s | %s | %s |\n", strings.Join(per, "; "), strings.Join(heaps, "; "), strings.Join(rss, "; "), metricsText(rs, backends))
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// metricsText lists the case metrics per backend, e.g. "native: test_error 0.0284".
func metricsText(rs map[string]Result, backends []string) string {
	var parts []string
	for _, b := range backends {
		r, ok := rs[b]
		if !ok || len(r.Metrics) == 0 {
			continue
		}
		keys := make([]string, 0, len(r.Metrics))
		for k := range r.Metrics {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var kv []string
		for _, k := range keys {
			kv = append(kv, fmt.Sprintf("%s %.4g", k, r.Metrics[k]))
		}
		parts = append(parts, b+": "+strings.Join(kv, ", "))
	}
	return strings.Join(parts, "; ")
}
