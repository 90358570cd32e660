//go:build cgo && !purego

package arpack

/*
#cgo LDFLAGS: -larpack
#include <stdlib.h>
#include <arpack/arpack.h>

// The Go side passes C.int arrays: make sure arpack-ng was built with 32-bit integers.
_Static_assert(sizeof(a_int) == sizeof(int), "arpack-ng built with INTERFACE64: a_int is not int");
*/
import "C"

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/psdlearn/psdlearn/internal/arpacklock"

	"gonum.org/v1/gonum/mat"
)

// HaveNative reports whether the arpack-ng implementation is compiled in.
const HaveNative = true

// Native drives arpack-ng's reverse-communication dsaupd_c/dseupd_c (mode 1,
// exact shifts) through cgo. The solve runs under a process-wide lock because
// ARPACK keeps Fortran SAVE state: concurrent solves are safe but serialised,
// and Operator.Apply must not itself call Native (it would deadlock).
// The start vector is always supplied from Go (Seed or Start), so results do
// not depend on ARPACK's internal random generator, except in the rare case of
// an invariant Krylov subspace, where ARPACK draws a new direction from a
// generator whose state persists across solves in the process.
var Native Solver = nativeSolver{}

type nativeSolver struct{}

// dptr returns a C pointer to the first element of a non-empty Go slice.
func dptr(s []float64) *C.double { return (*C.double)(unsafe.Pointer(&s[0])) }

func (nativeSolver) Eigs(ctx context.Context, op Operator, k int, which Which, opt Options) (Result, error) {
	p, err := setup(op, k, which, opt)
	if err != nil {
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("arpack: %w", err)
	}
	n, ncv := p.n, p.ncv
	resid := p.start
	v := make([]float64, n*ncv)
	workd := make([]float64, 3*n)
	lworkl := ncv*ncv + 8*ncv
	workl := make([]float64, lworkl)
	iparam := make([]C.int, 11)
	ipntr := make([]C.int, 14)
	iparam[0] = 1 // exact shifts
	iparam[2] = C.int(p.maxIter)
	iparam[3] = 1 // block size
	iparam[6] = 1 // mode 1: A·x = λ·x
	bmat := C.CString("I")
	defer C.free(unsafe.Pointer(bmat))
	wh := C.CString(which.String())
	defer C.free(unsafe.Pointer(wh))
	ido := C.int(0)
	info := C.int(1) // resid holds the start vector
	applies := 0

	arpacklock.Mu.Lock()
	defer arpacklock.Mu.Unlock()
	// ido = 0 on the first call re-initialises all of dsaupd's saved state, so a
	// solve abandoned by cancellation or a panic in Apply leaves nothing behind.
	for {
		C.dsaupd_c(&ido, bmat, C.int(n), wh, C.int(k), C.double(p.tol), dptr(resid), C.int(ncv),
			dptr(v), C.int(n), &iparam[0], &ipntr[0], dptr(workd), dptr(workl), C.int(lworkl), &info)
		if ido == 99 {
			break
		}
		if ido != -1 && ido != 1 {
			return Result{}, fmt.Errorf("arpack: dsaupd asked for unexpected operation ido = %d", int(ido))
		}
		if err := ctx.Err(); err != nil {
			return Result{}, fmt.Errorf("arpack: %w", err)
		}
		x := workd[int(ipntr[0])-1 : int(ipntr[0])-1+n]
		y := workd[int(ipntr[1])-1 : int(ipntr[1])-1+n]
		op.Apply(y, x)
		applies++
		if err := checkFinite(y); err != nil {
			return Result{}, err
		}
	}
	iters := int(iparam[2])
	nconv := int(iparam[4])
	var runErr error
	switch info {
	case 0:
	case 1:
		runErr = &NotConvergedError{Requested: k, Converged: nconv, Iterations: iters}
	case 3:
		runErr = &Error{Routine: "dsaupd", Info: 3}
	default:
		return Result{}, &Error{Routine: "dsaupd", Info: int(info)}
	}
	res := Result{Iterations: iters, OpApplies: applies}
	if nconv == 0 {
		return res, runErr
	}
	nconv = min(nconv, k)
	sel := make([]C.int, ncv)
	d := make([]float64, k)
	z := make([]float64, n*k)
	var info2 C.int
	howmny := C.CString("A")
	defer C.free(unsafe.Pointer(howmny))
	C.dseupd_c(1, howmny, &sel[0], dptr(d), dptr(z), C.int(n), 0,
		bmat, C.int(n), wh, C.int(k), C.double(p.tol), dptr(resid), C.int(ncv), dptr(v), C.int(n),
		&iparam[0], &ipntr[0], dptr(workd), dptr(workl), C.int(lworkl), &info2)
	if info2 != 0 {
		return Result{}, &Error{Routine: "dseupd", Info: int(info2)}
	}
	res.Values = append([]float64(nil), d[:nconv]...)
	vec := mat.NewDense(n, nconv, nil)
	raw := vec.RawMatrix()
	for j := 0; j < nconv; j++ {
		col := z[j*n : (j+1)*n]
		for i, x := range col {
			raw.Data[i*raw.Stride+j] = x
		}
	}
	res.Vectors = vec
	return res, runErr
}
