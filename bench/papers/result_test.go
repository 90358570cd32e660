package papers

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/bench"
	"github.com/psdlearn/psdlearn/internal/sdpa"
)

// sampleResult is a result with all three sections: one Table 1 cell with
// an unknown SD, an SDP report with a row CSDP did not solve and a Table 2
// report with a cell that gave no kernel.
func sampleResult() *Result {
	nan := math.NaN()
	cell := Cell{Row: "Euclidean", Column: "wine", Paper: table1Figure("euclidean", "wine"), Values: []float64{25}, TestSize: 27}
	Compare(&cell, "")
	tab := &Table{Section: "table1", Title: table1Title, Intro: table1Intro, Rows: []string{"Euclidean"}, Columns: []string{"wine"}, Cells: []Cell{cell}}
	sdp := &bench.SDPReport{CSDP: "/usr/bin/csdp", Machine: "sdp machine", Rows: []bench.SDPRow{
		{Problem: "npkl linear", Data: "iris", Size: 150, Objective: -12.5, Seconds: 0.01, RefObjective: nan, RefDual: nan, RefSeconds: nan, Difference: nan,
			RelDiff: nan, Ratio: nan, RefCPUSeconds: nan, CPURatio: nan, Metrics: map[string]float64{"psdlearn_accuracy": 0.97, "csdp_accuracy": nan}},
	}}
	t2 := &bench.Table2Report{Protocol: "k = 5, 3 runs", Machine: "table2 machine", Rows: []bench.Table2Row{
		{Data: "chessboard", N: 100, Dim: 2, Classes: 2, KMeans: bench.MeanSD{Mean: 50.1, SD: nan},
			Raw: map[string][]bench.Table2Cell{"linear": {{C: 0.1, Accuracy: bench.MeanSD{Mean: nan, SD: nan}, LearnSeconds: nan, Bracket: nan, Error: "no kernel"}}},
			Std: map[string][]bench.Table2Cell{}},
	}}
	return &Result{Tables: []*Table{tab}, Reports: map[string]Report{"sdp": sdp, "table2": t2}, Machine: "table machine"}
}

// TestSectionsOrder: the page order is Table 1, the SDP comparison,
// Table 2, whatever the keys' alphabetical order.
func TestSectionsOrder(t *testing.T) {
	var keys []string
	for _, s := range Sections() {
		keys = append(keys, s.Key)
	}
	if !slices.Equal(keys, []string{"table1", "sdp", "table2"}) {
		t.Errorf("sections %v", keys)
	}
}

// TestResultJSONRoundTrip: the suite's JSON output of a result with all
// three sections reads back (NaN restored) and writes again to the same
// JSON; so does each report section's own suite output; the page of the
// decoded result equals the original's.
func TestResultJSONRoundTrip(t *testing.T) {
	orig := sampleResult()
	first, err := json.Marshal(orig)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadResult(first)
	if err != nil {
		t.Fatal(err)
	}
	second, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Errorf("JSON changed by the round trip:\n%s\n%s", first, second)
	}
	if c := got.Tables[0].Cells[0]; !math.IsNaN(c.SD) {
		t.Errorf("table cell SD %v, want NaN", c.SD)
	}
	if r := got.Reports["sdp"].(*bench.SDPReport); !math.IsNaN(r.Rows[0].RefObjective) || !math.IsNaN(r.Rows[0].Metrics["csdp_accuracy"]) {
		t.Errorf("SDP row %+v", r.Rows[0])
	}
	if r := got.Reports["table2"].(*bench.Table2Report); !math.IsNaN(r.Rows[0].Raw["linear"][0].Accuracy.Mean) {
		t.Errorf("Table 2 row %+v", r.Rows[0])
	}
	var p1, p2 strings.Builder
	if err := Page(&p1, orig, "cmd"); err != nil {
		t.Fatal(err)
	}
	if err := Page(&p2, got, "cmd"); err != nil {
		t.Fatal(err)
	}
	if p1.String() != p2.String() {
		t.Errorf("page changed by the round trip")
	}
	for key, rep := range orig.Reports {
		own, err := json.Marshal(rep) // the output of --suite sdp or table2
		if err != nil {
			t.Fatal(err)
		}
		r, err := ReadResult(own)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		if len(r.Tables) != 0 || len(r.Reports) != 1 || r.Reports[key] == nil {
			t.Fatalf("%s output read as %+v", key, r)
		}
		again, _ := json.Marshal(r.Reports[key])
		if !bytes.Equal(own, again) {
			t.Errorf("%s: JSON changed by the round trip:\n%s\n%s", key, own, again)
		}
	}
}

