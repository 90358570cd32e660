package papers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/progress"
)

func init() {
	Register(Section{Key: "table1", Title: table1Title, Order: 1, Run: runTable1, Refresh: refreshTable1})
}

const table1Title = "Metric learning: 3-NN test error (%), BoostMetric Table 1 and FrobMetric Table I"

// refreshTable1 brings a table of an earlier run up to date with the
// current title, introduction, figures and notes.
func refreshTable1(t *Table) {
	t.Title, t.Intro = table1Title, table1Intro
	rowKey, colKey := map[string]string{}, map[string]string{}
	for _, r := range table1Rows {
		rowKey[r.Name] = r.Key
	}
	for _, c := range table1Columns {
		colKey[c.Name] = c.Key
	}
	for i := range t.Cells {
		c := &t.Cells[i]
		if c.Status == Skipped || c.Status == Failed {
			continue
		}
		c.Paper = table1Figure(rowKey[c.Row], colKey[c.Column])
		c.Note = ""
		Compare(c, table1Notes[rowKey[c.Row]+"/"+colKey[c.Column]])
	}
}

// column is a data set of Table 1 with its protocol.
type column struct {
	Key, Name string
	// Open returns the data set (all rows, before the split).
	Open func(ctx context.Context) (*data.Dataset, error)
	// Split is a data.ParseSplit spec: seeded fractions or fixed rows.
	Split string
	// Runs is the number of seeded splits (seeds 1…Runs); 1 for a fixed
	// split.
	Runs        int
	PCA         int
	Standardize bool
}

// table1Columns are the columns of Table 1 psdlearn can run: the papers'
// MNIST, letters, bal, wine and iris, each on its raw features (MNIST
// projected onto 164 principal components) with k = 3.
var table1Columns = []column{
	{Key: "mnist", Name: "MNIST", Open: datasets.MNIST, Split: "rows:50000,10000,10000", Runs: 1, PCA: 164},
	{Key: "letters", Name: "letters", Open: builtin("letters"), Split: "rows:10500,4500,5000", Runs: 1},
	{Key: "bal", Name: "bal", Open: builtin("balance"), Split: "0.7,0.15,0.15", Runs: 10},
	{Key: "wine", Name: "wine", Open: builtin("wine"), Split: "0.7,0.15,0.15", Runs: 10},
	{Key: "iris", Name: "iris", Open: builtin("iris"), Split: "0.7,0.15,0.15", Runs: 10},
}

func builtin(name string) func(context.Context) (*data.Dataset, error) {
	return func(context.Context) (*data.Dataset, error) { return datasets.Open(name) }
}

// row is a method of Table 1: a learner with its defaults, or the
// Euclidean metric (New nil).
type row struct {
	Key, Name string
	// New returns the learner with the column's shared settings.
	New func(c psdlearn.Common) psdlearn.Learner
}

// boostRow returns the constructor of BoostMetric with a loss, a mode and
// a number of passes, everything else its default.
func boostRow(loss boost.Loss, mode boost.Mode, passes int) func(psdlearn.Common) psdlearn.Learner {
	return func(c psdlearn.Common) psdlearn.Learner {
		return &psdlearn.BoostMetric{Common: c, Loss: loss, Mode: mode, Passes: passes}
	}
}

// MultiPasses is the number of passes of the multi-pass rows. The paper
// does not say how many it ran; two is the smallest multi-pass run (one
// regeneration of the triplets in the learned metric).
const MultiPasses = 2

