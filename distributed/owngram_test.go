package distributed

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/mpi/mpitest"
	"gonum.org/v1/gonum/mat"
)

// TestOwnGramSums checks that the ranks' owned-rows shares add up to the
// one-process weighted Gram Xᵀ L_W X, on triplets that reach across the
// blocks (halos), with weights of both signs, and with a rank that owns
// rows but anchors no triplet (its rows only in the others' halos), a
// rank without rows, and mostly zero weights (the shares then gather the
// few rows with a nonzero entry, as for FrobMetric's sparse duals).
func TestOwnGramSums(t *testing.T) {
	b := engine.Or(nil)
	for _, tc := range []struct {
		name   string
		n, d   int
		blocks []int   // rows per rank
		anchor int     // triplets are anchored at rows below this
		zero   float64 // the share of zero weights (a sparse dual)
	}{
		{"one rank", 40, 4, []int{40}, 40, 0},
		{"two ranks", 60, 5, []int{25, 35}, 60, 0},
		{"three ranks, last without triplets", 60, 3, []int{20, 20, 20}, 40, 0},
		{"four ranks, one without rows", 50, 6, []int{20, 0, 15, 15}, 50, 0},
		{"two ranks, sparse weights", 200, 5, []int{90, 110}, 200, 0.95},
		{"three ranks, sparse weights, last without triplets", 150, 4, []int{50, 50, 50}, 100, 0.9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(tc.n)))
			x := mat.NewDense(tc.n, tc.d, nil)
			for i := 0; i < tc.n; i++ {
				for j := 0; j < tc.d; j++ {
					x.Set(i, j, rng.NormFloat64())
				}
			}
			var tri []constraints.Triplet
			for i := 0; i < tc.anchor; i++ {
				for range 3 {
					j, k := rng.IntN(tc.n), rng.IntN(tc.n)
					if j != i && k != i && j != k {
						tri = append(tri, constraints.Triplet{I: i, J: j, K: k})
					}
				}
			}
			u := make([]float64, len(tri))
			var scale float64
			for r, tr := range tri {
				u[r] = rng.Float64() - 0.25
				if rng.Float64() < tc.zero {
					u[r] = 0
				}
				a, c, e := x.RawRowView(tr.I), x.RawRowView(tr.J), x.RawRowView(tr.K)
				var s float64
				for q := range a {
					s += (a[q]-c[q])*(a[q]-c[q]) + (a[q]-e[q])*(a[q]-e[q])
				}
				scale += math.Abs(u[r]) * s
			}
			ts, err := constraints.NewTripletSet(tc.n, tri)
			if err != nil {
				t.Fatal(err)
			}
			g, err := ts.Graph(u)
			if err != nil {
				t.Fatal(err)
			}
			want := mat.NewSymDense(tc.d, nil)
			if err := b.WeightedGram(want, x, g); err != nil {
				t.Fatal(err)
			}
			p := len(tc.blocks)
			shares := make([][]float64, p)
			errs := mpitest.RunFake(p, func(c mpi.Comm) error {
				r := c.Rank()
				off := 0
				for _, rows := range tc.blocks[:r] {
					off += rows
				}
				rows := tc.blocks[r]
				sh := &Shard{N: tc.n, Offset: off, Rows: rows}
				var ul []float64
				halo := map[int]bool{}
				for q, tr := range tri {
					if tr.I >= off && tr.I < off+rows {
						sh.Triplets = append(sh.Triplets, tr)
						ul = append(ul, u[q])
						for _, j := range []int{tr.J, tr.K} {
							if j < off || j >= off+rows {
								halo[j] = true
							}
						}
					}
				}
				for j := range halo {
					sh.HaloIndex = append(sh.HaloIndex, j)
				}
				slices.Sort(sh.HaloIndex)
				if len(sh.HaloIndex) > 0 {
					sh.Halo = mat.NewDense(len(sh.HaloIndex), tc.d, nil)
					for a, j := range sh.HaloIndex {
						sh.Halo.SetRow(a, x.RawRowView(j))
					}
				}
				var xl *mat.Dense
				if rows > 0 {
					xl = x.Slice(off, off+rows, 0, tc.d).(*mat.Dense)
				}
				if err := checkLocal(xl, sh); err != nil {
					return err
				}
				lp, err := newLocal(b, xl, sh, 1, tc.d)
				if err != nil {
					return err
				}
				buf := make([]float64, tc.d*(tc.d+1)/2)
				if err := lp.gramInto(c, buf, ul); err != nil {
					return err
				}
				shares[r] = buf
				return nil
			})
			for r, err := range errs {
				if err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
			}
			// Each entry sums O(pairs) products; 64·ε·(pairs) times the
			// absolute sum bounds its rounding.
			tol := 64 * 0x1p-52 * float64(len(tri)) * scale
			k := 0
			for i := 0; i < tc.d; i++ {
				for j := i; j < tc.d; j++ {
					var got float64
					for _, sh := range shares {
						got += sh[k]
					}
					k++
					if d := math.Abs(got - want.At(i, j)); d > tol {
						t.Errorf("G[%d,%d] = %.17g, one process %.17g (difference %.3g > %.3g)", i, j, got, want.At(i, j), d, tol)
					}
				}
			}
			if scale == 0 {
				t.Fatal("no triplet weight: the test checks nothing")
			}
		})
	}
}
