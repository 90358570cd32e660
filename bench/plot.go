package bench

import (
	"errors"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/psdlearn/psdlearn/internal/plots"

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
		// The lines rise to the right: the bottom right corner is free.
		p.Legend.Top, p.Legend.Left = false, false
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

// curveKinds says what each case's Result.Curve holds, by case-name prefix:
// the quantity and which way it improves, or Raw for a cumulative loss that
// is drawn as it is.
var curveKinds = []struct {
	prefix, quantity string
	sense            plots.Sense
	raw              bool
}{
	{"boostmetric", "objective (minimised loss)", plots.Minimized, false},
	{"frobmetric", "dual objective, best so far after each evaluation", plots.Maximized, false},
	{"psdboost", "π, the LP master's value (rises to the SDP optimum)", plots.Maximized, false},
	{"simplenpkl", "J(K_t, α_{t−1}), the dual at the previous α", plots.Infer, false},
	{"definiteboost", "dual log tr exp(log W₁ − Σ α_j C_j) (falls)", plots.Minimized, false},
	{"mvu", "dual objective, best so far after each evaluation", plots.Maximized, false},
	{"meg", "cumulative squared loss", plots.Infer, true},
}

// PlotCurves writes one PNG per case that recorded a convergence curve of
// at least two points: the relative gap |f − f*|/|f*| to the best value
// reached by either backend, on a log axis, against the iteration and
// against time, one line per backend (go dashed). A Result keeps only its
// last run's curve and the median time, so the time axis spreads the
// iterations evenly over the median run. Cases whose curves have a single
// point (SimpleNPKL's linear loss is one closed-form solve) get no chart:
// there is no convergence to show. It returns the files written.
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
		c := plots.Curves{Title: fmt.Sprintf("%s (%s): convergence", k.name, k.detail), Sense: plots.Infer,
			TimeLabel: "seconds (iterations spread evenly over the median run)"}
		for _, kind := range curveKinds {
			if strings.HasPrefix(k.name, kind.prefix) {
				c.Quantity, c.Sense, c.Raw = kind.quantity, kind.sense, kind.raw
				break
			}
		}
		for _, r := range byKey[k] {
			s := plots.Series{Name: r.Backend, Values: r.Curve, Color: backendColors[r.Backend], Dashed: r.Backend == "go"}
			if r.Median > 0 {
				s.Seconds = make([]float64, len(r.Curve))
				for i := range s.Seconds {
					s.Seconds[i] = r.Median * float64(i+1) / float64(len(r.Curve))
				}
			}
			c.Series = append(c.Series, s)
		}
		file := filepath.Join(dir, "algos_"+slug(k.name+" "+k.detail)+".png")
		err := plots.Convergence(file, c)
		if errors.Is(err, plots.ErrNothingToPlot) {
			continue
		}
		if err != nil {
			return files, fmt.Errorf("bench: plot %s: %w", k.name, err)
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
