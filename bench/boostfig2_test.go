package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine"
)

// TestBoostFig2Data checks the protocol's data at several dimensions: the
// split sizes and class balance, exactly BoostFig2Triplets distinct
// triplets, each a 3-NN triplet of the training points (a target of the
// anchor's class, an impostor of another), and the seed fixing the draw.
func TestBoostFig2Data(t *testing.T) {
	b := engine.Default()
	for _, dim := range []int{2, 50, 300} {
		xTr, yTr, xTe, yTe, ts, err := BoostFig2Data(b, dim, 1)
		if err != nil {
			t.Fatalf("D = %d: %v", dim, err)
		}
		if n, d := xTr.Dims(); n != BoostFig2Train || d != dim || len(yTr) != n {
			t.Fatalf("D = %d: training set %d×%d, %d labels", dim, n, d, len(yTr))
		}
		if n, d := xTe.Dims(); n != BoostFig2Test || d != dim || len(yTe) != n {
			t.Fatalf("D = %d: test set %d×%d, %d labels", dim, n, d, len(yTe))
		}
		for _, ys := range [][]int{yTr, yTe} {
			counts := map[int]int{}
			for _, c := range ys {
				counts[c]++
			}
			for c := 0; c < 4; c++ {
				if counts[c] != len(ys)/4 {
					t.Errorf("D = %d: class %d has %d of %d points", dim, c, counts[c], len(ys))
				}
			}
		}
		all, err := constraints.Triplets(xTr, yTr, boostFig2K)
		if err != nil {
			t.Fatal(err)
		}
		knn := map[constraints.Triplet]bool{}
		for _, tr := range all.Triplets {
			knn[tr] = true
		}
		if ts.Len() != BoostFig2Triplets || ts.N != BoostFig2Train {
			t.Fatalf("D = %d: %d triplets on %d points", dim, ts.Len(), ts.N)
		}
		seen := map[constraints.Triplet]bool{}
		for _, tr := range ts.Triplets {
			if seen[tr] || !knn[tr] || yTr[tr.I] != yTr[tr.J] || yTr[tr.I] == yTr[tr.K] {
				t.Fatalf("D = %d: triplet %v (labels %d, %d, %d) repeated or not a 3-NN triplet", dim, tr, yTr[tr.I], yTr[tr.J], yTr[tr.K])
			}
			seen[tr] = true
		}
		_, _, _, _, again, err := BoostFig2Data(b, dim, 1)
		if err != nil {
			t.Fatal(err)
		}
		for r := range again.Triplets {
			if again.Triplets[r] != ts.Triplets[r] {
				t.Fatalf("D = %d: the seed does not fix the draw", dim)
			}
		}
	}
}

