package plots

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"
)

// outDir is where the test charts go: $PLOTS_OUT when set (to look at
// them), else a temporary directory.
func outDir(t *testing.T) string {
	if d := os.Getenv("PLOTS_OUT"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// checkPNG fails the test unless CheckPNG accepts the file.
func checkPNG(t *testing.T, path string, w, h float64) {
	t.Helper()
	if err := CheckPNG(path, w, h); err != nil {
		t.Error(err)
	}
}

// blobs returns three labelled Gaussian blobs stretched 20:1 along x, the
// shape of an embedding whose axes differ in scale.
func blobs(n int) (x, y []float64, labels []int) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < n; i++ {
		c := i % 3
		x = append(x, 400*float64(c-1)+60*rng.NormFloat64())
		y = append(y, 10*float64(c-1)+3*rng.NormFloat64())
		labels = append(labels, c)
	}
	return x, y, labels
}

func TestEmbeddingPNG(t *testing.T) {
	x, y, labels := blobs(178)
	path := filepath.Join(outDir(t), "embedding.png")
	err := Embedding(path, Points{Title: "three classes, 20:1 spread", XLabel: "y1", YLabel: "y2", X: x, Y: y, Labels: labels, Classes: []string{"class_0", "class_1", "class_2"}})
	if err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path, EmbeddingWidth, EmbeddingHeight)
}

func TestEmbeddingManyClassesAndUnlabelled(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var x, y []float64
	var labels []int
	var classes []string
	for c := 0; c < 26; c++ {
		classes = append(classes, string(rune('A'+c)))
		for i := 0; i < 20; i++ {
			a := 2 * math.Pi * float64(c) / 26
			x = append(x, 10*math.Cos(a)+rng.NormFloat64())
			y = append(y, 10*math.Sin(a)+rng.NormFloat64())
			labels = append(labels, c)
		}
	}
	labels[0] = -1
	dir := outDir(t)
	if err := Embedding(filepath.Join(dir, "embedding_26.png"), Points{Title: "26 classes", X: x, Y: y, Labels: labels, Classes: classes}); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, filepath.Join(dir, "embedding_26.png"), EmbeddingWidth, EmbeddingHeight)
	if err := Embedding(filepath.Join(dir, "embedding_nolabels.png"), Points{X: x, Y: y}); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, filepath.Join(dir, "embedding_nolabels.png"), EmbeddingWidth, EmbeddingHeight)
	if err := Embedding(filepath.Join(dir, "none.png"), Points{}); !errors.Is(err, ErrNothingToPlot) {
		t.Errorf("empty embedding: %v, want ErrNothingToPlot", err)
	}
}

// TestEqualScales checks that after equalScales one data unit has the same
// length on both axes.
func TestEqualScales(t *testing.T) {
	x, y, labels := blobs(90)
	_ = labels
	dir := t.TempDir()
	if err := Embedding(filepath.Join(dir, "e.png"), Points{X: x, Y: y}); err != nil {
		t.Fatal(err)
	}
	// Re-run the scaling on a plot to read its ranges.
	p, c := scalingFixture(x, y)
	da := p.DataCanvas(c)
	ux := float64(da.Size().X) / (p.X.Max - p.X.Min)
	uy := float64(da.Size().Y) / (p.Y.Max - p.Y.Min)
	if math.Abs(ux-uy) > 0.01*max(ux, uy) {
		t.Errorf("x unit %.4g points, y unit %.4g points: want equal", ux, uy)
	}
	if p.Y.Max-p.Y.Min < 10*(p.X.Max-p.X.Min)/20 {
		t.Errorf("y range [%g, %g] was not widened to the x range [%g, %g]", p.Y.Min, p.Y.Max, p.X.Min, p.X.Max)
	}
}

func TestConvergencePNG(t *testing.T) {
	dir := outDir(t)
	// A dual objective rising linearly to its optimum 2 with a time axis,
	// and a second run dashed.
	var a, b, secA, secB []float64
	for i := 0; i < 40; i++ {
		a = append(a, 2-math.Pow(0.7, float64(i)))
		b = append(b, 2-1.5*math.Pow(0.75, float64(i)))
		secA = append(secA, 0.01*float64(i+1))
		secB = append(secB, 0.02*float64(i+1))
	}
	c := Curves{Title: "frobmetric (wine): convergence", Quantity: "dual objective (best so far)", Sense: Maximized,
		Series: []Series{{Name: "native", Values: a, Seconds: secA}, {Name: "go", Values: b, Seconds: secB, Dashed: true}}}
	if ref, sense := c.Reference(); sense != Maximized || ref != a[39] {
		t.Errorf("reference %v (%v), want %v (maximized)", ref, sense, a[39])
	}
	path := filepath.Join(dir, "convergence.png")
	if err := Convergence(path, c); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path, ConvergenceWidth, ConvergenceHeight)

	// Inferred sense: a decreasing objective is minimised.
	dec := Curves{Series: []Series{{Values: []float64{5, 3, 2.5, 2.4}}}}
	if ref, sense := dec.Reference(); sense != Minimized || ref != 2.4 {
		t.Errorf("decreasing curve: reference %v (%v), want 2.4 (minimized)", ref, sense)
	}
	// A single closed-form solve has nothing to show.
	one := Curves{Series: []Series{{Name: "native", Values: []float64{-3.2}}, {Name: "go", Values: []float64{-3.2}}}}
	if err := Convergence(filepath.Join(dir, "one.png"), one); !errors.Is(err, ErrNothingToPlot) {
		t.Errorf("one-point curves: %v, want ErrNothingToPlot", err)
	}
	// A precomputed duality gap without times: one panel.
	gap := Curves{Title: "gap only", GapLabel: "duality gap", Series: []Series{{Name: "run 1", Values: []float64{1, 2, 3}, Gap: []float64{0.5, 0.01, 1e-5}}}}
	if err := Convergence(filepath.Join(dir, "gap.png"), gap); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, filepath.Join(dir, "gap.png"), ConvergenceWidth, ConvergenceHeight)
}

