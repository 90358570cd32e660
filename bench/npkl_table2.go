package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/internal/plots"
	"github.com/psdlearn/psdlearn/progress"
	"gonum.org/v1/gonum/mat"
)

// MeanSD is a mean and a sample standard deviation, in percent.
type MeanSD struct {
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
}

// String formats m as "mean ± sd" with one decimal, or "—" for NaN.
func (m MeanSD) String() string {
	if math.IsNaN(m.Mean) {
		return "—"
	}
	return fmt.Sprintf("%.1f ± %.1f", m.Mean, m.SD)
}

// within reports whether m lies within the spread of the paper's p: the
// difference of the means at most the sum of the two standard deviations,
// or one point (the paper prints one decimal of a mean over 20 runs).
func (m MeanSD) within(p MeanSD) bool {
	return math.Abs(m.Mean-p.Mean) <= math.Max(m.SD+p.SD, 1)
}

// Table2Paper is one row of the SimpleNPKL paper's Table 2 as it can be
// read: accuracies in percent (k-means, NPKL with the linear and the hinge
// loss solved by an SDP solver, SimpleNPKL with the linear and the squared
// hinge loss) and, where printed, CPU seconds.
type Table2Paper struct {
	KMeans     MeanSD `json:"kmeans"`
	NPKLLinear MeanSD `json:"npkl_linear"`
	NPKLHinge  MeanSD `json:"npkl_hinge"`
	Linear     MeanSD `json:"simplenpkl_linear"`
	SqHinge    MeanSD `json:"simplenpkl_sqhinge"`
	// Seconds are NPKL LL, NPKL HL, SimpleNPKL LL and SHL (nil when the
	// extracted table does not give them).
	Seconds []float64 `json:"seconds,omitempty"`
	// Reading says how the row was read.
	Reading string `json:"reading"`
}

// table2Paper holds the rows of Table 2 that can be read from the paper's
// text. Its extraction scrambles the table: the iris row is intact; the
// other cells come out column by column (16 NPKL values, 16 SimpleNPKL
// values, 8 k-means values) and the row names in another order. Read as
// columns in one row order, the cells keep every bold (best-in-row) mark
// consistent, and two of the k-means cells equal our own raw-data k-means
// baselines (sonar 50.2 ± 0.2, wine 71.2 ± 1.3; glass 66.5 ± 2.4 is closest
// to the third), which names the rows of sonar (1st), glass (3rd) and wine
// (7th). The chessboard and double-spiral rows are among the 2nd, 4th and
// 8th (the two-class rows left, with heart) and cannot be told apart.
var table2Paper = map[string]Table2Paper{
	"iris": {KMeans: MeanSD{84.5, 6.5}, NPKLLinear: MeanSD{96.0, 6.1}, NPKLHinge: MeanSD{97.4, 0.0}, Linear: MeanSD{97.4, 0.0}, SqHinge: MeanSD{97.4, 0.0},
		Seconds: []float64{3.39, 29.73, 0.07, 3.35}, Reading: "intact in the extracted text"},
	"sonar": {KMeans: MeanSD{50.2, 0.1}, NPKLLinear: MeanSD{70.2, 10}, NPKLHinge: MeanSD{78.0, 0.0}, Linear: MeanSD{76.8, 0.3}, SqHinge: MeanSD{64.5, 6.8},
		Reading: "1st of the scrambled rows (k-means cell equals ours)"},
	"glass": {KMeans: MeanSD{69.7, 1.9}, NPKLLinear: MeanSD{74.3, 2.4}, NPKLHinge: MeanSD{73.5, 2.9}, Linear: MeanSD{74.4, 3.7}, SqHinge: MeanSD{79.1, 4.9},
		Reading: "3rd of the scrambled rows (the multi-class k-means cell closest to ours)"},
	"wine": {KMeans: MeanSD{71.2, 1.2}, NPKLLinear: MeanSD{83.7, 4.8}, NPKLHinge: MeanSD{85.0, 2.6}, Linear: MeanSD{78.1, 1.7}, SqHinge: MeanSD{85.5, 5.3},
		Reading: "7th of the scrambled rows (k-means cell equals ours)"},
}

// table2Candidates are the rows among which the chessboard and the double
// spiral lie (2nd, 4th, 8th), as SimpleNPKL LL / SHL pairs.
const table2Candidates = "2nd row: SimpleNPKL 61.1 ± 6.9 / 56.3 ± 6.1 (k-means 49.8); 4th: 86.0 ± 0.3 / 86.2 ± 0.0 (k-means 51.5); 8th: 86.5 ± 0.0 / 94.1 ± 0.0 (k-means 50.1)"

