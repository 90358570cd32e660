//go:build !cgo || purego

package sparse

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// nativeBLAS is gonum's BLAS in builds without the native backend.
var nativeBLAS blas.Float64 = gonum.Implementation{}
