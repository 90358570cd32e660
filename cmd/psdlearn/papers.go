package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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

// runPapers is psdlearn bench --suite papers: the papers' tables and
// comparisons on their own protocols (package papers), as markdown, JSON,
// plots and the generated page docs/papers.md.
func runPapers(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "bench")
	fs.String("suite", "papers", "papers: the papers' tables and comparisons on their own protocols")
	sections := fs.String("section", "", "run only the sections whose key or title contains one of these (comma-separated): table1, sdp, table2")
	columns := fs.String("column", "", "run only the columns (data sets) of Table 1 whose key or name contains one of these (comma-separated), e.g. wine,iris; without --section, the sdp and table2 sections then do not run")
	rows := fs.String("row", "", "run only the rows (methods) of Table 1 whose key or name contains one of these (comma-separated), e.g. frobmetric,lmnn; without --section, the sdp and table2 sections then do not run")
	runs := fs.Int("runs", 0, "seeded runs of the columns that have several, and of each Table 2 cell (0: the protocols' 10 and 20); fewer is a quick check, not the protocol")
	maxSize := fs.Int("max-size", 0, "quick runs of the sdp and table2 sections: sdp skips problems of more points, table2 runs 3 times on iris and the chessboard, no Figure 2 (0: the full sections)")
	backend := fs.String("backend", "", "numerical backend (default: the default backend)")
	plotDir := fs.String("plot", "", "directory to write one PNG per table (paper against psdlearn) and the sections' figures into")
	docs := fs.String("docs", "", "write the generated page (docs/papers.md) to this file, and beside it its JSON record (docs/papers.json), which --from merges with new cells later")
	from := fs.String("from", "", "run nothing: merge earlier --json outputs of --suite papers, sdp or table2 (comma-separated files; a later file's cell or row replaces an earlier one's), with the current figures and notes; --plot then redraws the tables' plots only")
	if err := parseFlags(fs, "bench", args); err != nil {
		return err
	}
	if *runs < 0 || *maxSize < 0 {
		return usagef("bench: --runs %d, --max-size %d: want 0 (the protocol's, the full sections) or more", *runs, *maxSize)
	}
	b, err := resolveBackend(*backend)
	if err != nil {
		return err
	}
	var res *papers.Result
	if *from != "" {
		if *sections != "" || *columns != "" || *rows != "" || *runs != 0 || *maxSize != 0 {
			return usagef("bench: --from runs nothing: --section, --column, --row, --runs and --max-size do not apply")
		}
		if res, err = mergePapersJSON(splitList(*from)); err != nil {
			return err
		}
	} else {
		res, err = papers.Run(ctx, papers.Options{
			Sections: splitList(*sections), Columns: splitList(*columns), Rows: splitList(*rows), Runs: *runs, MaxSize: *maxSize,
			PlotDir: *plotDir, Backend: b, Progress: newProgress(env).event,
		})
		if err != nil {
			return err
		}
		res.Machine = bench.Machine() + ", backend " + b.Name()
	}
	return writePapers(env, res, args, *plotDir, *docs)
}

// writePapers draws the tables' plots into plotDir, writes the page to
// docs, and prints the result as JSON or markdown.
func writePapers(env *cmdEnv, res *papers.Result, args []string, plotDir, docs string) error {
	if plotDir != "" {
		plots, err := papers.Plot(plotDir, res.Tables)
		if err != nil {
			return err
		}
		res.Plots = plots
	}
	if docs != "" {
		cmd := "psdlearn " + strings.Join(append([]string{"bench"}, args...), " ")
		if err := writePapersPage(docs, res, cmd); err != nil {
			return err
		}
		if err := writePapersRecord(env, pageRecord(docs), res); err != nil {
			return err
		}
	}
	if env.json {
		return emitJSON(env, res)
	}
	if err := papers.WriteMarkdown(env.stdout, res, false); err != nil {
		return err
	}
	for _, p := range res.Plots {
		fmt.Fprintf(env.stdout, "plot: %s\n", p)
	}
	return nil
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// mergePapersJSON reads earlier --json outputs of --suite papers, sdp or
// table2 and merges them (a later file's cell or row replaces an earlier
// one's). A file of another kind is a usage error.
func mergePapersJSON(names []string) (*papers.Result, error) {
	var results []*papers.Result
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("bench: --from: %w", err)
		}
		r, err := papers.ReadResult(b)
		if err != nil {
			return nil, usagef("bench: --from %s: %v", name, err)
		}
		results = append(results, r)
	}
	return papers.MergeResults(results...), nil
}

// pageRecord is the name of the JSON record written beside the page name:
// its extension replaced by .json.
func pageRecord(page string) string {
	return strings.TrimSuffix(page, filepath.Ext(page)) + ".json"
}

// writePapersRecord writes res to name as the --json output would print
// it, so that a later run merges it with new cells (--from name,new.json)
// instead of rerunning every section to regenerate the page.
func writePapersRecord(env *cmdEnv, name string, res *papers.Result) error {
	f, err := os.Create(name)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	out := *env
	out.stdout = f
	if err := emitJSONAs(&out, env.command, res); err != nil {
		f.Close()
		return fmt.Errorf("bench: %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("bench: %s: %w", name, err)
	}
	return nil
}

// writePapersPage writes the generated page (docs/papers.md) to name,
// saying that cmd generated it.
func writePapersPage(name string, res *papers.Result, cmd string) error {
	f, err := os.Create(name)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := papers.Page(f, res, cmd); err != nil {
		f.Close()
		return fmt.Errorf("bench: %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("bench: %s: %w", name, err)
	}
	return nil
}
