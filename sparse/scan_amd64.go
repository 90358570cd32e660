//go:build amd64 && !noasm

package sparse

import "golang.org/x/sys/cpu"

var useAVX2 = cpu.X86.HasAVX2

// nextBelow32 is nextBelow for float32, eight references per instruction on
// processors with AVX2. It computes every screened distance with the same
// float32 operations as nextBelow (an add, an exact doubling, a subtract),
// so both return the same index.
func nextBelow32(row, rv []float32, qv, worst float32, from int) int {
	if !useAVX2 || from >= len(row) {
		return nextBelow(row, rv, qv, worst, from)
	}
	rv = rv[:len(row)]
	return nextBelowAVX2(row, rv, qv, worst, from)
}

// nextBelowAVX2 needs len(rv) ≥ len(row) and 0 ≤ from.
//
//go:noescape
func nextBelowAVX2(row, rv []float32, qv, worst float32, from int) int

// transpose8AVX writes the 8×8 block at src (rows srcStride apart)
// transposed into dst (rows dstStride apart). The slices must reach the
// last element of the block.
//
//go:noescape
func transpose8AVX(dst []float32, dstStride int, src []float32, srcStride int)