// TestReadResultErrors: input of another kind is refused with a message
// that says what it is.
func TestReadResultErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"schema":"psdlearn/error/v1","error":"encoding JSON output: json: unsupported value: NaN"}`, "an error output"},
		{`{"schema":"psdlearn/bench/v1","suite":"kernels","results":[]}`, "the output of --suite kernels"},
		{`{"suite":"papers","tables":[],"machine":"m"}`, "holds no table and no report"},
		{`{"rows":[]}`, "not the JSON output of psdlearn bench --suite papers, sdp or table2 --json"},
		{`[1, 2]`, "not a JSON object"},
		{`{"suite":"papers","sdp":{"rows":[]}}`, "sdp: bench: not an SDP reference report"},
	} {
		_, err := ReadResult([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadResult(%s): %v, want %q", c.in, err, c.want)
		}
	}
}

// TestPageOrder: the page holds the three sections in order, each once;
// a page from a result without a section names it and how to measure it.
func TestPageOrder(t *testing.T) {
	heads := []string{"## " + table1Title, "## psdlearn against CSDP", "## SimpleNPKL, Table 2"}
	var sb strings.Builder
	if err := Page(&sb, sampleResult(), "psdlearn bench --suite papers --from a.json"); err != nil {
		t.Fatal(err)
	}
	page := sb.String()
	last := -1
	for _, h := range heads {
		i := strings.Index(page, h)
		if i <= last || strings.Count(page, h) != 1 {
			t.Errorf("%q at %d after %d (count %d)", h, i, last, strings.Count(page, h))
		}
		last = i
	}
	if !strings.Contains(page, "`psdlearn bench --suite papers --from a.json`") || strings.Contains(page, "Not measured for this page") {
		t.Errorf("page head or stubs wrong:\n%s", page)
	}
	partial := sampleResult()
	delete(partial.Reports, "table2")
	sb.Reset()
	if err := Page(&sb, partial, "cmd"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sb.String(), "## SimpleNPKL, Table 2 and Figure 2\n\nNot measured for this page") || !strings.Contains(sb.String(), "--section table2 --json") {
		t.Errorf("partial page does not name the missing section:\n%s", sb.String())
	}
}

// TestMergeResults: results of the three kinds merge into one with every
// section; a later SDP row replaces an earlier one's.
func TestMergeResults(t *testing.T) {
	all := sampleResult()
	later := &bench.SDPReport{Machine: "sdp machine", Rows: []bench.SDPRow{{Problem: "npkl linear", Data: "iris", Objective: -12}, {Problem: "mvu", Data: "swissroll:2000:1", Objective: 5}}}
	m := MergeResults(&Result{Tables: all.Tables, Machine: all.Machine}, &Result{Reports: map[string]Report{"sdp": all.Reports["sdp"]}},
		&Result{Reports: map[string]Report{"table2": all.Reports["table2"]}}, &Result{Reports: map[string]Report{"sdp": later}})
	if len(m.Tables) != 1 || len(m.Reports) != 2 || m.Machine != "table machine" {
		t.Fatalf("merged %+v", m)
	}
	rows := m.Reports["sdp"].(*bench.SDPReport).Rows
	if len(rows) != 2 || rows[0].Objective != -12 || rows[1].Data != "swissroll:2000:1" {
		t.Errorf("merged SDP rows %+v", rows)
	}
}

// TestRunReportSection runs the SDP section alone on its problems of at
// most 150 points (NPKL on iris, both losses): no table, one report whose
// rows psdlearn certified and, with csdp installed, CSDP solved.
func TestRunReportSection(t *testing.T) {
	res, err := Run(context.Background(), Options{Sections: []string{"sdp"}, MaxSize: 150})
	if err != nil {
		t.Fatal(err)
	}
	rep, ok := res.Reports["sdp"].(*bench.SDPReport)
	if len(res.Tables) != 0 || len(res.Reports) != 1 || !ok || len(rep.Rows) != 2 {
		t.Fatalf("result %+v", res)
	}
	_, noCSDP := sdpa.CSDPPath()
	for _, r := range rep.Rows {
		if r.Data != "iris" || !r.Certified || (noCSDP == nil) != (r.RefStatus != "") {
			t.Errorf("row %+v", r)
		}
	}
}

// TestPageLinksTablePlot: a table's plot among the result's plots is
// linked right after that table, relative to the page; other tables' and
// sections' plots are not linked there.
func TestPageLinksTablePlot(t *testing.T) {
	res := sampleResult()
	res.Plots = []string{filepath.Join("docs", "plots", "papers-table1.png"), filepath.Join("docs", "plots", "papers-other.png")}
	var sb strings.Builder
	if err := Page(&sb, res, "cmd"); err != nil {
		t.Fatal(err)
	}
	page := sb.String()
	link := "![papers-table1.png](plots/papers-table1.png)"
	i, j := strings.Index(page, link), strings.Index(page, "## psdlearn against CSDP")
	if i < 0 || i > j || strings.Count(page, link) != 1 || strings.Contains(page, "papers-other.png") {
		t.Errorf("table plot link at %d (CSDP section at %d):\n%s", i, j, page)
	}
	res.Plots = nil
	sb.Reset()
	if err := Page(&sb, res, "cmd"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sb.String(), "papers-table1.png") {
		t.Errorf("a page without plots links one:\n%s", sb.String())
	}
}
