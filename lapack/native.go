//go:build cgo && !purego

package lapack

/*
#cgo LDFLAGS: -llapacke -lopenblas -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <lapacke.h>
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
int blas_thread_shutdown_(void);
char *openblas_get_corename(void);

// psd_openblas_has reports whether the loaded library exports symbol.
static int psd_openblas_has(const char *symbol) { return dlsym(RTLD_DEFAULT, symbol) != NULL; }

// psd_openblas_select reruns the kernel selection of a DYNAMIC_ARCH build
// of OpenBLAS with OPENBLAS_CORETYPE set to core (its documented override),
// then restores the environment. It returns 0, changing nothing, when the
// library has no runtime selection.
static int psd_openblas_select(const char *core) {
	void (*quit)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gotoblas_dynamic_quit");
	void (*init)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gotoblas_dynamic_init");
	if (quit == NULL || init == NULL) {
		return 0;
	}
	setenv("OPENBLAS_CORETYPE", core, 1);
	quit();
	init();
	unsetenv("OPENBLAS_CORETYPE");
	return 1;
}
*/
import "C"

import (
	"fmt"
	"math"
	"os"
	"strings"
	"unsafe"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/netlib/blas/netlib"
)

// HaveNative reports whether the native (LAPACKE/OpenBLAS) implementation is compiled in.
const HaveNative = true

// Native is the LAPACKE/OpenBLAS eigensolver: dsyevd for the whole spectrum,
// dsyevr with RANGE='V' or 'I' for a part of it (only the wanted eigenpairs are computed).
var Native Eigensolver = nativeSolver{}

// NativeBLAS is OpenBLAS through gonum/netlib's cblas binding.
var NativeBLAS BLAS = netlib.Implementation{}

// psdlearn parallelises with goroutines around BLAS calls, so OpenBLAS runs
// single-threaded unless the user asked for threads through the environment:
// on a loaded 2-core machine its thread pool made dsyevd 3× slower at n ≤ 32
// and 1.2–2.5× slower up to n = 1000 (third_party/README.md).
//
// The pthread build of OpenBLAS starts its thread pool when it is loaded,
// before this init runs, and the idle workers poll with sched_yield for about
// 0.1 s: on two cores that stole CPU time from the first phases of every
// command (11% of the samples of a letters run). Shutting the pool down
// stops them; OpenBLAS rebuilds it on demand if SetBLASThreads asks for
// more threads (the lazy re-initialisation its exec_blas does after fork).
func init() {
	core = selectCore()
	if os.Getenv("OPENBLAS_NUM_THREADS") == "" && os.Getenv("OMP_NUM_THREADS") == "" {
		C.openblas_set_num_threads(1)
		C.blas_thread_shutdown_()
	}
}

// SetBLASThreads sets the number of OpenBLAS threads for the whole process
// (the default is 1). More threads help only single large factorizations
// that run while nothing else computes; psdlearn's own loops already use
// every core through goroutines.
func SetBLASThreads(n int) {
	if n < 1 {
		n = 1
	}
	C.openblas_set_num_threads(C.int(n))
}

// core is the kernel set chosen at initialisation.
var core Core

// BLASCore returns the OpenBLAS kernel set in use. When OpenBLAS selects
// its kernels at run time (a DYNAMIC_ARCH build, as Debian's) and fell
// back to a set for processors without AVX on a processor with AVX2 and
// FMA, the package's initialisation has replaced that choice with the
// best set the processor runs (Cooperlake, SkylakeX or Haswell), the one
// OpenBLAS 0.3.25 and later choose for processors they do not know; its
// Detected field then names OpenBLAS's own choice. Setting
// OPENBLAS_CORETYPE keeps OpenBLAS's handling of it, untouched.
func BLASCore() Core { return core }

// selectCore replaces a pre-AVX fallback of OpenBLAS's kernel selection
// (see BLASCore). It runs once, before any BLAS call.
func selectCore() Core {
	c := Core{Name: coreName()}
	if os.Getenv("OPENBLAS_CORETYPE") != "" {
		return c
	}
	for _, want := range coreFor(c.Name, cpuFeatures()) {
		if !hasCore(want) {
			continue // not compiled into this build
		}
		if !setCore(want) {
			return c
		}
		if got := coreName(); strings.EqualFold(got, want) {
			return Core{Name: got, Detected: c.Name}
		}
	}
	if coreName() != c.Name {
		setCore(c.Name) // a name the library did not accept: restore its choice
	}
	return c
}

