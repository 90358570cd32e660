package distributed

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/algos/frob"
	"github.com/psdlearn/psdlearn/algos/lmnn"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/internal/locality"
	"github.com/psdlearn/psdlearn/mpi"
	"gonum.org/v1/gonum/mat"
)

// The Executor's sharded solves: every rank holds all the training rows
// and triplets and keeps the block of rows (and the triplets anchored in
// it) that shardOf assigns it, as FrobMetric and BoostMetric expect. The
// rows are first renumbered for locality (as the one-process learners do):
// points joined by triplet pairs end up in the same block, so a rank's
// halo is small and its products with the triplet graph's Laplacian read
// nearby rows. Triplet r keeps its number, so per-triplet vectors (U0, U)
// need no translation, and the metric does not depend on the row order.

// kernels runs FrobMetric's, BoostMetric's and LMNN's solves sharded
// (psdlearn.LMNNDistributor) and scores k-NN errors over the ranks
// (psdlearn.KNNDistributor).
type kernels struct{ e *Executor }

var _ psdlearn.KNNDistributor = kernels{}

// KNNErrors is the Executor's KNNErrors: BoostMetric's validation
// checkpoints score each rank's block of the validation rows.
func (k kernels) KNNErrors(b engine.Backend, l, refX *mat.Dense, refY []int, nn int, sets ...eval.Queries) ([]float64, error) {
	return k.e.KNNErrors(b, l, refX, refY, nn, sets...)
}

// FrobMetric returns FrobMetric's solve of x and ts, sharded.
func (k kernels) FrobMetric(_ context.Context, x *mat.Dense, ts *constraints.TripletSet, opt frob.MetricOptions) (*frob.MetricResult, error) {
	e := k.e
	sp, err := localShard(e.comm.Rank(), e.comm.Size(), x, ts)
	if err != nil {
		return nil, err
	}
	if opt.U0 != nil {
		opt.U0 = sp.toShard(opt.U0)
	}
	res, err := FrobMetric(e.user, e.comm, sp.x, sp.sh, opt)
	if res != nil && res.U != nil {
		res.U = sp.fromShard(res.U)
	}
	if e.cancelled(err) {
		e.stop(err)
	}
	return res, err
}

// BoostMetric returns BoostMetric's solve of x and ts, sharded.
func (k kernels) BoostMetric(_ context.Context, x *mat.Dense, ts *constraints.TripletSet, opt boost.Options) (*boost.Result, error) {
	e := k.e
	sp, err := localShard(e.comm.Rank(), e.comm.Size(), x, ts)
	if err != nil {
		return nil, err
	}
	opt.Precision = boost.PrecisionDouble // the sharded pricing is in double
	res, err := BoostMetric(e.user, e.comm, sp.x, sp.sh, opt)
	if e.cancelled(err) {
		e.stop(err)
	}
	return res, err
}

// localShard is shardOf on x and ts renumbered for locality.
func localShard(r, p int, x *mat.Dense, ts *constraints.TripletSet) (*split, error) {
	if x == nil || ts == nil {
		return nil, fmt.Errorf("%w: no rows or no triplets to shard", ErrInvalid)
	}
	x, ts, err := locality.Apply(x, ts)
	if err != nil {
		return nil, fmt.Errorf("distributed: %w", err)
	}
	return shardOf(r, p, x, ts)
}

// split is this rank's shard of a solve on rows x and triplets ts: the
// triplets in the order of their anchors (stable), perm[i] the index in ts
// of the i-th of them.
type split struct {
	x    *mat.Dense // this rank's block of rows (nil when empty)
	sh   *Shard
	perm []int // nil: ts is in the order of its anchors
}

