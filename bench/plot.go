package bench

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

var backendColors = map[string]color.Color{
	"native": color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	"go":     color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
}

// PlotScaling writes one PNG per case into dir: median time against size on
// log-log axes, one line per backend. It returns the files written.
func PlotScaling(dir string, results []Result) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	byCase := map[string]map[string]plotter.XYs{}
	var names []string
	for _, r := range results {
		if r.Error != "" || r.Median <= 0 {
			continue
		}
		if byCase[r.Case] == nil {
			byCase[r.Case] = map[string]plotter.XYs{}
			names = append(names, r.Case)
		}
		byCase[r.Case][r.Backend] = append(byCase[r.Case][r.Backend], plotter.XY{X: float64(r.Size), Y: r.Median})
	}
	var files []string
	for _, name := range names {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s: median time vs size", name)
		p.X.Label.Text = "size"
		p.Y.Label.Text = "seconds"
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
		p.Legend.Top = true
		p.Legend.Left = true
		var backends []string
		for b := range byCase[name] {
			backends = append(backends, b)
		}
		sort.Strings(backends)
		for _, b := range backends {
			pts := byCase[name][b]
			sort.Slice(pts, func(i, j int) bool { return pts[i].X < pts[j].X })
			line, points, err := plotter.NewLinePoints(pts)
			if err != nil {
				return files, fmt.Errorf("bench: plot %s: %w", name, err)
			}
			if c, ok := backendColors[b]; ok {
				line.Color, points.Color = c, c
			}
			p.Add(line, points)
			p.Legend.Add(b, line, points)
		}
		file := filepath.Join(dir, "kernels_"+name+".png")
		if err := p.Save(6*vg.Inch, 4*vg.Inch, file); err != nil {
			return files, fmt.Errorf("bench: save %s: %w", file, err)
		}
		files = append(files, file)
	}
	return files, nil
}

// PlotCurves writes one PNG per case that recorded a convergence curve: the
// curve (objective, dual or J) against the iteration, one line per backend.
// It returns the files written.
func PlotCurves(dir string, results []Result) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	type key struct{ name, detail string }
	var keys []key
	byKey := map[key][]Result{}
	for _, r := range results {
		if r.Error != "" || len(r.Curve) == 0 {
			continue
		}
		k := key{r.Case, r.Detail}
		if byKey[k] == nil {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], r)
	}
	var files []string
	for _, k := range keys {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s (%s): convergence", k.name, k.detail)
		p.X.Label.Text = "iteration"
		p.Y.Label.Text = "objective"
		p.Legend.Top = true
		for _, r := range byKey[k] {
			pts := make(plotter.XYs, len(r.Curve))
			for i, v := range r.Curve {
				pts[i] = plotter.XY{X: float64(i + 1), Y: v}
			}
			line, err := plotter.NewLine(pts)
			if err != nil {
				return files, fmt.Errorf("bench: plot %s: %w", k.name, err)
			}
			if c, ok := backendColors[r.Backend]; ok {
				line.Color = c
			}
			if r.Backend == "go" {
				line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			}
			p.Add(line)
			p.Legend.Add(r.Backend, line)
		}
		file := filepath.Join(dir, "algos_"+slug(k.name+" "+k.detail)+".png")
		if err := p.Save(6*vg.Inch, 4*vg.Inch, file); err != nil {
			return files, fmt.Errorf("bench: save %s: %w", file, err)
		}
		files = append(files, file)
	}
	return files, nil
}

// slug turns s into a file-name-safe string.
func slug(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			out = append(out, r)
		default:
			if len(out) > 0 && out[len(out)-1] != '_' {
				out = append(out, '_')
			}
		}
	}
	return string(out)
}
