package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/psdlearn/psdlearn/data"
)

// exitUsage is the exit status of a usage error (the flag package's and
// most Unix tools' convention); a run that fails exits 1.
const exitUsage = 2

// usageError is a mistake in the command line itself: an unknown command or
// flag, a bad or missing flag value, conflicting flags, or a flag that does
// not apply to the chosen algorithm. main exits 2 for it.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usagef returns a usageError with a formatted message.
func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// errHelpShown is returned by parseFlags after --help printed the usage;
// main exits 0 for it.
var errHelpShown = errors.New("help shown")

// cmdLine is the state of the command line being run that the shared
// plumbing needs and the commands do not pass around: the streams, the CSV
// header flags and whether standard input was consumed. newFlagSet resets
// it, so commands run one after another in one process (as the tests do)
// start afresh.
type cmdLine struct {
	env              *cmdEnv
	header, noHeader bool            // --header, --no-header
	noLabels         bool            // --no-labels (transform, embed)
	stdinUsed        bool            // a data spec "-" was read
	warnings         []string        // warnUser's record, for the JSON output
	progress         []*progressLine // the command's progress printers, for their last line
}

var cur cmdLine

// headerFlags defines --header and --no-header (every command that reads a
// CSV file has them, through labelColFlag).
func headerFlags(fs *flag.FlagSet) {
	fs.BoolVar(&cur.header, "header", false, "the first row of a CSV file is a header (default: detected, see docs/cli.md)")
	fs.BoolVar(&cur.noHeader, "no-header", false, "the first row of a CSV file is data: columns are named c0, c1, …")
}

// noLabelsFlag defines --no-labels: every CSV column is a feature.
func noLabelsFlag(fs *flag.FlagSet, what string) {
	fs.BoolVar(&cur.noLabels, "no-labels", false, "the data has no label column: every CSV column is a feature; "+what)
}

// headerMode returns the CSV header mode of the command line.
func headerMode() data.HeaderMode {
	switch {
	case cur.header:
		return data.HeaderPresent
	case cur.noHeader:
		return data.HeaderAbsent
	}
	return data.HeaderAuto
}

// parseFlags parses args into fs, prints the command's usage on stdout for
// -h/--help (then returns errHelpShown, exit 0), and turns every other
// parse error, positional arguments (no command takes any) and conflicting
// shared flags into usage errors.
func parseFlags(fs *flag.FlagSet, name string, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printCommandHelp(cur.env.stdout, name, fs)
			return errHelpShown
		}
		return usagef("%s: %v (run 'psdlearn help %s')", name, err, name)
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected arguments %q (run 'psdlearn help %s')", name, fs.Args(), name)
	}
	if cur.header && cur.noHeader {
		return usagef("%s: give --header or --no-header, not both", name)
	}
	if cur.noLabels {
		if f := fs.Lookup("label-col"); f != nil && f.Value.String() != "" {
			return usagef("%s: give --label-col or --no-labels, not both", name)
		}
	}
	return checkFlagValues(name, fs)
}

// printCommandHelp prints the usage of one command: its summary and flags.
func printCommandHelp(w io.Writer, name string, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: psdlearn %s [flags]\n\n%s\n\nFlags:\n", name, commands[name].summary)
	out := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(out)
	if ex := examples[name]; len(ex) > 0 {
		fmt.Fprintln(w, "\nExamples:")
		for _, e := range ex {
			fmt.Fprintln(w, "  "+e)
		}
	}
	fmt.Fprintln(w, "\nFlags take one or two dashes (-k 3, --k=3). Exit status: 0 success, 1 failed run, 2 usage error, 130 interrupted.")
}

// flagRule says which algorithms (or variants) a flag applies to: applies
// reports whether it applies to the chosen one, to describes those it
// applies to, for the error message and the help text.
type flagRule struct {
	flag    string
	to      string
	applies func() bool
}

// checkFlagRules returns a usage error naming the first flag (in name
// order) given on the command line that does not apply to what was chosen:
// a flag that would be silently ignored is a mistake to report. A flag
// given its default value (--C "" in a script, say) changes nothing and
// passes.
func checkFlagRules(fs *flag.FlagSet, cmd, chosen string, rules []flagRule) error {
	byName := make(map[string]flagRule, len(rules))
	for _, r := range rules {
		byName[r.flag] = r
	}
	var err error
	fs.Visit(func(f *flag.Flag) {
		if f.Value.String() == f.DefValue {
			return
		}
		if r, ok := byName[f.Name]; ok && err == nil && !r.applies() {
			err = usagef("%s: --%s does not apply to %s (it applies to %s)", cmd, f.Name, chosen, r.to)
		}
	})
	return err
}

// annotateFlagRules appends "(only: …)" to the usage of every flag with a
// rule, so that the help text says where each flag applies.
func annotateFlagRules(fs *flag.FlagSet, rules []flagRule) {
	for _, r := range rules {
		if f := fs.Lookup(r.flag); f != nil {
			f.Usage += " [only " + r.to + "]"
		}
	}
}

// oneOf reports whether s is one of the values (case-insensitively).
func oneOf(s string, values ...string) bool {
	for _, v := range values {
		if strings.EqualFold(s, v) {
			return true
		}
	}
	return false
}