// shardOf returns rank r's shard among p of a solve on x and ts: the
// blocks of rows cut where the anchored triplets' running count crosses
// multiples of m/p.
func shardOf(r, p int, x *mat.Dense, ts *constraints.TripletSet) (*split, error) {
	if x == nil || ts == nil || len(ts.Triplets) == 0 {
		return nil, fmt.Errorf("%w: no rows or no triplets to shard", ErrInvalid)
	}
	n, d := x.Dims()
	if ts.N != n {
		return nil, fmt.Errorf("%w: triplets on %d rows, data of %d", ErrInvalid, ts.N, n)
	}
	m := len(ts.Triplets)
	count := make([]int, n+1) // count[i+1]: triplets anchored at row i
	for _, t := range ts.Triplets {
		count[t.I+1]++
	}
	sorted := true
	for i := 1; i < m && sorted; i++ {
		sorted = ts.Triplets[i-1].I <= ts.Triplets[i].I
	}
	for i := 1; i <= n; i++ {
		count[i] += count[i-1] // count[i]: triplets anchored before row i
	}
	tri := ts.Triplets
	sp := &split{}
	if !sorted {
		pos := append([]int(nil), count[:n]...)
		sp.perm = make([]int, m)
		tri = make([]constraints.Triplet, m)
		for q, t := range ts.Triplets {
			tri[pos[t.I]] = t
			sp.perm[pos[t.I]] = q
			pos[t.I]++
		}
	}
	// The first row of block q: the first row i with count[i] ≥ q·m/p.
	first := func(q int) int {
		if q >= p {
			return n
		}
		want := (m*q + p - 1) / p
		lo, hi := 0, n
		for lo < hi {
			mid := (lo + hi) / 2
			if count[mid] >= want {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		return lo
	}
	lo, hi := first(r), first(r+1)
	sh := &Shard{N: n, Offset: lo, Rows: hi - lo, Triplets: tri[count[lo]:count[hi]]}
	if hi > lo {
		sp.x = x.Slice(lo, hi, 0, d).(*mat.Dense)
	}
	halo := map[int]bool{}
	for _, t := range sh.Triplets {
		for _, g := range []int{t.J, t.K} {
			if g < lo || g >= hi {
				halo[g] = true
			}
		}
	}
	if len(halo) > 0 {
		sh.HaloIndex = make([]int, 0, len(halo))
		for g := range halo {
			sh.HaloIndex = append(sh.HaloIndex, g)
		}
		slices.Sort(sh.HaloIndex)
		sh.Halo = mat.NewDense(len(sh.HaloIndex), d, nil)
		for a, g := range sh.HaloIndex {
			sh.Halo.SetRow(a, x.RawRowView(g))
		}
	}
	sp.sh = sh
	return sp, nil
}

// toShard returns v (one value per triplet of ts) in the shard's order.
func (sp *split) toShard(v []float64) []float64 {
	if sp.perm == nil {
		return v
	}
	out := make([]float64, len(v))
	for i, q := range sp.perm {
		out[i] = v[q]
	}
	return out
}

// fromShard returns v (in the shard's order) in the order of ts.
func (sp *split) fromShard(v []float64) []float64 {
	if sp.perm == nil {
		return v
	}
	out := make([]float64, len(v))
	for i, q := range sp.perm {
		out[q] = v[i]
	}
	return out
}

// LMNN returns LMNN's solve of x, y and ts over the ranks
// (psdlearn.LMNNDistributor): every rank holds all the rows and evaluates
// the triplets anchored in its contiguous block of them, searching their
// impostors against all the rows; the objective, the active count and the
// subgradient are summed over the ranks in rank order, and rank 0's
// iterate is broadcast after every step (lmnn.Splitter).
func (k kernels) LMNN(_ context.Context, x *mat.Dense, y []int, ts *constraints.TripletSet, opt lmnn.Options) (*lmnn.Result, error) {
	e := k.e
	opt.Split = &lmnnSplit{comm: e.comm, rd: &reducer{comm: e.comm}}
	res, err := lmnn.Learn(e.user, x, y, ts, opt)
	if e.cancelled(err) || errors.Is(err, context.Canceled) {
		e.stop(err)
	}
	return res, err
}

// lmnnSplit is the lmnn.Splitter of a communicator.
type lmnnSplit struct {
	comm mpi.Comm
	rd   *reducer
}

// Block returns rank r's rows [n·r/P, n·(r+1)/P).
func (s *lmnnSplit) Block(n int) (int, int) {
	p, r := s.comm.Size(), s.comm.Rank()
	return n * r / p, n * (r + 1) / p
}

// Sum adds v over the ranks in rank order: the same bits on every rank.
func (s *lmnnSplit) Sum(v []float64) error {
	sum, err := s.rd.sums(v...)
	if err != nil {
		return err
	}
	copy(v, sum)
	return nil
}

// Broadcast copies rank 0's v to every rank.
func (s *lmnnSplit) Broadcast(v []float64) error {
	if err := s.comm.Bcast(v, 0); err != nil {
		return fmt.Errorf("distributed: %w", err)
	}
	return nil
}
