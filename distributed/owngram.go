package distributed

import (
	"fmt"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// ownGram computes a rank's share of the weighted Gram G = Xᵀ L_W X of a
// sharded solve with a GEMM over the rank's own rows only.
//
// A rank's triplets are anchored at its rows but reach rows of other ranks
// (its halo), so the Gram of its own pairs, X_locᵀ L_p X_loc over its rows
// and halo, costs 2·(rows + halo)·D² flops: with the rows in data order
// the halo of each rank is nearly all the other rows, and two ranks did
// the work of one each (a training speed-up of 1.00× on Fashion-MNIST). The
// pairs' terms are regrouped by owned rows instead. A pair (a, b) of weight
// w adds w(x_a − x_b)(x_a − x_b)ᵀ: its diagonal terms w·x_a x_aᵀ and
// w·x_b x_bᵀ go to the owners of a and b, and its cross terms −w(x_a x_bᵀ +
// x_b x_aᵀ) to the rank holding the pair, which owns a (the anchor): twice
// −w·x_a x_bᵀ symmetrised. With the degrees c_h of the halo rows sent to
// their owners (one AllreduceSum of N values), rank p's share is
//
//	G_p = sym(X_ownᵀ Y),  y_i = (c_i + c_i^ext) x_i + Σ_{j own} L_ij x_j + 2 Σ_{h halo} L_ih x_h,
//
// where L is the rank's own Laplacian and c^ext the degrees the other
// ranks' pairs give its rows; Σ_p G_p = G. The GEMM reads the rank's rows
// only: 2·rows·D² flops (L″ is L with those changes).
type ownGram struct {
	b    engine.Backend
	x    *mat.Dense // the local rows: own rows first, then the halo; nil without any
	rows int        // own rows
	off  int        // global number of the first own row
	halo []int      // global numbers of the halo rows
	d    int
	deg  []float64  // N: the halo degrees, summed over the ranks
	act  []int      // the own rows with a nonzero row of L″
	xs   *mat.Dense // scratch: gathered rows of X
	y    *mat.Dense // scratch: rows of L″X
	prod *mat.Dense // D×D
}

// newOwnGram returns the owned-rows Gram of a rank with local rows x (own
// rows first, then halo rows, possibly nil), rows own rows starting at
// global row off, halo rows numbered halo, n rows in all and d columns.
func newOwnGram(b engine.Backend, x *mat.Dense, rows, off int, halo []int, n, d int) *ownGram {
	return &ownGram{b: b, x: x, rows: rows, off: off, halo: halo, d: d, deg: make([]float64, n), prod: mat.NewDense(d, d, nil)}
}

// into writes the upper triangle of this rank's share of Xᵀ L_W X, row by
// row (D(D+1)/2 values), into tri; graph holds the rank's pairs with their
// current weights on the local rows (nil when the rank has no triplets).
// It is collective: every rank calls it at the same step.
//
// The product y = L″x reuses the graph's Laplacian: after the halo degrees
// are read, the entries of the own rows are rewritten in place (the halo
// columns doubled, c^ext added to the diagonal); graph is this rank's own
// and the next GraphInto sets every entry again. When at most half of the
// own rows have a nonzero entry (FrobMetric's sparse duals) the product and
// the GEMM run over those rows only, gathered into contiguous scratch, as
// engine's WeightedGram does; otherwise the product is the graph's
// cache-blocked LaplacianMulDense over the own rows.
func (g *ownGram) into(comm mpi.Comm, tri []float64, graph *sparse.PairGraph) error {
	clear(g.deg)
	var lap *sparse.CSR
	if graph != nil {
		lap = graph.Laplacian()
		for a, h := range g.halo {
			i := g.rows + a
			for sl := lap.Indptr[i]; sl < lap.Indptr[i+1]; sl++ {
				if lap.Ind[sl] == i {
					g.deg[h] = lap.Data[sl]
				}
			}
		}
	}
	if err := comm.AllreduceSum(g.deg); err != nil {
		return fmt.Errorf("distributed: halo degrees: %w", err)
	}
	clear(tri)
	if g.rows == 0 {
		return nil
	}
	// The own rows with a nonzero row of L″.
	act := g.act[:0]
	var nz []int
	if graph != nil {
		nz = graph.ActiveRows()
	}
	k := 0
	for i := 0; i < g.rows; i++ {
		for k < len(nz) && nz[k] < i {
			k++
		}
		if (k < len(nz) && nz[k] == i) || g.deg[g.off+i] != 0 {
			act = append(act, i)
		}
	}
	g.act = act
	if len(act) == 0 {
		return nil
	}
	d := g.d
	if lap != nil {
		for i := 0; i < g.rows; i++ {
			for sl := lap.Indptr[i]; sl < lap.Indptr[i+1]; sl++ {
				switch j := lap.Ind[sl]; {
				case j == i:
					lap.Data[sl] += g.deg[g.off+i]
				case j >= g.rows:
					lap.Data[sl] *= 2
				}
			}
		}
	}
	xr := g.x.RawMatrix()
	var xs, ys blas64.General // the rows of X and of L″X the GEMM reads
	switch {
	case len(act) > g.rows/2 && lap != nil:
		g.y = resize(g.y, g.rows, d)
		graph.LaplacianMulDense(g.y, g.x)
		xs, ys = xr, g.y.RawMatrix()
		xs.Rows = g.rows
	default:
		g.xs, g.y = resize(g.xs, len(act), d), resize(g.y, len(act), d)
		xsr := g.xs.RawMatrix()
		for t, i := range act {
			copy(xsr.Data[t*xsr.Stride:t*xsr.Stride+d], xr.Data[i*xr.Stride:i*xr.Stride+d])
		}
		if lap != nil {
			graph.LaplacianMulRows(g.y, act, g.x)
		} else {
			yr := g.y.RawMatrix()
			for t, i := range act {
				c := g.deg[g.off+i]
				for q, v := range xr.Data[i*xr.Stride : i*xr.Stride+d] {
					yr.Data[t*yr.Stride+q] = c * v
				}
			}
		}
		xs, ys = xsr, g.y.RawMatrix()
	}
	pr := g.prod.RawMatrix()
	g.b.BLAS().Dgemm(blas.Trans, blas.NoTrans, d, d, xs.Rows, 1, xs.Data, xs.Stride, ys.Data, ys.Stride, 0, pr.Data, pr.Stride)
	k = 0
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			tri[k] = 0.5 * (pr.Data[i*pr.Stride+j] + pr.Data[j*pr.Stride+i])
			k++
		}
	}
	return nil
}

// resize returns m if it is r×c, else a new r×c matrix.
func resize(m *mat.Dense, r, c int) *mat.Dense {
	if m != nil {
		if mr, mc := m.Dims(); mr == r && mc == c {
			return m
		}
	}
	return mat.NewDense(r, c, nil)
}
