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
	if out["sdp"] != nil || out["table2"] != nil {
		t.Errorf("--column without --section ran a report section: %v", out)
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

// TestBenchPapersSections runs the suite's report sections through the
// command line, quickly (--max-size), selected by --section, next to their
// own suites' outputs; --from merges the three kinds into one page holding
// Table 1, the comparison with CSDP and Table 2 in that order, and refuses
// a JSON file of another kind with a usage error that says what it is.
func TestBenchPapersSections(t *testing.T) {
	dir := t.TempDir()
	file := func(name string) string { return filepath.Join(dir, name) }
	write := func(name string, args ...string) {
		st, out, errs := runIO(args, "")
		if st != 0 {
			t.Fatalf("psdlearn %s: status %d: %s", strings.Join(args, " "), st, errs)
		}
		if err := os.WriteFile(file(name), []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// --section selects: one report, no table.
	for _, c := range []struct {
		section string
		args    []string
		rows    int
	}{
		{"sdp", []string{"--max-size", "150"}, 2},                 // NPKL on iris, both losses
		{"table2", []string{"--max-size", "1", "--runs", "1"}, 2}, // iris and the chessboard
	} {
		out := mustRun(t, append([]string{"bench", "--suite", "papers", "--section", c.section, "--json"}, c.args...)...)
		rep, _ := out[c.section].(map[string]any)
		if rows, _ := rep["rows"].([]any); len(rows) != c.rows || out["tables"] != nil || len(out) != 6 {
			t.Errorf("--section %s: %v", c.section, out)
		}
	}
	write("table1.json", "bench", "--suite", "papers", "--section", "table1", "--column", "wine", "--row", "euclidean", "--runs", "1", "--json")
	write("sdp.json", "bench", "--suite", "sdp", "--max-size", "150", "--json")
	write("table2.json", "bench", "--suite", "table2", "--max-size", "1", "--json")
	page := file("papers.md")
	from := strings.Join([]string{file("table1.json"), file("sdp.json"), file("table2.json")}, ",")
	out := mustRun(t, "bench", "--suite", "papers", "--from", from, "--docs", page, "--json")
	if tables, _ := out["tables"].([]any); len(tables) != 1 || out["sdp"] == nil || out["table2"] == nil {
		t.Fatalf("merged output %v", out)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	last := -1
	for _, head := range []string{"## Metric learning", "## psdlearn against CSDP", "### npkl sqhinge", "## SimpleNPKL, Table 2", "| chessboard (n = 100) |"} {
		i := strings.Index(string(b), head)
		if i <= last {
			t.Errorf("page: %q at %d, after %d", head, i, last)
		}
		last = i
	}
	if !strings.Contains(string(b), "`psdlearn bench --suite papers --from "+from) || strings.Contains(string(b), "Not measured for this page") {
		t.Errorf("page head or stubs wrong:\n%s", b)
	}
	// The merged output merges again, to the same page; so does the record
	// --docs wrote beside the page, with a new cell replacing one of its own.
	write("merged.json", "bench", "--suite", "papers", "--from", from, "--json")
	again := file("again.md")
	mustRun(t, "bench", "--suite", "papers", "--from", file("merged.json"), "--docs", again, "--json")
	fromRecord := file("record.md")
	mustRun(t, "bench", "--suite", "papers", "--from", file("papers.json"), "--docs", fromRecord, "--json")
	b3, err := os.ReadFile(fromRecord)
	if err != nil {
		t.Fatal(err)
	}
	if strings.SplitN(string(b3), "\n", 4)[3] != strings.SplitN(string(b), "\n", 4)[3] {
		t.Errorf("page from the record written by --docs differs from the page it was written with")
	}
	b2, err := os.ReadFile(again)
	if err != nil {
		t.Fatal(err)
	}
	if strings.SplitN(string(b2), "\n", 4)[3] != strings.SplitN(string(b), "\n", 4)[3] { // after the command
		t.Errorf("page from the merged output differs from the page from its inputs")
	}
	for name, text := range map[string]string{
		"error.json":   `{"schema":"psdlearn/error/v1","error":"encoding JSON output: json: unsupported value: NaN"}`,
		"kernels.json": `{"schema":"psdlearn/bench/v1","suite":"kernels","results":[],"plots":null,"machine":"m"}`,
	} {
		if err := os.WriteFile(file(name), []byte(text+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ name, want string }{
		{"error.json", "an error output"},
		{"kernels.json", "the output of --suite kernels, not the JSON output of psdlearn bench --suite papers, sdp or table2"},
		{"missing.json", "no such file"},
		{"papers.md", "not a JSON object"},
	} {
		st, _, errs := runIO([]string{"bench", "--suite", "papers", "--from", file("sdp.json") + "," + file(c.name)}, "")
		if st == 0 || !strings.Contains(errs, c.want) || !strings.Contains(errs, c.name) {
			t.Errorf("--from %s: status %d, %q; want %q", c.name, st, errs, c.want)
		}
	}
	if st, _, errs := runIO([]string{"bench", "--suite", "papers", "--from", file("sdp.json"), "--section", "sdp"}, ""); st != exitUsage || !strings.Contains(errs, "--from runs nothing") {
		t.Errorf("--from with --section: status %d, %q", st, errs)
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
