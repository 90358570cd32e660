package datasets

import (
	"math"
	"testing"

	"github.com/psdlearn/psdlearn/data"
)

// TestSyntheticSets checks the generators' definitions: labels from the
// chessboard's squares, points on the spirals, both classes present,
// seeded reproducibility, and the schemes.
func TestSyntheticSets(t *testing.T) {
	x, y := Chessboard(100, 3)
	counts := [2]int{}
	for i := 0; i < 100; i++ {
		a, b := x.At(i, 0), x.At(i, 1)
		if a < 0 || a >= 4 || b < 0 || b >= 4 || y[i] != (int(a)+int(b))%2 {
			t.Fatalf("point %d = (%g, %g) labelled %d", i, a, b, y[i])
		}
		counts[y[i]]++
	}
	if counts[0] < 30 || counts[1] < 30 {
		t.Errorf("class sizes %v", counts)
	}
	s, c := DoubleSpiral(100, 3)
	for i := 0; i < 100; i++ {
		// Without noise t = 2z and the radius is t: the noise is 0.1.
		tz := 2 * s.At(i, 2)
		r := math.Hypot(s.At(i, 0), s.At(i, 1))
		if math.Abs(r-tz) > 1.0 || c[i] != i%2 {
			t.Fatalf("point %d: radius %g, 2z %g, class %d", i, r, tz, c[i])
		}
	}
	x2, _ := Chessboard(100, 3)
	if x2.At(17, 1) != x.At(17, 1) {
		t.Error("the seed does not fix the chessboard")
	}
	for _, spec := range []string{"chessboard:100", "doublespiral:100:7"} {
		d, err := data.Load(spec, data.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d.Len() != 100 || len(d.Classes) != 2 {
			t.Errorf("%s: %d points, %d classes", spec, d.Len(), len(d.Classes))
		}
	}
	for _, spec := range []string{"chessboard:x", "doublespiral:2", "chessboard:10:1:2", "doublespiral:10:-1"} {
		if _, err := data.Load(spec, data.LoadOptions{}); err == nil {
			t.Errorf("%s: no error", spec)
		}
	}
}
