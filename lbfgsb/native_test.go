//go:build cgo && !purego

package lbfgsb

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestNativeSilent: Debian's liblbfgsb writes "ascent direction in
// projection gd = ..." to stdout whatever iprint says; the binding swallows
// it. A subprocess hits that code path and its stdout is inspected.
func TestNativeSilent(t *testing.T) {
	if os.Getenv("PSDLEARN_LBFGSB_SILENT_CHILD") == "1" {
		before := suppressedWrites()
		sq := Problem{Func: func(x, g []float64) float64 { g[0] = 2 * x[0]; return x[0] * x[0] }}
		res, _ := Native.Minimize(context.Background(), sq, []float64{0}, Settings{Pgtol: -1})
		if res.Reason != ReasonAbnormal || suppressedWrites() == before {
			// The code path that writes was not reached: the test would prove nothing.
			t.Fatalf("reason %v, suppressed writes %d → %d", res.Reason, before, suppressedWrites())
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNativeSilent$", "-test.v")
	cmd.Env = append(os.Environ(), "PSDLEARN_LBFGSB_SILENT_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child failed: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "ascent") || !strings.Contains(string(out), "PASS") {
		t.Errorf("the Fortran library wrote to stdout:\n%s", out)
	}
}
