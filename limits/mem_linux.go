package limits

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// asMargin is the address space kept free under ulimit -v for what the
// process maps besides its data: thread stacks, C library arenas and the
// buffers of the BLAS threads.
const asMargin = 512 << 20

// systemMemory returns the smallest of MemTotal, the data-segment limit and
// the address space left under the address-space limit (ulimit -v minus
// what the process has already mapped — with the native libraries about
// 2 GB of mostly untouched reservations — minus asMargin), in bytes (0 if
// none can be read).
func systemMemory() int64 {
	best := int64(0)
	take := func(v uint64) {
		if v == 0 || v >= 1<<62 {
			return // 0 unknown, RLIM_INFINITY
		}
		if best == 0 || int64(v) < best {
			best = int64(v)
		}
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				fields := strings.Fields(rest)
				if len(fields) >= 1 {
					if kb, err := strconv.ParseUint(fields[0], 10, 64); err == nil {
						take(kb << 10)
					}
				}
				break
			}
		}
		f.Close()
	}
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_DATA, &rl) == nil {
		take(rl.Cur)
	}
	if syscall.Getrlimit(syscall.RLIMIT_AS, &rl) == nil && rl.Cur < 1<<62 {
		used := uint64(procStatusKB("VmSize:")) << 10
		if left := int64(rl.Cur) - int64(used) - asMargin; left > 0 {
			take(uint64(left))
		} else {
			take(1 << 20) // nothing left: every estimate above 1 MiB is refused
		}
	}
	return best
}

// procStatusKB returns a "kB" field of /proc/self/status (0 if unreadable).
func procStatusKB(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			if fs := strings.Fields(rest); len(fs) >= 1 {
				v, _ := strconv.ParseInt(fs[0], 10, 64)
				return v
			}
		}
	}
	return 0
}
