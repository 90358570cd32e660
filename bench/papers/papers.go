// Package papers runs the experiments of the papers psdlearn implements on
// their own protocols and sets psdlearn's figures next to the published
// ones: `psdlearn bench --suite papers`, whose output is docs/papers.md.
//
// The suite is a list of sections (Register), each one published table or
// comparison, in page order. A table section runs one function in its own
// file and returns a Table of cells. A cell is one figure of the paper (a
// row and a column of its table) and psdlearn's measurement of it under the
// same protocol: the mean and standard deviation over the protocol's runs,
// the difference in standard errors, the wall time next to the paper's, and
// a status: reproduced when the difference is within the tolerance
// (Cell.Tolerance), else explained by an experiment recorded with the
// section (Note), else open. A report section (the SDPs solved by psdlearn
// and by CSDP, SimpleNPKL's Table 2) returns a Report that writes its own
// markdown and whose JSON is the value itself; package bench measures them.
//
// Sections run in subsets: Options.Columns and Options.Rows keep the
// columns and rows whose key or name contains one of the given strings, so
// one cell can be rerun in seconds; a column whose data cannot be had (MNIST
// without its Go module) is skipped with the reason. Earlier runs merge
// (ReadResult, MergeResults) into one page without running anything.
package papers

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/progress"
)

// Status says how a cell compares with the paper.
type Status string

const (
	// Reproduced: psdlearn's mean is within Cell.Tolerance of the paper's.
	Reproduced Status = "reproduced"
	// Explained: it is not, and an experiment recorded with the section
	// (Cell.Note) explains the difference.
	Explained Status = "explained"
	// Open: it is not, and no experiment explains it yet.
	Open Status = "open"
	// NoFigure: the paper gives no figure for the cell.
	NoFigure Status = "no paper figure"
	// Skipped: the cell was not run (its data are unavailable); Cell.Error
	// says why.
	Skipped Status = "skipped"
	// Failed: a run returned an error (Cell.Error).
	Failed Status = "failed"
)

// Figure is a published figure: a test error in percent with the standard
// deviation over the paper's runs (NaN when it reports one run), the
// number of runs, and where it is printed.
type Figure struct {
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
	Runs int     `json:"runs"`
	// Time is the paper's computation time as printed ("280 s", "9.5 h"),
	// or "".
	Time   string `json:"time,omitempty"`
	Source string `json:"source,omitempty"`
}

// Known reports whether the paper gives the figure.
func (f Figure) Known() bool { return !math.IsNaN(f.Mean) }

// Cell is one figure of a section: the paper's and psdlearn's.
type Cell struct {
	Section string `json:"section"`
	Row     string `json:"row"`
	Column  string `json:"column"`
	// Paper is the published figure (Mean NaN: none).
	Paper Figure `json:"paper"`
	// Values are psdlearn's test errors (%) of the runs, Mean and SD
	// their mean and standard deviation (NaN SD for one run).
	Values []float64 `json:"values"`
	Mean   float64   `json:"mean"`
	SD     float64   `json:"sd"`
	// TestSize is the number of test rows of one run.
	TestSize int `json:"test_size"`
	// Tolerance is max(the paper's SD, one standard error of the test set
	// at the paper's figure, √(p(1−p)/TestSize)), in points; Diff is
	// Mean − Paper.Mean and Z the difference in standard errors of the
	// difference (see Compare).
	Tolerance float64 `json:"tolerance"`
	Diff      float64 `json:"diff"`
	Z         float64 `json:"z"`
	// Seconds is the mean wall time of one run (preprocessing, triplets,
	// training and evaluation); TrainSeconds the training part.
	Seconds      float64 `json:"seconds"`
	TrainSeconds float64 `json:"train_seconds"`
	Status       Status  `json:"status"`
	// Note explains a cell that is not reproduced (Status Explained).
	Note string `json:"note,omitempty"`
	// Details are per-run facts: the chosen regularisation values, the
	// iterations, the certificates, the warnings, the validation errors.
	Details []RunDetail `json:"runs,omitempty"`
	Error   string      `json:"error,omitempty"`
}

// RunDetail is what one run of a cell reports besides its test error.
type RunDetail struct {
	Seed               uint64    `json:"seed"`
	TestError          float64   `json:"test_error"`
	ValError           float64   `json:"val_error"`
	EuclideanValError  float64   `json:"euclidean_val_error"`
	EuclideanTestError float64   `json:"euclidean_test_error"`
	ChosenC            float64   `json:"chosen_c"`
	Searched           []float64 `json:"c_searched,omitempty"`
	Iterations         int       `json:"iterations"`
	Converged          bool      `json:"converged"`
	Reason             string    `json:"reason,omitempty"`
	Seconds            float64   `json:"seconds"`
	TrainSeconds       float64   `json:"train_seconds"`
	Warnings           []string  `json:"warnings,omitempty"`
}

