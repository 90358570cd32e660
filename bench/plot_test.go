package bench

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/psdlearn/psdlearn/internal/plots"
)

func plotDir(t *testing.T) string {
	if d := os.Getenv("PLOTS_OUT"); d != "" {
		return d
	}
	return t.TempDir()
}

// TestPlotCurves draws a FrobMetric-like dual curve for both backends and
// checks the PNG; a SimpleNPKL linear case, one closed-form solve per
// backend, gets no chart (it used to get an empty one: a one-point line
// draws nothing).
func TestPlotCurves(t *testing.T) {
	var native, gocurve []float64
	for i := 0; i < 50; i++ {
		native = append(native, -1000+990*(1-math.Pow(0.8, float64(i))))
		gocurve = append(gocurve, -1000+990*(1-math.Pow(0.83, float64(i))))
	}
	results := []Result{
		{Case: "frobmetric", Detail: "wine 0.7,0.15,0.15", Backend: "native", Median: 0.5, Curve: native},
		{Case: "frobmetric", Detail: "wine 0.7,0.15,0.15", Backend: "go", Median: 0.8, Curve: gocurve},
		{Case: "simplenpkl linear", Detail: "iris, 5 runs", Backend: "native", Median: 0.01, Curve: []float64{-3.5}},
		{Case: "simplenpkl linear", Detail: "iris, 5 runs", Backend: "go", Median: 0.01, Curve: []float64{-3.5}},
	}
	files, err := PlotCurves(plotDir(t), results)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || filepath.Base(files[0]) != "algos_frobmetric_wine_0_7_0_15_0_15.png" {
		t.Fatalf("files %v, want only the frobmetric chart", files)
	}
	if err := plots.CheckPNG(files[0], plots.ConvergenceWidth, plots.ConvergenceHeight); err != nil {
		t.Error(err)
	}
}

func TestPlotScaling(t *testing.T) {
	var results []Result
	for _, n := range []int{100, 400, 1000} {
		results = append(results,
			Result{Case: "symeig_all", Backend: "native", Size: n, Median: 1e-9 * math.Pow(float64(n), 3)},
			Result{Case: "symeig_all", Backend: "go", Size: n, Median: 3e-9 * math.Pow(float64(n), 3)})
	}
	files, err := PlotScaling(plotDir(t), results)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 {
		t.Fatalf("files %v, want one", files)
	}
	if err := plots.CheckPNG(files[0], 6, 4); err != nil {
		t.Error(err)
	}
}