// Table2C is the grid of C values run: the paper fixes "several constant
// values in (0, 1]" without saying which per set.
var Table2C = []float64{0.1, 0.2, 0.5, 1}

// Table2Cell is SimpleNPKL on one data set with one loss and one C over
// the protocol's runs.
type Table2Cell struct {
	C        float64 `json:"C"`
	Accuracy MeanSD  `json:"accuracy"`
	// LearnSeconds is the mean learning time per run; Bracket the largest
	// relative width (primal − lower bound)/|primal| of the squared-hinge
	// certificate over the runs (0 for the linear loss's closed form);
	// Covered whether every run covered the positive spectrum.
	LearnSeconds float64 `json:"learn_seconds"`
	Bracket      float64 `json:"bracket"`
	Covered      bool    `json:"covered"`
	// Error is set when the protocol could not run with this C (for
	// example no positive spectrum: K = 0).
	Error string `json:"error,omitempty"`
}

// Table2Row is one data set: the paper's row where readable, the k-means
// baseline, and SimpleNPKL per loss and C on the raw features and, as the
// experiment that explains a row outside the paper's spread, with the
// features standardised before the graph is built.
type Table2Row struct {
	Data    string                  `json:"data"`
	N       int                     `json:"n"`
	Dim     int                     `json:"dim"`
	Classes int                     `json:"classes"`
	Paper   *Table2Paper            `json:"paper,omitempty"`
	KMeans  MeanSD                  `json:"kmeans"`
	Raw     map[string][]Table2Cell `json:"raw"`
	Std     map[string][]Table2Cell `json:"standardized"`
	// Verdict per loss: whether some C reproduces the paper's value on the
	// raw features ("reproduced"), or not ("outside"); empty without a
	// readable paper row.
	Verdict map[string]string `json:"verdict,omitempty"`
}

// Table2Options configures NPKLTable2.
type Table2Options struct {
	Backend engine.Backend
	Seed    uint64
	// Runs is the number of repetitions (default 20, the paper's).
	Runs int
	// Data restricts the data sets (default: all of Table2Data).
	Data []string
	// Figure2 also runs the comparison of active and random constraint
	// selection; PlotDir receives its charts.
	Figure2 bool
	PlotDir string
	// Progress, if non-nil, receives an event per data set.
	Progress progress.Func
}

// Table2Data are the data sets of the reproduction: the paper's Table 2
// sets that psdlearn bundles or generates (heart, protein and soybean are
// not bundled).
var Table2Data = []string{"iris", "wine", "glass", "sonar", "chessboard", "doublespiral"}

// Table2Report is the reproduction of Table 2 and Figure 2.
type Table2Report struct {
	Protocol string      `json:"protocol"`
	Rows     []Table2Row `json:"rows"`
	Figure2  *Figure2    `json:"figure2,omitempty"`
	Plots    []string    `json:"plots,omitempty"`
	Machine  string      `json:"machine"`
}

// table2Dataset opens a Table 2 data set: the bundled ones, or 100 points
// of the generated chessboard and double spiral.
func table2Dataset(name string, seed uint64) (*data.Dataset, error) {
	switch name {
	case "chessboard":
		x, y := datasets.Chessboard(100, seed)
		return &data.Dataset{Name: name, X: x, Y: y, Classes: []string{"0", "1"}}, nil
	case "doublespiral":
		x, y := datasets.DoubleSpiral(100, seed)
		return &data.Dataset{Name: name, X: x, Y: y, Classes: []string{"0", "1"}}, nil
	}
	return datasets.Open(name)
}

