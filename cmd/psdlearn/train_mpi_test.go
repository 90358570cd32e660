package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/algos/frob"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/mpi/mpitest"
	"gonum.org/v1/gonum/mat"
)

// TestTrainMPI builds psdlearn with -tags mpi and runs `mpirun -np 2
// psdlearn train --algo boostmetric --data builtin:iris --json --out F`:
// rank 0 must print one JSON summary and write the model of one-process
// BoostMetric on all of iris (to 1e-9); a flag the distributed run does not
// implement must be a usage error. Then `--algo frobmetric --C 10`: a
// certified model, consistent with one-process FrobMetric; a list of C is
// refused. Skipped without -tags mpi or mpirun.
func TestTrainMPI(t *testing.T) {
	bin := mpitest.MPIProgram(t, ".")
	dir := t.TempDir()
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
	// Two ranks sum in another order than one process: the iterations are
	// bounded, not equated, and the metrics compare when they agree.
	iters, _ := sum["iterations"].(float64)
	if math.Abs(iters-float64(want.Iterations)) > 1 {
		t.Errorf("%v iterations, one process %d", sum["iterations"], want.Iterations)
	}
	if e := mat.Norm(&diff, 2) / mat.Norm(wm, 2); iters == float64(want.Iterations) && !(e <= 1e-9) {
		t.Errorf("the model differs from one-process BoostMetric by %.3g relative", e)
	}
	// A run capped before convergence says so: converged false, a warning.
	out, err = run("train", "--algo", "boostmetric", "--data", "builtin:iris", "--iters", "3", "--json", "--quiet")
	if err != nil {
		t.Fatalf("mpirun --iters 3: %v\n%s", err, out)
	}
	var capped map[string]any
	if err := json.Unmarshal([]byte(out), &capped); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, out)
	}
	if ws, _ := capped["warnings"].([]any); capped["converged"] != false || len(ws) != 1 {
		t.Errorf("--iters 3: converged %v, warnings %v; want false and one warning", capped["converged"], capped["warnings"])
	}
	if ws, _ := sum["warnings"].([]any); ws == nil || len(ws) != 0 {
		t.Errorf("converged run: warnings %v, want []", sum["warnings"])
	}
	// Totally corrective: the one-process objective (the metric itself is
	// determined only to about 1e-7 by this mode: distributed.TestCorrective).
	out, err = run("train", "--algo", "boostmetric", "--mode", "corrective", "--iters", "10", "--data", "builtin:iris", "--json", "--quiet")
	if err != nil {
		t.Fatalf("mpirun --mode corrective: %v\n%s", err, out)
	}
	var corr map[string]any
	if err := json.Unmarshal([]byte(out), &corr); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, out)
	}
	cwant, err := boost.BoostMetric(context.Background(), ds.X, ts, boost.Options{Mode: boost.Corrective, Iters: 10})
	if err != nil {
		t.Fatal(err)
	}
	if obj, _ := corr["objective"].(float64); corr["iterations"] != 10.0 || !(math.Abs(obj-cwant.Objective) <= 1e-9*math.Abs(cwant.Objective)) {
		t.Errorf("--mode corrective: %v iterations, objective %v; one process: 10, %v", corr["iterations"], corr["objective"], cwant.Objective)
	}
	_, err = run("train", "--algo", "boostmetric", "--data", "builtin:iris", "--standardize")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 {
		t.Errorf("--standardize under mpirun: %v, want a failed job", err)
	}

	// One file per rank ("{rank}"): iris split after row 100, so rank 1's
	// file holds one class only; the ranks agree on the classes and learn
	// the model of the whole set.
	raw, err := os.ReadFile("../../datasets/iris.csv")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	write := func(name string, rows []string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(append([]string{lines[0]}, rows...), "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("part-0.csv", lines[1:101])
	write("part-1.csv", lines[101:])
	spath := filepath.Join(dir, "s.json")
	out, err = run("train", "--algo", "boostmetric", "--data", filepath.Join(dir, "part-{rank}.csv"), "--json", "--quiet", "--out", spath)
	if err != nil {
		t.Fatalf("mpirun with one file per rank: %v\n%s", err, out)
	}
	sm, err := model.LoadFile(spath)
	if err != nil {
		t.Fatal(err)
	}
	diff.Sub(sm.Metric.M, wm)
	if e := mat.Norm(&diff, 2) / mat.Norm(wm, 2); !(e <= 1e-9) || len(sm.Classes) != 3 {
		t.Errorf("one file per rank: the model differs from one-process BoostMetric by %.3g relative; classes %v", e, sm.Classes)
	}
	// One shared file: each rank reads its part only (rank_read_bytes
	// below the file's size, summing to about it), holds its rows
	// (rank_data_bytes), and the model is the one-process model.
	write("iris.csv", lines[1:])
	whole, err := os.Stat(filepath.Join(dir, "iris.csv"))
	if err != nil {
		t.Fatal(err)
	}
	ppath := filepath.Join(dir, "p.json")
	out, err = run("train", "--algo", "boostmetric", "--data", filepath.Join(dir, "iris.csv"), "--json", "--quiet", "--out", ppath)
	if err != nil {
		t.Fatalf("mpirun with one shared file: %v\n%s", err, out)
	}
	var psum struct {
		Held []int64 `json:"rank_data_bytes"`
		Read []int64 `json:"rank_read_bytes"`
	}
	if err := json.Unmarshal([]byte(out), &psum); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, out)
	}
	var held, read int64
	for r := range psum.Read {
		held, read = held+psum.Held[r], read+psum.Read[r]
		if !(psum.Read[r] > 0 && psum.Read[r] < whole.Size()) {
			t.Errorf("shared file: rank %d read %d bytes of %d", r, psum.Read[r], whole.Size())
		}
	}
	// Beyond the file once: per rank, its first record (read in chunks of
	// 256 bytes and more), the byte before its range and gzip's magic.
	if len(psum.Read) != 2 || held != 150*5*8 || read > whole.Size()+2*int64(2*len(lines[0])+256+3) {
		t.Errorf("shared file: rows held %v (want %d bytes in all), read %v of a %d-byte file", psum.Held, 150*5*8, psum.Read, whole.Size())
	}
	pm, err := model.LoadFile(ppath)
	if err != nil {
		t.Fatal(err)
	}
	diff.Sub(pm.Metric.M, wm)
	if e := mat.Norm(&diff, 2) / mat.Norm(wm, 2); !(e <= 1e-9) || len(pm.Classes) != 3 {
		t.Errorf("one shared file: the model differs from one-process BoostMetric by %.3g relative; classes %v", e, pm.Classes)
	}
	// A rank whose file is missing fails the job, with no rank left waiting.
	write("only-0.csv", lines[1:])
	out, err = run("train", "--algo", "boostmetric", "--data", filepath.Join(dir, "only-{rank}.csv"), "--quiet")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 {
		t.Errorf("a missing rank file: %v, want a failed job\n%s", err, out)
	}

	// FrobMetric with one C: certified, and within the certificates'
	// bound of one-process frob.Learn (package distributed's tests hold it to 1e-9 where
	// the one-process solve is not rounding-sensitive).
	fpath := filepath.Join(dir, "f.json")
	out, err = run("train", "--algo", "frobmetric", "--C", "10", "--data", "builtin:iris", "--json", "--quiet", "--out", fpath)
	if err != nil {
		t.Fatalf("mpirun frobmetric: %v\n%s", err, out)
	}
	sum = nil
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, out)
	}
	if sum["algo"] != "frobmetric" || sum["converged"] != true || sum["c"] != 10.0 || !(sum["relative_gap"].(float64) <= frob.DefaultGapTol) {
		t.Errorf("frobmetric summary %v", sum)
	}
	fm, err := model.LoadFile(fpath)
	if err != nil {
		t.Fatal(err)
	}
	fwant, err := frob.Learn(context.Background(), ds.X, ts, frob.MetricOptions{C: 10})
	if err != nil {
		t.Fatal(err)
	}
	diff.Sub(fm.Metric.M, fwant.M)
	s2 := fwant.DataScale * fwant.DataScale
	gap := sum["relative_gap"].(float64) * math.Max(1, sum["objective"].(float64))
	bound := (math.Sqrt(2*math.Max(gap, 0)) + math.Sqrt(2*math.Max(fwant.Gap, 0))) / (mat.Norm(fwant.M, 2) * s2) // a gap may round below zero
	if e := mat.Norm(&diff, 2) / mat.Norm(fwant.M, 2); !(e <= math.Max(bound, 1e-9)) || !fm.Certificate.Converged {
		t.Errorf("the frobmetric model differs from one-process FrobMetric by %.3g relative (certificates allow %.3g), converged %v", e, bound, fm.Certificate.Converged)
	}
	_, err = run("train", "--algo", "frobmetric", "--C", "1,10", "--data", "builtin:iris")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 {
		t.Errorf("a list of C under mpirun: %v, want a failed job", err)
	}
}
