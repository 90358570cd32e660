package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/distributed"
	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/progress"
)

// Distributed clustering: `mpirun -np P psdlearn cluster --algo simplenpkl
// --data …` with a binary built with -tags mpi runs run 1 of the
// one-process protocol (the same seed, hence the same pairs, eigensolver
// start and k-means) with the kNN Laplacian and the eigenvectors
// distributed by rows (distributed.Cluster, docs/mpi.md): rank p keeps the
// p-th contiguous block of the rows; rank 0 prints the progress and the
// summary and writes --out. Both losses are distributed, with one C and one
// run: the flags of the one-process protocol it does not implement are
// refused rather than ignored.

// mpiClusterFlags are the cluster flags a distributed run accepts (some
// only with particular values: checkClusterMPIFlags checks those).
var mpiClusterFlags = map[string]bool{
	"algo": true, "loss": true, "data": true, "label-col": true, "header": true, "no-header": true,
	"k": true, "graph": true, "weight": true, "B": true, "C": true, "rank": true, "max-rank": true,
	"eig-tol": true, "ratio": true, "runs": true, "clusters": true, "restarts": true, "baseline": true,
	"seed": true, "backend": true, "out": true, "save-run": true, "json": true, "quiet": true,
	"max-memory": true, "max-input": true, "iters": true, "alpha0": true, "eta": true,
}

// mpiClusterSummary is rank 0's JSON output (schema psdlearn/cluster-mpi/v1).
type mpiClusterSummary struct {
	Algo        string               `json:"algo"`
	Loss        string               `json:"loss"`
	Backend     string               `json:"backend"`
	Data        string               `json:"data"`
	Ranks       int                  `json:"ranks"`
	N           int                  `json:"n"`
	Dim         int                  `json:"dim"`
	Clusters    int                  `json:"clusters"`
	Neighbors   int                  `json:"k"`
	Graph       string               `json:"graph"`
	GraphNNZ    int                  `json:"graph_nnz"`
	B           jsonFloat            `json:"B"`
	C           jsonFloat            `json:"C"`
	Ratio       jsonFloat            `json:"component_ratio"`
	Seed        uint64               `json:"seed"`
	RunSeed     uint64               `json:"run_seed"`
	Constraints int                  `json:"constraints"`
	Rank        int                  `json:"rank"`
	Eigenpairs  int                  `json:"eigenpairs"`
	Covered     bool                 `json:"spectrum_covered"`
	Eigenvalues []jsonFloat          `json:"leading_eigenvalues"`
	Objective   jsonFloat            `json:"objective"`
	Iterations  int                  `json:"iterations"`
	Accuracy    jsonFloat            `json:"cluster_accuracy"`
	Phases      map[string]jsonFloat `json:"phases"`
	Total       jsonFloat            `json:"total_seconds"`
	Out         string               `json:"out,omitempty"`
	PeakRSSMB   jsonFloat            `json:"peak_rss_mb"` // rank 0's
	// Every rank's bytes of rows and labels, and the bytes it read from the
	// data files (0: it loaded the whole input), in rank order.
	RankDataBytes []int64 `json:"rank_data_bytes"`
	RankReadBytes []int64 `json:"rank_read_bytes"`
}

// runClusterMPI is cluster under an MPI launcher, after runCluster parsed
// and checked the flags.
func runClusterMPI(ctx context.Context, env *cmdEnv, fs *flag.FlagSet, f clusterFlags, start time.Time) error {
	if err := checkClusterMPIFlags(fs, f); err != nil {
		return err
	}
	comm, err := mpi.Open()
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	defer mpi.Close()
	if comm.Rank() != 0 {
		env.quiet = true
	}
	prog := newProgress(env)
	prog.printf("cluster: MPI job of %d ranks, distributed SimpleNPKL (%v loss, C = %g), run 1 of the protocol", comm.Size(), f.loss, f.grid[0])
	t := time.Now()
	rows, err := readRowsMPI(comm, f.spec, f.labelCol, 0, "", 2)
	if err != nil {
		return mpiDataError("cluster", err)
	}
	held, read, err := rowsMemory(comm, rows, prog, "cluster")
	if err != nil {
		return err
	}
	if rows.Data != nil {
		rows.Data.Name = f.spec
	}
	if err := checkKernelOut("cluster", f.out, rows.N); err != nil {
		return err
	}
	load := time.Since(t).Seconds()
	prog.printf("cluster: %s: %d points, %d features; rank 0 has rows %d–%d", f.spec, rows.N, rows.Dim, rows.Lo, rows.Lo+len(rows.Y)-1)
	o := psdlearn.ClusterOptions{
		Neighbors: f.k, Graph: f.g, Ratio: f.ratio, Runs: 1, Clusters: f.clusters, Restarts: f.restarts, Fraction: f.fraction,
		CGrid: f.grid, HoldOut: f.holdOut, Seed: f.seed, Learn: f.learn(), Progress: progress.Prefix(prog.event, "cluster: "),
	}
	if f.out != "" {
		o.Keep = []int{1}
	}
	rep, err := distributed.Cluster(ctx, comm, rows, o)
	if err != nil {
		if ctx.Err() != nil {
			return &exitStatus{code: exitInterrupted, err: err}
		}
		return fmt.Errorf("cluster: %w", err)
	}
	if comm.Rank() != 0 {
		return nil
	}
	sum := mpiClusterSummaryOf(f, comm.Size(), rows, rep, load)
	sum.RankDataBytes, sum.RankReadBytes = held, read
	if f.out != "" {
		t = time.Now()
		if err := saveClusterKernel(f, rep.Run.Model); err != nil {
			return err
		}
		sum.Out, sum.Phases["write"] = f.out, jsonFloat(time.Since(t).Seconds())
	}
	sum.Total, sum.PeakRSSMB = jsonFloat(time.Since(start).Seconds()), jsonFloat(peakRSSMB())
	if env.json {
		return emitJSONAs(env, "cluster-mpi", sum)
	}
	w := env.stdout
	fmt.Fprintf(w, "SimpleNPKL (%v loss) on %d ranks: %s, %d points, %d features, %d clusters\n", f.loss, sum.Ranks, rows.Name, sum.N, sum.Dim, sum.Clusters)
	fmt.Fprintf(w, "graph: k = %d %s, %d nonzeros; %d constraints (ratio %.2f)\n", f.k, sum.Graph, sum.GraphNNZ, sum.Constraints, f.ratio)
	fmt.Fprintf(w, "pairwise accuracy: %.2f %% (run 1)\n", 100*sum.Accuracy)
	fmt.Fprintf(w, "rank %d (covered: %v), objective %.6g, learn %.2fs, total %.2fs\n", sum.Rank, sum.Covered, sum.Objective, rep.LearnSeconds, sum.Total)
	if sum.Out != "" {
		fmt.Fprintf(w, "kernel written to %s\n", sum.Out)
	}
	return nil
}