// NPKLTable2 reproduces the SimpleNPKL paper's Table 2 on its protocol
// (k = 5, r = 0.7, B = 1, C in (0, 1], 20 runs, pairwise clustering
// accuracy of kernel k-means against k-means on the data), and with
// Options.Figure2 its Figure 2.
func NPKLTable2(ctx context.Context, opt Table2Options) (*Table2Report, error) {
	b := engine.Or(opt.Backend)
	runs := opt.Runs
	if runs == 0 {
		runs = 20
	}
	names := opt.Data
	if len(names) == 0 {
		names = Table2Data
	}
	rep := &Table2Report{Machine: Machine(), Protocol: fmt.Sprintf("k = 5 (0/1 union kNN graph), r = 0.7, B = 1, C ∈ %v, %d runs, kernel k-means with 10 restarts; k-means on the data with 1 restart per run", Table2C, runs)}
	for _, name := range names {
		d, err := table2Dataset(name, opt.Seed)
		if err != nil {
			return rep, err
		}
		row := Table2Row{Data: name, N: d.Len(), Dim: d.Dim(), Classes: len(d.Classes), Raw: map[string][]Table2Cell{}, Std: map[string][]Table2Cell{}}
		if p, ok := table2Paper[name]; ok {
			row.Paper = &p
		}
		m, sd, err := psdlearn.KMeansBaseline(ctx, d.X, d.Y, 0, runs, 1, opt.Seed)
		if err != nil {
			return rep, err
		}
		row.KMeans = MeanSD{100 * m, 100 * sd}
		std, err := standardized(b, d.X)
		if err != nil {
			return rep, err
		}
		for _, loss := range []npkl.Loss{npkl.Linear, npkl.SquaredHinge} {
			for _, c := range Table2C {
				for _, v := range []struct {
					x   *mat.Dense
					dst map[string][]Table2Cell
				}{{d.X, row.Raw}, {std, row.Std}} {
					cell, err := table2Cell(ctx, b, v.x, d.Y, loss, c, runs, opt.Seed)
					if err != nil {
						return rep, err
					}
					v.dst[loss.String()] = append(v.dst[loss.String()], cell)
				}
			}
		}
		if row.Paper != nil {
			row.Verdict = map[string]string{}
			for loss, want := range map[string]MeanSD{"linear": row.Paper.Linear, "sqhinge": row.Paper.SqHinge} {
				row.Verdict[loss] = "outside"
				for _, cell := range row.Raw[loss] {
					if cell.Error == "" && cell.Accuracy.within(want) {
						row.Verdict[loss] = "reproduced"
					}
				}
			}
		}
		rep.Rows = append(rep.Rows, row)
		if opt.Progress != nil {
			opt.Progress(progress.Event{Algorithm: "bench table2", Objective: math.NaN(), Gap: math.NaN(), Message: fmt.Sprintf("table 2: %s done", name)})
		}
	}
	if opt.Figure2 {
		f, err := npklFigure2(ctx, b, opt.Seed, runs)
		if err != nil {
			return rep, err
		}
		rep.Figure2 = f
		if opt.PlotDir != "" {
			files, err := f.plot(opt.PlotDir)
			if err != nil {
				return rep, err
			}
			rep.Plots = append(rep.Plots, files...)
		}
	}
	return rep, nil
}

// table2Cell runs the protocol for one loss and C.
func table2Cell(ctx context.Context, b engine.Backend, x *mat.Dense, y []int, loss npkl.Loss, c float64, runs int, seed uint64) (Table2Cell, error) {
	cell := Table2Cell{C: c}
	res, err := psdlearn.Cluster(ctx, x, y, psdlearn.ClusterOptions{Runs: runs, CGrid: []float64{c}, Seed: seed,
		Learn: npkl.Options{Loss: loss, B: 1, Backend: b}})
	if err != nil {
		if ctx.Err() != nil {
			return cell, err
		}
		cell.Error = err.Error()
		cell.Accuracy = MeanSD{math.NaN(), math.NaN()}
		return cell, nil
	}
	cell.Accuracy = MeanSD{100 * res.AccuracyMean, 100 * res.AccuracySD}
	cell.LearnSeconds = res.LearnSecondsMean
	cell.Covered = res.AllCovered
	for _, r := range res.Runs {
		if loss != npkl.SquaredHinge || len(r.Primals) == 0 {
			continue
		}
		lower := math.Inf(-1)
		for _, o := range r.Objectives {
			lower = math.Max(lower, o)
		}
		p := r.Primals[len(r.Primals)-1]
		cell.Bracket = math.Max(cell.Bracket, (p-lower)/math.Max(1e-300, math.Abs(p)))
	}
	return cell, nil
}

