package plots

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Sense says which way a curve's quantity improves.
type Sense int

const (
	// Infer reads the sense from the curves: increasing on the whole
	// (the mean last value above the mean first) means maximised.
	Infer Sense = iota
	// Minimized quantities fall to their optimum (primal objectives, losses).
	Minimized
	// Maximized quantities rise to their optimum (dual objectives, LP values).
	Maximized
)

// Series is one run's curve: Values[t] after iteration t+1 and, when known,
// Seconds[t] the wall time elapsed by then.
type Series struct {
	Name    string
	Values  []float64
	Seconds []float64
	// Gap, when set, is drawn instead of the gap computed from Values: a
	// relative duality gap the algorithm reports per iteration.
	Gap []float64
	// Color overrides the series colour; Dashed draws it dashed.
	Color  color.Color
	Dashed bool
}

// Curves describes a convergence chart.
type Curves struct {
	Title string
	// Quantity names what Values hold ("dual objective", "π", …), for the
	// axis label.
	Quantity string
	Sense    Sense
	// Raw draws the values themselves on the log axis instead of a gap,
	// for positive quantities that are not converging to an optimum (a
	// cumulative loss).
	Raw bool
	// GapLabel, when set, labels the y axis instead of "relative gap" (use
	// it with Series.Gap, and say in Title what the gap is). Keep it short:
	// a y label longer than the axis pushes the data area down.
	GapLabel string
	// TimeLabel labels the time axis ("seconds" when empty).
	TimeLabel string
	Series    []Series
}

// RelativeGap returns |v_t − f*| / max(|f*|, tiny) for every value, where
// f* is ref; the best value has gap 0.
func RelativeGap(values []float64, ref float64) []float64 {
	scale := math.Abs(ref)
	if scale < 1e-300 {
		scale = 1
	}
	out := make([]float64, len(values))
	for i, v := range values {
		out[i] = math.Abs(v-ref) / scale
	}
	return out
}

// Reference returns f*, the best value reached by any of the series, and
// the sense it was chosen by (Infer resolved).
func (c Curves) Reference() (float64, Sense) {
	sense := c.Sense
	if sense == Infer {
		var first, last float64
		k := 0
		for _, s := range c.Series {
			if len(s.Values) >= 2 {
				first += s.Values[0]
				last += s.Values[len(s.Values)-1]
				k++
			}
		}
		sense = Minimized
		if k > 0 && last > first {
			sense = Maximized
		}
	}
	ref := math.NaN()
	for _, s := range c.Series {
		for _, v := range s.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			if math.IsNaN(ref) || (sense == Maximized && v > ref) || (sense == Minimized && v < ref) {
				ref = v
			}
		}
	}
	return ref, sense
}

