// Command psdlearn learns positive semidefinite matrices — Mahalanobis
// metrics and kernels — from labelled data. Run `psdlearn help` for the
// commands and `psdlearn help CMD` for one command's flags; every command
// accepts --json and then prints exactly one JSON object on stdout, with
// progress on stderr (--quiet: none).
//
// Exit status: 0 success (and --help), 1 a failed run (bad data, a solver
// error, a file that cannot be read or written), 2 a usage error (unknown
// command or flag, a bad or missing flag value, a flag that does not apply
// to the chosen algorithm), 130 interrupted by Ctrl-C; a crash (a bug)
// aborts with SIGABRT. See docs/cli.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/psdlearn/psdlearn/errs"
)

// command is one subcommand. run parses args itself (with a flag.FlagSet
// from newFlags) and returns an error for any user mistake; main prints it as
// one line (or as a JSON error object under --json) and exits non-zero.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *cmdEnv, args []string) error
}

// examples are the command lines --help shows for each command.
var examples = map[string][]string{
	"train": {
		"psdlearn train --algo frobmetric --data builtin:letters --split rows:10500,4500,5000 --standardize --out m.json",
		"psdlearn train --algo boostmetric --data points.csv --label-col species --standardize --json",
		"psdlearn train --algo frobmetric --data points.csv --triplets triplets.csv --out m.json",
	},
	"eval": {
		"psdlearn eval --model m.json --data builtin:letters",
		"psdlearn eval --model m.json --data points.csv --pairs pairs.csv --val-pairs val.csv --precision-at 5",
	},
	"predict": {
		"psdlearn predict --model m.json --data new.csv --ref train.csv --out labels.csv",
		"psdlearn predict --model m.json --data points.csv --pairs pairs.csv --val-pairs val.csv",
	},
	"transform": {
		"psdlearn transform --model m.json --data points.csv --out z.csv",
		"psdlearn transform --model m.json --matrix L --out L.npy",
	},
	"cluster": {
		"psdlearn cluster --algo simplenpkl --loss sqhinge --data builtin:iris --runs 20 --json",
		"psdlearn cluster --data points.csv --pairs pairs.csv --clusters 3 --out kernel.json",
	},
	"kernel":  {"psdlearn kernel --algo definiteboost --json", "psdlearn kernel --algo meg --data builtin:wine --out K.npy"},
	"embed":   {"psdlearn embed --algo mvu --data swissroll:2000 --k 6 --dims 2 --out emb.csv --plot emb.png"},
	"bench":   {"psdlearn bench --suite kernels", "psdlearn bench --suite algos --case letters --runs 3"},
	"demo":    {"psdlearn demo"},
	"version": {"psdlearn version --json"},
}

// cmdEnv carries the streams of a command, so tests can run commands in-process.
type cmdEnv struct {
	stdin          io.Reader // read for the data spec "-"
	stdout, stderr io.Writer
	json           bool // set by the command after parsing --json, used for error output
	quiet          bool // --quiet: no progress lines
	// command names the running command; emitJSON writes it into the
	// "schema" field ("psdlearn/<command>/v1") of the JSON output.
	command string
}

var commands = map[string]command{}

// register adds a subcommand; each command file calls it from init.
func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("psdlearn: duplicate command " + c.name)
	}
	commands[c.name] = c
}

func main() {
	// A crash — a runtime fatal error, an unrecovered panic, a signal in C
	// code — ends the process with SIGABRT (status 134 in a shell), never
	// with the exit status 2 of a usage error (the Go runtime's default).
	debug.SetTraceback("crash")
	// A first Ctrl-C cancels the run (solvers return their best iterate); once
	// it has, stop restores the default handling, so a second one exits at
	// once even while a native call that cannot be interrupted is running.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
	}()
	stopProfile, err := startProfile()
	if err != nil {
		fmt.Fprintln(os.Stderr, "psdlearn:", err)
		os.Exit(2)
	}
	status := runMainIO(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stopProfile()
	os.Exit(status)
}

// runMain runs one command line with an empty standard input and returns
// the exit status.
func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runMainIO(ctx, args, strings.NewReader(""), stdout, stderr)
}

