package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/internal/input"
	"github.com/psdlearn/psdlearn/limits"
)

// checkNonNegative rejects negative values of integer flags whose zero
// selects a default: a negative limit is a usage error, never replaced by the
// default silently. flags maps flag names (without dashes) to their values.
func checkNonNegative(cmd string, flags map[string]int) error {
	names := make([]string, 0, len(flags))
	for n := range flags {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if v := flags[n]; v < 0 {
			return usagef("%s: --%s %d: want a positive value, or 0 for the default", cmd, n, v)
		}
	}
	return nil
}

// maxInput and maxLine are the --max-input and --max-line values of the
// current command line (0: the data package's defaults).
var (
	maxInput int64
	maxLine  int
)

// openText opens a text input named by a flag (not a data SPEC) for a
// bounded read: the --max-input and --max-line caps, gzip decompressed,
// binary data, UTF-16 and CR-only line endings refused (package
// internal/input). Its errors name the line, not the file.
func openText(path string) (io.ReadCloser, error) {
	return input.Open(path, textOptions(""))
}

// openTextReader is openText returning the *input.Reader itself (which the
// parsers of package data read as it is) and the file to close; its errors
// name path.
func openTextReader(path string) (*input.Reader, io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	r, err := input.NewReader(bufio.NewReaderSize(f, 1<<16), textOptions(path))
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return r, f, nil
}

// textOptions are the bounds of a text input of the command line named
// name ("": the caller names it).
func textOptions(name string) input.Options {
	return input.Options{Name: name, MaxBytes: maxInput, MaxLine: lineCap(), BytesOption: "raise it with --max-input", LineOption: "raise it with --max-line"}
}

// lineCap is the line cap of the command line: --max-line, else the
// default, never above a sixteenth of the memory limit (a line is buffered
// a few times while it is parsed).
func lineCap() int {
	c := maxLine
	if c <= 0 {
		c = data.DefaultMaxLineBytes
	}
	if mem, err := limits.MaxMemory(); err == nil && mem != limits.Unlimited && int64(c) > mem/16 {
		c = int(max(mem/16, 1<<10))
	}
	return c
}

// parseElementBytes is the memory the loaders may use per value of the data
// matrix while parsing: the matrix, the doubling growth of the value buffer,
// sparse entries or per-row labels and offsets (16 bytes a row), and the
// garbage collector's headroom. The element cap given to the loaders is the
// memory limit divided by it.
const parseElementBytes = 64

// minSoftLimit is the smallest memory limit also given to the garbage
// collector as its soft limit (runtime/debug.SetMemoryLimit); below it a run
// is refused by the estimates long before the heap matters, and a tiny soft
// limit would only make the collector run without pause.
const minSoftLimit = 256 << 20

// startSoftLimit is the garbage collector's soft limit at start-up
// ($GOMEMLIMIT, or none), restored for every command line.
var startSoftLimit = debug.SetMemoryLimit(-1)

// gcPercent is the garbage collector's target (runtime/debug.SetGCPercent)
// when $GOGC is not set: a collection starts once the heap has grown by
// half of the live data, not by all of it. psdlearn's heap is large arrays
// of numbers with few pointers, so a collection costs little and the
// default of 100 mostly bought peak memory: FrobMetric on all 784 pixels
// of MNIST peaked at 6.06 GB with 100 and 4.37 GB with 50, at the same
// progress after 270 s; MNIST-164's default C list took the same time
// (49.7 and 49.5 s against 50.3 and 47.3 s) and peaked at 2.6 GB instead
// of 2.9–3.0 GB.
const gcPercent = 50

func init() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
}

