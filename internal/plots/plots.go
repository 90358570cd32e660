// Package plots draws the charts of the psdlearn CLI and the benchmark
// suites as PNG files: class-coloured embeddings with equal axis scales,
// convergence as a log relative gap against iterations and time, and kernel
// heat maps with rows ordered by class.
//
// Every function renders onto one image canvas of a fixed size (see the
// Size constants) at DPI dots per inch, so a test can check the file's
// dimensions.
package plots

import (
	"errors"
	"fmt"
	"image/color"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// DPI is the resolution of every PNG written by this package.
const DPI = 96

// The sizes of the charts, in inches: multiply by DPI for pixels.
const (
	EmbeddingWidth, EmbeddingHeight     = 8.0, 6.5
	ConvergenceWidth, ConvergenceHeight = 11.0, 4.75
	HeatmapWidth, HeatmapHeight         = 8.0, 7.0
)

// ErrNothingToPlot is returned when the input holds nothing a chart could
// show (no points, or curves without two iterations to compare).
var ErrNothingToPlot = errors.New("plots: nothing to plot")

// classColors is Tableau 10, a palette whose ten hues stay distinguishable
// on white; with more classes the glyph shape changes every ten classes.
var classColors = []color.Color{
	rgb(0x4e79a7), rgb(0xf28e2b), rgb(0xe15759), rgb(0x76b7b2), rgb(0x59a14f),
	rgb(0xedc948), rgb(0xb07aa1), rgb(0xff9da7), rgb(0x9c755f), rgb(0x79706e),
}

var classShapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.PyramidGlyph{}, draw.BoxGlyph{}, draw.CrossGlyph{}, draw.RingGlyph{}}

func rgb(v uint32) color.RGBA {
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0xff}
}

// classStyle is the colour and shape of class c.
func classStyle(c int, radius vg.Length) draw.GlyphStyle {
	if c < 0 {
		c = 0
	}
	return draw.GlyphStyle{
		Color:  classColors[c%len(classColors)],
		Shape:  classShapes[(c/len(classColors))%len(classShapes)],
		Radius: radius,
	}
}

// className is the legend text of class c.
func className(classes []string, c int) string {
	if c >= 0 && c < len(classes) && classes[c] != "" {
		return classes[c]
	}
	return fmt.Sprintf("class %d", c)
}

// newCanvas returns an image canvas of w×h inches with a white background.
func newCanvas(w, h float64) (*vgimg.Canvas, draw.Canvas) {
	img := vgimg.NewWith(vgimg.UseWH(vg.Length(w)*vg.Inch, vg.Length(h)*vg.Inch), vgimg.UseDPI(DPI), vgimg.UseBackgroundColor(color.White))
	return img, draw.New(img)
}

// save writes img to path as PNG.
func save(img *vgimg.Canvas, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("plots: writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("plots: writing %s: %w", path, err)
	}
	return nil
}

// titleStyle is the style of a chart's overall title.
func titleStyle(size vg.Length) text.Style {
	sty := text.Style{
		Color:   color.Black,
		Font:    font.From(plot.DefaultFont, size),
		XAlign:  draw.XCenter,
		YAlign:  draw.YTop,
		Handler: plot.DefaultTextHandler,
	}
	return sty
}

// drawTitle writes title centred at the top of c and returns c without the
// space it took.
func drawTitle(c draw.Canvas, title string) draw.Canvas {
	if title == "" {
		return c
	}
	sty := titleStyle(vg.Points(13))
	top := c.Max.Y - vg.Points(4)
	c.FillText(sty, vg.Point{X: c.Center().X, Y: top}, title)
	h := sty.Height(title)
	return draw.Crop(c, 0, 0, 0, -(h + vg.Points(10)))
}
