package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/distributed"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/progress"
	"github.com/psdlearn/psdlearn/sparse"
)

// Distributed clustering: `mpirun -np P psdlearn cluster --algo simplenpkl
// --data …` with a binary built with -tags mpi runs run 1 of the
// one-process protocol (the same seed, hence the same pairs, eigensolver
// start and k-means) with the kNN Laplacian and the eigenvectors
// distributed by rows (distributed.Laplacian, distributed.SimpleNPKL, docs/mpi.md): rank
// p keeps the p-th contiguous block of the rows; the labels (n ints) are
// gathered to sample the pairs; the eigenvectors are gathered for kernel
// k-means, which rank 0 runs; rank 0 prints the progress and the summary
// and writes --out. Both losses are distributed, with one C and one run:
// the flags of the one-process protocol it does not implement are refused
// rather than ignored.

// mpiClusterFlags are the cluster flags a distributed run accepts (some
// only with particular values: runClusterMPI checks those).
var mpiClusterFlags = map[string]bool{
	"algo": true, "loss": true, "data": true, "label-col": true, "header": true, "no-header": true,
	"k": true, "graph": true, "weight": true, "B": true, "C": true, "rank": true, "max-rank": true,
	"eig-tol": true, "ratio": true, "runs": true, "clusters": true, "restarts": true, "baseline": true,
	"seed": true, "backend": true, "out": true, "save-run": true, "json": true, "quiet": true,
	"max-memory": true, "max-input": true, "iters": true, "alpha0": true, "eta": true,
}

// clusterMPIRun is what runClusterMPI needs from the command line, after
// runCluster parsed and checked it.
type clusterMPIRun struct {
	fs                         *flag.FlagSet
	spec, labelCol, out        string
	graphSym, weight           string
	g                          sparse.GraphOptions
	loss                       npkl.Loss
	grid                       []float64
	b                          engine.Backend
	bcap, eigTol, ratio        float64
	iters                      int     // squared hinge
	alpha0, eta                float64 // squared hinge
	k, rank, maxRank, clusters int
	runs, restarts, saveRun    int
	baseline                   bool
	seed                       uint64
	start                      time.Time
}

// mpiClusterSummary is rank 0's JSON output (schema psdlearn/cluster-mpi/v1).
type mpiClusterSummary struct {
	Algo        string             `json:"algo"`
	Loss        string             `json:"loss"`
	Backend     string             `json:"backend"`
	Data        string             `json:"data"`
	Ranks       int                `json:"ranks"`
	N           int                `json:"n"`
	Dim         int                `json:"dim"`
	Clusters    int                `json:"clusters"`
	Neighbors   int                `json:"k"`
	Graph       string             `json:"graph"`
	GraphNNZ    int                `json:"graph_nnz"`
	B           float64            `json:"B"`
	C           float64            `json:"C"`
	Ratio       float64            `json:"component_ratio"`
	Seed        uint64             `json:"seed"`
	RunSeed     uint64             `json:"run_seed"`
	Constraints int                `json:"constraints"`
	Rank        int                `json:"rank"`
	Eigenpairs  int                `json:"eigenpairs"`
	Covered     bool               `json:"spectrum_covered"`
	Eigenvalues []float64          `json:"leading_eigenvalues"`
	Objective   float64            `json:"objective"`
	Iterations  int                `json:"iterations"`
	Accuracy    float64            `json:"cluster_accuracy"`
	Phases      map[string]float64 `json:"phases"`
	Total       float64            `json:"total_seconds"`
	Out         string             `json:"out,omitempty"`
	PeakRSSMB   float64            `json:"peak_rss_mb"` // rank 0's
}

