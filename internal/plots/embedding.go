package plots

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Points is a two-dimensional embedding to draw: X[i], Y[i] is point i and
// Labels[i] its class, an index into Classes (nil Labels: one class).
type Points struct {
	Title          string
	XLabel, YLabel string
	X, Y           []float64
	Labels         []int
	Classes        []string
}

// Embedding writes a scatter plot of p to path: one colour (and, beyond ten
// classes, glyph shape) per class, a legend of the class names beside the
// plot, and equal scales on both axes, so that distances in the picture are
// the distances of the embedding. It is EmbeddingWidth × EmbeddingHeight
// inches.
func Embedding(path string, p Points) error {
	n := len(p.X)
	if n == 0 || len(p.Y) != n {
		return fmt.Errorf("%w: %d x and %d y coordinates", ErrNothingToPlot, len(p.X), len(p.Y))
	}
	if p.Labels != nil && len(p.Labels) != n {
		return fmt.Errorf("plots: %d labels for %d points", len(p.Labels), n)
	}
	// Group the points by class; unlabelled (negative) points form a group of their own.
	groups := map[int]plotter.XYs{}
	var order []int
	for i := 0; i < n; i++ {
		if math.IsNaN(p.X[i]) || math.IsNaN(p.Y[i]) || math.IsInf(p.X[i], 0) || math.IsInf(p.Y[i], 0) {
			continue
		}
		c := 0
		if p.Labels != nil {
			c = p.Labels[i]
			if c < 0 {
				c = -1
			}
		}
		if _, ok := groups[c]; !ok {
			order = append(order, c)
		}
		groups[c] = append(groups[c], plotter.XY{X: p.X[i], Y: p.Y[i]})
	}
	if len(order) == 0 {
		return fmt.Errorf("%w: no finite point", ErrNothingToPlot)
	}
	sortInts(order)
	radius := vg.Points(2.2)
	if n > 2000 {
		radius = vg.Points(1.3)
	}
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.X.Label.Text, pl.Y.Label.Text = p.XLabel, p.YLabel
	pl.Add(plotter.NewGrid())
	legend := plot.NewLegend()
	legend.Left = true
	legend.Top = true
	legend.ThumbnailWidth = vg.Points(10)
	for _, c := range order {
		sc, err := plotter.NewScatter(groups[c])
		if err != nil {
			return fmt.Errorf("plots: %w", err)
		}
		sc.GlyphStyle = classStyle(c, radius)
		pl.Add(sc)
		name := className(p.Classes, c)
		if c < 0 {
			name = "unlabelled"
			sc.GlyphStyle.Color = rgb(0x999999)
		}
		thumb, _ := plotter.NewScatter(plotter.XYs{{}})
		thumb.GlyphStyle = sc.GlyphStyle
		thumb.GlyphStyle.Radius = vg.Points(3)
		legend.Add(fmt.Sprintf("%s (%d)", name, len(groups[c])), thumb)
	}
	showLegend := len(order) > 1 || p.Labels != nil
	img, dc := newCanvas(EmbeddingWidth, EmbeddingHeight)
	plotArea := dc
	if showLegend {
		w := legendWidth(&legend)
		plotArea = draw.Crop(dc, 0, -w, 0, 0)
		la := draw.Crop(dc, dc.Size().X-w, 0, 0, 0)
		la = draw.Crop(la, vg.Points(4), 0, 0, -vg.Points(30))
		legend.Draw(la)
	}
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, pts := range groups {
		for _, q := range pts {
			xmin, xmax = min(xmin, q.X), max(xmax, q.X)
			ymin, ymax = min(ymin, q.Y), max(ymax, q.Y)
		}
	}
	plotArea = draw.Crop(plotArea, 0, 0, 0, -vg.Points(6))
	equalScales(pl, plotArea, xmin, xmax, ymin, ymax)
	pl.Draw(plotArea)
	return save(img, path)
}

// legendWidth is the width of the strip the legend needs.
func legendWidth(l *plot.Legend) vg.Length {
	r := l.Rectangle(draw.Canvas{Rectangle: vg.Rectangle{Max: vg.Point{X: 1000, Y: 1000}}})
	return r.Size().X + vg.Points(20)
}

// equalScales widens the axis range of the shorter side so that one unit
// is as long on the x axis as on the y axis once p is drawn on c.
func equalScales(p *plot.Plot, c draw.Canvas, xmin, xmax, ymin, ymax float64) {
	if xmax <= xmin {
		xmin, xmax = xmin-1, xmax+1
	}
	if ymax <= ymin {
		ymin, ymax = ymin-1, ymax+1
	}
	// The data canvas depends on the tick labels, which depend on the
	// ranges: three rounds settle it.
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xmin, xmax, ymin, ymax
	for range 3 {
		da := p.DataCanvas(c)
		w, h := float64(da.Size().X), float64(da.Size().Y)
		if w <= 0 || h <= 0 {
			return
		}
		s := max((xmax-xmin)/w, (ymax-ymin)/h)
		cx, cy := (xmin+xmax)/2, (ymin+ymax)/2
		p.X.Min, p.X.Max = cx-s*w/2, cx+s*w/2
		p.Y.Min, p.Y.Max = cy-s*h/2, cy+s*h/2
	}
}

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}