// coreName is OpenBLAS's name of the kernel set in use.
func coreName() string { return C.GoString(C.openblas_get_corename()) }

// hasCore reports whether the library holds the kernel set name.
func hasCore(name string) bool {
	sym := C.CString("gotoblas_" + strings.ToUpper(name))
	defer C.free(unsafe.Pointer(sym))
	return C.psd_openblas_has(sym) != 0
}

// setCore reruns OpenBLAS's runtime kernel selection as if
// OPENBLAS_CORETYPE were name; false when the library has none.
func setCore(name string) bool {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return C.psd_openblas_select(cs) != 0
}

// BLASThreads returns the number of OpenBLAS threads in use.
func BLASThreads() int { return int(C.openblas_get_num_threads()) }

type nativeSolver struct{}

func (nativeSolver) SymEig(a mat.Symmetric, r Range, vectors bool) (Eigen, error) {
	n, err := validate(a, r)
	if err != nil {
		return Eigen{}, err
	}
	// The row-major upper triangle is the column-major lower triangle: call
	// LAPACK in column-major order with uplo='L' and no transposition copies.
	data := upperCopy(a, n)
	jobz := C.char('N')
	if vectors {
		jobz = 'V'
	}
	w := make([]float64, n)
	if r.Kind == All {
		info := C.LAPACKE_dsyevd(C.LAPACK_COL_MAJOR, jobz, 'L', C.lapack_int(n),
			(*C.double)(unsafe.Pointer(&data[0])), C.lapack_int(n), (*C.double)(unsafe.Pointer(&w[0])))
		if err := infoError("dsyevd", int(info)); err != nil {
			return Eigen{}, err
		}
		out := Eigen{Values: w}
		if vectors {
			out.Vectors = colMajorToDense(data, n, n)
		}
		return out, nil
	}
	if r.Kind == Values {
		return mrrrValues(data, n, r, vectors)
	}
	return dsyevrIndices(data, n, r, jobz)
}

// dsyevrIndices computes the eigenpairs with indices r.IL..r.IU by dsyevr RANGE='I'.
func dsyevrIndices(data []float64, n int, r Range, jobz C.char) (Eigen, error) {
	var m C.lapack_int
	mmax := r.IU - r.IL + 1
	w := make([]float64, n)
	z := make([]float64, n*mmax)
	isuppz := make([]C.lapack_int, 2*mmax)
	info := C.LAPACKE_dsyevr(C.LAPACK_COL_MAJOR, jobz, 'I', 'L', C.lapack_int(n),
		(*C.double)(unsafe.Pointer(&data[0])), C.lapack_int(n), 0, 0,
		C.lapack_int(r.IL+1), C.lapack_int(r.IU+1), 0, &m,
		(*C.double)(unsafe.Pointer(&w[0])), (*C.double)(unsafe.Pointer(&z[0])), C.lapack_int(n),
		&isuppz[0])
	if err := infoError("dsyevr", int(info)); err != nil {
		return Eigen{}, err
	}
	k := int(m)
	out := Eigen{Values: w[:k:k]}
	if jobz == 'V' && k > 0 {
		out.Vectors = colMajorToDense(z, n, k)
	}
	return out, nil
}

