package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/psdlearn/psdlearn/bench"
	"github.com/psdlearn/psdlearn/bench/papers"
)

// papersSuite reports whether the bench arguments ask for --suite papers,
// which has its own flags (see runPapers).
func papersSuite(args []string) bool {
	for i, a := range args {
		switch {
		case a == "--suite" || a == "-suite":
			if i+1 < len(args) && args[i+1] == "papers" {
				return true
			}
		case a == "--suite=papers" || a == "-suite=papers":
			return true
		}
	}
	return false
}

// runPapers is psdlearn bench --suite papers: the papers' tables on their
// own protocols (package papers), as markdown, JSON, plots and the
// generated page docs/papers.md.
func runPapers(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "bench")
	fs.String("suite", "papers", "papers: the papers' tables on their own protocols")
	sections := fs.String("section", "", "run only the sections whose key or title contains one of these (comma-separated), e.g. table1")
	columns := fs.String("column", "", "run only the columns (data sets) whose key or name contains one of these (comma-separated), e.g. wine,iris")
	rows := fs.String("row", "", "run only the rows (methods) whose key or name contains one of these (comma-separated), e.g. frobmetric,lmnn")
	runs := fs.Int("runs", 0, "seeded runs of the columns that have several (0: the protocol's 10); fewer is a quick check, not the protocol")
	backend := fs.String("backend", "", "numerical backend (default: the default backend)")
	plotDir := fs.String("plot", "", "directory to write one PNG per table into (paper against psdlearn)")
	docs := fs.String("docs", "", "write the generated page (docs/papers.md) to this file")
	from := fs.String("from", "", "run nothing: merge the tables of earlier --json outputs (comma-separated files; a later file's cell replaces an earlier one's), with the current figures and notes")
	if err := parseFlags(fs, "bench", args); err != nil {
		return err
	}
	if *runs < 0 {
		return usagef("bench: --runs %d: want 0 (the protocol's) or more", *runs)
	}
	b, err := resolveBackend(*backend)
	if err != nil {
		return err
	}
	list := func(s string) []string {
		var out []string
		for _, f := range strings.Split(s, ",") {
			if f = strings.TrimSpace(f); f != "" {
				out = append(out, f)
			}
		}
		return out
	}
	machine := bench.Machine() + ", backend " + b.Name()
	var tables []*papers.Table
	if *from != "" {
		if *sections != "" || *columns != "" || *rows != "" || *runs != 0 {
			return usagef("bench: --from runs nothing: --section, --column, --row and --runs do not apply")
		}
		if tables, machine, err = mergePapersJSON(list(*from)); err != nil {
			return err
		}
	} else {
		tables, err = papers.Run(ctx, papers.Options{
			Sections: list(*sections), Columns: list(*columns), Rows: list(*rows), Runs: *runs,
			Backend: b, Progress: newProgress(env).event,
		})
		if err != nil {
			return err
		}
	}
	var plots []string
	if *plotDir != "" {
		if plots, err = papers.Plot(*plotDir, tables); err != nil {
			return err
		}
	}
	if *docs != "" {
		cmd := "psdlearn " + strings.Join(append([]string{"bench"}, args...), " ")
		if err := writePapersPage(*docs, tables, machine, cmd); err != nil {
			return err
		}
	}
	if env.json {
		return emitJSON(env, map[string]any{"suite": "papers", "tables": tables, "plots": plots, "machine": machine})
	}
	if err := papers.Markdown(env.stdout, tables, machine); err != nil {
		return err
	}
	for _, p := range plots {
		fmt.Fprintf(env.stdout, "plot: %s\n", p)
	}
	return nil
}

// mergePapersJSON merges the tables of earlier --json outputs (a later
// file's cell replaces an earlier one's) and joins their machines.
func mergePapersJSON(names []string) ([]*papers.Table, string, error) {
	var runs [][]*papers.Table
	var machines []string
	for _, name := range names {
		t, m, err := readPapersJSON(name)
		if err != nil {
			return nil, "", err
		}
		runs = append(runs, t)
		if m != "" && !slices.Contains(machines, m) {
			machines = append(machines, m)
		}
	}
	return papers.Merge(runs...), strings.Join(machines, "; "), nil
}

// writePapersPage writes the generated page (docs/papers.md) to name,
// saying that cmd generated it.
func writePapersPage(name string, tables []*papers.Table, machine, cmd string) error {
	f, err := os.Create(name)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := papers.Page(f, tables, machine, cmd); err != nil {
		f.Close()
		return fmt.Errorf("bench: %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("bench: %s: %w", name, err)
	}
	return nil
}

// readPapersJSON reads the tables and the machine of an earlier
// `bench --suite papers --json` output.
func readPapersJSON(name string) ([]*papers.Table, string, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, "", fmt.Errorf("bench: --from: %w", err)
	}
	t, err := papers.ReadTables(bytes.NewReader(b))
	if err != nil {
		return nil, "", fmt.Errorf("bench: --from %s: %w", name, err)
	}
	var head struct {
		Machine string `json:"machine"`
	}
	_ = json.Unmarshal(b, &head)
	return t, head.Machine, nil
}
