//go:build !amd64 || noasm

package sparse

func nextBelow32(row, rv []float32, qv, worst float32, from int) int {
	return nextBelow(row, rv, qv, worst, from)
}

const useAVX2 = false

func transpose8AVX(dst []float32, dstStride int, src []float32, srcStride int) {
	for i := 0; i < 8; i++ {
		for c := 0; c < 8; c++ {
			dst[c*dstStride+i] = src[i*srcStride+c]
		}
	}
}
