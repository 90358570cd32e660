//go:build !amd64 || noasm

package f64

func wsqAccAVX2(n int, w, a, b *float64, acc *[16]float64) {
	panic("f64: wsqAccAVX2 without assembly")
}

func addScaledSqAVX2(n int, s float64, acc, a, b *float64) {
	panic("f64: addScaledSqAVX2 without assembly")
}
