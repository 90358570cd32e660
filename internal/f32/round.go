package f32

// MinNormal is the smallest positive normal float32, 2⁻¹²⁶ ≈ 1.18e-38.
const MinNormal = 0x1p-126

// Round returns v rounded to float32, flushed to zero when the result
// would be subnormal (below MinNormal in magnitude).
//
// Every float32 that reaches a single-precision kernel (SGEMM, the
// Laplacian product, the k-NN scans) comes through Round: on x86 an
// arithmetic operation with a subnormal operand or result takes a
// microcode assist of about a hundred cycles, and a few thousand
// subnormal entries in a factor made OpenBLAS's SGEMM five to six times
// slower (an eigenvector's entries along the constant pixels of MNIST,
// scaled by the square root of a tiny eigenvalue). A value that small is
// 2⁻¹⁰³ times below the rounding unit of any normal float32 it is added
// to, so flushing it changes no result by more than float32 rounding
// already does, except a sum made only of such values (which float32
// cannot represent to any relative accuracy anyway).
func Round(v float64) float32 {
	f := float32(v)
	if f > -MinNormal && f < MinNormal {
		return 0
	}
	return f
}

// FromFloat64 sets dst[i] = Round(src[i]). dst must be at least as long
// as src.
func FromFloat64(dst []float32, src []float64) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = Round(v)
	}
}
