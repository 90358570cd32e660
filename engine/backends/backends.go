// Package backends registers psdlearn's engine backends: importing it (for
// its side effect) makes engine.Default and engine.Get find them.
//
//   - "go": pure Go on gonum, always registered;
//   - "native": OpenBLAS/LAPACKE, arpack-ng, the Fortran L-BFGS-B and CLP
//     through cgo, registered in cgo builds without the purego tag. Its
//     sparse eigensolver is arpack-ng up to a Lanczos basis of
//     arpack.NativeMaxBasisBytes and the pure-Go Lanczos above, where that
//     is faster (arpack.BySize);
//   - "perturbed": only in builds with the perturbed tag, for tests: the
//     default one of the above with every dense result moved at the level
//     of rounding (package engine/perturbed).
//
// The algorithms depend only on package engine, so a program chooses what it
// links: the root package psdlearn and the command import this package; a
// program that only loads models imports neither.
package backends

import (
	"github.com/psdlearn/psdlearn/arpack"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/lapack"
	"github.com/psdlearn/psdlearn/lbfgsb"
	"github.com/psdlearn/psdlearn/lp"
)

func init() {
	goParts := engine.Parts{Eig: lapack.Go, Eigs: arpack.Go, Min: lbfgsb.Go, LP: lp.Go, BLAS: lapack.GoBLAS}
	register("go", goParts)
	base := goParts
	if lapack.HaveNative && arpack.HaveNative && lbfgsb.HaveNative && lp.HaveNative {
		base = engine.Parts{Eig: lapack.Native, Eigs: arpack.BySize{Small: arpack.Native, Large: arpack.Go, MaxBasisBytes: arpack.NativeMaxBasisBytes}, Min: lbfgsb.Native, LP: lp.Native, BLAS: lapack.NativeBLAS}
		register("native", base)
	}
	registerTestBackends(base)
}

func register(name string, p engine.Parts) {
	b, err := engine.New(name, p)
	if err != nil {
		panic(err) // the parts above are all set: a programming error
	}
	engine.Register(b)
}
