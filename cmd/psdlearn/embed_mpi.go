package main

import (
	"cmp"
	"fmt"

	"github.com/psdlearn/psdlearn/algos/sdp"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/distributed"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/mpi"
	"gonum.org/v1/gonum/mat"
)

// embed under an MPI launcher (mpirun -np P psdlearn embed …): every rank
// holds a contiguous block of the rows (with {rank} in --data it reads
// only its own file; otherwise it parses the data and keeps its block),
// the kNN graph is built across the ranks without any rank holding all of
// X (distributed.KNNEdges: the one-process edges, bit for bit) and gathered, and
// MVU runs replicated on the graph (mvu.EmbedGraph), except for the sparse
// eigensolves of the dual's negative parts, which run on PARPACK with each
// rank owning its block of the n rows (distributed.Eigs): its rows of every
// operator product and of the Lanczos basis. Rank 0 prints the progress
// and the summary and writes the outputs. The dense method and the block
// eigensolver are not distributed (usage errors). With shift-and-invert
// (the default) every rank factors and solves the whole sparse system and
// keeps its rows, so only the Lanczos basis is split; --shift-invert=false
// splits every product by rows, at many times the products. The
// replicated parts must compute the same bits on every rank, as on
// identical nodes; see docs/mpi.md.

// embedMPI opens MPI when the process is one rank of an MPI job and returns
// its communicator (nil outside MPI) and the function that closes MPI. It
// sets *m to the sparse method.
func embedMPI(env *cmdEnv, m *sdp.Method, solver sdp.Eigensolver) (mpi.Comm, func(), error) {
	none := func() {}
	if !mpi.Launched() {
		return nil, none, nil
	}
	switch {
	case *m == sdp.Dense:
		return nil, none, usagef("embed: under mpirun the negative parts are computed by PARPACK: --method dense is not distributed")
	case solver != sdp.Lanczos:
		return nil, none, usagef("embed: under mpirun only --eigensolver lanczos (PARPACK) is distributed")
	}
	comm, err := mpi.Open()
	if err != nil {
		return nil, none, fmt.Errorf("embed: %w", err)
	}
	if comm.Rank() != 0 {
		env.quiet = true
	}
	*m = sdp.Sparse
	return comm, func() { mpi.Close() }, nil
}

// embedShard is what an MPI rank of embed holds: its distributed
// eigensolver, the whole kNN graph, every point's label for the outputs,
// and the data's description.
type embedShard struct {
	eigs   engine.EigsSolver
	edges  []engine.Pair
	dist2  []float64
	labels *data.Dataset // Name, Y and Classes of all the points; no X
	info   *model.DataInfo
	n, dim int
}

// loadEmbedShard loads this rank's rows (loadMPIRows, prep applied to the
// whole data), builds the kNN graph across the ranks and the distributed
// eigensolver, and gathers the labels.
func loadEmbedShard(env *cmdEnv, comm mpi.Comm, spec, labelCol string, k int, prep func(*mat.Dense) (*mat.Dense, error)) (*embedShard, error) {
	rows, err := loadMPIRows(comm, "embed", spec, labelCol, 2, prep)
	if err != nil {
		return nil, err
	}
	p := comm.Size()
	one, all := make([]int, p), make([]float64, p)
	for q := range one {
		one[q] = 1
	}
	if err := comm.Allgatherv([]float64{float64(len(rows.yLocal))}, all, one); err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	counts := make([]int, p)
	for q, v := range all {
		counts[q] = int(v)
	}
	sh := &embedShard{n: rows.n, dim: rows.dim, info: rows.info}
	for _, c := range counts {
		if c < 2 {
			return nil, usagef("embed: a rank has %d rows: every rank needs at least 2", c)
		}
	}
	if sh.edges, sh.dist2, err = distributed.KNNEdges(comm, rows.x, cmp.Or(k, 6)); err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	if sh.eigs, err = distributed.Eigs(comm, counts, nil); err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	y, err := rows.allLabels(comm, counts)
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	sh.labels = &data.Dataset{Name: rows.name, Y: y, Classes: rows.classes}
	if sh.info != nil {
		sh.info.Name = spec
	}
	return sh, nil
}

// size returns the number of points and features: the shard's, or x's in
// one process (sh nil).
func (sh *embedShard) size(x *mat.Dense) (int, int) {
	if sh == nil {
		return x.Dims()
	}
	return sh.n, sh.dim
}
