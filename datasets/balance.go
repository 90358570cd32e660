package datasets

import (
	"github.com/psdlearn/psdlearn/data"
	"gonum.org/v1/gonum/mat"
)

// Balance generates the UCI Balance Scale data set exactly: every one of the
// 5⁴ = 625 combinations of left weight, left distance, right weight and
// right distance (each 1 to 5, in that column order, the last varying
// fastest, as the UCI file lists them), labelled by the side the scale tips
// to — "L" when left weight × left distance exceeds right weight × right
// distance, "R" when it falls short, "B" (balanced) when the two torques
// are equal: 288 L, 49 B and 288 R. It is bundled as builtin:balance.
func Balance() *data.Dataset {
	const n = 5 * 5 * 5 * 5
	x := mat.NewDense(n, 4, nil)
	y := make([]int, n)
	classes := []string{"B", "L", "R"} // sorted, as the CSV loader names classes
	i := 0
	for lw := 1; lw <= 5; lw++ {
		for ld := 1; ld <= 5; ld++ {
			for rw := 1; rw <= 5; rw++ {
				for rd := 1; rd <= 5; rd++ {
					x.SetRow(i, []float64{float64(lw), float64(ld), float64(rw), float64(rd)})
					switch diff := lw*ld - rw*rd; {
					case diff > 0:
						y[i] = 1
					case diff < 0:
						y[i] = 2
					}
					i++
				}
			}
		}
	}
	return &data.Dataset{Name: "balance", X: x, Y: y, Classes: classes}
}