// Convergence writes a two-panel chart to path: on a logarithmic y axis,
// the relative gap of each series to the best value reached, f*, against
// the iteration (left) and against the elapsed time (right, for the series
// with Seconds). Points at the best value itself (gap 0) cannot be drawn on
// a log axis and are left out. It returns ErrNothingToPlot when no series
// has two iterations: a single closed-form solve has no convergence to
// show. The chart is ConvergenceWidth × ConvergenceHeight inches.
func Convergence(path string, c Curves) error {
	longest := 0
	for _, s := range c.Series {
		longest = max(longest, len(s.Values), len(s.Gap))
	}
	if longest < 2 {
		return fmt.Errorf("%w: no curve has two iterations", ErrNothingToPlot)
	}
	ref, sense := c.Reference()
	ylabel := c.GapLabel
	subtitle := ""
	switch {
	case ylabel != "":
	case c.Raw:
		ylabel = c.Quantity
	default:
		q := c.Quantity
		if q == "" {
			q = "objective"
		}
		ylabel = "relative gap"
		best := "smallest"
		if sense == Maximized {
			best = "largest"
		}
		subtitle = fmt.Sprintf("relative gap |f − f*| / |f*|; f: %s; f* = %s value reached = %s", q, best, strconv.FormatFloat(ref, 'g', 8, 64))
	}
	type drawn struct {
		byIter, byTime plotter.XYs
		s              Series
	}
	var curves []drawn
	lo, hi := math.Inf(1), math.Inf(-1)
	hasTime := false
	for _, s := range c.Series {
		y := s.Gap
		if y == nil {
			if c.Raw {
				y = s.Values
			} else {
				y = RelativeGap(s.Values, ref)
			}
		}
		var d drawn
		d.s = s
		for t, v := range y {
			if !(v > 0) || math.IsInf(v, 0) {
				continue
			}
			lo, hi = min(lo, v), max(hi, v)
			d.byIter = append(d.byIter, plotter.XY{X: float64(t + 1), Y: v})
			if t < len(s.Seconds) && s.Seconds[t] > 0 {
				d.byTime = append(d.byTime, plotter.XY{X: s.Seconds[t], Y: v})
			}
		}
		hasTime = hasTime || len(d.byTime) > 0
		curves = append(curves, d)
	}
	if math.IsInf(lo, 1) {
		return fmt.Errorf("%w: every gap is zero", ErrNothingToPlot)
	}
	ymin, ymax := math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
	if ymin == ymax {
		ymin /= 10
	}
	panel := func(title, xlabel string, byTime bool) (*plot.Plot, error) {
		p := plot.New()
		p.Title.Text = title
		p.X.Label.Text = xlabel
		p.Y.Label.Text = ylabel
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = decadeTicks{}
		p.Y.Min, p.Y.Max = ymin, ymax
		p.Add(plotter.NewGrid())
		p.Legend.Top = true
		for i, d := range curves {
			pts := d.byIter
			if byTime {
				pts = d.byTime
			}
			if len(pts) == 0 {
				continue
			}
			line, points, err := plotter.NewLinePoints(pts)
			if err != nil {
				return nil, fmt.Errorf("plots: %w", err)
			}
			col := d.s.Color
			if col == nil {
				col = classColors[i%len(classColors)]
			}
			line.Color, points.Color = col, col
			line.Width = vg.Points(1.5)
			points.Shape = draw.CircleGlyph{}
			points.Radius = vg.Points(1.5)
			if len(pts) > 60 {
				points.Radius = 0
			}
			if d.s.Dashed {
				line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			}
			p.Add(line, points)
			if d.s.Name != "" {
				p.Legend.Add(d.s.Name, line)
			}
		}
		return p, nil
	}
	byIter, err := panel("against iterations", "iteration", false)
	if err != nil {
		return err
	}
	plots := []*plot.Plot{byIter}
	if hasTime {
		tl := c.TimeLabel
		if tl == "" {
			tl = "seconds"
		}
		byTime, err := panel("against time", tl, true)
		if err != nil {
			return err
		}
		plots = append(plots, byTime)
	}
	img, dc := newCanvas(ConvergenceWidth, ConvergenceHeight)
	title := c.Title
	if subtitle != "" {
		title += "\n" + subtitle
	}
	dc = drawTitle(dc, title)
	tiles := draw.Tiles{Rows: 1, Cols: len(plots), PadX: vg.Points(18), PadLeft: vg.Points(6), PadRight: vg.Points(10), PadBottom: vg.Points(4)}
	areas := plot.Align([][]*plot.Plot{plots}, tiles, dc)
	for i, p := range plots {
		p.Draw(areas[0][i])
	}
	return save(img, path)
}

// decadeTicks labels the powers of ten of a log axis (10⁻³ as 1e-03) and
// marks the integer multiples between them; with less than two decades in
// range it also labels 2× and 5×.
type decadeTicks struct{}

func (decadeTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	a, b := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	few := b-a < 2
	// Beyond 6 decades the minor ticks merge into a bar and every second
	// decade is labelled; beyond 12, every third.
	minor, every := b-a <= 6, 1+(b-a-1)/6
	var ticks []plot.Tick
	for e := a; e <= b; e++ {
		base := math.Pow(10, float64(e))
		for m := 1; m <= 9; m++ {
			v := base * float64(m)
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) || (m > 1 && !minor) {
				continue
			}
			t := plot.Tick{Value: v}
			if (m == 1 && (e-a)%every == 0) || (few && (m == 2 || m == 5)) {
				t.Label = strconv.FormatFloat(v, 'g', 3, 64)
				if e < -3 || e > 4 {
					t.Label = strconv.FormatFloat(v, 'e', 0, 64)
				}
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}
