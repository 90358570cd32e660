package plots

import (
	"fmt"
	"image"
	"image/color"
	imgdraw "image/draw"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// MaxHeatmap is the largest N a kernel heat map is drawn for: beyond it a
// cell is smaller than a pixel.
const MaxHeatmap = 500

// Kernel is an N×N kernel matrix to draw; Labels[i] is the class of object
// i (an index into Classes; nil: one class).
type Kernel struct {
	Title   string
	K       mat.Matrix
	Labels  []int
	Classes []string
}

// Heatmap writes a heat map of the kernel to path with rows and columns
// ordered by class (stable within a class), the class blocks outlined and
// named on the axes, and a colour bar. Kernels with negative entries use a
// diverging blue–red map centred on 0, others a sequential one. N must be at
// most MaxHeatmap. The chart is HeatmapWidth × HeatmapHeight inches.
func Heatmap(path string, k Kernel) error {
	if k.K == nil {
		return fmt.Errorf("%w: nil kernel", ErrNothingToPlot)
	}
	n, c := k.K.Dims()
	if n != c || n == 0 {
		return fmt.Errorf("plots: kernel is %d×%d, want square and non-empty", n, c)
	}
	if n > MaxHeatmap {
		return fmt.Errorf("plots: kernel heat map of N = %d objects: at most %d", n, MaxHeatmap)
	}
	if k.Labels != nil && len(k.Labels) != n {
		return fmt.Errorf("plots: %d labels for a %d×%d kernel", len(k.Labels), n, n)
	}
	label := func(i int) int {
		if k.Labels == nil {
			return 0
		}
		return k.Labels[i]
	}
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	sort.SliceStable(perm, func(a, b int) bool { return label(perm[a]) < label(perm[b]) })
	// The colour range is that of the off-diagonal entries (all entries
	// when N = 1): a dominant diagonal, as in a kernel near the identity,
	// would otherwise wash out the structure between objects. Diagonal
	// entries beyond the range take the end colours.
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i == j && n > 1 {
				continue
			}
			v := k.K.At(i, j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if math.IsInf(lo, 1) {
		return fmt.Errorf("%w: no finite kernel entry", ErrNothingToPlot)
	}
	// Diverging around 0 when the negative entries are more than rounding
	// next to the positive ones; sequential otherwise.
	diverging := lo < 0 && -lo > 0.05*max(hi, 0)
	var cmap palette.ColorMap
	if diverging {
		m := max(-lo, hi)
		div := moreland.SmoothBlueRed()
		div.SetMin(-m)
		div.SetMax(m)
		cmap = div
	} else {
		cmap = moreland.ExtendedBlackBody()
		if hi == lo {
			hi = lo + 1
		}
		cmap.SetMin(lo)
		cmap.SetMax(hi)
	}
	// The cells are painted into an image, f×f pixels each, at about the
	// size it is drawn: the vector cells of plotter.HeatMap leave hairline
	// seams between them, and a one-pixel-per-cell raster is blurred when
	// scaled up.
	f := max(1, (800+n-1)/n)
	raster := image.NewRGBA(image.Rect(0, 0, n*f, n*f))
	for r := 0; r < n; r++ {
		for c := 0; c < n; c++ {
			v := k.K.At(perm[r], perm[c])
			col := color.Color(color.RGBA{R: 0x80, G: 0x80, B: 0x80, A: 0xff})
			if !math.IsNaN(v) {
				if cc, err := cmap.At(min(max(v, cmap.Min()), cmap.Max())); err == nil {
					col = cc
				}
			}
			imgdraw.Draw(raster, image.Rect(c*f, r*f, (c+1)*f, (r+1)*f), image.NewUniform(col), image.Point{}, imgdraw.Src)
		}
	}
	cells := plotter.NewImage(raster, -0.5, -0.5, float64(n)-0.5, float64(n)-0.5)

	p := plot.New()
	p.Title.Text = k.Title
	p.Add(cells)
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
	p.X.Padding, p.Y.Padding = 0, 0
	p.X.Label.Text = "object j (ordered by class)"
	p.Y.Label.Text = "object i (ordered by class)"
	// Class blocks: boundaries and centred names.
	var xt, yt plot.ConstantTicks
	start := 0
	for i := 1; i <= n; i++ {
		if i < n && label(perm[i]) == label(perm[start]) {
			continue
		}
		centre := float64(start+i-1) / 2
		name := className(k.Classes, label(perm[start]))
		if k.Labels == nil {
			name = ""
		}
		xt = append(xt, plot.Tick{Value: centre, Label: name})
		yt = append(yt, plot.Tick{Value: float64(n-1) - centre, Label: name})
		if i < n {
			b := float64(i) - 0.5
			for _, pts := range []plotter.XYs{{{X: b, Y: -0.5}, {X: b, Y: float64(n) - 0.5}}, {{X: -0.5, Y: float64(n) - 1 - b}, {X: float64(n) - 0.5, Y: float64(n) - 1 - b}}} {
				l, err := plotter.NewLine(pts)
				if err != nil {
					return fmt.Errorf("plots: %w", err)
				}
				l.Color = color.RGBA{R: 0x30, G: 0x30, B: 0x30, A: 0xff}
				if !diverging {
					l.Color = color.White // on black-body colours, mostly dark
				}
				l.Width = vg.Points(0.8)
				p.Add(l)
			}
		}
		start = i
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = xt, yt
	if len(xt) > 12 {
		p.X.Tick.Label.Rotation = math.Pi / 2
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
	}

	img, dc := newCanvas(HeatmapWidth, HeatmapHeight)
	barWidth := vg.Inch * 1.1
	main := draw.Crop(dc, vg.Points(4), -barWidth, vg.Points(4), -vg.Points(6))
	// A square data area: shrink the canvas along its longer side.
	da := p.DataCanvas(main)
	if w, h := da.Size().X, da.Size().Y; w > h {
		main = draw.Crop(main, 0, -(w - h), 0, 0)
	} else if h > w {
		main = draw.Crop(main, 0, 0, h-w, 0)
	}
	p.Draw(main)
	da = p.DataCanvas(main)

	bar := plot.New()
	cb := &plotter.ColorBar{ColorMap: cmap, Vertical: true, Colors: 256}
	bar.Add(cb)
	bar.HideX()
	bar.Y.Padding = 0
	bar.Y.Label.Text = "K_ij (range: off-diagonal entries)"
	barArea := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: main.Max.X + vg.Points(8), Y: da.Min.Y},
		Max: vg.Point{X: main.Max.X + barWidth - vg.Points(20), Y: da.Max.Y},
	}}
	bar.Draw(barArea)
	return save(img, path)
}
