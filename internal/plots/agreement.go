package plots

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// AgreementWidth and AgreementHeight are the size of an Agreement chart.
const AgreementWidth, AgreementHeight = 8.0, 7.0

// Agreement is a chart of published figures against measured ones: one
// point per figure at (published, measured), with the measured spread as a
// vertical bar, coloured by group (a data set, say), over the diagonal of
// equality.
type Agreement struct {
	Title          string
	XLabel, YLabel string
	Groups         []AgreementGroup
}

// AgreementGroup is a set of points of one colour.
type AgreementGroup struct {
	Name string
	// X are the published values, Y the measured ones, Spread the
	// measured standard deviation (0 or NaN: no bar).
	X, Y, Spread []float64
}

// errPoints adapts a group to plotter.XYer and plotter.YErrorer.
type errPoints struct{ g AgreementGroup }

func (e errPoints) Len() int                { return len(e.g.X) }
func (e errPoints) XY(i int) (x, y float64) { return e.g.X[i], e.g.Y[i] }
func (e errPoints) YError(i int) (float64, float64) {
	if i >= len(e.g.Spread) || math.IsNaN(e.g.Spread[i]) {
		return 0, 0
	}
	return e.g.Spread[i], e.g.Spread[i]
}

// DrawAgreement writes a as a PNG of AgreementWidth × AgreementHeight
// inches to path. Points with a NaN coordinate are left out; a chart
// without any point is ErrNothingToPlot.
func DrawAgreement(path string, a Agreement) error {
	p := plot.New()
	p.X.Label.Text, p.Y.Label.Text = a.XLabel, a.YLabel
	p.Legend.Top, p.Legend.Left = true, true
	lo, hi := math.Inf(1), math.Inf(-1)
	n := 0
	for gi, g := range a.Groups {
		var keep AgreementGroup
		for i := range g.X {
			if i >= len(g.Y) || math.IsNaN(g.X[i]) || math.IsNaN(g.Y[i]) {
				continue
			}
			keep.X = append(keep.X, g.X[i])
			keep.Y = append(keep.Y, g.Y[i])
			sd := math.NaN()
			if i < len(g.Spread) {
				sd = g.Spread[i]
			}
			keep.Spread = append(keep.Spread, sd)
			lo = math.Min(lo, math.Min(g.X[i], g.Y[i]))
			hi = math.Max(hi, math.Max(g.X[i], g.Y[i]))
		}
		if len(keep.X) == 0 {
			continue
		}
		n += len(keep.X)
		pts := errPoints{keep}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return fmt.Errorf("plots: agreement: %w", err)
		}
		sc.GlyphStyle = classStyle(gi, vg.Points(3.5))
		bars, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return fmt.Errorf("plots: agreement: %w", err)
		}
		bars.LineStyle.Color = classStyle(gi, 0).Color
		bars.LineStyle.Width = vg.Points(0.6)
		p.Add(bars, sc)
		p.Legend.Add(g.Name, sc)
	}
	if n == 0 {
		return fmt.Errorf("%w: no published figure has a measurement", ErrNothingToPlot)
	}
	lo, hi = math.Max(0, lo-1), hi+1
	diag, err := plotter.NewLine(plotter.XYs{{X: lo, Y: lo}, {X: hi, Y: hi}})
	if err != nil {
		return fmt.Errorf("plots: agreement: %w", err)
	}
	diag.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	diag.LineStyle.Color = rgb(0x999999)
	p.Add(diag)
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = lo, hi, lo, hi
	img, dc := newCanvas(AgreementWidth, AgreementHeight)
	dc = drawTitle(dc, a.Title)
	p.Draw(draw.Crop(dc, vg.Points(4), -vg.Points(10), vg.Points(4), 0))
	return save(img, path)
}
