package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine"
)

// clusterCLI runs `psdlearn cluster args…` in-process.
func clusterCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	st := runMain(context.Background(), append([]string{"cluster"}, args...), &out, &errb)
	return st, out.String(), errb.String()
}

// TestClusterJSON: the JSON summary reports what the library computes for
// the same options, for both losses and both selections.
func TestClusterJSON(t *testing.T) {
	ds, err := datasets.Open("iris")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		loss, sel string
	}{{"linear", "all"}, {"sqhinge", "all"}, {"linear", "active"}} {
		st, out, errs := clusterCLI("--data", "builtin:iris", "--loss", tc.loss, "--select", tc.sel, "--runs", "4", "--seed", "3", "--backend", "go", "--json")
		if st != 0 {
			t.Fatalf("%v: status %d: %s %s", tc, st, out, errs)
		}
		dec := json.NewDecoder(strings.NewReader(out))
		var sum clusterSummary
		if err := dec.Decode(&sum); err != nil {
			t.Fatalf("%v: decoding %q: %v", tc, out, err)
		}
		if dec.More() {
			t.Fatalf("%v: more than one JSON value: %q", tc, out)
		}
		loss, _ := npkl.ParseLoss(tc.loss)
		sel, _ := npkl.ParseSelection(tc.sel)
		b, _ := engine.Get("go")
		rep, err := psdlearn.Cluster(context.Background(), ds.X, ds.Y, psdlearn.ClusterOptions{
			Neighbors: 5, Ratio: 0.7, Runs: 4, Restarts: 10, Seed: 3, Selection: sel, Fraction: 0.5,
			Learn: npkl.Options{Loss: loss, B: 1, C: 0.5, Backend: b},
		})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Algo != "simplenpkl" || sum.Loss != tc.loss || sum.Backend != "go" || sum.N != 150 || sum.Dim != 4 || sum.Clusters != 3 || sum.Runs != 4 {
			t.Errorf("%v: summary header %+v", tc, sum)
		}
		if float64(sum.Accuracy) != rep.AccuracyMean || float64(sum.AccuracySD) != rep.AccuracySD || len(sum.Accuracies) != 4 {
			t.Errorf("%v: CLI accuracy %v ± %v, library %v ± %v", tc, sum.Accuracy, sum.AccuracySD, rep.AccuracyMean, rep.AccuracySD)
		}
		if float64(sum.Rank) != rep.RankMean || float64(sum.Constraints) != rep.ConstraintsMean || float64(sum.Used) != rep.UsedMean {
			t.Errorf("%v: rank/constraints %v/%v/%v, library %v/%v/%v", tc, sum.Rank, sum.Constraints, sum.Used, rep.RankMean, rep.ConstraintsMean, rep.UsedMean)
		}
		wantIters := 1
		if tc.loss == "sqhinge" {
			wantIters = 10
		}
		if len(sum.Objective) != wantIters || sum.Iterations != jsonFloat(wantIters) {
			t.Errorf("%v: %v iterations, objective %v", tc, sum.Iterations, sum.Objective)
		}
		if sum.KMeans == nil || !(*sum.KMeans < sum.Accuracy) {
			t.Errorf("%v: k-means baseline %v not below SimpleNPKL %v", tc, sum.KMeans, sum.Accuracy)
		}
		if !(sum.PeakRSSMB > 0) || !(sum.TotalSeconds > 0) || len(sum.Eigenvalues) == 0 {
			t.Errorf("%v: resources %v MB, %v s, eigenvalues %v", tc, sum.PeakRSSMB, sum.TotalSeconds, sum.Eigenvalues)
		}
	}
}

func TestClusterText(t *testing.T) {
	st, out, errs := clusterCLI("--data", "builtin:iris", "--runs", "2", "--C", "0.25,0.5", "--standardize")
	if st != 0 {
		t.Fatalf("status %d: %s %s", st, out, errs)
	}
	for _, want := range []string{"pairwise accuracy:", "k-means baseline:", "C chosen per run:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestClusterErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--data", "builtin:iris", "--algo", "npkl2"},
		{"--data", "builtin:iris", "--loss", "hinge"},
		{"--data", "builtin:iris", "--C", "0"},
		{"--data", "builtin:iris", "--C", "x"},
		{"--data", "builtin:iris", "--graph", "star"},
		{"--data", "builtin:iris", "--weight", "gauss"},
		{"--data", "builtin:iris", "--select", "best"},
		{"--data", "builtin:iris", "--k", "0"},
		{"--data", "builtin:iris", "--rank", "-1"},
		{"--data", "builtin:iris", "--alpha0", "0"},
		{"--data", "builtin:iris", "--eig-tol", "-1"},
		{"--data", "builtin:iris", "--k", "150"},
		{"--data", "builtin:iris", "--ratio", "0.01"},
		{"--data", "builtin:iris", "--backend", "fortran"},
		{"--data", "builtin:nosuch"},
		{"--data", "builtin:iris", "extra"},
	} {
		st, out, _ := clusterCLI(append(args, "--json")...)
		if st == 0 {
			t.Errorf("%v: succeeded", args)
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil || m["error"] == nil {
			t.Errorf("%v: output %q is not a JSON error object", args, out)
		}
	}
}
