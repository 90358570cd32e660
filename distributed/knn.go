package distributed

import (
	"fmt"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// KNNEdges returns, on every rank, the k-nearest-neighbour graph of the
// rows sharded across comm (rank p's contiguous block, rank 0 first; a rank
// may have none), as mvu.Embed builds it on the whole data: the distinct
// undirected pairs (A < B, sorted) of global row numbers with their
// squared distances, bit for bit. No rank holds all of X: the neighbours
// are found as in Laplacian (the blocks of rows go round the ranks once),
// and the lists, k row numbers and k distances per point, are gathered on
// every rank with one Allgatherv (2·n·k values): the graph is small next to
// the data. Every rank must pass the same k; it is collective.
func KNNEdges(comm mpi.Comm, xLocal *mat.Dense, k int) ([]engine.Pair, []float64, error) {
	nl, err := knnLists(comm, xLocal, k, nil, "KNNEdges")
	if err != nil {
		return nil, nil, err
	}
	p := comm.Size()
	n := nl.offsets[p]
	counts := make([]int, p)
	for q, c := range nl.counts {
		counts[q] = 2 * k * c
	}
	mine := make([]float64, 0, counts[comm.Rank()])
	for _, l := range nl.nbs {
		if len(l) != k {
			return nil, nil, fmt.Errorf("distributed: KNNEdges: %d neighbours for a point, want %d", len(l), k)
		}
		for _, c := range l {
			mine = append(mine, float64(c.g), c.d)
		}
	}
	all := make([]float64, 2*k*n)
	if err := comm.Allgatherv(mine, all, counts); err != nil {
		return nil, nil, fmt.Errorf("distributed: KNNEdges: %w", err)
	}
	nb := &sparse.Neighbors{K: k, Index: make([]int, k*n), Dist: make([]float64, k*n)}
	for t := range nb.Index {
		nb.Index[t], nb.Dist[t] = int(all[2*t]), all[2*t+1]
	}
	a, b, d2 := nb.Edges()
	edges := make([]engine.Pair, len(a))
	for t := range a {
		edges[t] = engine.Pair{A: a[t], B: b[t]}
	}
	return edges, d2, nil
}
