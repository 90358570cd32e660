package distributed

import (
	"cmp"
	"context"
	"fmt"

	"github.com/psdlearn/psdlearn/algos/mvu"
	"github.com/psdlearn/psdlearn/algos/sdp"
	"github.com/psdlearn/psdlearn/mpi"
)

// MVU embeds the rows sharded across comm (LoadRows, at least two per
// rank) by mvu.EmbedGraph: the kNN graph is built across the ranks without
// any rank holding all of X (KNNEdges: the one-process edges, bit for bit)
// and gathered, and MVU runs replicated on it, except for the sparse
// eigensolves of the dual's negative parts, which run on PARPACK with each
// rank owning its block of the n rows (Eigs). opt.SDP must ask for the
// sparse method with the Lanczos eigensolver (the dense method and the
// block eigensolver are not distributed); opt.SDP.Eigs is set here. It
// returns the embedding, the same on every rank, and every point's label
// (Rows.Y gathered). The replicated parts compute the same bits on every
// rank as long as the ranks run on identical nodes. It is collective.
func MVU(ctx context.Context, comm mpi.Comm, rows *Rows, opt mvu.Options) (*mvu.Embedding, []int, error) {
	if comm == nil || rows == nil {
		return nil, nil, fmt.Errorf("%w: nil communicator or rows", ErrInvalid)
	}
	if opt.SDP.Method == sdp.Dense || opt.SDP.Eigensolver != sdp.Lanczos {
		return nil, nil, fmt.Errorf("%w: MVU distributes the sparse method's Lanczos eigensolves only", ErrInvalid)
	}
	opt.SDP.Method = sdp.Sparse
	counts, err := rows.Counts(comm)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range counts {
		if c < 2 {
			return nil, nil, fmt.Errorf("%w: a rank has %d rows: every rank needs at least 2", ErrTooFewRows, c)
		}
	}
	edges, dist2, err := KNNEdges(comm, rows.X, cmp.Or(opt.K, mvu.DefaultK))
	if err != nil {
		return nil, nil, err
	}
	if opt.SDP.Eigs, err = Eigs(comm, counts, nil); err != nil {
		return nil, nil, err
	}
	y, err := rows.AllLabels(comm, counts)
	if err != nil {
		return nil, nil, err
	}
	emb, err := mvu.EmbedGraph(ctx, rows.N, edges, dist2, opt)
	return emb, y, err
}
