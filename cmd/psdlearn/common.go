package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/psdlearn/psdlearn/data"
	_ "github.com/psdlearn/psdlearn/datasets" // registers builtin:NAME data specs
	"github.com/psdlearn/psdlearn/engine"
	_ "github.com/psdlearn/psdlearn/engine/backends" // registers the "go" and "native" backends
	"github.com/psdlearn/psdlearn/internal/input"
	"github.com/psdlearn/psdlearn/internal/jsonnum"
)

// newFlagSet returns a flag set for a subcommand that returns errors
// instead of exiting or printing them (parseFlags reports them, and prints
// the usage on stdout for -h/--help), and defines --json bound to env.json,
// --quiet bound to env.quiet and the resource flags. It starts the command
// line's shared state (cur) afresh.
func newFlagSet(env *cmdEnv, name string) *flag.FlagSet {
	fs := newBareFlagSet(env, name)
	fs.BoolVar(&env.quiet, "quiet", false, "print no progress lines on stderr (warnings and errors still appear)")
	resourceFlags(fs)
	return fs
}

// newBareFlagSet is newFlagSet with --json only, for commands that run
// nothing long and read no data (version).
func newBareFlagSet(env *cmdEnv, name string) *flag.FlagSet {
	cur = cmdLine{env: env}
	fs := flag.NewFlagSet("psdlearn "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.BoolVar(&env.json, "json", env.json, "print exactly one JSON object on stdout when done")
	return fs
}

// labelColFlag defines the --label-col flag shared by every command that
// reads labelled data, and the CSV header flags --header and --no-header.
func labelColFlag(fs *flag.FlagSet, p *string) {
	fs.StringVar(p, "label-col", "", "label column of a CSV file: name or 0-based index, negative from the end (default: last)")
	headerFlags(fs)
}

// schemaVersion is the version of every command's JSON output; its "schema"
// field is "psdlearn/<command>/v<schemaVersion>" (docs/json-schema.md). Bump
// it when a field is removed or changes meaning, not when one is added.
const schemaVersion = 1

// schemaOf returns the "schema" value of a command's JSON output.
func schemaOf(command string) string {
	return fmt.Sprintf("psdlearn/%s/v%d", command, schemaVersion)
}

// emitJSON writes v, a typed output struct, to stdout as one JSON object on
// one line. Its floats that may be NaN or ±Inf are jsonFloat (written as
// null). The object starts with "schema": "psdlearn/<command>/v1" naming
// its layout (docs/json-schema.md). The warnings of the command line
// (warnUser) are in its "warnings" array: v's own field of that name, else
// one added after "schema".
func emitJSON(env *cmdEnv, v any) error {
	return emitJSONAs(env, env.command, v)
}

// emitJSONAs is emitJSON with the schema of command.
func emitJSONAs(env *cmdEnv, command string, v any) error {
	inject := false
	if len(cur.warnings) > 0 {
		var had bool
		v, had = withWarnings(v, cur.warnings)
		inject = !had
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding JSON output: %w", err)
	}
	if command != "" && len(b) >= 2 && b[0] == '{' {
		head := []byte(`{"schema":` + strconv.Quote(schemaOf(command)))
		if inject {
			head = append(append(head, ','), warningsJSON(cur.warnings)...)
		}
		if b[1] != '}' {
			head = append(head, ',')
		}
		b = append(head, b[1:]...)
	}
	b = append(b, '\n')
	_, err = env.stdout.Write(b)
	return err
}

// loadData loads a data SPEC: a .csv, .libsvm/.svm/.txt file,
// idx:IMAGES:LABELS, builtin:NAME (the embedded data sets), or - (CSV on
// standard input; csv:- and libsvm:- name the format). labelCol selects the
// label column of a CSV file (name or 0-based index; "" = last); --header,
// --no-header and --no-labels of the command line apply.
func loadData(spec, labelCol string) (*data.Dataset, error) {
	return loadDataFeatures(spec, labelCol, 0, "")
}

// loadDataFeatures is loadData refusing more than maxFeatures features (0:
// no cap beyond the element cap); why explains the cap in the error.
func loadDataFeatures(spec, labelCol string, maxFeatures int, why string) (*data.Dataset, error) {
	opt, err := dataOptions(labelCol, maxFeatures)
	if err != nil {
		return nil, err
	}
	if isStdinSpec(spec) {
		if cur.stdinUsed {
			return nil, usagef("%s: standard input can be read only once (one data flag may be -)", spec)
		}
		cur.stdinUsed = true
		if cur.env != nil {
			opt.Stdin = cur.env.stdin
		}
	}
	d, err := data.Load(spec, opt)
	if err != nil {
		return nil, explainLoadError(err, labelCol, why)
	}
	if d.Len() == 0 {
		return nil, fmt.Errorf("%s: no data", spec)
	}
	return d, nil
}

// dataOptions returns the loader options of the command line (loadOptions
// with --header, --no-header, --no-labels and the progress), refusing more
// than maxFeatures features (0: no cap beyond the element cap).
func dataOptions(labelCol string, maxFeatures int) (data.LoadOptions, error) {
	opt, err := loadOptions(labelCol)
	if err != nil {
		return opt, err
	}
	opt.MaxFeatures = maxFeatures
	opt.Header = headerMode()
	if cur.env != nil {
		opt.Progress = newProgress(cur.env).event
	}
	opt.NoLabels = cur.noLabels
	return opt, nil
}

// explainLoadError adds to a loader's error the flag that fixes it; why
// explains the feature cap.
func explainLoadError(err error, labelCol, why string) error {
	if errors.Is(err, data.ErrAmbiguousHeader) {
		return fmt.Errorf("%w; pass --header or --no-header", err)
	}
	var pe *data.ParseError
	if errors.Is(err, data.ErrLabel) && errors.As(err, &pe) && pe.Field != "" {
		col := "the last column"
		if labelCol != "" {
			col = "--label-col " + input.Clip(labelCol, 20)
		}
		return fmt.Errorf("%w (the label column is %s: choose it with --label-col, or read data without labels with --no-labels)", err, col)
	}
	return limitHint(err, why)
}

// requireFlags returns a usage error naming the flags among names (in
// order, without dashes) whose value is empty, or nil; hint follows.
func requireFlags(cmd, hint string, names []string, values ...string) error {
	var missing []string
	for i, v := range values {
		if v == "" {
			missing = append(missing, "--"+names[i])
		}
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return usagef("%s: %s is required%s", cmd, missing[0], hint)
	}
	return usagef("%s: %s and %s are required%s", cmd, strings.Join(missing[:len(missing)-1], ", "), missing[len(missing)-1], hint)
}

// stdoutName is the output file name that means standard output.
const stdoutName = "-"

// createOutput opens an output file of a command: standard output for "-"
// (closing it then leaves stdout open).
func createOutput(env *cmdEnv, path string) (io.WriteCloser, error) {
	if path == stdoutName {
		return nopCloser{env.stdout}, nil
	}
	return os.Create(path)
}

// nopCloser is a writer whose Close does nothing.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// isStdinSpec reports whether a data spec names standard input.
func isStdinSpec(spec string) bool {
	switch strings.ToLower(spec) {
	case data.StdinSpec, "csv:" + data.StdinSpec, "libsvm:" + data.StdinSpec, "svm:" + data.StdinSpec:
		return true
	}
	return false
}

// resolveBackend returns the backend called name; "" means engine.Default(),
// after checking that $PSDLEARN_BACKEND, if set, names a registered backend
// (engine.Default would silently ignore a misspelt one).
func resolveBackend(name string) (engine.Backend, error) {
	if name == "" {
		if env := os.Getenv(engine.EnvBackend); env != "" {
			if _, err := engine.Get(env); err != nil {
				return nil, usagef("$%s=%q: unknown backend (available: %s)", engine.EnvBackend, env, strings.Join(engine.Names(), ", "))
			}
		}
		return engine.Default(), nil
	}
	b, err := engine.Get(name)
	if err != nil {
		return nil, usagef("--backend %q: unknown backend (available: %s)", name, strings.Join(engine.Names(), ", "))
	}
	return b, nil
}

// peakRSSMB returns the peak resident set size of the process in MiB (from
// getrusage), or NaN where it is not available.
func peakRSSMB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	maxrss := float64(ru.Maxrss)
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return maxrss / (1 << 20) // bytes
	}
	return maxrss / (1 << 10) // kilobytes on Linux and the BSDs
}

