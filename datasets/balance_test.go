package datasets

import (
	"testing"

	"github.com/psdlearn/psdlearn/data"
)

// TestBalance checks the generated Balance Scale set against the UCI
// description: 625 rows, every combination once, 288 L, 49 B, 288 R, and a
// few rows of the UCI file in its order.
func TestBalance(t *testing.T) {
	d, err := data.Load("builtin:balance", data.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	seen := map[[4]float64]bool{}
	for i := 0; i < d.Len(); i++ {
		r := d.X.RawRowView(i)
		k := [4]float64{r[0], r[1], r[2], r[3]}
		if seen[k] {
			t.Fatalf("row %d repeats %v", i, k)
		}
		seen[k] = true
		counts[d.Classes[d.Y[i]]]++
	}
	if len(seen) != 625 || counts["L"] != 288 || counts["B"] != 49 || counts["R"] != 288 {
		t.Errorf("%d distinct rows, classes %v; want 625 rows, 288 L, 49 B, 288 R", len(seen), counts)
	}
	// The first, second, sixth and last rows of the UCI file.
	for _, c := range []struct {
		row   int
		x     [4]float64
		class string
	}{
		{0, [4]float64{1, 1, 1, 1}, "B"},
		{1, [4]float64{1, 1, 1, 2}, "R"},
		{5, [4]float64{1, 1, 2, 1}, "R"},
		{124, [4]float64{1, 5, 5, 5}, "R"},
		{150, [4]float64{2, 2, 1, 1}, "L"},
		{624, [4]float64{5, 5, 5, 5}, "B"},
	} {
		r := d.X.RawRowView(c.row)
		if [4]float64{r[0], r[1], r[2], r[3]} != c.x || d.Classes[d.Y[c.row]] != c.class {
			t.Errorf("row %d = %v %s, want %v %s", c.row, r, d.Classes[d.Y[c.row]], c.x, c.class)
		}
	}
}
