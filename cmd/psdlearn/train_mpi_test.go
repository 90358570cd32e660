package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/mpi/mpitest"
	"gonum.org/v1/gonum/mat"
)

// TestTrainMPI builds psdlearn with -tags mpi and runs `mpirun -np 2
// psdlearn train --algo boostmetric --data builtin:iris --json --out F`:
// rank 0 must print one JSON summary and write the model of one-process
// BoostMetric on all of iris (to 1e-9); a flag the distributed run does not
// implement must be a usage error. Skipped without -tags mpi or mpirun.
func TestTrainMPI(t *testing.T) {
	if !mpi.HaveNative {
		t.Skip("built without MPI (go test -tags mpi runs this test)")
	}
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("mpirun is not on PATH") // before the build
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "psdlearn")
	if out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-tags", "mpi", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := func(args ...string) (string, error) {
		out, _, err := mpitest.Mpirun(t, mpitest.Job{NP: 2, Args: append([]string{bin}, args...), Stdout: true})
		return out, err
	}
	path := filepath.Join(dir, "m.json")
	out, err := run("train", "--algo", "boostmetric", "--data", "builtin:iris", "--json", "--quiet", "--out", path)
	if err != nil {
		t.Fatalf("mpirun: %v\n%s", err, out)
	}
	var sum map[string]any
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, out)
	}
	if sum["schema"] != "psdlearn/train-mpi/v1" || sum["ranks"] != 2.0 || sum["n_train"] != 150.0 || sum["model"] != path {
		t.Errorf("summary %v", sum)
	}
	m, err := model.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := datasets.Open("iris")
	if err != nil {
		t.Fatal(err)
	}
	ts, err := constraints.Triplets(ds.X, ds.Y, 3)
	if err != nil {
		t.Fatal(err)
	}
	want, err := boost.BoostMetric(context.Background(), ds.X, ts, boost.Options{})
	if err != nil {
		t.Fatal(err)
	}
	wm := want.Matrix(4)
	var diff mat.Dense
	diff.Sub(m.Metric.M, wm)
	if e := mat.Norm(&diff, 2) / mat.Norm(wm, 2); !(e <= 1e-9) {
		t.Errorf("the model differs from one-process BoostMetric by %.3g relative", e)
	}
	if sum["iterations"] != float64(want.Iterations) {
		t.Errorf("%v iterations, want %d", sum["iterations"], want.Iterations)
	}
	_, err = run("train", "--algo", "boostmetric", "--data", "builtin:iris", "--standardize")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 {
		t.Errorf("--standardize under mpirun: %v, want a failed job", err)
	}
}
