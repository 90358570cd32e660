package papers

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/datasets"
	_ "github.com/psdlearn/psdlearn/engine/backends"
	"github.com/psdlearn/psdlearn/internal/plots"
)

func TestMeanSD(t *testing.T) {
	for _, c := range []struct {
		v        []float64
		mean, sd float64
	}{
		{[]float64{1, 2, 3}, 2, 1},
		{[]float64{4}, 4, math.NaN()},
		{nil, math.NaN(), math.NaN()},
	} {
		m, s := MeanSD(c.v)
		same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
		if !same(m, c.mean) || !same(s, c.sd) {
			t.Errorf("MeanSD(%v) = %v, %v; want %v, %v", c.v, m, s, c.mean, c.sd)
		}
	}
}

func TestCompare(t *testing.T) {
	for _, c := range []struct {
		name   string
		paper  Figure
		values []float64
		n      int
		note   string
		want   Status
		tol    float64
	}{
		// The paper's sd is the tolerance when larger than the test SE.
		{"within the paper's sd", fig(3.85, 4.44, 10, "", ""), []float64{0, 11.1, 0, 7.4, 3.7, 3.7, 7.4, 3.7, 7.4, 0}, 27, "", Reproduced, 4.44},
		// One run on 10,000 test rows: one standard error is 0.158 points at 2.56%.
		{"one run within one SE", fig(2.56, nan, 1, "", ""), []float64{2.45}, 10000, "", Reproduced, 100 * math.Sqrt(0.0256*0.9744/10000)},
		{"one run beyond", fig(2.56, nan, 1, "", ""), []float64{2.04}, 10000, "", Open, 100 * math.Sqrt(0.0256*0.9744/10000)},
		{"explained", fig(2.56, nan, 1, "", ""), []float64{2.04}, 10000, "a run shows why", Explained, 100 * math.Sqrt(0.0256*0.9744/10000)},
		{"no figure", Figure{Mean: nan, SD: nan}, []float64{1}, 10, "", NoFigure, nan},
	} {
		cell := Cell{Paper: c.paper, Values: c.values, TestSize: c.n}
		Compare(&cell, c.note)
		if cell.Status != c.want || !(math.Abs(cell.Tolerance-c.tol) < 1e-12 || math.IsNaN(c.tol) && math.IsNaN(cell.Tolerance)) {
			t.Errorf("%s: status %s, tolerance %v; want %s, %v", c.name, cell.Status, cell.Tolerance, c.want, c.tol)
		}
		if c.want == Explained && cell.Note != c.note || c.want != Explained && cell.Note != "" {
			t.Errorf("%s: note %q", c.name, cell.Note)
		}
	}
	// The difference in standard errors: 10 runs each, psdlearn's mean 12
	// (sd about 3.2), the paper's 10 (sd 4).
	cell := Cell{Paper: fig(10, 4, 10, "", ""), Values: []float64{9, 15, 9, 15, 9, 15, 9, 15, 9, 15}, TestSize: 100}
	Compare(&cell, "")
	sd := cell.SD
	if want := (12 - 10) / math.Hypot(sd/math.Sqrt(10), 4/math.Sqrt(10)); math.Abs(cell.Z-want) > 1e-12*want || !(cell.Z > 0) {
		t.Errorf("Z = %v, want %v", cell.Z, want)
	}
}

func TestSelected(t *testing.T) {
	for _, c := range []struct {
		filters   []string
		key, name string
		want      bool
	}{
		{nil, "wine", "wine", true},
		{[]string{"WINE"}, "wine", "wine", true},
		{[]string{"mnist", "iris"}, "wine", "wine", false},
		{[]string{"boost-e"}, "boost-e-mp", "BoostMetric-E, MP", true},
		{[]string{"frob"}, "frobmetric", "FrobMetric", true},
		{[]string{" "}, "wine", "wine", false},
	} {
		if got := Selected(c.filters, c.key, c.name); got != c.want {
			t.Errorf("Selected(%q, %q) = %v", c.filters, c.key, got)
		}
	}
}

// TestTable1Figures checks the transcription of the published figures:
// every row and column has one, ten-run columns have a standard deviation
// and one-run columns none, and a few cells against the papers.
func TestTable1Figures(t *testing.T) {
	for _, r := range table1Rows {
		for _, c := range table1Columns {
			f := table1Figure(r.Key, c.Key)
			if !f.Known() || f.Runs != c.Runs || (c.Runs > 1) == math.IsNaN(f.SD) || f.Source == "" {
				t.Errorf("%s/%s: %+v", r.Key, c.Key, f)
			}
		}
	}
	for _, c := range []struct {
		row, col string
		mean     float64
	}{
		{"frobmetric", "wine", 3.85}, {"frobmetric", "mnist", 2.56}, {"lmnn", "bal", 12.04},
		{"boost-l-tc", "mnist", 2.10}, {"euclidean", "wine", 28.08}, {"itml", "letters", 7.20},
	} {
		if f := table1Figure(c.row, c.col); f.Mean != c.mean {
			t.Errorf("%s/%s = %v, want %v", c.row, c.col, f.Mean, c.mean)
		}
	}
	if f := table1Figure("nope", "wine"); f.Known() {
		t.Errorf("unknown row has a figure %+v", f)
	}
}

