// Command psdlearn learns positive semidefinite matrices — Mahalanobis
// metrics and kernels — from labelled data. Run `psdlearn help` for the
// commands; every command accepts --json and then prints exactly one JSON
// object on stdout, with progress on stderr.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
)

// command is one subcommand. run parses args itself (with a flag.FlagSet
// from newFlags) and returns an error for any user mistake; main prints it as
// one line (or as a JSON error object under --json) and exits non-zero.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *cmdEnv, args []string) error
}

// cmdEnv carries the streams of a command, so tests can run commands in-process.
type cmdEnv struct {
	stdout, stderr io.Writer
	json           bool // set by the command after parsing --json, used for error output
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
	status := runMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stopProfile()
	os.Exit(status)
}

// runMain runs one command line and returns the exit status.
func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) (status int) {
	env := &cmdEnv{stdout: stdout, stderr: stderr}
	for _, a := range args {
		if a == "--json" || a == "-json" {
			env.json = true
		}
	}
	defer func() {
		if r := recover(); r != nil {
			status = reportError(env, fmt.Errorf("internal error: %v", r))
		}
	}()
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		return reportError(env, fmt.Errorf("unknown command %q (run 'psdlearn help')", args[0]))
	}
	if err := c.run(ctx, env, args[1:]); err != nil {
		var es *exitStatus
		if errors.As(err, &es) {
			if es.reported {
				fmt.Fprintf(stderr, "psdlearn: %s\n", strings.ReplaceAll(es.Error(), "\n", " "))
			} else {
				reportError(env, es.err)
			}
			return es.code
		}
		return reportError(env, err)
	}
	return 0
}

func reportError(env *cmdEnv, err error) int {
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	if env.json {
		b, _ := json.Marshal(map[string]string{"error": msg})
		fmt.Fprintf(env.stdout, "%s\n", b)
	} else {
		fmt.Fprintf(env.stderr, "psdlearn: %s\n", msg)
	}
	return 1
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "psdlearn learns positive semidefinite matrices: Mahalanobis metrics and kernels.")
	fmt.Fprintln(w, "\nUsage: psdlearn <command> [flags]   (every command accepts --json)\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
}
