//go:build amd64 && !noasm

package f64

// wsqAccAVX2 (wsq_amd64.s) is WeightedSqDist's accumulation over the
// first n entries, n a multiple of 4 (wsqAccGeneric's order).
//
//go:noescape
func wsqAccAVX2(n int, w, a, b *float64, acc *[16]float64)

// addScaledSqAVX2 (wsq_amd64.s) is AddScaledSq over the first n entries,
// n a multiple of 4.
//
//go:noescape
func addScaledSqAVX2(n int, s float64, acc, a, b *float64)
