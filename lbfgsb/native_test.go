//go:build cgo && !purego

package lbfgsb

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// TestNativeReentrant proves that the Fortran solver keeps no hidden state:
// 8 goroutines solving different problems concurrently (twice each) get
// bit-for-bit the results of sequential solves. Run it with -race too.
func TestNativeReentrant(t *testing.T) {
	mk := func() []testProblem {
		var ps []testProblem
		for i := 0; i < 3; i++ {
			q, _ := quadProblem(120+20*i, uint64(10+i), 0.1, -0.5, 0.5)
			ps = append(ps, q)
		}
		ps = append(ps, nnlsProblem(300, 60, 7), nnlsProblem(250, 40, 8), driver1Problem(25))
		for _, n := range []int{200, 1000} {
			up := make([]float64, n)
			for i := range up {
				up[i] = 0.7
			}
			ps = append(ps, testProblem{name: "rosenbrock", p: Problem{Func: rosenbrock, Upper: up}, x0: rosenbrockStart(n),
				s: Settings{Factr: -1, Pgtol: 1e-8}})
		}
		return ps
	}
	for _, sv := range solvers() {
		t.Run(sv.name, func(t *testing.T) {
			seq := mk()
			want := make([]Result, len(seq))
			for i, pr := range seq {
				var err error
				if want[i], err = sv.s.Minimize(context.Background(), pr.p, pr.x0, pr.s); err != nil {
					t.Fatalf("problem %d: %v", i, err)
				}
			}
			par := mk() // fresh instances: the objectives have scratch buffers
			if len(par) != 8 {
				t.Fatalf("%d problems, want 8", len(par))
			}
			got := make([][2]Result, len(par))
			var wg sync.WaitGroup
			for i, pr := range par {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for k := 0; k < 2; k++ {
						got[i][k], _ = sv.s.Minimize(context.Background(), pr.p, pr.x0, pr.s)
					}
				}()
			}
			wg.Wait()
			for i := range par {
				for k := 0; k < 2; k++ {
					if err := sameResult(want[i], got[i][k]); err != nil {
						t.Errorf("problem %d (%s), concurrent run %d: %v", i, par[i].name, k, err)
					}
				}
			}
		})
	}
}

func sameResult(a, b Result) error {
	if a.F != b.F || a.Iterations != b.Iterations || a.Evaluations != b.Evaluations ||
		a.Reason != b.Reason || a.ProjGradNorm != b.ProjGradNorm || len(a.X) != len(b.X) {
		return fmt.Errorf("f %v/%v it %d/%d ev %d/%d reason %v/%v", a.F, b.F, a.Iterations, b.Iterations,
			a.Evaluations, b.Evaluations, a.Reason, b.Reason)
	}
	for i := range a.X {
		if a.X[i] != b.X[i] {
			return fmt.Errorf("x[%d] %v/%v", i, a.X[i], b.X[i])
		}
	}
	return nil
}

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