// checkClusterMPIFlags refuses the flags and values of the one-process
// protocol that the distributed run does not implement.
func checkClusterMPIFlags(fs *flag.FlagSet, f clusterFlags) error {
	var bad []string
	fs.Visit(func(fl *flag.Flag) {
		if !mpiClusterFlags[fl.Name] {
			bad = append(bad, "--"+fl.Name)
		}
	})
	if len(bad) > 0 {
		sort.Strings(bad)
		return usagef("cluster: under mpirun, cluster runs one distributed SimpleNPKL run on all the rows and does not implement %s (docs/mpi.md)", strings.Join(bad, ", "))
	}
	switch {
	case len(f.grid) != 1:
		return usagef("cluster: under mpirun --C needs one value (choosing C from a list on held-out constraints is not implemented), got %v", f.grid)
	case flagGiven(fs, "runs") && f.runs != 1:
		return usagef("cluster: under mpirun cluster runs one run (run 1 of the protocol); --runs %d is not implemented", f.runs)
	case flagGiven(fs, "save-run") && f.saveRun != 1:
		return usagef("cluster: under mpirun there is one run: --save-run %d is not implemented", f.saveRun)
	case flagGiven(fs, "baseline") && f.baseline:
		return usagef("cluster: under mpirun the plain k-means baseline is not implemented (give --baseline=false or leave it out)")
	}
	return nil
}

// mpiClusterSummaryOf is rank 0's summary of a distributed cluster run.
func mpiClusterSummaryOf(f clusterFlags, ranks int, rows *distributed.Rows, rep *distributed.ClusterReport, load float64) mpiClusterSummary {
	r := rep.Run
	return mpiClusterSummary{
		Algo: "simplenpkl", Loss: f.loss.String(), Iterations: r.Iterations, Backend: f.b.Name(), Data: f.spec, Ranks: ranks, N: rows.N, Dim: rows.Dim,
		Clusters: rep.Clusters, Neighbors: f.k, Graph: f.graph + "/" + f.weight, GraphNNZ: rep.GraphNNZ, B: jsonFloat(f.bcap), C: jsonFloat(r.C),
		Ratio: jsonFloat(f.ratio), Seed: f.seed, RunSeed: r.Seed, Constraints: r.Constraints, Rank: r.Rank,
		Eigenpairs: r.Eigenpairs, Covered: r.Covered, Eigenvalues: jsonFloats(r.LeadingEigenvalues),
		Objective: jsonFloat(rep.Objective), Accuracy: jsonFloat(r.Accuracy),
		Phases: map[string]jsonFloat{"load": jsonFloat(load), "graph": jsonFloat(rep.GraphSeconds), "constraints": jsonFloat(rep.ConstraintsSeconds),
			"learn": jsonFloat(rep.LearnSeconds), "gather": jsonFloat(rep.GatherSeconds), "cluster": jsonFloat(rep.ClusterSeconds)},
	}
}

// mpiDataError is the error of loading a distributed data set: a rank
// layout the user chose that leaves a rank too few rows is a usage error.
func mpiDataError(cmd string, err error) error {
	if errors.Is(err, distributed.ErrTooFewRows) {
		return &usageError{fmt.Errorf("%s: %w", cmd, err)}
	}
	return fmt.Errorf("%s: %w", cmd, err)
}

// containsRankPlaceholder reports whether a data spec names one file per
// rank.
func containsRankPlaceholder(spec string) bool {
	return strings.Contains(spec, distributed.RankPlaceholder)
}
