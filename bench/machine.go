package bench

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/psdlearn/psdlearn/lapack"
)

// Machine describes the machine a run happens on: CPU model, cores,
// OpenBLAS's kernel set, Go version.
func Machine() string {
	cpu := "unknown CPU"
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		s := bufio.NewScanner(f)
		for s.Scan() {
			if k, v, ok := strings.Cut(s.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%s, %d cores, OpenBLAS kernels %s, %s %s/%s", cpu, runtime.NumCPU(), lapack.BLASCore(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
