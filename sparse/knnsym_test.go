package sparse

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestTransposeCols checks transposeCols against the element-by-element
// definition on shapes that are and are not multiples of the 8×8 blocks,
// in both precisions (single precision takes the AVX2 blocks where the
// processor has them).
func TestTransposeCols(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	shapes := [][3]int{{256, 512, 0}, {256, 512, 256}, {256, 512, 3}, {8, 8, 0}, {7, 9, 1}, {1, 1, 0}, {13, 100, 99}, {256, 37, 5}, {250, 511, 17}}
	for range 20 {
		nc := 1 + rng.IntN(600)
		shapes = append(shapes, [3]int{1 + rng.IntN(300), nc, rng.IntN(nc + 1)})
	}
	for _, sh := range shapes {
		m, nc, c0 := sh[0], sh[1], sh[2]
		t.Run(fmt.Sprintf("m%d-nc%d-c%d", m, nc, c0), func(t *testing.T) {
			p32 := make([]float32, m*nc)
			p64 := make([]float64, m*nc)
			for i := range p32 {
				p32[i] = float32(i) + 0.5 // distinct, exact in both
				p64[i] = float64(i) + 0.5
			}
			t32 := make([]float32, m*nc)
			t64 := make([]float64, m*nc)
			for i := range t32 {
				t32[i], t64[i] = -1, -1
			}
			transposeCols(t32, p32, m, nc, c0)
			transposeCols(t64, p64, m, nc, c0)
			for c := 0; c < nc; c++ {
				for i := 0; i < m; i++ {
					want := float64(-1)
					if c >= c0 {
						want = float64(i*nc+c) + 0.5
					}
					if float64(t32[c*m+i]) != want || t64[c*m+i] != want {
						t.Fatalf("column %d row %d: got %g (float32), %g (float64), want %g", c, i, t32[c*m+i], t64[c*m+i], want)
					}
				}
			}
		})
	}
}

// BenchmarkTransposeCols transposes a 256×512 product panel, the symmetric
// screen's, in single precision.
//
//	go test -run XXX -bench TransposeCols ./sparse
func BenchmarkTransposeCols(b *testing.B) {
	const m, nc = knnQueryBlock, knnRefBlock
	prod := make([]float32, m*nc)
	tr := make([]float32, m*nc)
	b.Run("blocks", func(b *testing.B) {
		for b.Loop() {
			transposeCols(tr, prod, m, nc, 0)
		}
	})
	b.Run("tiles", func(b *testing.B) {
		for b.Loop() {
			transposeTiles(tr, prod, m, nc, 0)
		}
	})
}
