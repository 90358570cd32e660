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
