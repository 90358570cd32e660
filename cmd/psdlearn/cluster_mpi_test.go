package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/mpi/mpitest"
)

// TestClusterMPI builds psdlearn with -tags mpi and runs `mpirun -np 2
// psdlearn cluster --algo simplenpkl --data builtin:iris --json --out F`,
// with the linear loss, with 3 squared-hinge iterations, and with iris in
// one file per rank (--data part-{rank}.csv, 100 and 50 rows): rank 0 must
// print one JSON summary (psdlearn/cluster-mpi/v1) whose pairwise accuracy
// equals run 1 of the one-process psdlearn.Cluster with the command's defaults
// and whose eigenvalues and objective agree to 1e-9 relative, and write a
// kernel model; an unsupported flag (--standardize, --runs 2) must fail
// the job. Skipped without -tags mpi or mpirun.
func TestClusterMPI(t *testing.T) {
	bin := mpitest.MPIProgram(t, ".")
	dir := t.TempDir()
	run := func(args ...string) (string, error) {
		out, _, err := mpitest.Mpirun(t, mpitest.Job{NP: 2, Args: append([]string{bin}, args...), Stdout: true})
		return out, err
	}
	ds, err := datasets.Open("iris")
	if err != nil {
		t.Fatal(err)
	}
	g, err := parseGraphOptions("union", "binary")
	if err != nil {
		t.Fatal(err)
	}
	// One file per rank ("{rank}"): iris split unevenly after row 100, so
	// rank 1's file holds one class only.
	raw, err := os.ReadFile("../../datasets/iris.csv")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	for i, rows := range [][]string{lines[1:101], lines[101:]} {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%d.csv", i)), []byte(strings.Join(append([]string{lines[0]}, rows...), "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, data string
		loss       npkl.Loss
		flags      []string
	}{
		{"linear", "builtin:iris", npkl.Linear, nil},
		{"sqhinge", "builtin:iris", npkl.SquaredHinge, []string{"--loss", "sqhinge", "--iters", "3"}},
		{"file per rank", filepath.Join(dir, "part-{rank}.csv"), npkl.Linear, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
			out, err := run(append([]string{"cluster", "--algo", "simplenpkl", "--data", tc.data, "--json", "--quiet", "--out", path}, tc.flags...)...)
			if err != nil {
				t.Fatalf("mpirun: %v\n%s", err, out)
			}
			var sum struct {
				Schema      string             `json:"schema"`
				Loss        string             `json:"loss"`
				Ranks       int                `json:"ranks"`
				N           int                `json:"n"`
				Constraints int                `json:"constraints"`
				Rank        int                `json:"rank"`
				Iterations  int                `json:"iterations"`
				Eigenvalues []float64          `json:"leading_eigenvalues"`
				Objective   float64            `json:"objective"`
				Accuracy    float64            `json:"cluster_accuracy"`
				Phases      map[string]float64 `json:"phases"`
				Out         string             `json:"out"`
			}
			if err := json.Unmarshal([]byte(out), &sum); err != nil {
				t.Fatalf("stdout is not one JSON object: %v\n%s", err, out)
			}
			if sum.Schema != "psdlearn/cluster-mpi/v1" || sum.Loss != tc.loss.String() || sum.Ranks != 2 || sum.N != 150 || sum.Out != path || sum.Phases["learn"] <= 0 {
				t.Errorf("summary %+v", sum)
			}
			rep, err := psdlearn.Cluster(context.Background(), ds.X, ds.Y, psdlearn.ClusterOptions{
				Neighbors: 5, Graph: g, Ratio: 0.7, Runs: 1, Restarts: 10, CGrid: []float64{0.5}, Seed: 1,
				Learn: npkl.Options{Loss: tc.loss, B: 1, Iters: 3},
			})
			if err != nil {
				t.Fatal(err)
			}
			want := rep.Runs[0]
			if sum.Accuracy != want.Accuracy {
				t.Errorf("pairwise accuracy %v, one-process run 1 %v", sum.Accuracy, want.Accuracy)
			}
			if sum.Constraints != want.Constraints || sum.Rank != want.Rank || sum.Iterations < len(want.Objectives)-1 || sum.Iterations > len(want.Objectives)+1 {
				t.Errorf("%d constraints, rank %d, %d iterations; one-process %d, %d, %d", sum.Constraints, sum.Rank, sum.Iterations, want.Constraints, want.Rank, len(want.Objectives))
			}
			if len(sum.Eigenvalues) != len(want.LeadingEigenvalues) {
				t.Fatalf("eigenvalues %v, one-process %v", sum.Eigenvalues, want.LeadingEigenvalues)
			}
			for i, v := range want.LeadingEigenvalues {
				if e := math.Abs(sum.Eigenvalues[i]-v) / math.Abs(v); !(e <= 1e-9) {
					t.Errorf("eigenvalue %d: %v, one-process %v (%.3g relative)", i, sum.Eigenvalues[i], v, e)
				}
			}
			if wo := want.Objectives[len(want.Objectives)-1]; !(math.Abs(sum.Objective-wo) <= 1e-9*math.Abs(wo)) {
				t.Errorf("objective %v, one-process %v", sum.Objective, wo)
			}
			m, err := model.LoadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if m.Kind != model.KindKernel || m.Kernel == nil || m.Kernel.Rank() != want.Rank || m.Kernel.N() != 150 || len(m.Classes) != 3 {
				t.Errorf("--out: kind %v, kernel %v, classes %v", m.Kind, m.Kernel != nil, m.Classes)
			}
		})
	}
	// A rank whose file is missing (rank 1's) fails the job, with no rank
	// left waiting.
	if err := os.WriteFile(filepath.Join(dir, "only-0.csv"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := run("cluster", "--data", filepath.Join(dir, "only-{rank}.csv"), "--quiet"); err == nil {
		t.Error("a missing rank file: the job succeeded")
	} else if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 {
		t.Errorf("a missing rank file: %v, want a failed job", err)
	}

	for _, bad := range [][]string{{"--standardize"}, {"--runs", "2"}} {
		_, err = run(append([]string{"cluster", "--data", "builtin:iris", "--quiet"}, bad...)...)
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 {
			t.Errorf("%v under mpirun: %v, want a failed job", bad, err)
		}
	}
}