// Table is the outcome of a section: its cells in row-major order of Rows
// and Columns (the rows and columns run), and notes shown under it.
type Table struct {
	Section string   `json:"section"`
	Title   string   `json:"title"`
	Intro   string   `json:"intro"`
	Rows    []string `json:"rows"`
	Columns []string `json:"columns"`
	Cells   []Cell   `json:"cells"`
	// Skipped maps a column (or row) not run to the reason.
	Skipped map[string]string `json:"skipped,omitempty"`
	Notes   []string          `json:"notes,omitempty"`
}

// Cell returns the cell of row and column, or nil.
func (t *Table) Cell(row, col string) *Cell {
	for i := range t.Cells {
		if t.Cells[i].Row == row && t.Cells[i].Column == col {
			return &t.Cells[i]
		}
	}
	return nil
}

// Options select and configure a run of the suite.
type Options struct {
	// Sections, Columns and Rows keep the sections, columns and rows whose
	// key or name contains one of the strings, ignoring case (empty: all).
	Sections, Columns, Rows []string
	// Runs, if positive, overrides the number of seeded runs of the
	// columns that have several and of each Table 2 cell (a quick check;
	// the figures are then not the protocol's, and the tables say so).
	Runs int
	// MaxSize, if positive, makes the report sections quick runs: the SDP
	// comparison skips problems of more points, Table 2 runs 3 times on
	// iris and the chessboard without Figure 2.
	MaxSize int
	// PlotDir, if not empty, receives the report sections' figures (the
	// tables' are drawn by Plot).
	PlotDir string
	// Backend runs the numerical kernels (nil: engine.Default()).
	Backend engine.Backend
	// Progress receives a line per finished cell and run.
	Progress progress.Func
}

// Section is one published table or comparison: a table section (Run) or
// a report section (RunReport).
type Section struct {
	Key   string // command-line name and, for a report, its JSON key, e.g. "table1"
	Title string
	// Order places the section on the page and in a run: lower first, then
	// by key.
	Order int
	// Run runs a table section's cells selected by opt.
	Run func(ctx context.Context, opt Options) (*Table, error)
	// Refresh, if non-nil, updates a table of an earlier run (see Merge)
	// with what the section knows now that is not measured: its title,
	// introduction, the papers' figures and the notes explaining cells, with
	// the statuses they imply.
	Refresh func(t *Table)
	// RunReport runs a report section. Options.Columns and Options.Rows do
	// not apply to it.
	RunReport func(ctx context.Context, opt Options) (Report, error)
	// ReadReport decodes a report section's JSON (the value under Key in
	// the suite's JSON output, or the output of the report's own suite) and
	// fails on JSON of another kind.
	ReadReport func(data []byte) (Report, error)
	// MergeReports combines reports of earlier runs, a later one's figures
	// replacing an earlier one's (nil: the last report is kept).
	MergeReports func(reports ...Report) Report
}

// Report is the outcome of a report section: it writes its own markdown
// (headed by a level-2 title), and its JSON encoding is the value itself.
type Report interface {
	Markdown(w io.Writer) error
}

// reservedKeys are the keys of the suite's JSON output that a report
// section's key may not take.
var reservedKeys = []string{"schema", "suite", "machine", "tables", "plots", "warnings", "error"}

var (
	mu       sync.Mutex
	sections []Section
)

// Register adds a section to the suite (from an init function); sections
// run in the order of Section.Order, then of their keys. A duplicate key, a
// section with neither or both of Run and RunReport, a report without
// ReadReport or with a reserved key panics.
func Register(s Section) {
	mu.Lock()
	defer mu.Unlock()
	for _, o := range sections {
		if o.Key == s.Key {
			panic("papers: duplicate section " + s.Key)
		}
	}
	if (s.Run == nil) == (s.RunReport == nil) {
		panic("papers: section " + s.Key + " needs one of Run and RunReport")
	}
	if s.RunReport != nil && (s.ReadReport == nil || slices.Contains(reservedKeys, s.Key)) {
		panic("papers: report section " + s.Key + " needs ReadReport and a key other than " + strings.Join(reservedKeys, ", "))
	}
	sections = append(sections, s)
	slices.SortFunc(sections, func(a, b Section) int {
		if a.Order != b.Order {
			return a.Order - b.Order
		}
		return strings.Compare(a.Key, b.Key)
	})
}

// Sections returns the registered sections in order.
func Sections() []Section {
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(sections)
}

