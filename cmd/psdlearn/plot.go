package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/algos/meg"
	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/internal/plots"
	"github.com/psdlearn/psdlearn/model"
	"gonum.org/v1/gonum/mat"
)

// The charts of embed --plot, cluster --plot and kernel --plot (docs/cli.md,
// "Plots"); the drawing itself is internal/plots.

// plotEmbedding draws the first two coordinates of y, coloured by the class
// of each point, with equal axis scales.
func plotEmbedding(path string, y *mat.Dense, d *data.Dataset, title string) error {
	n, _ := y.Dims()
	p := plots.Points{Title: title, XLabel: "coordinate 1", YLabel: "coordinate 2", X: make([]float64, n), Y: make([]float64, n)}
	for i := 0; i < n; i++ {
		p.X[i], p.Y[i] = y.At(i, 0), y.At(i, 1)
	}
	if !cur.noLabels && len(d.Y) == n {
		p.Labels, p.Classes = d.Y, d.Classes
	}
	if err := plots.Embedding(path, p); err != nil {
		return fmt.Errorf("embed: plot: %w", err)
	}
	return nil
}

// symFromFactor returns F Fᵀ.
func symFromFactor(f *mat.Dense) *mat.SymDense {
	n, _ := f.Dims()
	k := mat.NewSymDense(n, nil)
	k.SymOuterK(1, f)
	return k
}

// kernelMatrix returns the dense N×N matrix of a learned kernel.
func kernelMatrix(k *model.Kernel) *mat.SymDense { return symFromFactor(k.Factor()) }

// plotDirFile returns dir/name after creating dir.
func plotDirFile(dir, name string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}

// clusterPlots writes the charts of `cluster --plot DIR` for run 1 of the
// protocol (whose kernel the report keeps) and returns the files written
// and notes on the charts left out: the kernel as a heat map (N ≤
// plots.MaxHeatmap) and, for the squared hinge loss, its relative duality
// gap against iterations and time. With the linear loss the kernel is one
// closed-form solve and there is no convergence to draw.
func clusterPlots(dir string, ds *data.Dataset, loss npkl.Loss, run psdlearn.ClusterRun) (files, notes []string, err error) {
	if run.Model == nil || run.Model.Kernel == nil {
		return nil, nil, fmt.Errorf("run %d: the report kept no kernel", run.Run)
	}
	what := fmt.Sprintf("SimpleNPKL (%v loss, C = %g) on %s, run %d", loss, run.C, ds.Name, run.Run)
	if k := run.Model.Kernel; k.N() <= plots.MaxHeatmap {
		path, err := plotDirFile(dir, "cluster_kernel.png")
		if err != nil {
			return files, notes, err
		}
		err = plots.Heatmap(path, plots.Kernel{Title: fmt.Sprintf("%s: learned kernel (rank %d)", what, k.Rank()),
			K: kernelMatrix(k), Labels: ds.Y, Classes: ds.Classes})
		if err != nil {
			return files, notes, err
		}
		files = append(files, path)
	} else {
		notes = append(notes, fmt.Sprintf("no kernel heat map: N = %d > %d", k.N(), plots.MaxHeatmap))
	}
	var s plots.Series
	var elapsed float64
	for _, it := range run.History {
		elapsed += it.Seconds
		s.Values = append(s.Values, it.Objective)
		s.Seconds = append(s.Seconds, elapsed)
		s.Gap = append(s.Gap, (it.Primal-it.Objective)/max(math.Abs(it.Primal), math.Abs(it.Objective), 1e-300))
	}
	s.Name = fmt.Sprintf("run %d", run.Run)
	path, err := plotDirFile(dir, "cluster_convergence.png")
	if err != nil {
		return files, notes, err
	}
	err = plots.Convergence(path, plots.Curves{
		Title:    what + "\nrelative duality gap (P − D) / max(|P|, |D|); P: primal (9) at K_t; D = J(K_t, α_{t−1}), the dual at α_{t−1}",
		GapLabel: "relative duality gap", Series: []plots.Series{s},
	})
	switch {
	case errors.Is(err, plots.ErrNothingToPlot):
		notes = append(notes, fmt.Sprintf("no convergence chart: %d closed-form solve(s) (the linear loss is solved in one)", len(run.History)))
	case err != nil:
		return files, notes, err
	default:
		files = append(files, path)
	}
	return files, notes, nil
}

// kernelPlots writes the charts of `kernel --plot DIR`: heat maps of the
// target kernel U and, for DefiniteBoost (run, the first run of the
// experiment; nil for MEG), of the kernel W it learned and its dual
// objective as a relative gap against iterations and time. MEG's online
// run draws the target only.
func kernelPlots(dir string, f kernelFlags, s *kernelSetup, run *meg.BoostRun) (files, notes []string, err error) {
	d := len(s.Y)
	if d > plots.MaxHeatmap {
		notes = append(notes, fmt.Sprintf("no kernel heat maps: %d objects > %d", d, plots.MaxHeatmap))
	} else {
		path, err := plotDirFile(dir, "kernel_target.png")
		if err != nil {
			return files, notes, err
		}
		if err := plots.Heatmap(path, plots.Kernel{Title: fmt.Sprintf("target: trace-normalised RBF kernel of %d objects of %s (γ = %.3g)", d, s.name, s.Gamma),
			K: s.U, Labels: s.Y, Classes: s.classes}); err != nil {
			return files, notes, err
		}
		files = append(files, path)
	}
	if run == nil {
		return files, notes, nil
	}
	what := fmt.Sprintf("DefiniteBoost (%v projection) on %d objects of %s", run.Projection, d, s.name)
	if d <= plots.MaxHeatmap {
		path, err := plotDirFile(dir, "kernel_learned.png")
		if err != nil {
			return files, notes, err
		}
		if err := plots.Heatmap(path, plots.Kernel{Title: what + ": learned W", K: run.W, Labels: s.Y, Classes: s.classes}); err != nil {
			return files, notes, err
		}
		files = append(files, path)
	}
	series := plots.Series{Name: run.Projection.String(), Values: run.Duals, Seconds: run.DualSeconds}
	path, err := plotDirFile(dir, "kernel_convergence.png")
	if err != nil {
		return files, notes, err
	}
	err = plots.Convergence(path, plots.Curves{Title: what, Quantity: "dual log tr exp(log W₁ − Σ α_j C_j), decreasing", Sense: plots.Minimized, Series: []plots.Series{series}})
	switch {
	case errors.Is(err, plots.ErrNothingToPlot):
		notes = append(notes, fmt.Sprintf("no convergence chart: %d iteration(s)", run.Iterations))
	case err != nil:
		return files, notes, err
	default:
		files = append(files, path)
	}
	return files, notes, nil
}

// printPlots lists the charts written and the notes on those left out.
func printPlots(w io.Writer, files, notes []string) {
	for _, f := range files {
		fmt.Fprintf(w, "plot: %s\n", f)
	}
	for _, n := range notes {
		fmt.Fprintf(w, "plot: %s\n", n)
	}
}
