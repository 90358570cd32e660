package bench

// Peak resident memory of one measured run, C allocations included.
//
// The Go runtime's metrics (PeakHeapMB) see only the Go heap. The native
// backend allocates in C: OpenBLAS and LAPACK workspaces, CLP's LP
// factorisations, ARPACK's work arrays, the Fortran L-BFGS-B buffers. The
// kernel's resident set size (RSS) counts every page the process has touched,
// whoever allocated it, and Linux keeps its high-water mark, VmHWM in
// /proc/self/status. Since Linux 4.0 writing "5" to /proc/self/clear_refs
// resets that mark to the current RSS. So before a run the meter collects
// garbage and returns the freed pages to the OS (runtime.GC,
// debug.FreeOSMemory), resets the mark and records VmRSS as the baseline;
// after the run VmHWM is the largest resident set reached during it.
//
// What the figures mean:
//   - PeakRSSMB is the process's peak resident set during the run, in MiB:
//     the input data, the runtime and every library included. It is what the
//     machine must have to run the case.
//   - BaseRSSMB is the resident set just before the run. PeakRSSMB − BaseRSSMB
//     is the memory the run itself added. It can understate what the run
//     allocated when an allocator kept pages from an earlier run (glibc
//     malloc arenas are not trimmed here; the Go heap is), since reused pages
//     do not raise the mark.
//   - RSS counts touched pages, not reserved address space: a buffer that is
//     allocated but never written does not count.
//
// Fallback: where the mark cannot be reset (not Linux, /proc not mounted, a
// kernel older than 4.0 or a sandbox that forbids writing clear_refs) the
// meter reports that it is unsupported; Result.PeakRSSMB and BaseRSSMB are
// then 0, omitted from the JSON output and shown as "n/a" in the Markdown
// table. The benchmark itself never fails for lack of the meter.

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
)

const (
	procStatus    = "/proc/self/status"
	procClearRefs = "/proc/self/clear_refs"
	// resetSlackKiB is how far VmHWM may exceed the resident set read around
	// a reset before the reset is deemed ineffective (pages the runtime
	// touches between the write and the read).
	resetSlackKiB = 4 << 10
)

// startPeakRSS prepares a peak-RSS measurement: it collects garbage, returns
// free memory to the OS, resets the kernel's high-water mark of the resident
// set and returns the resident set afterwards in MiB. ok is false when the
// mark cannot be reset or read; then the peak must not be used.
func startPeakRSS() (baseMiB float64, ok bool) {
	runtime.GC()
	debug.FreeOSMemory()
	rss0, _, err := readRSS()
	if err != nil {
		return 0, false
	}
	if err := os.WriteFile(procClearRefs, []byte("5"), 0); err != nil {
		return 0, false
	}
	rss1, hwm1, err := readRSS()
	if err != nil {
		return 0, false
	}
	// A kernel that accepted the write but did not reset the mark leaves an
	// older, higher VmHWM in place.
	if hwm1 > max(rss0, rss1)+resetSlackKiB {
		return 0, false
	}
	return float64(rss1) / 1024, true
}

// peakRSS returns the high-water mark of the resident set since the last
// reset, in MiB.
func peakRSS() (float64, bool) {
	_, hwm, err := readRSS()
	if err != nil || hwm == 0 {
		return 0, false
	}
	return float64(hwm) / 1024, true
}

// readRSS returns VmRSS and VmHWM of this process in KiB.
func readRSS() (rss, hwm uint64, err error) {
	b, err := os.ReadFile(procStatus)
	if err != nil {
		return 0, 0, err
	}
	return parseStatus(b)
}

// parseStatus extracts VmRSS and VmHWM (in KiB) from the text of
// /proc/PID/status.
func parseStatus(b []byte) (rss, hwm uint64, err error) {
	var haveRSS, haveHWM bool
	s := bufio.NewScanner(bytes.NewReader(b))
	for s.Scan() {
		key, val, ok := bytes.Cut(s.Bytes(), []byte(":"))
		if !ok {
			continue
		}
		var dst *uint64
		switch string(key) {
		case "VmRSS":
			dst, haveRSS = &rss, true
		case "VmHWM":
			dst, haveHWM = &hwm, true
		default:
			continue
		}
		f := bytes.Fields(val)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, 0, fmt.Errorf("bench: unexpected %s line %q", key, s.Bytes())
		}
		if *dst, err = strconv.ParseUint(string(f[0]), 10, 64); err != nil {
			return 0, 0, fmt.Errorf("bench: %s: %w", key, err)
		}
	}
	if !haveRSS || !haveHWM {
		return 0, 0, fmt.Errorf("bench: VmRSS or VmHWM missing from %s", procStatus)
	}
	return rss, hwm, nil
}
