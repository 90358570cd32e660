//go:build !amd64 || noasm

package sparse

func nextBelow32(row, rv []float32, qv, worst float32, from int) int {
	return nextBelow(row, rv, qv, worst, from)
}
