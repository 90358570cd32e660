// Package bench measures psdlearn's numerical kernels and algorithms on every
// backend and reports medians, native/go ratios, markdown and JSON tables and
// PNG charts. It backs `psdlearn bench`.
//
// A measurement runs a case a fixed number of times after one warm-up run and
// reports the median wall time, so that a noisy shared machine disturbs the
// figures less than a mean would; ratios are computed from medians taken in
// the same run.
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
	// Curve is a convergence curve of the last run (objective per iteration), if any.
	Curve []float64 `json:"curve,omitempty"`
	Error string    `json:"error,omitempty"`
}

// Outcome is what one run of a case reports besides its time.
type Outcome struct {
	Iterations int
	Metrics    map[string]float64
	Curve      []float64
}

// Options control a benchmark run.
type Options struct {
	Backends []engine.Backend // nil means every registered backend
	Runs     int              // timed runs per case after a warm-up; 0 means 5
	// MaxSize skips cases larger than this (0: no limit); used for quick runs.
	MaxSize int
	// Progress, if non-nil, receives a line per finished case.
	Progress func(format string, args ...any)
}

// Case is a benchmark case at one size: Setup prepares the inputs for a
// backend and returns the function to time, which reports its Outcome.
type Case struct {
	Name   string
	Size   int
	Detail string
	Setup  func(b engine.Backend) (run func(ctx context.Context) (Outcome, error), err error)
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
		runs = 5
	}
	var out []Result
	for _, c := range cases {
		if opt.MaxSize > 0 && c.Size > opt.MaxSize {
			continue
		}
		for _, b := range backends {
			if err := ctx.Err(); err != nil {
				return out, err
			}
			r := Result{Suite: suite, Case: c.Name, Backend: b.Name(), Size: c.Size, Detail: c.Detail}
			times, o, peak, err := measure(ctx, c, b, runs)
			r.PeakHeapMB = peak
			if err != nil {
				r.Error = err.Error()
			} else {
				sort.Float64s(times)
				r.Runs = len(times)
				r.Median = median(times)
				r.Min = times[0]
				r.Iterations, r.Metrics, r.Curve = o.Iterations, o.Metrics, o.Curve
				if o.Iterations > 0 {
					r.PerIteration = r.Median / float64(o.Iterations)
				}
			}
			out = append(out, r)
			if opt.Progress != nil {
				opt.Progress("bench %s %s size=%d backend=%s: median %s", suite, c.Name, c.Size, b.Name(), fmtSeconds(r.Median))
			}
		}
	}
	return out, nil
}

func measure(ctx context.Context, c Case, b engine.Backend, runs int) ([]float64, Outcome, float64, error) {
	run, err := c.Setup(b)
	if err != nil {
		return nil, Outcome{}, 0, err
	}
	if _, err := run(ctx); err != nil { // warm-up
		return nil, Outcome{}, 0, err
	}
	runtime.GC()
	stop := make(chan struct{})
	peak := make(chan float64)
	go sampleHeap(stop, peak)
	times := make([]float64, 0, runs)
	var last Outcome
	for i := 0; i < runs; i++ {
		start := time.Now()
		o, err := run(ctx)
		if err != nil {
			close(stop)
			<-peak
			return nil, Outcome{}, 0, err
		}
		times = append(times, time.Since(start).Seconds())
		last = o
	}
	close(stop)
	return times, last, <-peak, nil
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

// Markdown writes results as a table with one row per case and size, one
// column per backend, and the native/go ratio of medians when both ran.
func Markdown(w io.Writer, results []Result) error {
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
	sb.WriteString(" per iteration | peak Go heap | results |\n|---|---:|---|")
	for range backends {
		sb.WriteString("---:|")
	}
	if hasRatio {
		sb.WriteString("---:|")
	}
	sb.WriteString("---|---|---|\n")
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
		var heaps []string
		for _, b := range backends {
			if r, ok := rs[b]; ok && r.Error == "" {
				heaps = append(heaps, fmt.Sprintf("%s %.0f MiB", b, r.PeakHeapMB))
			}
		}
		fmt.Fprintf(&sb, " %s | %s | %s |\n", strings.Join(per, "; "), strings.Join(heaps, "; "), metricsText(rs, backends))
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
