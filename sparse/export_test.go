package sparse

// KNNStrategy exposes knnBLAS to the external benchmarks (tree false: the
// GEMM screen only).
var KNNStrategy = knnBLAS

// ScreenFallbacks reads the count of uncertified single-precision screens.
func ScreenFallbacks() int64 { return screenFallbacks.Load() }
