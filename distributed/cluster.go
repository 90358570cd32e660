package distributed

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/progress"
)

// ClusterReport is the outcome of Cluster: run 1 of the clustering
// protocol, on every rank, with the figures that need the whole kernel
// (the accuracy, the model) on rank 0 only.
type ClusterReport struct {
	// Run is run 1's record, as psdlearn.Cluster gives it (Accuracy,
	// ClusterSeconds and Model on rank 0; NaN, 0 and nil elsewhere).
	Run psdlearn.ClusterRun
	// Objective is the last solve's objective (npkl.Iteration.Objective).
	Objective float64
	// Clusters is the number of clusters; GraphNNZ the Laplacian's
	// nonzeros over all ranks.
	Clusters, GraphNNZ int
	// The wall times of the phases, in seconds: the kNN Laplacian, the
	// pairs, the kernel, gathering the kernel's factor, and the k-means
	// (rank 0).
	GraphSeconds, ConstraintsSeconds, LearnSeconds, GatherSeconds, ClusterSeconds float64
}

// Cluster runs run 1 of psdlearn.Cluster's protocol with options o on the
// rows sharded across comm (LoadRows): the kNN Laplacian (Laplacian) and
// the kernel's eigenvectors (SimpleNPKL) distributed by rows, the pairs
// sampled from every rank's labels (gathered: n ints) with run 1's seed
// (psdlearn.ClusterRunSeed), so the pairs, the eigensolver's start and the
// k-means are the one-process run's. The kernel's factor is gathered and
// rank 0 clusters it. o must ask for one run, one C (o.CGrid) and no
// selection of pairs, preprocessing or baseline; with o.Keep = [1] rank 0's
// report holds the kernel model (psdlearn.ClusterOptions.RunModel), its
// provenance describing rows.Data. o.Progress receives the phases' lines.
// It is collective.
func Cluster(ctx context.Context, comm mpi.Comm, rows *Rows, o psdlearn.ClusterOptions) (*ClusterReport, error) {
	if comm == nil || rows == nil {
		return nil, fmt.Errorf("%w: nil communicator or rows", ErrInvalid)
	}
	if o.Runs > 1 || len(o.CGrid) != 1 || o.Selection != npkl.AllConstraints || o.Standardize || o.Baseline {
		return nil, fmt.Errorf("%w: Cluster runs run 1 with one C on all the pairs, without preprocessing or baseline", ErrInvalid)
	}
	say := progress.Printf(o.Progress, "simplenpkl")
	if say == nil {
		say = func(string, ...any) {}
	}
	rep := &ClusterReport{Run: psdlearn.ClusterRun{Run: 1, Seed: psdlearn.ClusterRunSeed(o.Seed, 1), C: o.CGrid[0], Accuracy: math.NaN()}}
	t := time.Now()
	lr, err := Laplacian(comm, rows.X, o.Neighbors, o.Graph)
	if err != nil {
		return nil, err
	}
	nnz, err := comm.AllreduceSumScalar(float64(lr.L.NNZ()))
	if err != nil {
		return nil, fmt.Errorf("distributed: %w", err)
	}
	rep.GraphNNZ, rep.GraphSeconds = int(nnz), time.Since(t).Seconds()
	say("kNN Laplacian (k = %d), %d nonzeros, in %.2f s", o.Neighbors, rep.GraphNNZ, rep.GraphSeconds)

	// The pairs are drawn from all the labels, as psdlearn.Cluster's run 1
	// draws them.
	t = time.Now()
	y, err := rows.AllLabels(comm, lr.Counts)
	if err != nil {
		return nil, err
	}
	if rep.Clusters, err = clusters(y, o.Clusters); err != nil {
		return nil, err
	}
	pairs, err := constraints.XingPairs(y, o.Ratio, rep.Run.Seed)
	if err != nil {
		return nil, err
	}
	rep.Run.Constraints, rep.Run.Used, rep.ConstraintsSeconds = pairs.Len(), pairs.Len(), time.Since(t).Seconds()
	say("%d pair constraints (ratio %g)", pairs.Len(), o.Ratio)

	t = time.Now()
	lo := o.Learn
	lo.C, lo.Seed = rep.Run.C, rep.Run.Seed
	res, err := SimpleNPKL(ctx, comm, lr.L, lr.Counts, pairs, lo, nil)
	if err != nil {
		return nil, err
	}
	rep.LearnSeconds, rep.Objective = time.Since(t).Seconds(), res.Objective
	r := &rep.Run
	r.LearnSeconds, r.Rank, r.Eigenpairs, r.Covered, r.Iterations, r.History = rep.LearnSeconds, len(res.Values), res.Eigenpairs, res.Covered, res.Iterations, res.History
	r.OpApplies, r.LeadingEigenvalues = res.OpApplies, append([]float64(nil), res.Values[:min(5, len(res.Values))]...)
	for _, it := range res.History {
		r.Objectives = append(r.Objectives, it.Objective)
	}
	say("kernel of rank %d (%d eigenpairs computed, covered: %v, %d iterations) in %.2f s", r.Rank, r.Eigenpairs, r.Covered, r.Iterations, rep.LearnSeconds)

	t = time.Now()
	kern, err := res.Kernel(comm, lr.Counts)
	if err != nil {
		return nil, err
	}
	rep.GatherSeconds = time.Since(t).Seconds()
	if comm.Rank() != 0 {
		return rep, nil
	}
	t = time.Now()
	km, err := eval.KernelKMeans(ctx, kern, rep.Clusters, eval.KMeansOptions{Restarts: o.Restarts, Seed: r.Seed})
	if err != nil {
		return nil, err
	}
	r.Accuracy, rep.ClusterSeconds = eval.PairwiseAccuracy(y, km.Assign), time.Since(t).Seconds()
	r.ClusterSeconds = rep.ClusterSeconds
	if len(o.Keep) > 0 {
		o.Runs, o.Clusters = 1, rep.Clusters
		r.Model = o.RunModel(kern, *r, lo)
		r.Model.Provenance.Data, r.Model.Classes = rows.Data, rows.Classes
		r.Model.Info["mpi_ranks"] = comm.Size()
	}
	return rep, nil
}

// clusters returns the number of clusters: want, or the number of classes
// of y; the labels need two classes at least.
func clusters(y []int, want int) (int, error) {
	distinct := map[int]bool{}
	for _, v := range y {
		distinct[v] = true
	}
	if len(distinct) < 2 {
		return 0, fmt.Errorf("%w: the labels have a single class; the protocol needs at least two", ErrInvalid)
	}
	if want == 0 {
		want = len(distinct)
	}
	if want < 1 || want > len(y) {
		return 0, fmt.Errorf("%w: %d clusters for %d points", ErrInvalid, want, len(y))
	}
	return want, nil
}
