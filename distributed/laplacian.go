package distributed

import (
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// LaplacianRows is one rank's share of a distributed graph Laplacian.
type LaplacianRows struct {
	// L holds this rank's rows of the n×n normalised Laplacian: a
	// Counts[rank]×n CSR matrix with global column indices (what
	// SimpleNPKL takes).
	L *sparse.CSR
	// Counts is every rank's number of rows; Offset the global number of
	// this rank's first row.
	Counts []int
	Offset int
}

// Laplacian builds, on rows sharded across the ranks of comm, this rank's
// rows of the normalised Laplacian I − D^{-1/2} S D^{-1/2} of the kNN
// similarity S that npkl.Laplacian(x, k, g, backend) builds on the whole
// data: the same exact neighbours (squared Euclidean distance, ties by the
// lower global row), the same symmetrization and weights, bit for bit.
// Rank p passes its contiguous block of rows (rows Offset… in the global
// order, rank 0 first); a rank may have none.
//
// No rank holds all of X. The blocks of rows go round the ranks once (as
// in Triplets: one Bcast per block), and every rank keeps, for each of its
// points, the running list of its k nearest rows, searched block by block
// with sparse.KNN. Then the neighbour lists go round (k indices and k
// squared distances per point, one Bcast per block), and every rank picks
// the edges that point into its rows: the "in" half of the union, mutual
// or average graph. Heat weights with Sigma zero need the mean squared
// distance to the neighbours: the ranks add their lists in rank order,
// each continuing the sum of the previous one (P one-float Bcasts), which
// is the one-process sum. The degrees (row sums of S, n floats) are
// gathered with one Allgatherv for the normalisation. Memory per rank is
// its block, one visiting block, O(rows·k) for its lists and rows of S,
// and the n degrees.
//
// Every rank must call it with the same k and g and the same number of
// columns; it is collective.
func Laplacian(comm mpi.Comm, xLocal *mat.Dense, k int, g sparse.GraphOptions) (*LaplacianRows, error) {
	if comm == nil {
		return nil, fmt.Errorf("%w: nil communicator", ErrInvalid)
	}
	var lerr error
	if _, err := g.WeightFunc(1); err != nil {
		lerr = fmt.Errorf("%w: Laplacian: %w", ErrInvalid, err)
	}
	nl, err := knnLists(comm, xLocal, k, lerr, "Laplacian")
	if err != nil {
		return nil, err
	}
	nbs, counts, offsets := nl.nbs, nl.counts, nl.offsets
	p, me := comm.Size(), comm.Rank()
	n, lo := offsets[p], offsets[me]
	rows := counts[me]

	// σ² of heat weights: the one-process sum, point by point, in rank order.
	var mean float64
	if g.Weight == sparse.Heat && g.Sigma == 0 {
		var sum float64
		for q := 0; q < p; q++ {
			if q == me {
				for _, l := range nbs {
					for _, c := range l {
						sum += c.d
					}
				}
			}
			buf := []float64{sum}
			if err := comm.Bcast(buf, q); err != nil {
				return nil, fmt.Errorf("distributed: Laplacian: σ²: %w", err)
			}
			sum = buf[0]
		}
		mean = sum / float64(n*k)
	}
	weight, err := g.WeightFunc(mean)
	if err != nil {
		return nil, fmt.Errorf("%w: Laplacian: %w", ErrInvalid, err)
	}

	// Ring 2: the neighbour lists (k indices, then k squared distances per
	// point); every rank keeps the half-edges of its rows.
	half := make([][]sparse.HalfEdge, rows)
	for i, l := range nbs {
		for _, c := range l {
			half[i] = append(half[i], sparse.HalfEdge{J: c.g, W: weight(c.d), Out: true})
		}
	}
	sizes := make([]int, p)
	for q, nq := range counts {
		sizes[q] = 2 * nq * k
	}
	err = passBlocks(comm, sizes, func(buf []float64) {
		for i, l := range nbs {
			for t, c := range l {
				buf[(2*i)*k+t] = float64(c.g)
				buf[(2*i+1)*k+t] = c.d
			}
		}
	}, func(q int, buf []float64) error {
		for a := 0; a < counts[q]; a++ {
			for t := 0; t < k; t++ {
				i := int(buf[(2*a)*k+t]) - lo
				if i >= 0 && i < rows {
					half[i] = append(half[i], sparse.HalfEdge{J: offsets[q] + a, W: weight(buf[(2*a+1)*k+t]), Out: false})
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("distributed: Laplacian: %w", err)
	}

	// This rank's rows of S, the degrees of all, and its rows of L.
	s := &sparse.CSR{Rows: rows, Cols: n, Indptr: make([]int, rows+1)}
	for i, r := range half {
		s.Ind, s.Data = sparse.AppendMergedRow(s.Ind, s.Data, r, g.Symmetrize)
		s.Indptr[i+1] = len(s.Ind)
		half[i] = nil
	}
	deg := make([]float64, n)
	if err := comm.Allgatherv(sparse.Degrees(s), deg, counts); err != nil {
		return nil, fmt.Errorf("distributed: Laplacian: degrees: %w", err)
	}
	return &LaplacianRows{L: sparse.NormalizedLaplacianRows(s, lo, deg), Counts: counts, Offset: lo}, nil
}

// neighbourLists is every local point's k nearest rows (global numbers,
// ascending by distance then row) over all the ranks' rows, and the layout.
type neighbourLists struct {
	nbs             [][]cand
	counts, offsets []int
	d               int
}

// knnLists validates the sharded rows (lerr: the caller's own check of its
// other arguments, agreed on with the rest) and finds every local point's
// k nearest rows by passing the blocks of rows round the ranks once (one
// Bcast per block), searching each with sparse.KNN: the exact neighbours
// of sparse.KNN on the whole data (squared Euclidean distance, ties by the
// lower global row). It is collective; what names the caller in errors.
func knnLists(comm mpi.Comm, xLocal *mat.Dense, k int, lerr error, what string) (*neighbourLists, error) {
	if comm == nil {
		return nil, fmt.Errorf("%w: nil communicator", ErrInvalid)
	}
	rows, d := 0, 0
	if xLocal != nil {
		rows, d = xLocal.Dims()
	}
	if lerr == nil && k <= 0 {
		lerr = fmt.Errorf("%w: %s: k = %d, want k ≥ 1", ErrInvalid, what, k)
	} else if lerr == nil && rows > 0 {
		if err := engine.CheckDistances("data", xLocal); err != nil {
			lerr = fmt.Errorf("%w: %s: %w", ErrInvalid, what, err)
		}
	}
	// One Allreduce agrees on the errors and the column count.
	agree := []float64{0, float64(d), -float64(d)}
	if lerr != nil {
		agree[0] = 1
	}
	if rows == 0 {
		agree[1], agree[2] = math.Inf(-1), math.Inf(-1)
	}
	if err := comm.AllreduceMax(agree); err != nil {
		return nil, fmt.Errorf("distributed: %s: %w", what, err)
	}
	if lerr != nil {
		return nil, lerr
	}
	if agree[0] != 0 {
		return nil, fmt.Errorf("%w: %s: another rank refused its input", ErrRemote, what)
	}
	if math.IsInf(agree[1], -1) {
		return nil, fmt.Errorf("%w: %s: no rank has data", ErrInvalid, what)
	}
	if agree[1] != -agree[2] {
		return nil, fmt.Errorf("%w: %s: the ranks' data have %g to %g columns", ErrInvalid, what, -agree[2], agree[1])
	}
	d = int(agree[1])
	counts, offsets, err := layout(comm, rows)
	if err != nil {
		return nil, err
	}
	p, me := comm.Size(), comm.Rank()
	n := offsets[p]
	if n < 2 {
		return nil, fmt.Errorf("%w: %s: %d points, need at least 2", ErrInvalid, what, n)
	}
	if k >= n {
		return nil, fmt.Errorf("%w: %s: k = %d outside [1, %d]", ErrInvalid, what, k, n-1)
	}

	// Ring 1: the rows of X; every local point's k nearest rows.
	var local *mat.Dense
	if rows > 0 {
		local = mat.DenseCopyOf(xLocal)
	}
	nbs := make([][]cand, rows)
	sizes := make([]int, p)
	for q, nq := range counts {
		sizes[q] = nq * d
	}
	err = passBlocks(comm, sizes, func(buf []float64) {
		copy(buf, local.RawMatrix().Data)
	}, func(q int, buf []float64) error {
		if rows == 0 {
			return nil
		}
		nq := counts[q]
		self := q == me
		kq := min(k, nq)
		ref := local
		if self {
			kq = min(k, nq-1)
		} else {
			ref = mat.NewDense(nq, d, buf)
		}
		if kq <= 0 {
			return nil
		}
		res, err := sparse.KNN(local, ref, kq, self)
		if err != nil {
			return fmt.Errorf("distributed: %s: %w", what, err)
		}
		for i := 0; i < rows; i++ {
			idx, dd := res.Row(i)
			for t, j := range idx {
				nbs[i] = insert(nbs[i], cand{d: dd[t], g: offsets[q] + j}, k, lessIdx)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("distributed: %s: %w", what, err)
	}

	return &neighbourLists{nbs: nbs, counts: counts, offsets: offsets, d: d}, nil
}
