package sparse

// KNNStrategy exposes knnBLAS to the external benchmarks (tree false: the
// GEMM screen only).
var KNNStrategy = knnBLAS