// mrrrValues computes the eigenpairs in (r.VL, r.VU] by tridiagonal reduction
// (dsytrd), MRRR on the wanted part of the tridiagonal spectrum (dstemr
// RANGE='V') and back-transformation of only those vectors (dormtr). dsyevr
// itself uses MRRR only for the whole spectrum and falls back to bisection and
// inverse iteration for a value range, which is slower than the full
// divide-and-conquer solve when the range holds many eigenvalues (half the
// spectrum, as for the negative part of a FrobMetric dual matrix).
func mrrrValues(data []float64, n int, r Range, vectors bool) (Eigen, error) {
	d := make([]float64, n)
	e := make([]float64, n) // dstemr needs length n; e[n-1] is workspace
	tau := make([]float64, max(n-1, 1))
	info := C.LAPACKE_dsytrd(C.LAPACK_COL_MAJOR, 'L', C.lapack_int(n), (*C.double)(unsafe.Pointer(&data[0])),
		C.lapack_int(n), (*C.double)(unsafe.Pointer(&d[0])), (*C.double)(unsafe.Pointer(&e[0])), (*C.double)(unsafe.Pointer(&tau[0])))
	if err := infoError("dsytrd", int(info)); err != nil {
		return Eigen{}, err
	}
	// Sturm counts bound the number of wanted eigenvalues; a little slack
	// covers rounding at the interval ends.
	want := sturmCount(d, e, r.VU) - sturmCount(d, e, r.VL)
	if want <= 0 {
		return Eigen{Values: []float64{}}, nil
	}
	if want > n/8 || !vectors {
		return dcValues(data, d, e, tau, n, r, vectors)
	}
	// dstemr counts eigenvalues in (VL, VU] itself (dlarrc), which breaks on
	// infinite bounds: clamp them to the Gershgorin interval of T.
	lo, hi := gershgorin(d, e)
	vl, vu := math.Max(r.VL, lo), math.Min(r.VU, hi)
	jobz := C.char('N')
	ldz := 1
	if vectors {
		jobz = 'V'
		ldz = n
	}
	w := make([]float64, n)
	var m C.lapack_int
	tryrac := C.lapack_logical(1)
	// A workspace query (NZC = −1) returns in z[0] the number of columns
	// dstemr counts in (VL, VU] itself, which can exceed the Sturm count
	// above when eigenvalues cluster at an end of the interval; too small
	// an NZC makes LAPACK's xerbla print to stderr.
	dd := append([]float64(nil), d...)
	ee := append([]float64(nil), e...)
	var query [1]float64
	var isuppz0 [2]C.lapack_int
	info = C.LAPACKE_dstemr(C.LAPACK_COL_MAJOR, jobz, 'V', C.lapack_int(n),
		(*C.double)(unsafe.Pointer(&dd[0])), (*C.double)(unsafe.Pointer(&ee[0])), C.double(vl), C.double(vu), 0, 0,
		&m, (*C.double)(unsafe.Pointer(&w[0])), (*C.double)(unsafe.Pointer(&query[0])), C.lapack_int(ldz), -1,
		&isuppz0[0], &tryrac)
	if err := infoError("dstemr", int(info)); err != nil {
		return Eigen{}, err
	}
	nzc := min(n, max(want, int(query[0])))
	z := make([]float64, ldz*nzc)
	isuppz := make([]C.lapack_int, 2*nzc)
	tryrac = C.lapack_logical(1)
	info = C.LAPACKE_dstemr(C.LAPACK_COL_MAJOR, jobz, 'V', C.lapack_int(n),
		(*C.double)(unsafe.Pointer(&d[0])), (*C.double)(unsafe.Pointer(&e[0])), C.double(vl), C.double(vu), 0, 0,
		&m, (*C.double)(unsafe.Pointer(&w[0])), (*C.double)(unsafe.Pointer(&z[0])), C.lapack_int(ldz), C.lapack_int(nzc),
		&isuppz[0], &tryrac)
	if err := infoError("dstemr", int(info)); err != nil {
		return Eigen{}, err
	}
	k := int(m)
	out := Eigen{Values: w[:k:k]}
	if !vectors || k == 0 {
		return out, nil
	}
	info = C.LAPACKE_dormtr(C.LAPACK_COL_MAJOR, 'L', 'L', 'N', C.lapack_int(n), C.lapack_int(k),
		(*C.double)(unsafe.Pointer(&data[0])), C.lapack_int(n), (*C.double)(unsafe.Pointer(&tau[0])),
		(*C.double)(unsafe.Pointer(&z[0])), C.lapack_int(n))
	if err := infoError("dormtr", int(info)); err != nil {
		return Eigen{}, err
	}
	out.Vectors = colMajorToDense(z, n, k)
	return out, nil
}

