package distributed

import (
	"fmt"
	"sort"

	"github.com/psdlearn/psdlearn/algos/frob"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine"
	"gonum.org/v1/gonum/mat"
)

// The working set (frob.WorkingSetOracle): the evaluations over all the
// triplets stay distributed as in a whole-set solve, the fixed part of a
// round is one more Gram reduction, and a round's restricted dual (its
// triplets and the rows they touch, a few percent of the data once the
// working set settles) is gathered on every rank and solved by rank 0,
// which broadcasts the solution. Solving it on rank 0 alone, as the
// eigendecompositions are, keeps the ranks in step even where their
// LAPACK or core counts would round differently.

// wsData is what the working-set methods need beyond the whole-set oracle:
// the global number of every local row and the normalised rows this rank
// owns.
type wsData struct {
	glob    []int      // local row (own rows, then halo) → global row
	own     *mat.Dense // this rank's rows / s (nil when it has none)
	rowOff  []int      // first global row of every rank, and N
	tripOff []int      // first triplet of every rank, and m
}

// newWSData prepares the working-set data (collective: one row-count
// exchange).
func (o *frobOracle) newWSData(xLocal *mat.Dense, sh *Shard, s float64, tripCounts []int) error {
	_, rowOff, err := layout(o.comm, sh.Rows)
	if err != nil {
		return err
	}
	w := &wsData{rowOff: rowOff, tripOff: make([]int, len(tripCounts)+1)}
	for p, c := range tripCounts {
		w.tripOff[p+1] = w.tripOff[p] + c
	}
	w.glob = make([]int, 0, sh.Rows+len(sh.HaloIndex))
	for i := 0; i < sh.Rows; i++ {
		w.glob = append(w.glob, sh.Offset+i)
	}
	w.glob = append(w.glob, sh.HaloIndex...)
	if sh.Rows > 0 {
		w.own = mat.NewDense(sh.Rows, o.d, nil)
		raw, dst := xLocal.RawMatrix(), w.own.RawMatrix()
		for i := 0; i < sh.Rows; i++ {
			for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+o.d] {
				dst.Data[i*dst.Stride+j] = v / s // as newLocal normalises
			}
		}
	}
	o.ws = w
	return nil
}

// Gram sets g to Σ_r w_r A_r over every rank's triplets (w: all m).
func (o *frobOracle) Gram(g *mat.SymDense, w []float64) error {
	keep := o.g
	o.g = g
	err := o.gram(w)
	o.g = keep
	return err
}

// PositivePart eigendecomposes x on rank 0, broadcasts its positive part
// and gathers every triplet's margin on it.
func (o *frobOracle) PositivePart(x *mat.SymDense, margin []float64) ([]float64, *mat.Dense, error) {
	keep := o.g
	o.g = x
	lam, vec, err := o.bcastEig(engine.PositivePart(0))
	o.g = keep
	if err != nil {
		return nil, nil, err
	}
	return lam, vec, o.margins(margin, lam, vec)
}

// Restrict gathers the triplets idx (ascending, the same on every rank) and
// the rows they touch: one Allgatherv of the triplets' global rows from the
// ranks that own them, one of the rows from the ranks that own those.
func (o *frobOracle) Restrict(idx []int) (*mat.Dense, *constraints.TripletSet, error) {
	w, p := o.ws, o.comm.Size()
	me := o.comm.Rank()
	// Triplets, from the rank of their anchor.
	counts := make([]int, p)
	for q := 0; q < p; q++ {
		lo := sort.SearchInts(idx, w.tripOff[q])
		hi := sort.SearchInts(idx, w.tripOff[q+1])
		counts[q] = 3 * (hi - lo)
	}
	lo := sort.SearchInts(idx, w.tripOff[me])
	mine := make([]float64, 0, counts[me])
	for _, r := range idx[lo : lo+counts[me]/3] {
		t := o.localTriplet(r - o.off)
		mine = append(mine, float64(w.glob[t.I]), float64(w.glob[t.J]), float64(w.glob[t.K]))
	}
	all := make([]float64, 3*len(idx))
	if err := o.comm.Allgatherv(mine, all, counts); err != nil {
		return nil, nil, fmt.Errorf("distributed: working-set triplets: %w", err)
	}
	// The rows they touch, ascending, from the ranks that own them.
	used := make([]int, len(all))
	for k, v := range all {
		used[k] = int(v)
	}
	sort.Ints(used)
	used = compactInts(used)
	for q := 0; q < p; q++ {
		a := sort.SearchInts(used, w.rowOff[q])
		b := sort.SearchInts(used, w.rowOff[q+1])
		counts[q] = o.d * (b - a)
	}
	a := sort.SearchInts(used, w.rowOff[me])
	rows := make([]float64, 0, counts[me])
	for _, g := range used[a : a+counts[me]/o.d] {
		rows = append(rows, w.own.RawRowView(g-w.rowOff[me])...)
	}
	xs := mat.NewDense(len(used), o.d, nil)
	if err := o.comm.Allgatherv(rows, xs.RawMatrix().Data, counts); err != nil {
		return nil, nil, fmt.Errorf("distributed: working-set rows: %w", err)
	}
	trip := make([]constraints.Triplet, len(idx))
	num := func(v float64) int { return sort.SearchInts(used, int(v)) }
	for k := range trip {
		trip[k] = constraints.Triplet{I: num(all[3*k]), J: num(all[3*k+1]), K: num(all[3*k+2])}
	}
	ts, err := constraints.NewTripletSet(len(used), trip)
	if err != nil {
		return nil, nil, fmt.Errorf("distributed: working set: %w", err)
	}
	return xs, ts, nil
}

