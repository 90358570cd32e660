//go:build !cgo || !mpi || purego

package mpi

import (
	"fmt"
	"os"
)

// HaveNative reports whether the native (Open MPI) implementation is
// compiled in: true only in cgo builds with the mpi tag and without purego.
const HaveNative = false

// openWorld returns the single-process world, unless an MPI launcher
// started this process as one of several.
func openWorld() (Comm, error) {
	if multi, evidence := launched(os.Getenv); multi {
		return nil, fmt.Errorf("mpi: open: %w: this process was started by an MPI launcher as one of several (%s), "+
			"but without MPI every copy would run alone as rank 0 of 1; rebuild with cgo and the mpi tag "+
			"(go build -tags mpi, with libopenmpi-dev installed; see docs/mpi.md)", ErrNoMPISupport, evidence)
	}
	return single{world: true}, nil
}

// closeWorld marks the single-process world closed.
func closeWorld() error {
	closed.Store(true)
	return nil
}

func isNative(Comm) bool { return false }

func withFortranHandle(func(int32)) error { return nil } // unreachable: nothing is native
