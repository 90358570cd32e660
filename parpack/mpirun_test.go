package parpack_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn/arpack"
	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/mpi/mpitest"
	"github.com/psdlearn/psdlearn/parpack"
)

// childEnv turns TestMPIChild on in the copies of this test binary that
// TestMpirun starts under mpirun.
const childEnv = "PSDLEARN_PARPACK_CHILD"

// solveAll runs both solvers (Native when c is native) on every case and
// checks each rank's share against the analytic eigenvalues, the
// distributed residuals, and the one-process arpack solves (Native against
// arpack.Native, Go against arpack.Go) to 1e-10 relative in the values and
// 1e-8 in the eigenvectors up to sign.
func solveAll(t *testing.T, c mpi.Comm) {
	solvers := map[string]parpack.Solver{"Go": parpack.Go}
	ref := map[string]arpack.Solver{"Go": arpack.Go}
	if parpack.HaveNative && mpi.IsNative(c) {
		solvers["Native"], ref["Native"] = parpack.Native, arpack.Native
	}
	for _, name := range []string{"Native", "Go"} {
		s, ok := solvers[name]
		if !ok {
			continue
		}
		stopMidway(t, c, name, s)
		for _, tc := range cases {
			counts := split(tc.n, c.Size())
			start := time.Now()
			res, err := s.Eigs(context.Background(), c, pathOp(c, counts, true), counts, tc.k, tc.which, tc.opt)
			took := time.Since(start)
			if err != nil {
				t.Fatalf("%s %v: %v", name, tc.which, err)
			}
			all := checkPath(t, c, counts, res, tc.k, tc.which)
			want := oneProcess(t, ref[name], tc.n, tc.k, tc.which, tc.opt)
			for j, v := range res.Values {
				if e := (v - want.Values[j]) / want.Values[j]; !(e <= 1e-10 && e >= -1e-10) {
					t.Errorf("%s: λ[%d] = %v, one-process %v", name, j, v, want.Values[j])
				}
			}
			if d := sameUpToSign(all, want.Vectors); !(d <= 1e-8) {
				t.Errorf("%s: eigenvectors differ from the one-process solve's by %.3g", name, d)
			}
			fmt.Printf("parpackchild: rank %d of %d: %s %v n=%d rows=%d: %d restarts, %d applies, %v\n",
				c.Rank(), c.Size(), name, tc.which, tc.n, counts[c.Rank()], res.Iterations, res.OpApplies, took.Round(time.Millisecond))
		}
	}
}

// stopMidway cancels the last rank's ctx at its 5th operator application:
// every rank must return an error (context.Canceled on the last rank,
// ErrStopped on the others) at the same step, and the next solve
// (solveAll's) must start afresh.
func stopMidway(t *testing.T, c mpi.Comm, name string, s parpack.Solver) {
	counts := split(80, c.Size())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inner := pathOp(c, counts, true)
	steps := 0
	op := parpack.OperatorFunc(func(y, x []float64) error {
		steps++
		if steps == 5 && c.Rank() == c.Size()-1 {
			cancel()
		}
		return inner.Apply(y, x)
	})
	_, err := s.Eigs(ctx, c, op, counts, 3, parpack.LargestAlgebraic, parpack.Options{})
	last := c.Rank() == c.Size()-1
	switch {
	case last && !errors.Is(err, context.Canceled):
		t.Errorf("%s: cancelled rank: %v, want context.Canceled", name, err)
	case !last && !errors.Is(err, parpack.ErrStopped):
		t.Errorf("%s: rank %d: %v, want ErrStopped", name, c.Rank(), err)
	case steps != 5:
		t.Errorf("%s: rank %d stopped after %d applications, want 5", name, c.Rank(), steps)
	}
}

// TestNativeSingleton runs the solvers on the world communicator of this
// process: with -tags mpi a singleton MPI job of size 1 (PARPACK then
// runs on one rank), otherwise the pure-Go world.
func TestNativeSingleton(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip("in an mpirun child")
	}
	c, err := mpi.Open()
	if err != nil {
		t.Fatal(err)
	}
	if parpack.For(c) == parpack.Go && parpack.HaveNative {
		t.Error("For(world) is Go in a native build")
	}
	solveAll(t, c)
}

// TestMPIChild is each rank's body in TestMpirun (skipped otherwise).
func TestMPIChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestMpirun under mpirun")
	}
	c, err := mpi.Open()
	if err != nil {
		t.Fatal(err)
	}
	solveAll(t, c)
	fmt.Printf("parpackchild: rank %d of %d: done, failed=%v\n", c.Rank(), c.Size(), t.Failed())
	if err := mpi.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestMpirun runs TestMPIChild under mpirun -np 2 and -np 3 (uneven rows):
// every rank of PARPACK and of the replicated Go solver must pass the
// checks of solveAll. Skipped without -tags mpi or without mpirun.
func TestMpirun(t *testing.T) {
	if !mpi.HaveNative {
		t.Skip("built without MPI (go test -tags mpi runs this test)")
	}
	if os.Getenv(childEnv) != "" {
		t.Skip("in an mpirun child")
	}
	done := regexp.MustCompile(`parpackchild: rank (\d+) of (\d+): done, failed=(\w+)`)
	for _, np := range []int{2, 3} {
		t.Run(fmt.Sprintf("np=%d", np), func(t *testing.T) {
			out, took, err := mpitest.Mpirun(t, mpitest.Job{
				NP:      np,
				Options: []string{"-x", childEnv + "=1"},
				Args:    []string{os.Args[0], "-test.run=^TestMPIChild$", "-test.count=1", "-test.v"},
			})
			t.Logf("mpirun -np %d: %v\n%s", np, took.Round(time.Millisecond), grepLines(out, "parpackchild:"))
			if err != nil {
				t.Fatalf("mpirun: %v\n%s", err, out)
			}
			ok := map[string]bool{}
			for _, m := range done.FindAllStringSubmatch(out, -1) {
				if m[2] != fmt.Sprint(np) || m[3] != "false" {
					t.Errorf("rank %s: %s", m[1], m[0])
				}
				ok[m[1]] = true
			}
			if len(ok) != np || strings.Contains(out, "--- FAIL") {
				t.Errorf("%d of %d ranks done:\n%s", len(ok), np, out)
			}
		})
	}
}

func grepLines(s, prefix string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, prefix) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