// compactInts removes adjacent duplicates.
func compactInts(v []int) []int {
	out := v[:0]
	for i, x := range v {
		if i == 0 || x != v[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// Once runs solve on rank 0 and broadcasts what a working-set round reads
// of its result: [status, |U|, U, Iterations, Evaluations,
// FullEvaluations, Refinements, RefineSeconds, |Curve|, Curve, has M, M].
// status is 0 (no error), 1 (an error with a result) or 2 (an error, no
// result); the other ranks then return ErrRemote, rank 0 its own error.
func (o *frobOracle) Once(solve func() (*frob.MetricResult, error)) (*frob.MetricResult, error) {
	var (
		res  *frob.MetricResult
		serr error
		buf  []float64
	)
	if o.comm.Rank() == 0 {
		res, serr = solve()
		buf = encodeRound(res, serr, o.d)
	}
	size := []float64{float64(len(buf))}
	if err := o.comm.Bcast(size, 0); err != nil {
		return nil, fmt.Errorf("distributed: working-set solve: %w", err)
	}
	if o.comm.Rank() != 0 {
		buf = make([]float64, int(size[0]))
	}
	if err := o.comm.Bcast(buf, 0); err != nil {
		return nil, fmt.Errorf("distributed: working-set solve: %w", err)
	}
	if o.comm.Rank() == 0 {
		return res, serr
	}
	return decodeRound(buf, o.d)
}

func encodeRound(res *frob.MetricResult, err error, d int) []float64 {
	status := 0.0
	switch {
	case err != nil && res == nil:
		return []float64{2}
	case err != nil:
		status = 1
	}
	buf := []float64{status, float64(len(res.U))}
	buf = append(buf, res.U...)
	buf = append(buf, float64(res.Iterations), float64(res.Evaluations), float64(res.FullEvaluations),
		float64(res.Refinements), res.RefineSeconds, float64(len(res.Curve)))
	buf = append(buf, res.Curve...)
	if res.M == nil {
		return append(buf, 0)
	}
	buf = append(buf, 1)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			buf = append(buf, res.M.At(i, j))
		}
	}
	return buf
}

func decodeRound(buf []float64, d int) (*frob.MetricResult, error) {
	remote := fmt.Errorf("%w: the working-set solve failed on rank 0", ErrRemote)
	if len(buf) == 0 || buf[0] == 2 {
		return nil, remote
	}
	next := func(k int) []float64 { v := buf[:k]; buf = buf[k:]; return v }
	status := next(1)[0]
	res := &frob.MetricResult{}
	res.U = append([]float64(nil), next(int(next(1)[0]))...)
	h := next(6)
	res.Iterations, res.Evaluations, res.FullEvaluations = int(h[0]), int(h[1]), int(h[2])
	res.Refinements, res.RefineSeconds = int(h[3]), h[4]
	res.Curve = append([]float64(nil), next(int(h[5]))...)
	if next(1)[0] == 1 {
		res.M = mat.NewSymDense(d, append([]float64(nil), next(d*d)...))
	}
	if status == 1 {
		return res, remote
	}
	return res, nil
}
