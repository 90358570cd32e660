package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/mpi/mpitest"
)

// clusterRun is the part of a cluster summary the MPI test compares.
type clusterRun struct {
	N             int         `json:"n_train"`
	Accuracy      jsonFloat   `json:"cluster_accuracy"`
	Accuracies    []jsonFloat `json:"cluster_accuracies"`
	CChosen       []jsonFloat `json:"C_chosen"`
	KMeans        *jsonFloat  `json:"kmeans_accuracy"`
	Out           string      `json:"out"`
	MPIRanks      int         `json:"mpi_ranks"`
	RankReadBytes []int64     `json:"rank_read_bytes"`
}

// TestClusterMPI builds psdlearn with -tags mpi and runs `mpirun -np 2
// psdlearn cluster` with the one-process flags (several runs, a list of C
// chosen per run, --standardize, the k-means baseline, both losses, one
// file per rank): rank 0 prints the one-process summary, with the same
// per-run accuracies, chosen C and baseline as the same binary run as one
// process, and writes the kernel model. A missing rank file fails the job.
// Skipped without -tags mpi or mpirun.
func TestClusterMPI(t *testing.T) {
	bin := mpitest.MPIProgram(t, ".")
	dir := t.TempDir()
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
	if err := os.WriteFile(filepath.Join(dir, "iris.csv"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	decode := func(what string, out []byte) clusterRun {
		t.Helper()
		var r clusterRun
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("%s: stdout is not one JSON summary: %v\n%s", what, err, out)
		}
		return r
	}
	for _, tc := range []struct {
		name, data string
		flags      []string
	}{
		{"linear", "builtin:iris", []string{"--runs", "3", "--C", "0.5,2", "--standardize"}},
		{"sqhinge", "builtin:iris", []string{"--loss", "sqhinge", "--iters", "3", "--runs", "2"}},
		{"file per rank", filepath.Join(dir, "part-{rank}.csv"), []string{"--runs", "2", "--standardize"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
			flags := append([]string{"--json", "--quiet", "--out", path}, tc.flags...)
			out, _, err := mpitest.Mpirun(t, mpitest.Job{NP: 2, Args: append([]string{bin, "cluster", "--data", tc.data}, flags...), Stdout: true, Timeout: 3 * time.Minute})
			if err != nil {
				t.Fatalf("mpirun: %v\n%s", err, out)
			}
			got := decode("-np 2", []byte(out))
			oneData := tc.data
			if strings.Contains(oneData, "{rank}") {
				oneData = filepath.Join(dir, "iris.csv")
			}
			one := append([]string{"cluster", "--data", oneData, "--json", "--quiet"}, tc.flags...)
			wout, err := exec.Command(bin, one...).Output()
			if err != nil {
				t.Fatalf("one process: %v\n%s", err, wout)
			}
			want := decode("one process", wout)
			if got.MPIRanks != 2 || got.N != 150 || got.Out != path || len(got.RankReadBytes) != 2 {
				t.Errorf("summary %+v", got)
			}
			if !slices.Equal(got.Accuracies, want.Accuracies) || !slices.Equal(got.CChosen, want.CChosen) || got.Accuracy != want.Accuracy ||
				(got.KMeans == nil) != (want.KMeans == nil) || got.KMeans != nil && *got.KMeans != *want.KMeans {
				t.Errorf("accuracies %v (mean %v), C %v, k-means %v; one process %v (%v), %v, %v", got.Accuracies, got.Accuracy, got.CChosen, got.KMeans, want.Accuracies, want.Accuracy, want.CChosen, want.KMeans)
			}
			m, err := model.LoadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if m.Kind != model.KindKernel || m.Kernel == nil || m.Kernel.N() != 150 || len(m.Classes) != 3 {
				t.Errorf("--out: kind %v, kernel %v, classes %v", m.Kind, m.Kernel != nil, m.Classes)
			}
		})
	}
	// A rank whose file is missing (rank 1's) fails the job, with no rank
	// left waiting.
	if err := os.WriteFile(filepath.Join(dir, "only-0.csv"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = mpitest.Mpirun(t, mpitest.Job{NP: 2, Args: []string{bin, "cluster", "--data", filepath.Join(dir, "only-{rank}.csv"), "--quiet"}})
	if ee, ok := errorsAs[*exec.ExitError](err); !ok || ee.ExitCode() == 0 {
		t.Errorf("a missing rank file: %v, want a failed job", err)
	}
}