// TestBoostFigure1 reproduces the paper's Figure 1 on the generated
// circles: with 9,000 triplets in 10 dimensions BoostMetric's metric lives
// on the two circle coordinates (the paper's eigenvalues are 0.542, 0.414,
// 0.007, …) and its 3-NN error is a small fraction of the Euclidean one,
// which the noise dimensions dominate.
func TestBoostFigure1(t *testing.T) {
	f, err := BoostFigure1(context.Background(), nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("eigenvalues %v, circles %.3f, test error %.4f against Euclidean %.4f, %d terms (%s)", f.Eigenvalues, f.Circles, f.TestError, f.Euclidean, f.Iterations, f.Stop)
	if f.Triplets != 9000 || len(f.Eigenvalues) != 3 {
		t.Fatalf("%d triplets, %d eigenvalues", f.Triplets, len(f.Eigenvalues))
	}
	if f.Eigenvalues[0]+f.Eigenvalues[1] < 0.95 || f.Eigenvalues[2] > 0.05 || f.Circles < 0.95 {
		t.Errorf("the metric is not two-dimensional on the circles: eigenvalues %v, share on the circle coordinates %.3f", f.Eigenvalues, f.Circles)
	}
	if f.Euclidean < 0.4 || f.TestError > f.Euclidean/5 {
		t.Errorf("test error %.4f against Euclidean %.4f", f.TestError, f.Euclidean)
	}
}

// TestBoostFig2Small runs the report at two small dimensions: one row per
// dimension, the protocol's triplets, per-iteration times that are the
// times over the iterations, ranks within their bounds (BoostMetric's at
// most its terms, LMNN's at most D), test errors that are fractions, and
// the markdown and JSON of the page.
func TestBoostFig2Small(t *testing.T) {
	rep, err := BoostFig2(context.Background(), BoostFig2Options{Seed: 1, Dims: []int{20, 40, 60}, MaxDim: 40})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 2 || rep.Rows[0].Dim != 20 || rep.Rows[1].Dim != 40 || rep.Figure1 == nil {
		t.Fatalf("rows %+v, figure 1 %v", rep.Rows, rep.Figure1)
	}
	for _, row := range rep.Rows {
		if row.Triplets != BoostFig2Triplets {
			t.Errorf("D = %d: %d triplets", row.Dim, row.Triplets)
		}
		for name, run := range map[string]BoostFig2Run{"boostmetric": row.Boost, "lmnn": row.LMNN} {
			if run.Error != "" || run.Iterations < 1 || run.Seconds <= 0 {
				t.Fatalf("D = %d %s: %+v", row.Dim, name, run)
			}
			if math.Abs(run.PerIteration()*float64(run.Iterations)-run.Seconds) > 1e-12*run.Seconds {
				t.Errorf("D = %d %s: %g s per iteration × %d ≠ %g s", row.Dim, name, run.PerIteration(), run.Iterations, run.Seconds)
			}
			if !(run.TestError >= 0 && run.TestError <= 1) {
				t.Errorf("D = %d %s: test error %v", row.Dim, name, run.TestError)
			}
		}
		if row.Boost.Rank > row.Boost.Iterations || row.LMNN.Rank > row.Dim || row.LMNN.Rank < 1 {
			t.Errorf("D = %d: ranks %d (%d terms) and %d", row.Dim, row.Boost.Rank, row.Boost.Iterations, row.LMNN.Rank)
		}
		if got := row.Ratio(); math.Abs(got-row.LMNN.Seconds/row.Boost.Seconds) > 1e-12*got {
			t.Errorf("D = %d: ratio %v", row.Dim, got)
		}
	}
	var md bytes.Buffer
	if err := rep.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# BoostMetric's Figure 2", "--suite boostfig2 --max-size 40 --md docs/boostmetric-figure2.md", "## What the paper claims",
		"## The data: the paper's Figure 1", "## What we measured", "\n| 20 | ", "\n| 40 | ", "LMNN took "} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Rows []struct {
			Dim   int `json:"dim"`
			Boost struct {
				PerIteration *float64 `json:"seconds_per_iteration"`
			} `json:"boostmetric"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(js, &back); err != nil || len(back.Rows) != 2 || back.Rows[1].Boost.PerIteration == nil {
		t.Errorf("JSON %s: %v", js, err)
	}
}

// TestBoostFig2Verdict: the page's conclusion follows the ratios — the
// crossover is the smallest D from which on BoostMetric is faster at every
// larger D — and a failed or unknown run encodes as null in JSON.
func TestBoostFig2Verdict(t *testing.T) {
	row := func(d int, boost, lmnn float64) BoostFig2Row {
		return BoostFig2Row{Dim: d, Boost: BoostFig2Run{Seconds: boost, Iterations: 10, Converged: true, TestError: 0.1},
			LMNN: BoostFig2Run{Seconds: lmnn, Iterations: 10, Converged: true, TestError: 0.1}, Euclidean: 0.5}
	}
	for _, c := range []struct {
		name  string
		rows  []BoostFig2Row
		cross int
		want  string
	}{
		{"boost ahead everywhere", []BoostFig2Row{row(50, 1, 2), row(100, 1, 3)}, 50, "faster at every dimension measured, from D = 50 to 100"},
		{"crossover", []BoostFig2Row{row(50, 2, 1), row(100, 1, 1.5), row(200, 1, 4)}, 100, "faster from D = 100 on"},
		{"ahead then behind again", []BoostFig2Row{row(50, 1, 2), row(100, 2, 1), row(200, 1, 4)}, 200, "faster from D = 200 on"},
		{"lmnn ahead at the largest", []BoostFig2Row{row(50, 1, 2), row(100, 2, 1)}, 0, "not faster than LMNN at D = 100"},
		{"equal is not faster", []BoostFig2Row{row(50, 1, 1)}, 0, "not faster than LMNN at D = 50"},
	} {
		r := &BoostFig2Report{Rows: c.rows}
		if got := r.Crossover(); got != c.cross {
			t.Errorf("%s: crossover %d, want %d", c.name, got, c.cross)
		}
		if v := r.verdict(); !strings.Contains(v, c.want) {
			t.Errorf("%s: verdict %q lacks %q", c.name, v, c.want)
		}
	}
	failed := row(50, 1, 2)
	failed.LMNN = BoostFig2Run{Error: "boom", TestError: math.NaN()}
	r := &BoostFig2Report{Rows: []BoostFig2Row{failed}}
	if !math.IsNaN(failed.Ratio()) || r.Crossover() != 0 || !strings.Contains(r.verdict(), "nothing to compare") {
		t.Errorf("a failed run is compared: ratio %v, verdict %q", failed.Ratio(), r.verdict())
	}
	if w := strings.Join(r.warnings(), "\n"); !strings.Contains(w, "LMNN failed at D = 50: boom") {
		t.Errorf("warnings %q", w)
	}
	js, err := json.Marshal(failed.LMNN)
	if err != nil || !strings.Contains(string(js), `"test_error":null`) || !strings.Contains(string(js), `"seconds_per_iteration":null`) {
		t.Errorf("JSON %s, %v", js, err)
	}
}

// BenchmarkBoostFig2 runs the report at D = 50 (about a second), so that
// bench-smoke keeps the suite running.
func BenchmarkBoostFig2(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := BoostFig2(context.Background(), BoostFig2Options{Seed: 1, Dims: []int{50}}); err != nil {
			b.Fatal(err)
		}
	}
}
