package plots

import (
	"fmt"
	"image/png"
	"math"
	"os"
)

// CheckPNG decodes the PNG file at path and reports an error unless it is
// w×h inches at DPI (to the nearest pixel) and not blank: at least 100 of
// the pixels sampled on a 3-pixel grid are neither white nor transparent.
// Tests of every program that draws through this package use it.
func CheckPNG(path string, w, h float64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	b := img.Bounds()
	if want := [2]int{int(math.Round(w * DPI)), int(math.Round(h * DPI))}; b.Dx() != want[0] || b.Dy() != want[1] {
		return fmt.Errorf("%s is %d×%d pixels, want %d×%d", path, b.Dx(), b.Dy(), want[0], want[1])
	}
	coloured := 0
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, a := img.At(x, y).RGBA()
			if a > 0 && (r < 0xf000 || g < 0xf000 || bl < 0xf000) {
				coloured++
			}
		}
	}
	if coloured < 100 {
		return fmt.Errorf("%s looks blank (%d coloured samples)", path, coloured)
	}
	return nil
}
