package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/internal/plots"
)

// plotOut is where the charts of these tests go: $PLOTS_OUT/name when
// PLOTS_OUT is set (to look at them), else a temporary directory.
func plotOut(t *testing.T, name string) string {
	if d := os.Getenv("PLOTS_OUT"); d != "" {
		return filepath.Join(d, name)
	}
	return t.TempDir()
}

// checkPlotPNG fails the test unless plots.CheckPNG accepts the file.
func checkPlotPNG(t *testing.T, path string, w, h float64) {
	t.Helper()
	if err := plots.CheckPNG(path, w, h); err != nil {
		t.Error(err)
	}
}

// plotList returns the "plots" and "plot_notes" of a JSON summary.
func plotList(m map[string]any) (files, notes []string) {
	for key, dst := range map[string]*[]string{"plots": &files, "plot_notes": &notes} {
		list, _ := m[key].([]any)
		for _, v := range list {
			s, _ := v.(string)
			*dst = append(*dst, s)
		}
	}
	return files, notes
}

// TestClusterPlotSqHinge: cluster --plot draws the learned kernel and the
// squared-hinge convergence of run 1.
func TestClusterPlotSqHinge(t *testing.T) {
	dir := plotOut(t, "cluster_sqhinge")
	m := runJSON(t, "cluster", "--data", "builtin:iris", "--loss", "sqhinge", "--runs", "1", "--baseline=false", "--plot", dir)
	files, notes := plotList(m)
	want := []string{filepath.Join(dir, "cluster_kernel.png"), filepath.Join(dir, "cluster_convergence.png")}
	if !slices.Equal(files, want) || len(notes) != 0 {
		t.Fatalf("plots %v, notes %v; want %v", files, notes, want)
	}
	checkPlotPNG(t, want[0], plots.HeatmapWidth, plots.HeatmapHeight)
	checkPlotPNG(t, want[1], plots.ConvergenceWidth, plots.ConvergenceHeight)
}

// TestClusterPlotLinear: the linear loss is one closed-form solve, so there
// is a kernel heat map and a note instead of an (empty) convergence chart.
func TestClusterPlotLinear(t *testing.T) {
	dir := plotOut(t, "cluster_linear")
	m := runJSON(t, "cluster", "--data", "builtin:iris", "--runs", "1", "--baseline=false", "--plot", dir)
	files, notes := plotList(m)
	if len(files) != 1 || filepath.Base(files[0]) != "cluster_kernel.png" {
		t.Fatalf("plots %v, want the kernel heat map only", files)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "closed-form") {
		t.Errorf("notes %v, want one on the closed-form solve", notes)
	}
	if _, err := os.Stat(filepath.Join(dir, "cluster_convergence.png")); err == nil {
		t.Error("a convergence chart was written for the linear loss")
	}
	checkPlotPNG(t, files[0], plots.HeatmapWidth, plots.HeatmapHeight)
}

// TestKernelPlotDefiniteBoost: kernel --plot draws the target, the learned
// kernel and DefiniteBoost's convergence.
func TestKernelPlotDefiniteBoost(t *testing.T) {
	dir := plotOut(t, "kernel_definiteboost")
	m := runKernelJSON(t, "--algo", "definiteboost", "--objects", "40", "--projection", "approx", "--plot", dir)
	files, notes := plotList(m)
	want := []string{"kernel_target.png", "kernel_learned.png", "kernel_convergence.png"}
	if len(files) != len(want) || len(notes) != 0 {
		t.Fatalf("plots %v, notes %v; want %v", files, notes, want)
	}
	for i, f := range files {
		if filepath.Base(f) != want[i] {
			t.Errorf("plot %d is %s, want %s", i, f, want[i])
		}
	}
	checkPlotPNG(t, files[0], plots.HeatmapWidth, plots.HeatmapHeight)
	checkPlotPNG(t, files[1], plots.HeatmapWidth, plots.HeatmapHeight)
	checkPlotPNG(t, files[2], plots.ConvergenceWidth, plots.ConvergenceHeight)
}

// TestKernelPlotMEG: for MEG only the target is drawn.
func TestKernelPlotMEG(t *testing.T) {
	dir := plotOut(t, "kernel_meg")
	m := runKernelJSON(t, "--algo", "meg", "--steps", "200", "--plot", dir)
	files, _ := plotList(m)
	if len(files) != 1 || filepath.Base(files[0]) != "kernel_target.png" {
		t.Fatalf("plots %v, want the target heat map", files)
	}
	checkPlotPNG(t, files[0], plots.HeatmapWidth, plots.HeatmapHeight)
}

// TestEmbedPlotClasses: embed --plot on labelled data writes the
// class-coloured scatter plot at the embedding size.
func TestEmbedPlotClasses(t *testing.T) {
	dir := plotOut(t, "embed")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "iris.png")
	runJSON(t, "embed", "--data", "builtin:iris", "--standardize", "--iters", "200", "--plot", path)
	checkPlotPNG(t, path, plots.EmbeddingWidth, plots.EmbeddingHeight)
}