// runMainIO runs one command line and returns the exit status.
func runMainIO(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (status int) {
	env := &cmdEnv{stdin: stdin, stdout: stdout, stderr: stderr}
	for _, a := range args {
		if a == "--json" || a == "-json" || a == "--json=true" || a == "-json=true" {
			env.json = true
		}
	}
	defer func() {
		if r := recover(); r != nil {
			status = reportError(env, fmt.Errorf("internal error: %v", r))
		}
	}()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || (args[0] == "help" && len(args) == 1) {
		usage(stdout)
		return 0
	}
	name, rest := args[0], args[1:]
	if name == "help" {
		// psdlearn help CMD is psdlearn CMD --help.
		if len(args) > 2 {
			return reportError(env, usagef("help: want one command name, got %q", args[1:]))
		}
		name, rest = args[1], []string{"--help"}
		env.json = false
	}
	c, ok := commands[name]
	if !ok {
		return reportError(env, usagef("unknown command %q (commands: %s; run 'psdlearn help')", name, strings.Join(commandNames(), ", ")))
	}
	env.command = c.name
	err := c.run(ctx, env, rest)
	if err == nil {
		for _, p := range cur.progress {
			p.finish()
		}
	}
	if err != nil {
		if errors.Is(err, errHelpShown) {
			return 0
		}
		var es *exitStatus
		if errors.As(err, &es) {
			if es.reported {
				fmt.Fprintf(stderr, "psdlearn: %s\n", errorLine(strings.TrimPrefix(es.Error(), "psdlearn: "), maxErrorLine-len("psdlearn: ")))
			} else {
				reportError(env, es.err)
			}
			return es.code
		}
		return reportError(env, err)
	}
	return 0
}

// reportError prints err as one line on stderr, or as one JSON object with
// "schema": "psdlearn/error/v1" first and an "error" field on stdout under
// --json, and returns the exit status: 2 for a usage error or an invalid
// option value (errs.ErrOption), else 1. The line is at most maxErrorLine
// bytes (errorLine).
func reportError(env *cmdEnv, err error) int {
	// The library's errors start with the package name already.
	msg := errorLine(strings.TrimPrefix(err.Error(), "psdlearn: "), maxErrorLine-len("psdlearn: "))
	if env.json {
		b, _ := json.Marshal(msg)
		fmt.Fprintf(env.stdout, "{\"schema\":%q,\"error\":%s}\n", schemaOf("error"), b)
	} else {
		fmt.Fprintf(env.stderr, "psdlearn: %s\n", msg)
	}
	return exitCode(err)
}

// exitCode is the exit status of a failed command: exitUsage for a usage
// error or an invalid option value, else 1.
func exitCode(err error) int {
	var ue *usageError
	if errors.As(err, &ue) || errors.Is(err, errs.ErrOption) {
		return exitUsage
	}
	return 1
}

// maxErrorLine is the longest error line psdlearn prints, in bytes.
const maxErrorLine = 300

// errorLine makes msg one line of at most max bytes: control characters
// (newlines among them) become spaces, and a longer message is cut at a
// rune boundary and marked with its full length.
func errorLine(msg string, max int) string {
	msg = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, msg)
	if len(msg) <= max {
		return msg
	}
	mark := fmt.Sprintf(" …[cut: %d bytes]", len(msg))
	cut := max - len(mark)
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + mark
}

// commandNames returns the command names, sorted.
func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "psdlearn learns positive semidefinite matrices: Mahalanobis metrics and kernels.")
	fmt.Fprintln(w, "\nUsage: psdlearn <command> [flags]   (every command accepts --json and --quiet)\n\nCommands:")
	for _, n := range commandNames() {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(w, "  %-10s %s\n", "help", "help CMD prints the flags of one command (as does CMD --help)")
	fmt.Fprintln(w, "\nData SPECs: file.csv, file.libsvm|.svm|.txt, idx:IMAGES:LABELS, builtin:NAME, or - for CSV on standard input.")
	fmt.Fprintln(w, "Exit status: 0 success, 1 failed run, 2 usage error, 130 interrupted. Details: docs/cli.md.")
}