// parseNumberList parses a comma-separated list of numbers ("" gives nil).
func parseNumberList(flagName, s string) ([]float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, usagef("--%s: %s is not a finite number", flagName, input.Clip(f, 40))
		}
		if v != 0 && math.Abs(v) < minNormal {
			return nil, usagef("--%s: %v is subnormal (below %.3g in magnitude): it underflows the solve; give a normal number", flagName, v, minNormal)
		}
		out = append(out, v)
	}
	return out, nil
}

// jsonFloats returns v as JSON numbers (null for NaN and ±Inf).
var jsonFloats = jsonnum.Floats

// ptrFloat returns a pointer to v: a field that is written whenever it is
// set, as null when v is NaN or infinite.
func ptrFloat(v float64) *jsonFloat {
	f := jsonFloat(v)
	return &f
}

// optFloat returns a pointer to v, or nil for NaN and ±Inf: an omitempty
// field that is left out when there is nothing to report.
func optFloat(v float64) *jsonFloat {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return ptrFloat(v)
}

// jsonFloat is a float64 written as a JSON number, or as null when it is
// NaN or infinite ("not applicable").
type jsonFloat = jsonnum.Float

// exitInterrupted is the exit status of a command stopped by Ctrl-C
// (128 + SIGINT, the shell's convention).
const exitInterrupted = 130

// exitStatus is an error that sets the process's exit status. When
// reported is true the command has already printed its output (a summary
// under --json), so only a line on stderr is added.
type exitStatus struct {
	code     int
	err      error
	reported bool
}

func (e *exitStatus) Error() string { return e.err.Error() }
func (e *exitStatus) Unwrap() error { return e.err }
