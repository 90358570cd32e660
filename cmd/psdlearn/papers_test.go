package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchPapers runs one cell of the papers suite through the command
// line: JSON with the table, the generated page written by --docs, and
// usage errors for its own flags.
func TestBenchPapers(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "papers.md")
	out := mustRun(t, "bench", "--suite", "papers", "--column", "iris", "--row", "euclidean", "--runs", "1", "--docs", page, "--json")
	tables, ok := out["tables"].([]any)
	if !ok || len(tables) != 1 {
		t.Fatalf("tables %v", out["tables"])
	}
	cells := tables[0].(map[string]any)["cells"].([]any)
	if len(cells) != 1 || cells[0].(map[string]any)["column"] != "iris" {
		t.Errorf("cells %v", cells)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"psdlearn bench --suite papers --column iris", "| Euclidean |", "Quick run"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("page lacks %q:\n%s", want, b)
		}
	}
	for _, args := range [][]string{
		{"bench", "--suite", "papers", "--runs", "-1"},
		{"bench", "--suite=papers", "--column", "nope"},
		{"bench", "--suite", "papers", "--case", "x"}, // a flag of the other suites
	} {
		if st, _, _ := runIO(args, ""); st == 0 {
			t.Errorf("psdlearn %s: status 0", strings.Join(args, " "))
		}
	}
}

// TestBenchBoostFig2 runs BoostMetric's Figure 2 at D = 50 through the
// command line: JSON with one row, the page written by --md naming the
// command that regenerates it, and the plots; a --max-size below every
// dimension is an error.
func TestBenchBoostFig2(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "fig2.md")
	out := mustRun(t, "bench", "--suite", "boostfig2", "--max-size", "50", "--md", page, "--plot", filepath.Join(dir, "plots"), "--json")
	rows, ok := out["rows"].([]any)
	if !ok || len(rows) != 1 || rows[0].(map[string]any)["dim"] != 50.0 || rows[0].(map[string]any)["triplets"] != 250.0 {
		t.Fatalf("rows %v", out["rows"])
	}
	if plots, _ := out["plots"].([]any); len(plots) != 2 {
		t.Errorf("plots %v", out["plots"])
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"`psdlearn bench --suite boostfig2 --max-size 50 --md docs/boostmetric-figure2.md --plot docs/plots`", "| 50 | ", "![boostmetric-fig2-time.png](plots/boostmetric-fig2-time.png)"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("page lacks %q:\n%s", want, b)
		}
	}
	if st, _, _ := runIO([]string{"bench", "--suite", "boostfig2", "--max-size", "20"}, ""); st == 0 {
		t.Error("--max-size 20: status 0")
	}
}

// TestBenchPhases runs the phases profile's quick form (--max-size below
// 784: one small dimension) through the command line: JSON with the three
// solves and their phases, the last one "other".
func TestBenchPhases(t *testing.T) {
	out := mustRun(t, "bench", "--suite", "phases", "--max-size", "24", "--json")
	rows, ok := out["rows"].([]any)
	if !ok || len(rows) != 3 {
		t.Fatalf("rows %v", out["rows"])
	}
	for _, r := range rows {
		row := r.(map[string]any)
		phases, _ := row["phases"].([]any)
		if row["dim"] != 24.0 || len(phases) < 4 || phases[len(phases)-1].(map[string]any)["name"] != "other" {
			t.Errorf("row %v", row)
		}
	}
}
