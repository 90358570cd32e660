//go:build cgo && !purego

package lbfgsb

/*
#cgo LDFLAGS: -l:liblbfgsb.a -lgfortran -lopenblas -lm
#cgo LDFLAGS: -Wl,--wrap=_gfortran_st_write -Wl,--wrap=_gfortran_st_write_done
#cgo LDFLAGS: -Wl,--wrap=_gfortran_transfer_character_write -Wl,--wrap=_gfortran_transfer_real_write
#cgo LDFLAGS: -Wl,--wrap=_gfortran_transfer_integer_write -Wl,--wrap=_gfortran_transfer_array_write
#cgo LDFLAGS: -Wl,--wrap=timer_
#include <stddef.h>

// Debian's lbfgsb.f (silence.patch) guards the message "ascent direction in
// projection" in lnsrlb with an undefined local iprint, and gfortran compiles
// the write as unconditional: with iprint = -1 the library still writes to
// stdout whenever a line search starts uphill. The static liblbfgsb.a is the
// only object in the link that calls the gfortran formatted-write entry
// points directly (shared Fortran libraries such as libarpack resolve theirs
// at run time and are unaffected), so they are wrapped into no-ops here:
// L-BFGS-B never writes anything. psd_lbfgsb_writes counts the suppressed
// write statements.
static long psd_lbfgsb_writes;
void __wrap__gfortran_st_write(void *dt) { __atomic_add_fetch(&psd_lbfgsb_writes, 1, __ATOMIC_RELAXED); }
void __wrap__gfortran_st_write_done(void *dt) {}
void __wrap__gfortran_transfer_character_write(void *dt, const char *p, size_t len) {}
void __wrap__gfortran_transfer_real_write(void *dt, void *p, int kind) {}
void __wrap__gfortran_transfer_integer_write(void *dt, void *p, int kind) {}
void __wrap__gfortran_transfer_array_write(void *dt, void *desc, int kind, size_t len) {}
static long psd_suppressed_writes(void) { return __atomic_load_n(&psd_lbfgsb_writes, __ATOMIC_RELAXED); }

// L-BFGS-B times its phases for its printed report (iprint >= 0, never used
// here) through timer, which is gfortran's cpu_time, one getrusage system
// call each: about four per iteration, 146 in a 36-iteration solve of
// n = 100. They decide nothing, so timer is wrapped to return zero.
void __wrap_timer_(double *ttime) { *ttime = 0; }

// setulb_ of L-BFGS-B 3.0 (Debian liblbfgsb, LINPACK replaced by LAPACK):
// character*60 task and csave carry two hidden size_t lengths at the end;
// LOGICAL and INTEGER are 4-byte ints.
extern void setulb_(int *n, int *m, double *x, double *l, double *u, int *nbd,
	double *f, double *g, double *factr, double *pgtol, double *wa, int *iwa,
	char *task, int *iprint, char *csave, int *lsave, int *isave, double *dsave,
	size_t task_len, size_t csave_len);

static void psd_setulb(int *n, int *m, double *x, double *l, double *u, int *nbd,
	double *f, double *g, double *factr, double *pgtol, double *wa, int *iwa,
	char *task, int *iprint, char *csave, int *lsave, int *isave, double *dsave) {
	setulb_(n, m, x, l, u, nbd, f, g, factr, pgtol, wa, iwa, task, iprint, csave,
		lsave, isave, dsave, 60, 60);
}
*/
import "C"

import (
	"context"
	"math"
	"strings"
	"unsafe"
)

// HaveNative reports whether the native (Fortran L-BFGS-B) solver is compiled in.
const HaveNative = true

// Native drives the Fortran setulb_ of Debian's liblbfgsb (L-BFGS-B 3.0)
// through cgo. The reverse-communication loop runs in Go: Fortran never calls
// back into Go, and all its state lives in per-solve work arrays, so
// concurrent solves are safe.
var Native Solver = nativeSolver{}

type nativeSolver struct{}

// suppressedWrites returns how many Fortran write statements of liblbfgsb
// have been swallowed (see the cgo preamble).
func suppressedWrites() int64 { return int64(C.psd_suppressed_writes()) }

// fstring is a blank-padded Fortran character*60.
type fstring [60]byte

func (s *fstring) set(v string) {
	n := copy(s[:], v)
	for i := n; i < len(s); i++ {
		s[i] = ' '
	}
}

func (s *fstring) String() string { return strings.TrimRight(string(s[:]), " \x00") }

func (nativeSolver) Minimize(ctx context.Context, p Problem, x0 []float64, s Settings) (Result, error) {
	st, err := prepare(p, x0, s)
	if err != nil {
		return Result{}, err
	}
	n, m := st.n, st.m
	// Fortran INTEGER is 32 bits: the work array offsets must fit.
	if wa := 2*m*n + 5*n + 11*m*m + 8*m; n > math.MaxInt32/8 || m > 1<<14 || wa > math.MaxInt32 || wa < 0 {
		return Result{}, invalid("n = %d, M = %d too large for the Fortran solver", n, m)
	}
	d := newDriver(ctx, p, st, s)
	x := append([]float64(nil), st.x0...)
	start := append([]float64(nil), st.x0...)
	projectStart(start, st.l, st.u, st.nbd)

	var (
		cn     = C.int(n)
		cm     = C.int(m)
		f      C.double
		factr  = C.double(st.factr)
		pgtol  = C.double(st.pgtol)
		iprint = C.int(-1)
		task   fstring
		csave  fstring
		lsave  [4]C.int
		isave  [44]C.int
		dsave  [29]C.double
	)
	nbd := make([]C.int, n)
	for i, v := range st.nbd {
		nbd[i] = C.int(v)
	}
	g := make([]float64, n)
	wa := make([]float64, 2*m*n+5*n+11*m*m+8*m)
	iwa := make([]C.int, 3*n)
	task.set("START")
	csave.set("")

	dp := func(v []float64) *C.double { return (*C.double)(unsafe.Pointer(&v[0])) }
	for {
		C.psd_setulb(&cn, &cm, dp(x), dp(st.l), dp(st.u), &nbd[0], &f, dp(g), &factr, &pgtol,
			dp(wa), &iwa[0], (*C.char)(unsafe.Pointer(&task[0])), &iprint,
			(*C.char)(unsafe.Pointer(&csave[0])), &lsave[0], &isave[0], &dsave[0])
		t := task.String()
		switch {
		case strings.HasPrefix(t, "FG"):
			fv, ok := d.evaluate(x, g)
			if !ok {
				r, msg := d.stopReason()
				return d.finish(r, msg, start)
			}
			f = C.double(fv)
		case strings.HasPrefix(t, "NEW_X"):
			d.accept(x, g, float64(f))
		case strings.HasPrefix(t, "CONV"):
			if strings.Contains(t, "PROJ") {
				return d.finish(ReasonPgtol, t, start)
			}
			return d.finish(ReasonFactr, t, start)
		case strings.HasPrefix(t, "ABNO"):
			return d.finish(ReasonAbnormal, t, start)
		default: // "ERROR: ..." or anything unexpected
			return d.finish(ReasonError, t, start)
		}
	}
}