// Run runs the selected sections in order: a table section when
// Options.Sections selects it, a report section when Options.Sections
// selects it and either names sections or no Columns or Rows are given
// (those select cells of the tables). A cancelled context stops it with
// what is finished so far and the error.
func Run(ctx context.Context, opt Options) (*Result, error) {
	res := &Result{Reports: map[string]Report{}}
	found := false
	for _, s := range Sections() {
		if !Selected(opt.Sections, s.Key, s.Title) {
			continue
		}
		if s.RunReport != nil {
			if len(opt.Sections) == 0 && (len(opt.Columns) > 0 || len(opt.Rows) > 0) {
				continue
			}
			found = true
			r, err := s.RunReport(ctx, opt)
			if r != nil {
				res.Reports[s.Key] = r
			}
			if err != nil {
				return res, fmt.Errorf("papers: %s: %w", s.Key, err)
			}
			continue
		}
		found = true
		t, err := s.Run(ctx, opt)
		if t != nil {
			res.Tables = append(res.Tables, t)
		}
		if err != nil {
			return res, fmt.Errorf("papers: %s: %w", s.Key, err)
		}
	}
	if !found {
		var keys []string
		for _, s := range Sections() {
			keys = append(keys, s.Key)
		}
		return nil, fmt.Errorf("papers: no section matches %q (sections: %s)", strings.Join(opt.Sections, ","), strings.Join(keys, ", "))
	}
	return res, nil
}

// Choose returns the indices of the items (each a key and a name) that
// the filters select: a filter equal to an item's key or name (ignoring
// case) selects that item alone, any other filter every item whose key or
// name contains it (see Selected). No filter selects everything.
func Choose(filters []string, keys, names []string) []int {
	var out []int
	var loose []string
	for _, f := range filters {
		f = strings.ToLower(strings.TrimSpace(f))
		exact := false
		for i := range keys {
			if f != "" && (strings.ToLower(keys[i]) == f || strings.ToLower(names[i]) == f) {
				exact = true
				if !slices.Contains(out, i) {
					out = append(out, i)
				}
			}
		}
		if !exact {
			loose = append(loose, f)
		}
	}
	if len(filters) == 0 {
		loose = nil
	}
	for i := range keys {
		if (len(filters) == 0 || len(loose) > 0 && Selected(loose, keys[i], names[i])) && !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return out
}

// Selected reports whether a key or name matches one of the filters
// (substrings, ignoring case); no filter selects everything.
func Selected(filters []string, key, name string) bool {
	if len(filters) == 0 {
		return true
	}
	k, n := strings.ToLower(key), strings.ToLower(name)
	for _, f := range filters {
		f = strings.ToLower(strings.TrimSpace(f))
		if f != "" && (strings.Contains(k, f) || strings.Contains(n, f)) {
			return true
		}
	}
	return false
}

// MeanSD returns the mean and the sample standard deviation of v (NaN
// SD for fewer than two values, NaN mean for none).
func MeanSD(v []float64) (mean, sd float64) {
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) < 2 {
		return mean, math.NaN()
	}
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(v)-1))
}

// Compare fills c's Tolerance, Diff, Z and Status from its values and the
// paper's figure; note, if not empty, explains a difference beyond the
// tolerance (then the status is Explained rather than Open).
//
// The tolerance is max(the paper's SD, √(p(1−p)/n)·100) points, p the
// paper's figure as a fraction and n the test rows of one run: a cell is
// reproduced when psdlearn's mean lies within the spread of the paper's
// runs or within one standard error of a test set of this size. Z divides
// the difference by its standard error √(se₁² + se₂²), each mean's se being
// SD/√runs over several runs and the binomial √(p(1−p)/n) of its test set
// for one run.
func Compare(c *Cell, note string) {
	c.Mean, c.SD = MeanSD(c.Values)
	if !c.Paper.Known() {
		c.Status, c.Diff, c.Z, c.Tolerance = NoFigure, math.NaN(), math.NaN(), math.NaN()
		return
	}
	p := c.Paper.Mean / 100
	testSE := 100 * math.Sqrt(p*(1-p)/float64(max(c.TestSize, 1)))
	c.Tolerance = testSE
	if c.Paper.SD > c.Tolerance {
		c.Tolerance = c.Paper.SD
	}
	c.Diff = c.Mean - c.Paper.Mean
	c.Z = c.Diff / math.Hypot(meanSE(c.Mean, c.SD, len(c.Values), c.TestSize), meanSE(c.Paper.Mean, c.Paper.SD, c.Paper.Runs, c.TestSize))
	switch {
	case math.Abs(c.Diff) <= c.Tolerance:
		c.Status = Reproduced
	case note != "":
		c.Status, c.Note = Explained, note
	default:
		c.Status = Open
	}
}

// meanSE is the standard error of a mean error (%) over runs runs of sd,
// or, for one run (or no SD), the binomial standard error of one test set
// of n rows.
func meanSE(mean, sd float64, runs, n int) float64 {
	if runs > 1 && !math.IsNaN(sd) {
		return sd / math.Sqrt(float64(runs))
	}
	p := mean / 100
	return 100 * math.Sqrt(p*(1-p)/float64(max(n, 1)))
}