// TestRunSubset runs two cells of Table 1 on one split each, renders them
// and draws the chart, and checks that an unavailable MNIST skips its
// column with the reason.
func TestRunSubset(t *testing.T) {
	t.Setenv(datasets.MNISTDirEnv, t.TempDir()) // no files: MNIST unavailable
	res, err := Run(context.Background(), Options{Columns: []string{"iris", "mnist"}, Rows: []string{"euclidean", "frobmetric"}, Runs: 1})
	if err != nil {
		t.Fatal(err)
	}
	tables := res.Tables
	if len(tables) != 1 || len(tables[0].Cells) != 4 || len(res.Reports) != 0 {
		t.Fatalf("%d tables, cells %+v, reports %v (--column without --section runs no report)", len(tables), tables, res.Reports)
	}
	tab := tables[0]
	for _, c := range tab.Cells {
		switch c.Column {
		case "MNIST":
			if c.Status != Skipped || !strings.Contains(c.Error, "train-images") {
				t.Errorf("MNIST cell %s: %s (%s)", c.Row, c.Status, c.Error)
			}
		case "iris":
			if len(c.Values) != 1 || c.TestSize != 22 || math.IsNaN(c.Mean) || c.Status == Failed || len(c.Details) != 1 {
				t.Errorf("iris cell %s: %+v", c.Row, c)
			}
			if d := c.Details[0]; c.Row == "Euclidean" && d.TestError != d.EuclideanTestError {
				t.Errorf("Euclidean cell: test error %v, Euclidean %v", d.TestError, d.EuclideanTestError)
			}
		}
	}
	var sb strings.Builder
	res.Machine = "test machine"
	if err := Page(&sb, res, "psdlearn bench --suite papers"); err != nil {
		t.Fatal(err)
	}
	page := sb.String()
	for _, want := range []string{"do not edit it by hand", "| FrobMetric |", "3.64 (3.59) →", "### Skipped", "MNIST: datasets: mnist"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
	dir := t.TempDir()
	files, err := Plot(dir, tables)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || filepath.Base(files[0]) != "papers-table1.png" {
		t.Fatalf("plots %v", files)
	}
	if err := plots.CheckPNG(files[0], plots.AgreementWidth, plots.AgreementHeight); err != nil {
		t.Error(err)
	}
	if _, err := Run(context.Background(), Options{Sections: []string{"nope"}}); err == nil {
		t.Error("unknown section: no error")
	}
	if _, err := Run(context.Background(), Options{Columns: []string{"nope"}}); err == nil {
		t.Error("unknown column: no error")
	}
}

// TestMergeAndRead: tables written as the command writes them (NaN as
// null) read back with NaN restored, and merged with a later run whose
// cell replaces the earlier one's.
func TestMergeAndRead(t *testing.T) {
	first := &Table{Section: "table1", Rows: []string{"Euclidean", "FrobMetric"}, Columns: []string{"wine"}, Skipped: map[string]string{"MNIST": "unavailable"},
		Cells: []Cell{
			{Row: "Euclidean", Column: "wine", Paper: table1Figure("euclidean", "wine"), Values: []float64{25}, TestSize: 27, Details: []RunDetail{{Seed: 1, ChosenC: math.NaN()}}},
			{Row: "FrobMetric", Column: "wine", Paper: table1Figure("frobmetric", "wine"), Values: []float64{30}, TestSize: 27},
		}}
	for i := range first.Cells {
		Compare(&first.Cells[i], "")
	}
	later := &Table{Section: "table1", Rows: []string{"FrobMetric"}, Columns: []string{"wine", "MNIST"},
		Cells: []Cell{
			{Row: "FrobMetric", Column: "wine", Paper: table1Figure("frobmetric", "wine"), Values: []float64{4}, TestSize: 27},
			{Row: "FrobMetric", Column: "MNIST", Paper: table1Figure("frobmetric", "mnist"), Values: []float64{2.04}, TestSize: 10000},
		}}
	for i := range later.Cells {
		Compare(&later.Cells[i], "")
	}
	// Through JSON with NaN written as null by the types' own encoders.
	enc := func(t *Table) string {
		b, err := json.Marshal(map[string]any{"tables": []*Table{t}})
		if err != nil {
			panic(err)
		}
		return string(b)
	}
	a, err := ReadTables(strings.NewReader(enc(first)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadTables(strings.NewReader(enc(later)))
	if err != nil {
		t.Fatal(err)
	}
	if c := a[0].Cell("Euclidean", "wine"); !math.IsNaN(c.SD) || !math.IsNaN(c.Details[0].ChosenC) || c.Paper.SD != 7.49 {
		t.Errorf("decoded cell %+v", c)
	}
	m := Merge(a, b)
	if len(m) != 1 || len(m[0].Cells) != 3 || len(m[0].Columns) != 2 || len(m[0].Skipped) != 0 {
		t.Fatalf("merged %+v", m)
	}
	if c := m[0].Cell("FrobMetric", "wine"); c.Mean != 4 || c.Status != Reproduced {
		t.Errorf("merged FrobMetric/wine %+v", c)
	}
	if m[0].Title != table1Title {
		t.Errorf("title not refreshed: %q", m[0].Title)
	}
}