// runClusterMPI is cluster under an MPI launcher.
func runClusterMPI(ctx context.Context, env *cmdEnv, c clusterMPIRun) error {
	var bad []string
	c.fs.Visit(func(fl *flag.Flag) {
		if !mpiClusterFlags[fl.Name] {
			bad = append(bad, "--"+fl.Name)
		}
	})
	if len(bad) > 0 {
		sort.Strings(bad)
		return usagef("cluster: under mpirun, cluster runs one distributed SimpleNPKL run on all the rows and does not implement %s (docs/mpi.md)", strings.Join(bad, ", "))
	}
	switch {
	case len(c.grid) != 1:
		return usagef("cluster: under mpirun --C needs one value (choosing C from a list on held-out constraints is not implemented), got %v", c.grid)
	case flagGiven(c.fs, "runs") && c.runs != 1:
		return usagef("cluster: under mpirun cluster runs one run (run 1 of the protocol); --runs %d is not implemented", c.runs)
	case flagGiven(c.fs, "save-run") && c.saveRun != 1:
		return usagef("cluster: under mpirun there is one run: --save-run %d is not implemented", c.saveRun)
	case flagGiven(c.fs, "baseline") && c.baseline:
		return usagef("cluster: under mpirun the plain k-means baseline is not implemented (give --baseline=false or leave it out)")
	}
	comm, err := mpi.Open()
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	defer mpi.Close()
	p, r := comm.Size(), comm.Rank()
	if r != 0 {
		env.quiet = true
	}
	prog := newProgress(env)
	graph := c.graphSym + "/" + c.weight
	prog.printf("cluster: MPI job of %d ranks, distributed SimpleNPKL (%v loss, C = %g), run 1 of the protocol", p, c.loss, c.grid[0])
	phases := map[string]float64{}

	// With one file per rank ("{rank}" in the spec) every rank reads only
	// its file; otherwise every rank parses the data and keeps its block
	// (as train does).
	t := time.Now()
	rows, err := loadMPIRows(comm, "cluster", c.spec, c.labelCol, 2, nil)
	if err != nil {
		return err
	}
	x, n, dim, lo, name, classes, dataInfo := rows.x, rows.n, rows.dim, rows.lo, rows.name, rows.classes, rows.info
	hi := lo + len(rows.yLocal)
	if err := checkKernelOut("cluster", c.out, n); err != nil {
		return err
	}
	phases["load"] = time.Since(t).Seconds()
	prog.printf("cluster: %s: %d points, %d features; rank 0 has rows %d–%d", c.spec, n, dim, lo, hi-1)

	t = time.Now()
	lr, err := distributed.Laplacian(comm, x, c.k, c.g)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	nnz, err := comm.AllreduceSumScalar(float64(lr.L.NNZ()))
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	phases["graph"] = time.Since(t).Seconds()
	prog.printf("cluster: kNN Laplacian (k = %d, %s), %d nonzeros, in %.2f s", c.k, graph, int(nnz), phases["graph"])

	// The pairs are drawn from all the labels, as npkl.Cluster's run 1 draws them.
	t = time.Now()
	y, err := rows.allLabels(comm, lr.Counts)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	distinct := map[int]bool{}
	for _, v := range y {
		distinct[v] = true
	}
	if len(distinct) < 2 {
		return fmt.Errorf("cluster: the labels have a single class; the protocol needs at least two")
	}
	clusters := c.clusters
	if clusters == 0 {
		clusters = len(distinct)
	}
	if clusters > n {
		return usagef("cluster: --clusters %d: want at most %d", clusters, n)
	}
	seed := clusterRunSeed(c.seed, 0)
	pairs, err := constraints.XingPairs(y, c.ratio, seed)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	phases["constraints"] = time.Since(t).Seconds()
	prog.printf("cluster: %d pair constraints (ratio %g)", pairs.Len(), c.ratio)

	t = time.Now()
	lopt := npkl.Options{Loss: c.loss, B: c.bcap, C: c.grid[0], Iters: c.iters, Eta: c.eta, Alpha0: c.alpha0,
		Rank: c.rank, MaxRank: c.maxRank, EigTol: c.eigTol, Seed: seed}
	if r == 0 {
		lopt.Progress = func(e progress.Event) { prog.printf("cluster: %s", e.Message) }
	}
	res, err := distributed.SimpleNPKL(ctx, comm, lr.L, lr.Counts, pairs, lopt, nil)
	if err != nil {
		if ctx.Err() != nil {
			return &exitStatus{code: exitInterrupted, err: err}
		}
		return fmt.Errorf("cluster: %w", err)
	}
	phases["learn"] = time.Since(t).Seconds()
	prog.printf("cluster: kernel of rank %d (%d eigenpairs computed, covered: %v, %d iterations) in %.2f s", len(res.Values), res.Eigenpairs, res.Covered, res.Iterations, phases["learn"])

	t = time.Now()
	kern, err := res.Kernel(comm, lr.Counts)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	phases["gather"] = time.Since(t).Seconds()
	if r != 0 {
		return nil
	}
	t = time.Now()
	km, err := eval.KernelKMeans(ctx, kern, clusters, eval.KMeansOptions{Restarts: c.restarts, Seed: seed})
	if err != nil {
		if ctx.Err() != nil {
			return &exitStatus{code: exitInterrupted, err: err}
		}
		return fmt.Errorf("cluster: %w", err)
	}
	acc := eval.PairwiseAccuracy(y, km.Assign)
	phases["cluster"] = time.Since(t).Seconds()

	sum := mpiClusterSummary{
		Algo: "simplenpkl", Loss: c.loss.String(), Iterations: res.Iterations, Backend: c.b.Name(), Data: c.spec, Ranks: p, N: n, Dim: dim,
		Clusters: clusters, Neighbors: c.k, Graph: graph, GraphNNZ: int(nnz), B: c.bcap, C: c.grid[0],
		Ratio: c.ratio, Seed: c.seed, RunSeed: seed, Constraints: pairs.Len(), Rank: len(res.Values),
		Eigenpairs: res.Eigenpairs, Covered: res.Covered, Eigenvalues: append([]float64(nil), res.Values[:min(5, len(res.Values))]...),
		Objective: res.Objective, Accuracy: acc, Phases: phases,
	}
	if c.out != "" {
		t = time.Now()
		cert := &model.Certificate{Converged: res.Covered, Gap: math.NaN(), Tolerance: math.NaN(), Reason: "closed-form solution of the linear-loss problem"}
		if c.loss == npkl.SquaredHinge {
			cert.Reason = fmt.Sprintf("%d squared-hinge iterations, each a closed-form solution", res.Iterations)
		}
		if !res.Covered {
			cert.Reason += "; the positive spectrum was not covered within --max-rank"
			cert.Warnings = append(cert.Warnings, fmt.Sprintf("the positive spectrum was not covered within %d eigenpairs: K is the best rank-%d approximation of the closed form (raise --max-rank)", res.Eigenpairs, len(res.Values)))
		}
		prov := model.NewProvenance(c.b.Name(), seed)
		prov.Data = dataInfo
		prov.Data.Name = c.spec
		m := &model.Model{
			Kind: model.KindKernel, Algo: "simplenpkl", Kernel: kern, Classes: classes,
			Info: map[string]any{
				"run": 1, "run_seed": seed, "C": c.grid[0], "B": c.bcap, "k": c.k, "ratio": c.ratio,
				"selection": "all", "clusters": clusters, "restarts": c.restarts,
				"constraints": pairs.Len(), "constraints_used": pairs.Len(), "rank": len(res.Values), "covered": res.Covered,
				"iterations": res.Iterations, "cluster_accuracy": acc, "backend": c.b.Name(), "mpi_ranks": p,
				"data": c.spec, "graph": c.graphSym, "weight": c.weight,
				"C_grid": c.grid, "loss": c.loss.String(), "runs": 1, "seed": c.seed, "standardize": false,
			},
			Certificate: cert, Provenance: prov,
		}
		if err := writeKernelOut(c.out, m, nil); err != nil {
			return fmt.Errorf("cluster: %w", err)
		}
		sum.Out = c.out
		phases["write"] = time.Since(t).Seconds()
	}
	sum.Total = time.Since(c.start).Seconds()
	sum.PeakRSSMB = peakRSSMB()
	if env.json {
		saved := env.command
		env.command = "cluster-mpi"
		defer func() { env.command = saved }()
		return emitJSON(env, sum)
	}
	w := env.stdout
	fmt.Fprintf(w, "SimpleNPKL (%v loss) on %d ranks: %s, %d points, %d features, %d clusters\n", c.loss, p, name, n, dim, clusters)
	fmt.Fprintf(w, "graph: k = %d %s, %d nonzeros; %d constraints (ratio %.2f)\n", c.k, graph, sum.GraphNNZ, sum.Constraints, c.ratio)
	fmt.Fprintf(w, "pairwise accuracy: %.2f %% (run 1)\n", 100*acc)
	fmt.Fprintf(w, "rank %d (covered: %v), objective %.6g, learn %.2fs, total %.2fs\n", sum.Rank, sum.Covered, sum.Objective, phases["learn"], sum.Total)
	if sum.Out != "" {
		fmt.Fprintf(w, "kernel written to %s\n", sum.Out)
	}
	return nil
}
