package f64

import (
	"fmt"
	"testing"
)

// BenchmarkDot compares Dot and DotWide on in-cache vectors of the lengths
// of envelope rows.
func BenchmarkDot(b *testing.B) {
	for _, n := range []int{16, 64, 256} {
		x, y := make([]float64, n), make([]float64, n)
		for i := range x {
			x[i], y[i] = float64(i%7)-3, float64(i%5)-2
		}
		var sink float64
		b.Run(fmt.Sprintf("Dot/n=%d", n), func(b *testing.B) {
			for range b.N {
				sink += Dot(x, y)
			}
		})
		b.Run(fmt.Sprintf("DotWide/n=%d", n), func(b *testing.B) {
			for range b.N {
				sink += DotWide(x, y)
			}
		})
		_ = sink
	}
}