// table1Rows are the rows of Table 1, each with the trainer's defaults:
// no C list, iteration count, ν or γ is set per column.
var table1Rows = []row{
	{Key: "euclidean", Name: "Euclidean"},
	{Key: "lmnn", Name: "LMNN", New: func(c psdlearn.Common) psdlearn.Learner { return &psdlearn.LMNN{Common: c} }},
	{Key: "itml", Name: "ITML", New: func(c psdlearn.Common) psdlearn.Learner { return &psdlearn.ITML{Common: c} }},
	{Key: "boost-e", Name: "BoostMetric-E", New: boostRow(boost.Exp, boost.Stagewise, 1)},
	{Key: "boost-e-mp", Name: "BoostMetric-E, MP", New: boostRow(boost.Exp, boost.Stagewise, MultiPasses)},
	{Key: "boost-e-tc", Name: "BoostMetric-E, TC", New: boostRow(boost.Exp, boost.Corrective, 1)},
	{Key: "boost-e-mp-tc", Name: "BoostMetric-E, MP, TC", New: boostRow(boost.Exp, boost.Corrective, MultiPasses)},
	{Key: "boost-l", Name: "BoostMetric-L", New: boostRow(boost.Logistic, boost.Stagewise, 1)},
	{Key: "boost-l-mp", Name: "BoostMetric-L, MP", New: boostRow(boost.Logistic, boost.Stagewise, MultiPasses)},
	{Key: "boost-l-tc", Name: "BoostMetric-L, TC", New: boostRow(boost.Logistic, boost.Corrective, 1)},
	{Key: "boost-l-mp-tc", Name: "BoostMetric-L, MP, TC", New: boostRow(boost.Logistic, boost.Corrective, MultiPasses)},
	{Key: "frobmetric", Name: "FrobMetric", New: func(c psdlearn.Common) psdlearn.Learner { return &psdlearn.FrobMetric{Common: c} }},
}

// runTable1 runs the selected columns and rows of Table 1.
func runTable1(ctx context.Context, opt Options) (*Table, error) {
	t := &Table{Section: "table1", Title: table1Title,
		Intro:   table1Intro,
		Skipped: map[string]string{}}
	var cols []column
	var keys, names []string
	for _, c := range table1Columns {
		keys, names = append(keys, c.Key), append(names, c.Name)
	}
	for _, i := range Choose(opt.Columns, keys, names) {
		cols = append(cols, table1Columns[i])
	}
	var rows []row
	keys, names = nil, nil
	for _, r := range table1Rows {
		keys, names = append(keys, r.Key), append(names, r.Name)
	}
	for _, i := range Choose(opt.Rows, keys, names) {
		rows = append(rows, table1Rows[i])
	}
	if len(cols) == 0 || len(rows) == 0 {
		return nil, fmt.Errorf("no column matches %q or no row matches %q", opt.Columns, opt.Rows)
	}
	for _, r := range rows {
		t.Rows = append(t.Rows, r.Name)
	}
	b := engine.Or(opt.Backend)
	say := progress.Printf(opt.Progress, "papers")
	if say == nil {
		say = func(string, ...any) {}
	}
	for _, col := range cols {
		t.Columns = append(t.Columns, col.Name)
		d, err := col.Open(ctx)
		if err != nil {
			if !errors.Is(err, datasets.ErrUnavailable) {
				return t, err
			}
			t.Skipped[col.Name] = err.Error()
			for _, r := range rows {
				t.Cells = append(t.Cells, Cell{Section: t.Section, Row: r.Name, Column: col.Name, Paper: table1Figure(r.Key, col.Key),
					Status: Skipped, Error: err.Error(), Mean: math.NaN(), SD: math.NaN(), Diff: math.NaN(), Z: math.NaN(), Tolerance: math.NaN()})
			}
			say("papers: table1 %s: skipped: %v", col.Name, err)
			continue
		}
		runs := col.Runs
		if opt.Runs > 0 && runs > 1 {
			runs = opt.Runs
		}
		spec, err := data.ParseSplit(col.Split)
		if err != nil {
			return t, err
		}
		splits := make([][]*data.Dataset, runs)
		for i := range splits {
			if splits[i], err = spec.Apply(d, uint64(i+1)); err != nil {
				return t, fmt.Errorf("%s: %w", col.Name, err)
			}
		}
		for _, r := range rows {
			c := runCell(ctx, b, col, r, splits, say)
			t.Cells = append(t.Cells, c)
			if err := ctx.Err(); err != nil {
				return t, err
			}
		}
	}
	if opt.Runs > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("Quick run: %d seeded split(s) per small column instead of the protocol's 10; the figures are not the protocol's.", opt.Runs))
	}
	return t, nil
}

