package npkl

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// TestRowOperator checks the merged rows of A = Σ_c w_c T_c E_c − L against
// A formed densely (products to 1e-13), with a repeated and a reversed
// constraint on top of the sampled ones; that a block of rows held alone
// gives exactly (==) the rows of the whole operator's product, as a
// distributed run needs; that MulBlock's columns are exactly MulVec's; and
// that SetWeights follows the weights.
func TestRowOperator(t *testing.T) {
	lap, cons, _ := problem(t, 300, 3)
	n := lap.Rows
	list := append([]constraints.LabelledPair(nil), cons.List...)
	list = append(list, list[0], constraints.LabelledPair{A: list[1].B, B: list[1].A, Same: list[1].Same})
	pairs := &constraints.Pairs{N: n, List: list}
	rng := rand.New(rand.NewPCG(5, 6))
	w := make([]float64, len(list))
	for c := range w {
		w[c] = rng.Float64()
	}
	op, err := NewOperator(lap, pairs, w)
	if err != nil {
		t.Fatal(err)
	}
	dense := func(w []float64) *mat.Dense {
		a := mat.NewDense(n, n, nil)
		for i := 0; i < n; i++ {
			for p := lap.Indptr[i]; p < lap.Indptr[i+1]; p++ {
				a.Set(i, lap.Ind[p], a.At(i, lap.Ind[p])-lap.Data[p])
			}
		}
		for c, q := range list {
			h := 0.5 * w[c] * q.T()
			a.Set(q.A, q.B, a.At(q.A, q.B)+h)
			a.Set(q.B, q.A, a.At(q.B, q.A)+h)
		}
		return a
	}
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	check := func(w []float64) {
		t.Helper()
		got := make([]float64, n)
		op.Apply(got, x)
		var want mat.VecDense
		want.MulVec(dense(w), mat.NewVecDense(n, x))
		for i := range got {
			if math.Abs(got[i]-want.AtVec(i)) > 1e-13*(1+math.Abs(want.AtVec(i))) {
				t.Fatalf("(A·x)[%d] = %.17g, dense %.17g", i, got[i], want.AtVec(i))
			}
		}
	}
	check(w)
	for c := range w {
		w[c] = 2 * rng.Float64()
	}
	if err := op.SetWeights(w); err != nil {
		t.Fatal(err)
	}
	check(w)

	// Rows [100, 220) alone.
	whole := make([]float64, n)
	op.Apply(whole, x)
	lo, hi := 100, 220
	p0, p1 := lap.Indptr[lo], lap.Indptr[hi]
	ip := make([]int, hi-lo+1)
	for i := range ip {
		ip[i] = lap.Indptr[lo+i] - p0
	}
	block := &sparse.CSR{Rows: hi - lo, Cols: n, Indptr: ip, Ind: lap.Ind[p0:p1], Data: lap.Data[p0:p1]}
	ro, err := NewRowOperator(block, lo, pairs, w)
	if err != nil {
		t.Fatal(err)
	}
	part := make([]float64, hi-lo)
	ro.MulVec(part, x)
	for i, v := range part {
		if v != whole[lo+i] {
			t.Fatalf("row %d held alone: %.17g, whole operator %.17g", lo+i, v, whole[lo+i])
		}
	}
	// MulBlock's columns: four (the vector kernel f64.SpDot4), then six,
	// so both the groups of four and the remaining columns are checked.
	for _, c := range []int{4, 6} {
		checkBlock(t, op, x, c, rng)
	}
	if _, err := NewRowOperator(block, 250, pairs, w); err == nil {
		t.Error("rows past the end: no error")
	}
	if err := ro.SetWeights(w[:3]); err == nil {
		t.Error("short weights: no error")
	}
}

// checkBlock checks that op.ApplyBlock on c columns (x, −2x, then random)
// gives op.Apply's bits column by column.
func checkBlock(t *testing.T, op *Operator, x []float64, c int, rng *rand.Rand) {
	t.Helper()
	n := len(x)
	xb := mat.NewDense(n, c, nil)
	for i := 0; i < n; i++ {
		xb.Set(i, 0, x[i])
		xb.Set(i, 1, -2*x[i])
		for j := 2; j < c; j++ {
			xb.Set(i, j, rng.NormFloat64())
		}
	}
	yb := mat.NewDense(n, c, nil)
	op.ApplyBlock(yb, xb)
	col, out := make([]float64, n), make([]float64, n)
	for j := 0; j < c; j++ {
		mat.Col(col, j, xb)
		op.Apply(out, col)
		for i := range out {
			if out[i] != yb.At(i, j) {
				t.Fatalf("ApplyBlock on %d columns, column %d row %d: %.17g, Apply %.17g", c, j, i, yb.At(i, j), out[i])
			}
		}
	}
}

// BenchmarkMulPanel times one block product of four columns on a
// letters-sized operator (20,000 points in 16 dimensions, k = 50): the
// points in random order, and in the graph's Cuthill–McKee order.
func BenchmarkMulPanel(b *testing.B) {
	x, y := blobs(20000, 16, 26, 4, 1)
	lap, err := Laplacian(x, 50, sparse.GraphOptions{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	cons, err := constraints.XingPairs(y, 0.7, 1)
	if err != nil {
		b.Fatal(err)
	}
	run := func(name string, lap *sparse.CSR, cons *constraints.Pairs) {
		w := make([]float64, cons.Len())
		for c := range w {
			w[c] = 1
		}
		op, err := NewOperator(lap, cons, w)
		if err != nil {
			b.Fatal(err)
		}
		n := lap.Rows
		panel := make([]float64, 4*n)
		for i := range panel {
			panel[i] = float64(i%7) - 3
		}
		dst := make([]float64, 4*n)
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				op.rows.mulPanel(dst, 4, panel)
			}
		})
	}
	run("random", lap, cons)
	perm, err := sparse.CuthillMcKee(lap)
	if err != nil {
		b.Fatal(err)
	}
	pl, err := sparse.PermuteSym(lap, perm)
	if err != nil {
		b.Fatal(err)
	}
	inv := make([]int, len(perm))
	for k, i := range perm {
		inv[i] = k
	}
	pc := &constraints.Pairs{N: cons.N}
	for _, q := range cons.List {
		pc.List = append(pc.List, constraints.LabelledPair{A: inv[q.A], B: inv[q.B], Same: q.Same})
	}
	run("cuthill-mckee", pl, pc)
}