// dcValues finishes a value-range solve on the tridiagonal (d, e) by divide
// and conquer (dstedc, level-3 BLAS), selecting the wanted eigenvalues and
// back-transforming only their vectors. It is faster than MRRR when many
// eigenpairs are wanted.
func dcValues(data, d, e, tau []float64, n int, r Range, vectors bool) (Eigen, error) {
	if !vectors {
		info := C.LAPACKE_dsterf(C.lapack_int(n), (*C.double)(unsafe.Pointer(&d[0])), (*C.double)(unsafe.Pointer(&e[0])))
		if err := infoError("dsterf", int(info)); err != nil {
			return Eigen{}, err
		}
		lo, hi := selectRange(d, r)
		return Eigen{Values: append([]float64(nil), d[lo:hi]...)}, nil
	}
	z := make([]float64, n*n)
	info := C.LAPACKE_dstedc(C.LAPACK_COL_MAJOR, 'I', C.lapack_int(n), (*C.double)(unsafe.Pointer(&d[0])),
		(*C.double)(unsafe.Pointer(&e[0])), (*C.double)(unsafe.Pointer(&z[0])), C.lapack_int(n))
	if err := infoError("dstedc", int(info)); err != nil {
		return Eigen{}, err
	}
	lo, hi := selectRange(d, r)
	k := hi - lo
	out := Eigen{Values: append([]float64(nil), d[lo:hi]...)}
	if k == 0 {
		return out, nil
	}
	zk := z[lo*n : hi*n] // columns lo..hi-1 of the column-major z
	info = C.LAPACKE_dormtr(C.LAPACK_COL_MAJOR, 'L', 'L', 'N', C.lapack_int(n), C.lapack_int(k),
		(*C.double)(unsafe.Pointer(&data[0])), C.lapack_int(n), (*C.double)(unsafe.Pointer(&tau[0])),
		(*C.double)(unsafe.Pointer(&zk[0])), C.lapack_int(n))
	if err := infoError("dormtr", int(info)); err != nil {
		return Eigen{}, err
	}
	out.Vectors = colMajorToDense(zk, n, k)
	return out, nil
}

// gershgorin returns an interval (lo, hi] that contains every eigenvalue of
// the symmetric tridiagonal matrix (d, e[:n-1]), widened by a margin.
func gershgorin(d, e []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	n := len(d)
	for i := 0; i < n; i++ {
		r := 0.0
		if i > 0 {
			r += math.Abs(e[i-1])
		}
		if i+1 < n {
			r += math.Abs(e[i])
		}
		lo = math.Min(lo, d[i]-r)
		hi = math.Max(hi, d[i]+r)
	}
	margin := 1 + 1e-8*math.Max(math.Abs(lo), math.Abs(hi))
	return lo - margin, hi + margin
}

// sturmCount returns the number of eigenvalues of the symmetric tridiagonal
// matrix (diagonal d, off-diagonal e[:n-1]) that are less than x.
func sturmCount(d, e []float64, x float64) int {
	if math.IsInf(x, -1) {
		return 0
	}
	if math.IsInf(x, 1) {
		return len(d)
	}
	const tiny = 1e-300
	count := 0
	q := d[0] - x
	for i := 0; ; i++ {
		if q == 0 {
			q = -tiny
		}
		if q < 0 {
			count++
		}
		if i+1 == len(d) {
			return count
		}
		q = d[i+1] - x - e[i]*e[i]/q
	}
}

func infoError(routine string, info int) error {
	switch {
	case info == 0:
		return nil
	case info < 0:
		return fmt.Errorf("%w: %s argument %d had an illegal value", ErrInvalidArgument, routine, -info)
	}
	return &ConvergenceError{Routine: routine, Info: info}
}

// colMajorToDense converts an n×m column-major array into a row-major Dense.
func colMajorToDense(z []float64, n, m int) *mat.Dense {
	v := mat.NewDense(n, m, nil)
	raw := v.RawMatrix()
	for j := 0; j < m; j++ {
		col := z[j*n : j*n+n]
		for i, x := range col {
			raw.Data[i*raw.Stride+j] = x
		}
	}
	return v
}
