//go:build unix

package bench

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user and system, all threads) the
// process has used so far, or a negative value where it cannot be read. On
// a shared machine it measures a run's work more faithfully than the wall
// clock (though spinning BLAS threads count in it).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
