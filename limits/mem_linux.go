package limits

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// systemMemory returns the smallest of MemTotal and the address-space and
// data-segment limits of the process, in bytes (0 if none can be read).
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
	for _, res := range []int{syscall.RLIMIT_AS, syscall.RLIMIT_DATA} {
		var rl syscall.Rlimit
		if syscall.Getrlimit(res, &rl) == nil {
			take(rl.Cur)
		}
	}
	return best
}