func TestHeatmapPNG(t *testing.T) {
	dir := outDir(t)
	// A block kernel over interleaved classes: ordering by class must
	// reveal the blocks.
	n := 150
	labels := make([]int, n)
	for i := range labels {
		labels[i] = i % 3
	}
	k := mat.NewSymDense(n, nil)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := 0.1 * rng.Float64()
			if labels[i] == labels[j] {
				v += 1
			}
			k.SetSym(i, j, v)
		}
	}
	path := filepath.Join(dir, "heatmap.png")
	if err := Heatmap(path, Kernel{Title: "block kernel", K: k, Labels: labels, Classes: []string{"a", "b", "c"}}); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path, HeatmapWidth, HeatmapHeight)
	// Negative entries: the diverging map.
	c := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			c.SetSym(i, j, k.At(i, j)-0.4)
		}
	}
	path = filepath.Join(dir, "heatmap_signed.png")
	if err := Heatmap(path, Kernel{Title: "centred block kernel", K: c, Labels: labels}); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path, HeatmapWidth, HeatmapHeight)
	if err := Heatmap(filepath.Join(dir, "big.png"), Kernel{K: mat.NewDiagDense(MaxHeatmap+1, nil)}); err == nil {
		t.Error("heat map of N > MaxHeatmap: no error")
	}
}

// scalingFixture is a scatter plot of x, y after equalScales on an
// embedding-sized canvas.
func scalingFixture(x, y []float64) (*plot.Plot, draw.Canvas) {
	p := plot.New()
	p.X.Label.Text, p.Y.Label.Text = "y1", "y2"
	pts := make(plotter.XYs, len(x))
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for i := range x {
		pts[i] = plotter.XY{X: x[i], Y: y[i]}
		xmin, xmax, ymin, ymax = min(xmin, x[i]), max(xmax, x[i]), min(ymin, y[i]), max(ymax, y[i])
	}
	sc, _ := plotter.NewScatter(pts)
	p.Add(sc)
	_, c := newCanvas(EmbeddingWidth, EmbeddingHeight)
	equalScales(p, c, xmin, xmax, ymin, ymax)
	return p, c
}

func TestLinesPNG(t *testing.T) {
	dir := outDir(t)
	path := filepath.Join(dir, "lines.png")
	err := Lines(path, LineChart{Title: "dual value per iteration", XLabel: "iteration", YLabel: "π",
		Series: []LineSeries{{Name: "single column", Values: []float64{0.1, 0.5, 0.8, 0.9, math.NaN(), 0.95}}, {Name: "16 columns", Values: []float64{0.3, 0.9, 0.95}, Dashed: true}},
		Levels: []Level{{Name: "optimum", Y: 0.96}}})
	if err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path, LinesWidth, LinesHeight)
	if err := Lines(filepath.Join(dir, "empty.png"), LineChart{Series: []LineSeries{{Values: []float64{math.Inf(1)}}}}); !errors.Is(err, ErrNothingToPlot) {
		t.Errorf("all-infinite series: %v, want ErrNothingToPlot", err)
	}
}

func TestAgreementPNG(t *testing.T) {
	dir := outDir(t)
	a := Agreement{Title: "published against measured", XLabel: "paper (%)", YLabel: "psdlearn (%)",
		Groups: []AgreementGroup{
			{Name: "wine", X: []float64{28.08, 3.85, 3.08}, Y: []float64{27.4, 4.4, 4.1}, Spread: []float64{7, 3.9, 2.3}},
			{Name: "MNIST", X: []float64{3.19, 2.56}, Y: []float64{3.01, 2.04}}, // one run: no bars
			{Name: "none", X: []float64{math.NaN()}, Y: []float64{1}},
		}}
	path := filepath.Join(dir, "agreement.png")
	if err := DrawAgreement(path, a); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path, AgreementWidth, AgreementHeight)
	if err := DrawAgreement(filepath.Join(dir, "empty.png"), Agreement{Groups: []AgreementGroup{{Name: "x", X: []float64{math.NaN()}, Y: []float64{1}}}}); !errors.Is(err, ErrNothingToPlot) {
		t.Errorf("no point: %v, want ErrNothingToPlot", err)
	}
}