// resourceFlags defines --max-memory and --max-input on fs, after resetting
// both limits to their defaults: each command line starts from the
// defaults, also when commands run one after another in one process.
func resourceFlags(fs *flag.FlagSet) {
	limits.SetMaxMemory(0)
	debug.SetMemoryLimit(startSoftLimit)
	maxInput, maxLine = 0, 0
	fs.Func("max-memory", "largest estimated memory a run may use, e.g. 16GiB or unlimited (default: $"+limits.EnvMaxMemory+", else half of the machine's memory)", func(s string) error {
		n, err := limits.ParseBytes(s)
		if err != nil {
			return err
		}
		limits.SetMaxMemory(n)
		return nil
	})
	fs.Func("max-input", "largest size of an input file after gzip decompression, e.g. 10GiB (default 1GiB)", func(s string) error {
		n, err := limits.ParseBytes(s)
		if err != nil {
			return err
		}
		maxInput = n
		return nil
	})
	fs.Func("max-line", "longest line of a text input (CSV, LIBSVM, constraint, pairs, target and label files), e.g. 64MiB (default 16MiB)", func(s string) error {
		n, err := limits.ParseBytes(s)
		if err != nil {
			return err
		}
		if n < 1 || n > math.MaxInt32 {
			return fmt.Errorf("%s: want 1 B to 2 GiB", s)
		}
		maxLine = int(n)
		return nil
	})
}

// metricWords is the number of D×D matrices a metric run holds at once
// (frob.MetricMemory's leading term): train refuses, while loading, data with
// more features than fit metricWords·D² float64s in the memory limit.
const metricWords = 4

// metricMaxFeatures returns the largest D whose D×D metric matrices fit the
// memory limit (0: no cap, the limit is off).
func metricMaxFeatures() (int, error) {
	mem, err := limits.MaxMemory()
	if err != nil || mem == limits.Unlimited {
		return 0, err
	}
	return max(int(math.Sqrt(float64(mem)/(8*metricWords))), 1), nil
}

// loadMetricData is loadData for data a metric will be learned on: files
// with more features than metricMaxFeatures are refused as soon as the
// parser sees the feature count, before the data matrix is allocated.
func loadMetricData(spec, labelCol string) (*data.Dataset, error) {
	maxD, err := metricMaxFeatures()
	if err != nil {
		return nil, err
	}
	return loadDataFeatures(spec, labelCol, maxD, fmt.Sprintf("what a metric's %d D×D matrices fit in the memory limit; raise it with --max-memory", metricWords))
}

// loadOptions returns the loader options of the current command line: the
// element cap follows the memory limit, the input cap --max-input.
func loadOptions(labelCol string) (data.LoadOptions, error) {
	mem, err := limits.MaxMemory()
	if err != nil {
		return data.LoadOptions{}, err
	}
	if mem != limits.Unlimited && mem >= minSoftLimit && mem < startSoftLimit {
		// Let the garbage collector work harder near the limit rather than
		// let the heap grow to twice the live data.
		debug.SetMemoryLimit(mem)
	}
	maxEl := data.DefaultMaxElements
	if mem/parseElementBytes < int64(maxEl) {
		maxEl = int(max(mem/parseElementBytes, 1))
	}
	return data.LoadOptions{LabelCol: labelCol, MaxElements: maxEl, MaxInputBytes: maxInput, MaxLineBytes: lineCap()}, nil
}

// limitHint adds to a loader's limit error where the limit comes from and
// how to raise it; why explains the feature cap.
func limitHint(err error, why string) error {
	if !errors.Is(err, data.ErrLimit) {
		return err
	}
	switch msg := err.Error(); {
	case strings.Contains(msg, "--max-input") || strings.Contains(msg, "--max-line"):
		return err // an input of the command line (textOptions) names its flag
	case strings.Contains(msg, "MaxInputBytes"):
		return fmt.Errorf("%w; raise it with --max-input", err)
	case strings.Contains(msg, "MaxLineBytes"):
		return fmt.Errorf("%w; raise it with --max-line", err)
	case strings.Contains(msg, "MaxFeatures"):
		return fmt.Errorf("%w: %s", err, why)
	default:
		return fmt.Errorf("%w, set from the memory limit; raise it with --max-memory", err)
	}
}