// Markdown writes the reproduction as markdown.
func (r *Table2Report) Markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## SimpleNPKL, Table 2\n\nProtocol: %s. Accuracies are pairwise clustering accuracies in percent, mean ± sd over the runs; the paper's cells as read (see each row). Machine: %s.\n\n", r.Protocol, r.Machine)
	cs := make([]string, len(Table2C))
	for i, c := range Table2C {
		cs[i] = fmt.Sprintf("C = %g", c)
	}
	fmt.Fprintf(&b, "| data | loss | paper SimpleNPKL | paper NPKL | paper k-means | k-means | %s | standardised, best C | verdict | certificate |\n", strings.Join(cs, " | "))
	fmt.Fprintf(&b, "|---|---|---:|---:|---:|---:|%s---:|---|---|\n", strings.Repeat("---:|", len(Table2C)))
	for _, row := range r.Rows {
		for _, loss := range []string{"linear", "sqhinge"} {
			pS, pN, pK := "—", "—", "—"
			if row.Paper != nil {
				pK = row.Paper.KMeans.String()
				if loss == "linear" {
					pS, pN = row.Paper.Linear.String(), row.Paper.NPKLLinear.String()+" (LL)"
				} else {
					pS, pN = row.Paper.SqHinge.String(), row.Paper.NPKLHinge.String()+" (HL)"
				}
			}
			var cells []string
			cert := 0.0
			allCovered := true
			for _, c := range row.Raw[loss] {
				if c.Error != "" {
					cells = append(cells, "no kernel")
					continue
				}
				cells = append(cells, c.Accuracy.String())
				cert = math.Max(cert, c.Bracket)
				allCovered = allCovered && c.Covered
			}
			bestStd, bestC := MeanSD{math.NaN(), 0}, 0.0
			for _, c := range row.Std[loss] {
				if c.Error == "" && (math.IsNaN(bestStd.Mean) || c.Accuracy.Mean > bestStd.Mean) {
					bestStd, bestC = c.Accuracy, c.C
				}
			}
			std := "—"
			if !math.IsNaN(bestStd.Mean) {
				std = fmt.Sprintf("%s (C = %g)", bestStd, bestC)
			}
			certText := "closed form"
			if loss == "sqhinge" {
				certText = fmt.Sprintf("bracket ≤ %.2g", cert)
			}
			if !allCovered {
				certText += ", spectrum not covered"
			}
			fmt.Fprintf(&b, "| %s (n = %d) | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", row.Data, row.N, loss, pS, pN, pK, row.KMeans,
				strings.Join(cells, " | "), std, row.Verdict[loss], certText)
		}
	}
	b.WriteString("\nHow the paper's rows were read: ")
	var notes []string
	for _, row := range r.Rows {
		if row.Paper != nil {
			notes = append(notes, fmt.Sprintf("%s — %s", row.Data, row.Paper.Reading))
		}
	}
	b.WriteString(strings.Join(notes, "; "))
	fmt.Fprintf(&b, ". The chessboard and the double spiral are two of the 2nd, 4th and 8th scrambled rows, with heart: %s. The paper gives CPU times for iris only: NPKL 3.39 s (LL) and 29.73 s (HL), SimpleNPKL 0.07 s (LL) and 3.35 s (SHL).\n", table2Candidates)
	b.WriteString("\nThe certificate column: the linear loss is a closed form (exact when the positive spectrum is covered); for the squared hinge, bracket is the largest relative gap over the runs between the kernel's objective and the best lower bound J(K_t, α_{t−1}) of its iterations, so SimpleNPKL's kernels are optimal to that accuracy and a row outside the paper's spread is not a solver's failure.\n")
	if r.Figure2 != nil {
		r.Figure2.markdown(&b)
	}
	for _, p := range r.Plots {
		fmt.Fprintf(&b, "\n![%s](%s)\n", filepath.Base(p), plotLink(p))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Figure2 compares active and random constraint selection (the paper's
// Figure 2, on a1a with B = N, C = 1, k = 20, r = 0.6; a1a is not bundled,
// so diabetes, standardised, two classes like a1a, stands in).
type Figure2 struct {
	Data      string         `json:"data"`
	Protocol  string         `json:"protocol"`
	Fractions []float64      `json:"fractions"`
	All       Figure2Point   `json:"all"`
	Active    []Figure2Point `json:"active"`
	Random    []Figure2Point `json:"random"`
	KMeans    MeanSD         `json:"kmeans"`
}

// Figure2Point is one selection at one fraction.
type Figure2Point struct {
	Constraints float64 `json:"constraints"`
	Accuracy    MeanSD  `json:"accuracy"`
	Seconds     float64 `json:"seconds"`
}

// figure2Fractions are the shares of the constraints kept.
var figure2Fractions = []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8}

func npklFigure2(ctx context.Context, b engine.Backend, seed uint64, runs int) (*Figure2, error) {
	d, err := datasets.Open("diabetes")
	if err != nil {
		return nil, err
	}
	x, err := standardized(b, d.X)
	if err != nil {
		return nil, err
	}
	n := d.Len()
	f := &Figure2{Data: "diabetes (standardised)", Fractions: figure2Fractions,
		Protocol: fmt.Sprintf("B = N = %d, C = 1, k = 20, r = 0.6, linear loss, %d runs; time includes the selection", n, runs)}
	base := psdlearn.ClusterOptions{Neighbors: 20, Ratio: 0.6, Runs: runs, Seed: seed, CGrid: []float64{1},
		Learn: npkl.Options{Loss: npkl.Linear, B: float64(n), Backend: b}}
	point := func(o psdlearn.ClusterOptions) (Figure2Point, error) {
		res, err := psdlearn.Cluster(ctx, x, d.Y, o)
		if err != nil {
			return Figure2Point{}, err
		}
		return Figure2Point{Constraints: res.UsedMean, Accuracy: MeanSD{100 * res.AccuracyMean, 100 * res.AccuracySD}, Seconds: res.LearnSecondsMean}, nil
	}
	if f.All, err = point(base); err != nil {
		return nil, err
	}
	for _, fr := range figure2Fractions {
		for _, s := range []npkl.Selection{npkl.ActiveSelection, npkl.RandomSelection} {
			o := base
			o.Selection, o.Fraction = s, fr
			p, err := point(o)
			if err != nil {
				return nil, err
			}
			if s == npkl.ActiveSelection {
				f.Active = append(f.Active, p)
			} else {
				f.Random = append(f.Random, p)
			}
		}
	}
	m, sd, err := psdlearn.KMeansBaseline(ctx, x, d.Y, 0, runs, 1, seed)
	if err != nil {
		return nil, err
	}
	f.KMeans = MeanSD{100 * m, 100 * sd}
	return f, nil
}

func (f *Figure2) series(pick func(Figure2Point) float64) (xa, ya, xr, yr []float64) {
	for _, p := range f.Active {
		xa, ya = append(xa, p.Constraints), append(ya, pick(p))
	}
	for _, p := range f.Random {
		xr, yr = append(xr, p.Constraints), append(yr, pick(p))
	}
	return
}

func (f *Figure2) plot(dir string) ([]string, error) {
	var files []string
	for _, panel := range []struct {
		file, ylabel string
		pick         func(Figure2Point) float64
		levels       []plots.Level
	}{
		{"simplenpkl-fig2-accuracy.png", "pairwise accuracy (%)", func(p Figure2Point) float64 { return p.Accuracy.Mean },
			[]plots.Level{{Name: fmt.Sprintf("all %.0f constraints", f.All.Constraints), Y: f.All.Accuracy.Mean}, {Name: "k-means", Y: f.KMeans.Mean}}},
		{"simplenpkl-fig2-time.png", "learning time per run (s)", func(p Figure2Point) float64 { return p.Seconds },
			[]plots.Level{{Name: fmt.Sprintf("all %.0f constraints", f.All.Constraints), Y: f.All.Seconds}}},
	} {
		xa, ya, xr, yr := f.series(panel.pick)
		path := filepath.Join(dir, panel.file)
		err := plots.Lines(path, plots.LineChart{
			Title:  fmt.Sprintf("SimpleNPKL: active against random constraint selection, %s", f.Data),
			XLabel: "constraints learned from", YLabel: panel.ylabel,
			Series: []plots.LineSeries{{Name: "active (margin criterion)", X: xa, Values: ya}, {Name: "random", X: xr, Values: yr, Dashed: true}},
			Levels: panel.levels,
		})
		if err != nil {
			return files, err
		}
		files = append(files, path)
	}
	return files, nil
}

func (f *Figure2) markdown(b *strings.Builder) {
	fmt.Fprintf(b, "\n## SimpleNPKL, Figure 2: active against random constraint selection\n\nData: %s; %s. k-means: %s. All %.0f constraints: %s in %.3g s.\n\n", f.Data, f.Protocol, f.KMeans, f.All.Constraints, f.All.Accuracy, f.All.Seconds)
	fmt.Fprintf(b, "| share kept | constraints | active accuracy | active s | random accuracy | random s |\n|---:|---:|---:|---:|---:|---:|\n")
	for i, fr := range f.Fractions {
		a, r := f.Active[i], f.Random[i]
		fmt.Fprintf(b, "| %.0f%% | %.0f | %s | %.3g | %s | %.3g |\n", 100*fr, a.Constraints, a.Accuracy, a.Seconds, r.Accuracy, r.Seconds)
	}
}