// runCell runs row r on every split of col.
func runCell(ctx context.Context, b engine.Backend, col column, r row, splits [][]*data.Dataset, say func(string, ...any)) Cell {
	c := Cell{Section: "table1", Row: r.Name, Column: col.Name, Paper: table1Figure(r.Key, col.Key)}
	for i, parts := range splits {
		seed := uint64(i + 1)
		det, err := runOnce(ctx, b, col, r, parts, seed)
		if err != nil {
			c.Status, c.Error = Failed, err.Error()
			c.Mean, c.SD, c.Diff, c.Z, c.Tolerance = math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()
			say("papers: table1 %s %s seed %d: %v", col.Name, r.Name, seed, err)
			return c
		}
		c.TestSize = parts[2].Len()
		c.Values = append(c.Values, 100*det.TestError)
		c.Details = append(c.Details, det)
		c.Seconds += det.Seconds / float64(len(splits))
		c.TrainSeconds += det.TrainSeconds / float64(len(splits))
		say("papers: table1 %s %s seed %d: test %.2f%% (Euclidean %.2f%%), %s", col.Name, r.Name, seed, 100*det.TestError, 100*det.EuclideanTestError, fmtSeconds(det.Seconds))
	}
	Compare(&c, table1Notes[r.Key+"/"+col.Key])
	return c
}

// runOnce runs row r on one split (train, validation, test) of col.
func runOnce(ctx context.Context, b engine.Backend, col column, r row, parts []*data.Dataset, seed uint64) (RunDetail, error) {
	det := RunDetail{Seed: seed, ChosenC: math.NaN(), ValError: math.NaN(), EuclideanValError: math.NaN()}
	if len(parts) != 3 {
		return det, fmt.Errorf("%s: split %q has %d parts, want train, validation and test", col.Name, col.Split, len(parts))
	}
	t0 := time.Now()
	if r.New == nil { // Euclidean: the preprocessing and a k-NN search
		pipe, err := data.FitPipeline(b, parts[0].X, col.Standardize, col.PCA)
		if err != nil {
			return det, err
		}
		var ps [3]*data.Dataset
		for i, p := range parts {
			if ps[i], err = data.ApplyDatasetBLAS(pipe, b.BLAS(), p); err != nil {
				return det, err
			}
		}
		errs, err := eval.FactorKNNErrors(b, nil, ps[0].X, ps[0].Y, 3, eval.Queries{X: ps[2].X, Y: ps[2].Y}, eval.Queries{X: ps[1].X, Y: ps[1].Y})
		if err != nil {
			return det, err
		}
		det.TestError, det.ValError = errs[0], errs[1]
		det.EuclideanTestError, det.EuclideanValError = errs[0], errs[1]
		det.Converged = true
		det.Seconds = time.Since(t0).Seconds()
		return det, nil
	}
	l := r.New(psdlearn.Common{Standardize: col.Standardize, PCA: col.PCA, K: 3, Validation: parts[1], Seed: seed, Backend: b})
	res, err := psdlearn.Run(ctx, l, psdlearn.Data{X: parts[0].X, Y: parts[0].Y, Test: parts[2]})
	if err != nil && !(errors.Is(err, errs.ErrNotConverged) && res != nil && ctx.Err() == nil) {
		return det, err
	}
	det.Seconds = time.Since(t0).Seconds()
	det.TrainSeconds = res.Phases.Train
	det.TestError, det.ValError = res.Eval.TestError, res.Eval.ValError
	det.EuclideanTestError, det.EuclideanValError = res.Eval.EuclideanTestError, res.Eval.EuclideanValError
	det.ChosenC, det.Searched = res.ChosenC, res.Searched
	det.Iterations, det.Converged, det.Reason = res.Iterations, res.Certificate.Converged, res.Certificate.Reason
	det.Warnings = res.Warnings
	return det, nil
}

func fmtSeconds(s float64) string {
	switch {
	case s < 1:
		return fmt.Sprintf("%.0f ms", 1000*s)
	case s < 100:
		return fmt.Sprintf("%.1f s", s)
	}
	return fmt.Sprintf("%.0f s", s)
}
