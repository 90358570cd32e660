//go:build !unix

package bench

import "time"

// processCPU is not available here.
func processCPU() time.Duration { return -1 }
