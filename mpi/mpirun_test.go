package mpi_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/mpi/mpitest"
)

// childEnv names the environment variable that turns TestMPIChild on in the
// copies of this test binary that mpirun starts; its value is the mode.
const childEnv = "PSDLEARN_MPI_CHILD"

// TestMPIChild is the body of each rank of the jobs TestMpirun and
// TestMpirunKill start (it is skipped in an ordinary go test run).
//
//	suite        the conformance suite on the world communicator, then Close
//	kill-exit    rank 1 calls os.Exit(1) while rank 0 waits in an Allreduce
//	kill-signal  rank 1 sends itself SIGKILL while rank 0 waits in an Allreduce
//	truncate     rank 1 passes Bcast a shorter buffer than the root's
func TestMPIChild(t *testing.T) {
	mode := os.Getenv(childEnv)
	if mode == "" {
		t.Skip("run by TestMpirun under mpirun")
	}
	c, err := mpi.Open()
	if err != nil {
		t.Fatal(err)
	}
	r, p := c.Rank(), c.Size()
	switch mode {
	case "suite":
		mpitest.TestComm(t, c)
		fmt.Printf("mpichild: rank %d of %d: suite done, failed=%v\n", r, p, t.Failed())
		mpitest.TestClose(t, c)
	case "kill-exit", "kill-signal":
		if err := c.Barrier(); err != nil {
			t.Fatal(err)
		}
		if r == 1 {
			time.Sleep(300 * time.Millisecond)
			fmt.Printf("mpichild: rank 1: dying (%s) at %d\n", mode, time.Now().UnixNano())
			if mode == "kill-exit" {
				os.Exit(1)
			}
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
		fmt.Printf("mpichild: rank %d: waiting in allreduce\n", r)
		buf := []float64{1}
		err := c.AllreduceSum(buf)
		// Open MPI kills the job before this line (docs/mpi.md).
		fmt.Printf("mpichild: rank %d: allreduce returned %v, %v\n", r, buf, err)
		mpi.Close()
	case "truncate":
		n := 10
		if r == 1 {
			n = 5
		}
		err := c.Bcast(make([]float64, n), 0)
		var merr *mpi.Error
		fmt.Printf("mpichild: rank %d: bcast: errors.As(*mpi.Error)=%v: %v\n", r, errors.As(err, &merr), err)
		if err := mpi.Close(); err != nil {
			t.Error(err)
		}
	default:
		t.Fatalf("unknown %s=%q", childEnv, mode)
	}
}

// mpirunJob runs this test binary's TestMPIChild on np ranks under mpirun
// with a 60 s limit, and returns the output (lines tagged [job,rank]), the
// duration and mpirun's error. mpirun runs in its own process group, which
// is killed at the end whatever happened, so no rank outlives the test.
func mpirunJob(t *testing.T, np int, mode string) (out string, took time.Duration, err error) {
	t.Helper()
	if !mpi.HaveNative {
		t.Skip("built without MPI (go test -tags mpi runs this test)")
	}
	self, serr := os.Executable()
	if serr != nil {
		t.Fatal(serr)
	}
	return mpitest.Mpirun(t, mpitest.Job{NP: np, Options: []string{"--tag-output", "-x", childEnv},
		Args: []string{self, "-test.run", "^TestMPIChild$", "-test.v", "-test.timeout", "50s"},
		Env:  []string{childEnv + "=" + mode}})
}

// rankLines returns the stdout lines of each rank in an mpirun --tag-output log.
func rankLines(out string, np int) [][]string {
	lines := make([][]string, np)
	re := regexp.MustCompile(`^\[\d+,(\d+)\]<stdout>:(.*)$`)
	for _, l := range strings.Split(out, "\n") {
		if m := re.FindStringSubmatch(l); m != nil {
			var r int
			fmt.Sscan(m[1], &r)
			if r >= 0 && r < np {
				lines[r] = append(lines[r], m[2])
			}
		}
	}
	return lines
}

// TestMpirun runs the conformance suite on 2 ranks and on 3 (uneven
// Allgatherv splits) and checks each rank's report.
func TestMpirun(t *testing.T) {
	for _, np := range []int{2, 3} {
		t.Run(fmt.Sprintf("np=%d", np), func(t *testing.T) {
			out, took, err := mpirunJob(t, np, "suite")
			if err != nil {
				t.Fatalf("mpirun -np %d: %v\n%s", np, err, out)
			}
			t.Logf("mpirun -np %d: %v", np, took.Round(time.Millisecond))
			for r, lines := range rankLines(out, np) {
				all := strings.Join(lines, "\n")
				if want := fmt.Sprintf("mpichild: rank %d of %d: suite done, failed=false", r, np); !strings.Contains(all, want) {
					t.Errorf("rank %d did not report %q:\n%s", r, want, out)
				}
				if !strings.Contains(all, "--- PASS: TestMPIChild") || strings.Contains(all, "FAIL") {
					t.Errorf("rank %d did not pass:\n%s", r, out)
				}
			}
		})
	}
}

// TestMpirunKill checks what happens when a rank dies while another waits
// in a collective: Open MPI's mpirun notices the death and kills the rest
// of the job, so mpirun must end quickly, with a non-zero status and a
// message naming the dead rank.
func TestMpirunKill(t *testing.T) {
	for _, tc := range []struct{ mode, msg string }{
		{"kill-exit", "non-zero exit code"},
		{"kill-signal", "exited on signal 9"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			out, took, err := mpirunJob(t, 2, tc.mode)
			end := time.Now()
			t.Logf("mpirun -np 2 (%s): %v, %v\n%s", tc.mode, took.Round(time.Millisecond), err, out)
			if m := regexp.MustCompile(`dying \(.*\) at (\d+)`).FindStringSubmatch(out); m != nil {
				var ns int64
				fmt.Sscan(m[1], &ns)
				t.Logf("the job ended %v after rank 1 died", end.Sub(time.Unix(0, ns)).Round(time.Millisecond))
			}
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() == 0 {
				t.Errorf("mpirun: %v; want a non-zero exit", err)
			}
			if took > 30*time.Second {
				t.Errorf("mpirun took %v to end after a rank died; want < 30 s", took)
			}
			if !strings.Contains(out, "mpichild: rank 0: waiting in allreduce") {
				t.Errorf("rank 0 never reached the allreduce")
			}
			if strings.Contains(out, "allreduce returned") {
				t.Errorf("rank 0's Allreduce returned: Open MPI used to kill the job instead (docs/mpi.md)")
			}
			if !strings.Contains(out, tc.msg) {
				t.Errorf("mpirun's output does not contain %q", tc.msg)
			}
		})
	}
}

// TestMpirunTruncate checks that MPI_ERRORS_RETURN turns an error MPI
// detects into a Go error instead of aborting the job: a Bcast whose
// receiving buffer is shorter than the root's fails, on that rank only, with
// an *mpi.Error (MPI_ERR_TRUNCATE in Open MPI 4.1), and the job still ends
// normally.
func TestMpirunTruncate(t *testing.T) {
	out, _, err := mpirunJob(t, 2, "truncate")
	if err != nil {
		t.Fatalf("mpirun: %v\n%s", err, out)
	}
	lines := rankLines(out, 2)
	if all := strings.Join(lines[0], "\n"); !strings.Contains(all, "mpichild: rank 0: bcast: errors.As(*mpi.Error)=false: <nil>") {
		t.Errorf("rank 0 (the root) did not succeed:\n%s", out)
	}
	if all := strings.Join(lines[1], "\n"); !strings.Contains(all, "mpichild: rank 1: bcast: errors.As(*mpi.Error)=true: mpi: bcast: MPI_ERR_TRUNCATE") {
		t.Errorf("rank 1 did not report MPI_ERR_TRUNCATE as an *mpi.Error:\n%s", out)
	}
}
