package mpitest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn/mpi"
)

// Job is a program run on several ranks by Mpirun.
type Job struct {
	NP      int           // number of ranks
	Options []string      // mpirun options after the fixed ones (say, --tag-output, -x VAR)
	Args    []string      // the program and its arguments
	Env     []string      // extra environment (VAR=value) of mpirun and the ranks
	Timeout time.Duration // limit of the whole job; 0 selects 60 s
	Stdout  bool          // return standard output only (standard error is dropped)
}

// Mpirun runs `mpirun --allow-run-as-root --oversubscribe -np NP Options...
// Args...` and returns its output (standard output and error together
// unless j.Stdout), how long it took, and mpirun's error. It skips t when
// mpirun is not on PATH.
//
// The caller's own launcher variables (OMPI_*, PMIX_*, PMI_*) are removed
// from the job's environment: a test binary that opened MPI is itself a
// singleton MPI process, and its variables would confuse the new job.
// mpirun runs in its own process group: when the timeout expires it gets
// SIGTERM (it then ends its ranks) and SIGKILL 10 s later, and the whole
// group is killed when it returns, so no rank outlives the test; a job that
// outlives the timeout fails t.
func Mpirun(t testing.TB, j Job) (out string, took time.Duration, err error) {
	t.Helper()
	mpirun, lerr := exec.LookPath("mpirun")
	if lerr != nil {
		t.Skip("mpirun is not on PATH")
	}
	timeout := j.Timeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := append([]string{"--allow-run-as-root", "--oversubscribe", "-np", fmt.Sprint(j.NP)}, j.Options...)
	cmd := exec.CommandContext(ctx, mpirun, append(args, j.Args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OMPI_") && !strings.HasPrefix(kv, "PMIX_") && !strings.HasPrefix(kv, "PMI_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, j.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	var b []byte
	if j.Stdout {
		b, err = cmd.Output()
	} else {
		b, err = cmd.CombinedOutput()
	}
	took = time.Since(start)
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // leftovers of the process group, if any
	}
	if ctx.Err() != nil {
		t.Fatalf("mpirun -np %d %s did not finish within %v:\n%s", j.NP, strings.Join(j.Args, " "), timeout, b)
	}
	return string(b), took, err
}

// MPIProgram skips t unless this test binary was built with native MPI
// (-tags mpi) and mpirun is on PATH, then builds the package pkg (a path
// relative to the test's directory: "." or "./internal/distrun") with the
// mpi tag into a temporary directory and returns the program's path, for
// Mpirun to launch.
func MPIProgram(t testing.TB, pkg string) string {
	t.Helper()
	if !mpi.HaveNative {
		t.Skip("built without MPI (go test -tags mpi runs this test)")
	}
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("mpirun is not on PATH")
	}
	bin := filepath.Join(t.TempDir(), filepath.Base(filepath.Clean(pkg))+".mpi")
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to build the MPI program")
	}
	if out, err := exec.Command(gobin, "build", "-tags", "mpi", "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build -tags mpi %s: %v\n%s", pkg, err, out)
	}
	return bin
}
