package distributed_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/distributed"
	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/parpack"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// unevenBounds splits n rows over p ranks unevenly (P = 2: a third and the
// rest; P = 3: a fifth, a half and the rest).
func unevenBounds(n, p int) []int {
	switch p {
	case 1:
		return []int{0, n}
	case 2:
		return []int{0, n / 3, n}
	default:
		return []int{0, n / 5, n/5 + n/2, n}
	}
}

// distLaplacian runs distributed.Laplacian on p fake ranks with the rows split at
// bounds and returns every rank's rows.
func distLaplacian(t *testing.T, x *mat.Dense, k int, g sparse.GraphOptions, bounds []int) []*distributed.LaplacianRows {
	t.Helper()
	p := len(bounds) - 1
	out := make([]*distributed.LaplacianRows, p)
	errs := runRanks(p, func(c mpi.Comm) error {
		r := c.Rank()
		lr, err := distributed.Laplacian(c, rowsOf(x, bounds[r], bounds[r+1]), k, g)
		out[r] = lr
		return err
	})
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	return out
}

// sameRows reports where rows [lo, lo+got.Rows) of want and got differ
// (pattern or values, compared bit for bit).
func sameRows(want *sparse.CSR, lo int, got *sparse.CSR) error {
	if got.Cols != want.Cols {
		return fmt.Errorf("%d columns, want %d", got.Cols, want.Cols)
	}
	for i := 0; i < got.Rows; i++ {
		wi, wd := want.Ind[want.Indptr[lo+i]:want.Indptr[lo+i+1]], want.Data[want.Indptr[lo+i]:want.Indptr[lo+i+1]]
		gi, gd := got.Ind[got.Indptr[i]:got.Indptr[i+1]], got.Data[got.Indptr[i]:got.Indptr[i+1]]
		if !slices.Equal(wi, gi) || !slices.Equal(wd, gd) {
			return fmt.Errorf("row %d: columns %v values %v, one process %v %v", lo+i, gi, gd, wi, wd)
		}
	}
	return nil
}

// TestLaplacian builds the kNN Laplacian on 1, 2 and 3 fake ranks (uneven
// rows) on iris, wine and the first 2,000 rows of letters (integer
// features: many tied distances): each rank's rows are bit for bit the rows of
// npkl.Laplacian on the whole data, for the union 0/1 graph of SimpleNPKL's
// protocol and for mutual heat (σ from the mean distance: the sum across
// ranks) and average graphs.
func TestLaplacian(t *testing.T) {
	graphs := []sparse.GraphOptions{
		{},
		{Symmetrize: sparse.Mutual, Weight: sparse.Heat},
		{Symmetrize: sparse.Average, Weight: sparse.Heat, Sigma: 2},
	}
	for _, name := range []string{"iris", "wine", "letters2000"} {
		x, _ := load(t, name)
		n, _ := x.Dims()
		for gi, g := range graphs {
			if name == "letters2000" && gi > 0 {
				break // integer features, many exact ties: the union graph is enough
			}
			for _, k := range []int{5} {
				want, err := npkl.Laplacian(x, k, g, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range []int{1, 2, 3} {
					bounds := unevenBounds(n, p)
					for r, lr := range distLaplacian(t, x, k, g, bounds) {
						if lr.Offset != bounds[r] || lr.L.Rows != bounds[r+1]-bounds[r] || len(lr.Counts) != p {
							t.Fatalf("%s graph %d P=%d rank %d: offset %d, %d rows, counts %v", name, gi, p, r, lr.Offset, lr.L.Rows, lr.Counts)
						}
						if err := sameRows(want, lr.Offset, lr.L); err != nil {
							t.Errorf("%s graph %d P=%d rank %d: %v", name, gi, p, r, err)
						}
					}
				}
			}
		}
	}
}

// TestLaplacianEmptyRank: a rank without rows takes part and gets no rows.
func TestLaplacianEmptyRank(t *testing.T) {
	x, _ := load(t, "iris")
	want, err := npkl.Laplacian(x, 5, sparse.GraphOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for r, lr := range distLaplacian(t, x, 5, sparse.GraphOptions{}, []int{0, 60, 60, 150}) {
		if err := sameRows(want, lr.Offset, lr.L); err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

// TestLaplacianRefused: bad input on one rank stops every rank.
func TestLaplacianRefused(t *testing.T) {
	x, _ := load(t, "iris")
	errs := runRanks(2, func(c mpi.Comm) error {
		k := 5
		if c.Rank() == 1 {
			k = 0
		}
		_, err := distributed.Laplacian(c, rowsOf(x, 75*c.Rank(), 75*c.Rank()+75), k, sparse.GraphOptions{})
		return err
	})
	if !errors.Is(errs[0], distributed.ErrRemote) || !errors.Is(errs[1], distributed.ErrInvalid) {
		t.Errorf("errors %v", errs)
	}
	errs = runRanks(2, func(c mpi.Comm) error {
		_, err := distributed.Laplacian(c, rowsOf(x, 0, 2*c.Rank()), 5, sparse.GraphOptions{})
		return err
	})
	for r, err := range errs {
		if !errors.Is(err, distributed.ErrInvalid) {
			t.Errorf("rank %d: k ≥ n: %v", r, err)
		}
	}
}

// TestLaplacianSimpleNPKL: distributed.SimpleNPKL on the distributed Laplacian
// (1, 2, 3 fake ranks, uneven rows, parpack.Go) gives npkl.Learn's
// eigenvalues on the go backend exactly (the rows are the same bits) and
// the same clustering, on iris and wine.
func TestLaplacianSimpleNPKL(t *testing.T) {
	for _, name := range []string{"iris", "wine"} {
		pr := newNPKLProblem(t, name)
		x, _ := load(t, name)
		n, _ := x.Dims()
		want, wantAssign := oneProcessNPKL(t, pr, "go")
		for _, p := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("%s/P=%d", name, p), func(t *testing.T) {
				bounds := unevenBounds(n, p)
				errs := runRanks(p, func(c mpi.Comm) error {
					r := c.Rank()
					lr, err := distributed.Laplacian(c, rowsOf(x, bounds[r], bounds[r+1]), 5, sparse.GraphOptions{})
					if err != nil {
						return err
					}
					_, err = distNPKLRows(t, c, pr, lr.L, lr.Counts, parpack.Go, want, wantAssign, 0)
					return err
				})
				for r, err := range errs {
					if err != nil {
						t.Errorf("rank %d: %v", r, err)
					}
				}
			})
		}
	}
}
