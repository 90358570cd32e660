//go:build cgo && mpi && !purego

package mpi

/*
#cgo pkg-config: ompi-c
#include <stdlib.h>
#include <mpi.h>

// MPI_COMM_WORLD, MPI_DOUBLE, MPI_SUM, … are macros over Open MPI's global
// objects, which cgo cannot use: these wrappers name them in C.

// psd_init initialises MPI unless it already is (*owned tells which),
// asking for MPI_THREAD_SERIALIZED, and makes MPI_COMM_WORLD return errors.
static int psd_init(int *owned, int *provided) {
	int flag = 0, rc;
	*owned = 0;
	rc = MPI_Initialized(&flag);
	if (rc != MPI_SUCCESS) return rc;
	if (flag) {
		rc = MPI_Query_thread(provided);
	} else {
		rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, provided);
		if (rc == MPI_SUCCESS) *owned = 1;
	}
	if (rc != MPI_SUCCESS) return rc;
	return MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

static int psd_thread_serialized(void) { return MPI_THREAD_SERIALIZED; }

static int psd_rank_size(int *rank, int *size) {
	int rc = MPI_Comm_rank(MPI_COMM_WORLD, rank);
	if (rc != MPI_SUCCESS) return rc;
	return MPI_Comm_size(MPI_COMM_WORLD, size);
}

static int psd_finalize(void) {
	int flag = 0, rc = MPI_Finalized(&flag);
	if (rc != MPI_SUCCESS || flag) return rc;
	return MPI_Finalize();
}

static int psd_barrier(void) { return MPI_Barrier(MPI_COMM_WORLD); }

// op: 0 sum, 1 max.
static int psd_allreduce(double *buf, int n, int op) {
	return MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, op == 1 ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD);
}

static int psd_bcast_double(double *buf, int n, int root) {
	return MPI_Bcast(buf, n, MPI_DOUBLE, root, MPI_COMM_WORLD);
}

static int psd_bcast_byte(void *buf, int n, int root) {
	return MPI_Bcast(buf, n, MPI_BYTE, root, MPI_COMM_WORLD);
}

static int psd_allgatherv(const double *send, int n, double *recv, const int *counts, const int *displs) {
	return MPI_Allgatherv(send, n, MPI_DOUBLE, recv, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
}

static void psd_error(int code, char *msg, int *class) {
	int len = 0;
	if (MPI_Error_string(code, msg, &len) != MPI_SUCCESS) len = 0;
	msg[len] = 0;
	if (MPI_Error_class(code, class) != MPI_SUCCESS) *class = -1;
}

static int psd_max_error_string(void) { return MPI_MAX_ERROR_STRING; }

static MPI_Fint psd_world_f(void) { return MPI_Comm_c2f(MPI_COMM_WORLD); }
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// HaveNative reports whether the native (Open MPI) implementation is
// compiled in: true only in cgo builds with the mpi tag and without purego.
const HaveNative = true

// calls serialises every MPI call of the process (MPI_THREAD_SERIALIZED).
var calls sync.Mutex

// owned records whether Open initialised MPI (and Close should finalize it).
var owned bool

// mpiError converts an MPI return code into an error wrapped with op.
func mpiError(op string, rc C.int) error {
	if rc == C.MPI_SUCCESS {
		return nil
	}
	buf := (*C.char)(C.malloc(C.size_t(C.psd_max_error_string() + 1)))
	defer C.free(unsafe.Pointer(buf))
	var class C.int
	C.psd_error(rc, buf, &class)
	return fmt.Errorf("mpi: %s: %w", op, &Error{Code: int(rc), Class: int(class), Msg: C.GoString(buf)})
}

func openWorld() (Comm, error) {
	calls.Lock()
	defer calls.Unlock()
	var own, provided C.int
	if err := mpiError(opOpen, C.psd_init(&own, &provided)); err != nil {
		return nil, err
	}
	owned = own != 0
	if provided < C.psd_thread_serialized() {
		if owned {
			C.psd_finalize()
		}
		return nil, fmt.Errorf("mpi: open: the MPI library provides thread level %d, below MPI_THREAD_SERIALIZED (%d) that Go's threads need",
			int(provided), int(C.psd_thread_serialized()))
	}
	var rank, size C.int
	if err := mpiError(opOpen, C.psd_rank_size(&rank, &size)); err != nil {
		return nil, err
	}
	return &native{rank: int(rank), size: int(size)}, nil
}

func closeWorld() error {
	calls.Lock()
	defer calls.Unlock()
	closed.Store(true)
	if !owned {
		return nil
	}
	return mpiError(opClose, C.psd_finalize())
}

// native is the world communicator of the native build.
type native struct{ rank, size int }

func (c *native) Rank() int { return c.rank }
func (c *native) Size() int { return c.size }

// call runs f under the call lock unless MPI is finalized.
func call(op string, f func() C.int) error {
	calls.Lock()
	defer calls.Unlock()
	if closed.Load() {
		return closedError(op)
	}
	return mpiError(op, f())
}

func (c *native) Barrier() error {
	return call(opBarrier, func() C.int { return C.psd_barrier() })
}

func (c *native) allreduce(buf []float64, op C.int) error {
	if err := checkBuf(opAllreduce, buf == nil); err != nil {
		return err
	}
	return call(opAllreduce, func() C.int {
		if len(buf) == 0 {
			return C.psd_allreduce(nil, 0, op)
		}
		for lo := 0; lo < len(buf); lo += maxCount {
			n := min(maxCount, len(buf)-lo)
			if rc := C.psd_allreduce((*C.double)(unsafe.Pointer(&buf[lo])), C.int(n), op); rc != C.MPI_SUCCESS {
				return rc
			}
		}
		return C.MPI_SUCCESS
	})
}

func (c *native) AllreduceSum(buf []float64) error { return c.allreduce(buf, 0) }
func (c *native) AllreduceMax(buf []float64) error { return c.allreduce(buf, 1) }

func (c *native) AllreduceSumScalar(x float64) (float64, error) {
	b := []float64{x}
	err := c.allreduce(b, 0)
	return b[0], err
}

func (c *native) AllreduceMaxScalar(x float64) (float64, error) {
	b := []float64{x}
	err := c.allreduce(b, 1)
	return b[0], err
}

func (c *native) Bcast(buf []float64, root int) error {
	if err := checkBuf(opBcast, buf == nil); err != nil {
		return err
	}
	if err := checkRoot(opBcast, root, c.size); err != nil {
		return err
	}
	return call(opBcast, func() C.int {
		if len(buf) == 0 {
			return C.psd_bcast_double(nil, 0, C.int(root))
		}
		for lo := 0; lo < len(buf); lo += maxCount {
			n := min(maxCount, len(buf)-lo)
			if rc := C.psd_bcast_double((*C.double)(unsafe.Pointer(&buf[lo])), C.int(n), C.int(root)); rc != C.MPI_SUCCESS {
				return rc
			}
		}
		return C.MPI_SUCCESS
	})
}

func (c *native) BcastBytes(buf []byte, root int) error {
	if err := checkBuf(opBcast, buf == nil); err != nil {
		return err
	}
	if err := checkRoot(opBcast, root, c.size); err != nil {
		return err
	}
	return call(opBcast, func() C.int {
		if len(buf) == 0 {
			return C.psd_bcast_byte(nil, 0, C.int(root))
		}
		for lo := 0; lo < len(buf); lo += maxCount {
			n := min(maxCount, len(buf)-lo)
			if rc := C.psd_bcast_byte(unsafe.Pointer(&buf[lo]), C.int(n), C.int(root)); rc != C.MPI_SUCCESS {
				return rc
			}
		}
		return C.MPI_SUCCESS
	})
}

func (c *native) Allgatherv(send, recv []float64, counts []int) error {
	displs, err := checkGather(send, recv, counts, c.rank, c.size)
	if err != nil {
		return err
	}
	cc := make([]C.int, c.size)
	cd := make([]C.int, c.size)
	for r := range counts {
		cc[r], cd[r] = C.int(counts[r]), C.int(displs[r])
	}
	var sp, rp *C.double
	if len(send) > 0 {
		sp = (*C.double)(unsafe.Pointer(&send[0]))
	}
	if len(recv) > 0 {
		rp = (*C.double)(unsafe.Pointer(&recv[0]))
	}
	return call(opAllgatherv, func() C.int {
		return C.psd_allgatherv(sp, C.int(len(send)), rp, &cc[0], &cd[0])
	})
}

func isNative(c Comm) bool {
	_, ok := c.(*native)
	return ok
}

func withFortranHandle(f func(int32)) error {
	calls.Lock()
	defer calls.Unlock()
	if closed.Load() {
		return closedError("fortran handle")
	}
	f(int32(C.psd_world_f()))
	return nil
}
