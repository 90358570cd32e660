package plots

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// LinesWidth and LinesHeight are the size of a Lines chart, in inches.
const LinesWidth, LinesHeight = 8.0, 5.5

// Level is a horizontal reference line of a Lines chart (an optimum, a
// baseline), drawn across the whole x range.
type Level struct {
	Name  string
	Y     float64
	Color color.Color
}

// LineChart describes a chart of values against their index on linear
// axes, with horizontal reference levels.
type LineChart struct {
	Title, XLabel, YLabel string
	// Series are drawn as lines with points: Values[t] at x = t + 1 (or at
	// X[t] when X is set).
	Series []LineSeries
	Levels []Level
}

// LineSeries is one curve of a LineChart. Lines puts the legend at the
// bottom right, where rising curves leave room.
type LineSeries struct {
	Name   string
	X      []float64
	Values []float64
	Color  color.Color
	Dashed bool
}

// Lines writes a LineChart to path as a PNG of LinesWidth × LinesHeight
// inches. Non-finite values are left out; it returns ErrNothingToPlot when
// no series has a finite value.
func Lines(path string, c LineChart) error {
	p := plot.New()
	p.Title.Text = c.Title
	p.X.Label.Text = c.XLabel
	p.Y.Label.Text = c.YLabel
	p.Add(plotter.NewGrid())
	// Bottom right: the curves these charts draw rise to the right.
	p.Legend.Top = false
	p.Legend.Left = false
	p.Legend.YOffs = vg.Points(8)
	xmin, xmax := math.Inf(1), math.Inf(-1)
	points := 0
	for i, s := range c.Series {
		var pts plotter.XYs
		for t, v := range s.Values {
			x := float64(t + 1)
			if s.X != nil {
				if t >= len(s.X) {
					break
				}
				x = s.X[t]
			}
			if math.IsNaN(v) || math.IsInf(v, 0) || math.IsNaN(x) || math.IsInf(x, 0) {
				continue
			}
			pts = append(pts, plotter.XY{X: x, Y: v})
			xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
		}
		if len(pts) == 0 {
			continue
		}
		points += len(pts)
		line, marks, err := plotter.NewLinePoints(pts)
		if err != nil {
			return fmt.Errorf("plots: %w", err)
		}
		col := s.Color
		if col == nil {
			col = classColors[i%len(classColors)]
		}
		line.Color, marks.Color = col, col
		line.Width = vg.Points(1.5)
		marks.Shape = draw.CircleGlyph{}
		marks.Radius = vg.Points(2)
		if len(pts) > 60 {
			marks.Radius = 0
		}
		if s.Dashed {
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(line, marks)
		if s.Name != "" {
			p.Legend.Add(s.Name, line)
		}
	}
	if points == 0 {
		return fmt.Errorf("%w: no finite value", ErrNothingToPlot)
	}
	if xmin == xmax {
		xmin, xmax = xmin-1, xmax+1
	}
	for i, l := range c.Levels {
		if math.IsNaN(l.Y) || math.IsInf(l.Y, 0) {
			continue
		}
		line, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: l.Y}, {X: xmax, Y: l.Y}})
		if err != nil {
			return fmt.Errorf("plots: %w", err)
		}
		col := l.Color
		if col == nil {
			col = classColors[(len(c.Series)+i)%len(classColors)]
		}
		line.Color = col
		line.Width = vg.Points(1.2)
		line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		p.Add(line)
		if l.Name != "" {
			p.Legend.Add(l.Name, line)
		}
	}
	img, dc := newCanvas(LinesWidth, LinesHeight)
	p.Draw(dc)
	return save(img, path)
}
