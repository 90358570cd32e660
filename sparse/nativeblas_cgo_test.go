//go:build cgo && !purego

package sparse

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/netlib/blas/netlib"
)

// nativeBLAS is OpenBLAS through cgo, as the native engine backend uses it
// (the tests cannot import package lapack: it imports engine, which imports
// sparse).
var nativeBLAS blas.Float64 = netlib.Implementation{}
