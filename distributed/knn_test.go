package distributed_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/psdlearn/psdlearn/distributed"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// TestKNNEdges: the kNN graph built on sharded rows (P = 1, 2, 3, uneven,
// and with an empty rank) is, on every rank, the one-process graph that
// mvu.Embed builds (sparse.KNN's edges) to the last bit: the same pairs in
// the same order and the same squared distances. letters[:2000] has many
// exact distance ties (integer features), broken by the lower row as in
// one process.
func TestKNNEdges(t *testing.T) {
	for _, tc := range []struct {
		name string
		k    int
	}{{"iris", 6}, {"wine", 3}, {"letters2000", 6}} {
		x, _ := load(t, tc.name)
		n, _ := x.Dims()
		nb, err := sparse.KNN(x, x, tc.k, true)
		if err != nil {
			t.Fatal(err)
		}
		a, b, want := nb.Edges()
		for _, bounds := range [][]int{split(n, 1), split(n, 2), split(n, 3), {0, 0, n / 2, n}} {
			t.Run(fmt.Sprintf("%s/%v", tc.name, bounds), func(t *testing.T) {
				p := len(bounds) - 1
				edges := make([][]engine.Pair, p)
				d2 := make([][]float64, p)
				errs := runRanks(p, func(c mpi.Comm) error {
					r := c.Rank()
					var err error
					edges[r], d2[r], err = distributed.KNNEdges(c, rowsOf(x, bounds[r], bounds[r+1]), tc.k)
					return err
				})
				for r, err := range errs {
					if err != nil {
						t.Fatalf("rank %d: %v", r, err)
					}
					if len(edges[r]) != len(a) || !slices.Equal(d2[r], want) {
						t.Fatalf("rank %d: %d edges, want %d, or distances differ", r, len(edges[r]), len(a))
					}
					for i, e := range edges[r] {
						if e.A != a[i] || e.B != b[i] {
							t.Fatalf("rank %d: edge %d is (%d, %d), want (%d, %d)", r, i, e.A, e.B, a[i], b[i])
						}
					}
				}
			})
		}
	}
}

// TestKNNEdgesErrors: bad input on one rank stops every rank.
func TestKNNEdgesErrors(t *testing.T) {
	x, _ := load(t, "iris")
	bad := mat.DenseCopyOf(x.Slice(0, 10, 0, 4))
	bad.Set(3, 1, 1e300) // squared distances overflow
	for _, tc := range []struct {
		name string
		k    int
		x1   *mat.Dense // rank 1's rows
	}{
		{"k = 0", 0, rowsOf(x, 75, 150)},
		{"k ≥ n", 150, rowsOf(x, 75, 150)},
		{"overflowing data on rank 1", 3, bad},
		{"mismatched columns", 3, mat.NewDense(5, 3, nil)},
	} {
		errs := runRanks(2, func(c mpi.Comm) error {
			xl := rowsOf(x, 0, 75)
			if c.Rank() == 1 {
				xl = tc.x1
			}
			_, _, err := distributed.KNNEdges(c, xl, tc.k)
			return err
		})
		for r, err := range errs {
			if !errors.Is(err, distributed.ErrInvalid) && !errors.Is(err, distributed.ErrRemote) {
				t.Errorf("%s: rank %d: %v", tc.name, r, err)
			}
		}
	}
}
