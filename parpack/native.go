//go:build cgo && mpi && !purego

package parpack

/*
#cgo pkg-config: parpack ompi-c
#cgo LDFLAGS: -larpack
#include <stdlib.h>
#include <arpack/parpack.h>

// The Go side passes C.int arrays: make sure arpack-ng was built with 32-bit integers.
_Static_assert(sizeof(a_int) == sizeof(int), "arpack-ng built with INTERFACE64: a_int is not int");
*/
import "C"

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/psdlearn/psdlearn/internal/arpacklock"
	"github.com/psdlearn/psdlearn/mpi"
	"gonum.org/v1/gonum/mat"
)

// HaveNative reports whether the PARPACK implementation is compiled in
// (cgo builds with the mpi tag and without purego).
const HaveNative = true

// Native drives arpack-ng's PARPACK (pdsaupd_c/pdseupd_c, mode 1, exact
// shifts) through cgo on the native world communicator; other
// communicators are refused (wrapping mpi.ErrNotNative). Each rank holds
// its rows of the NCV Lanczos vectors. Per step PARPACK makes its own
// reductions over the ranks (the Gram–Schmidt coefficients and norms,
// vectors of at most NCV+1 floats), the ranks reduce 3 flags
// (cancellation, operator failure, NaN), and the operator does its own
// communication. The whole solve holds the process-wide arpack-ng lock
// (PARPACK keeps Fortran SAVE state, and shares arpack-ng's common blocks
// with package arpack's Native).
var Native Solver = nativeSolver{}

type nativeSolver struct{}

func dptr(s []float64) *C.double { return (*C.double)(unsafe.Pointer(&s[0])) }

func (nativeSolver) Eigs(ctx context.Context, comm mpi.Comm, op Operator, counts []int, k int, which Which, opt Options) (Result, error) {
	p, err := setup(comm, op, counts, k, which, opt)
	if err != nil {
		return Result{}, err
	}
	if !mpi.IsNative(comm) {
		return Result{}, fmt.Errorf("%w: PARPACK needs the native world communicator: %w", ErrInvalidArgument, mpi.ErrNotNative)
	}
	if err := agree(ctx, comm, nil, nil, p.lo); err != nil {
		return Result{}, err
	}
	nloc, ncv := p.loc, p.ncv
	resid := append([]float64(nil), p.start[p.lo:p.lo+nloc]...)
	v := make([]float64, nloc*ncv)
	workd := make([]float64, 3*nloc)
	lworkl := ncv*ncv + 8*ncv
	workl := make([]float64, lworkl)
	iparam := make([]C.int, 11)
	ipntr := make([]C.int, 14)
	iparam[0] = 1 // exact shifts
	iparam[2] = C.int(p.maxIter)
	iparam[3] = 1 // block size
	iparam[6] = 1 // mode 1
	bmat := C.CString("I")
	defer C.free(unsafe.Pointer(bmat))
	wh := C.CString(which.String())
	defer C.free(unsafe.Pointer(wh))
	ido := C.int(0)
	info := C.int(1) // resid holds the start vector
	applies := 0

	arpacklock.Mu.Lock()
	defer arpacklock.Mu.Unlock()
	// ido = 0 on the first call re-initialises pdsaupd's saved state, so a
	// solve abandoned by cancellation leaves nothing behind.
	for {
		if err := mpi.WithFortranHandle(comm, func(h int32) {
			C.pdsaupd_c(C.MPI_Fint(h), &ido, bmat, C.int(nloc), wh, C.int(k), C.double(p.tol), dptr(resid), C.int(ncv),
				dptr(v), C.int(nloc), &iparam[0], &ipntr[0], dptr(workd), dptr(workl), C.int(lworkl), &info)
		}); err != nil {
			return Result{}, fmt.Errorf("parpack: %w", err)
		}
		if ido == 99 {
			break
		}
		if ido != -1 && ido != 1 {
			return Result{}, fmt.Errorf("parpack: pdsaupd asked for unexpected operation ido = %d", int(ido))
		}
		x := workd[int(ipntr[0])-1 : int(ipntr[0])-1+nloc]
		y := workd[int(ipntr[1])-1 : int(ipntr[1])-1+nloc]
		applies++
		opErr := op.Apply(y, x)
		if err := agree(ctx, comm, opErr, y, p.lo); err != nil {
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
		runErr = &Error{Routine: "pdsaupd", Info: 3}
	default:
		return Result{}, &Error{Routine: "pdsaupd", Info: int(info)}
	}
	res := Result{Iterations: iters, OpApplies: applies}
	if nconv == 0 {
		return res, runErr
	}
	nconv = min(nconv, k)
	sel := make([]C.int, ncv)
	d := make([]float64, k)
	z := make([]float64, nloc*k)
	var info2 C.int
	howmny := C.CString("A")
	defer C.free(unsafe.Pointer(howmny))
	if err := mpi.WithFortranHandle(comm, func(h int32) {
		C.pdseupd_c(C.MPI_Fint(h), 1, howmny, &sel[0], dptr(d), dptr(z), C.int(nloc), 0,
			bmat, C.int(nloc), wh, C.int(k), C.double(p.tol), dptr(resid), C.int(ncv), dptr(v), C.int(nloc),
			&iparam[0], &ipntr[0], dptr(workd), dptr(workl), C.int(lworkl), &info2)
	}); err != nil {
		return Result{}, fmt.Errorf("parpack: %w", err)
	}
	if info2 != 0 {
		return Result{}, &Error{Routine: "pdseupd", Info: int(info2)}
	}
	res.Values = append([]float64(nil), d[:nconv]...)
	vec := mat.NewDense(nloc, nconv, nil)
	raw := vec.RawMatrix()
	for j := 0; j < nconv; j++ {
		for i, x := range z[j*nloc : (j+1)*nloc] {
			raw.Data[i*raw.Stride+j] = x
		}
	}
	res.Vectors = vec
	return res, runErr
}
