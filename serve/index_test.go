package serve

import (
	"context"
	"errors"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/internal/f64"
	"github.com/psdlearn/psdlearn/model"
	"gonum.org/v1/gonum/mat"
)

// TestPredictMatchesBruteForce checks the index against a full sort of
// every distance, and its classes against psdlearn's k-NN evaluation
// (eval.KNNPredict, a BLAS-blocked implementation) on the learned
// coordinates without the rotation, on the queries whose k-th and (k+1)-th
// distances are apart by more than rounding (the neighbour set is then the
// same in any exact arithmetic, rotated or not).
func TestPredictMatchesBruteForce(t *testing.T) {
	ix, ref, q := testIndex(t, 700, 20, 12, 9, 5, 60)
	m := ix.Model()
	zq, err := m.Transform(q)
	if err != nil {
		t.Fatal(err)
	}
	zref, err := m.Transform(ref.X)
	if err != nil {
		t.Fatal(err)
	}
	// The rotation is orthogonal, and the stored rows are the rotated ones.
	rot := mat.NewDense(ix.r, ix.r, ix.rot)
	var rtr mat.Dense
	rtr.Mul(rot.T(), rot)
	for i := 0; i < ix.r; i++ {
		for j := 0; j < ix.r; j++ {
			if want := float64(btoi(i == j)); math.Abs(rtr.At(i, j)-want) > 1e-13 {
				t.Fatalf("RᵀR[%d][%d] = %v", i, j, rtr.At(i, j))
			}
		}
	}
	rows := mat.NewDense(ix.n, ix.r, nil)
	zr := make([]float64, ix.r)
	for i := 0; i < ix.n; i++ {
		rows.SetRow(i, ix.row(i))
		ix.rotate(zr, zref.RawRowView(i))
		if !mat.EqualApprox(mat.NewVecDense(ix.r, zr), rows.RowView(i), 1e-12*mat.Norm(rows.RowView(i), 2)) {
			t.Fatalf("stored row %d is not the rotated learned row", i)
		}
	}
	ids := make([]int, ix.n)
	for i, c := range ix.ids {
		ids[i] = int(c)
	}
	var s Scratch
	for _, k := range []int{1, 3, 7} {
		want, err := eval.KNNPredict(nil, zref, ids, zq, k)
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for i := 0; i < 60; i++ {
			ix.rotate(zr, zq.RawRowView(i))
			type rd struct {
				row int
				d2  float64
			}
			all := make([]rd, ix.n)
			for j := range all {
				all[j] = rd{j, f64.SqDist(zr, rows.RawRowView(j))}
			}
			sort.SliceStable(all, func(a, b int) bool { return all[a].d2 < all[b].d2 })
			if all[k].d2-all[k-1].d2 <= 1e-9*all[k].d2 {
				continue // a near tie at the boundary: the set depends on rounding
			}
			checked++
			class, nb, err := ix.Predict(&s, q.RawRowView(i), k)
			if err != nil {
				t.Fatal(err)
			}
			for j, n := range nb {
				if n.Row != all[j].row || n.Distance != math.Sqrt(all[j].d2) || n.Class != ids[n.Row] {
					t.Fatalf("k=%d query %d neighbour %d: %+v, want row %d at %v", k, i, j, n, all[j].row, math.Sqrt(all[j].d2))
				}
				if d, err := m.Distance(q.RawRowView(i), ref.X.RawRowView(n.Row)); err != nil || math.Abs(d-n.Distance) > 1e-12*d {
					t.Fatalf("k=%d query %d neighbour %d: distance %v, Model.Distance %v", k, i, j, n.Distance, d)
				}
			}
			if class != want[i] {
				t.Errorf("k=%d query %d: class %d, eval.KNNPredict %d", k, i, class, want[i])
			}
		}
		if checked < 50 {
			t.Errorf("k=%d: only %d of 60 queries without a near tie", k, checked)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestPredictTies: equal distances go to the lower reference row, a tied
// vote to the lowest class. The reference rows' principal axes are the
// coordinate axes, so the rotation keeps the coordinates exact and the
// ties are ties.
func TestPredictTies(t *testing.T) {
	m := &model.Model{Kind: model.KindMetric, Metric: model.Identity(2)}
	ref := &Reference{
		X:      mat.NewDense(6, 2, []float64{2, 0, 1, 0, 0, 1, -1, 0, 0, -1, -2, 0}),
		Labels: []string{"z", "b", "a", "b", "a", "z"},
	}
	ix, err := NewIndex(context.Background(), m, ref)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ix.Classes(), ","); got != "a,b,z" {
		t.Errorf("classes %s", got)
	}
	var s Scratch
	// Rows 1-4 are all at distance 1 from the origin.
	_, nb, err := ix.Predict(&s, []float64{0, 0}, 3)
	if err != nil {
		t.Fatal(err)
	}
	for j, want := range []int{1, 2, 3} {
		if nb[j].Row != want || nb[j].Distance != 1 {
			t.Errorf("neighbour %d: %+v, want row %d at distance 1", j, nb[j], want)
		}
	}
	for _, tc := range []struct {
		x     []float64
		k     int
		class string
	}{
		{[]float64{0, 0}, 2, "a"},      // rows 1 (b) and 2 (a): tied, the lowest class
		{[]float64{0, 0}, 6, "a"},      // two of each
		{[]float64{0, 0.9}, 3, "b"},    // a, b, b
		{[]float64{0, 0.9}, 4, "a"},    // a, b, b, a: tied
		{[]float64{2.5, 0}, 1, "z"},    // the nearest
		{[]float64{-1.9, 0.1}, 3, "a"}, // z, b, a: a tie of three
	} {
		class, nb, err := ix.Predict(&s, tc.x, tc.k)
		if err != nil {
			t.Fatal(err)
		}
		want := tc.class
		if got := ix.Classes()[class]; got != want {
			t.Errorf("%v, k=%d: %s (neighbours %+v), want %s", tc.x, tc.k, got, nb, want)
		}
	}
}

func TestClassOrder(t *testing.T) {
	for _, tc := range []struct {
		labels []string
		want   string
	}{
		{[]string{"10", "9", "1.0", "+1", "-0"}, "0,1,9,10"},
		{[]string{"b", "10", "a", "9"}, "10,9,a,b"},
		{[]string{" x ", "x"}, "x"},
	} {
		classes, ids := classIDs(tc.labels)
		if got := strings.Join(classes, ","); got != tc.want {
			t.Errorf("%q: classes %s, want %s", tc.labels, got, tc.want)
		}
		for i, l := range tc.labels {
			if classes[ids[i]] != canonicalLabel(l) {
				t.Errorf("%q: label %d → %q", tc.labels, i, classes[ids[i]])
			}
		}
	}
}

// TestSqDist: the early-stopping distance, over a whole row or split
// into the index's head and tail, is f64.SqDist bit for bit when it
// finishes (the same sums in the same order), and at least the bound when
// it stops.
func TestSqDist(t *testing.T) {
	x, _ := clusters(3, 2, 200, 1)
	for _, n := range []int{0, 1, 3, 4, 15, 16, 17, 33, 164, 200} {
		a, b := x.RawRowView(0)[:n], x.RawRowView(1)[:n]
		full := f64.SqDist(a, b)
		if got := sqDistFrom(a, b, 0, 0, 0, 0, math.Inf(1)); got != full {
			t.Errorf("n=%d: %v, SqDist %v", n, got, full)
		}
		if got := sqDistFrom(a, b, 0, 0, 0, 0, math.Nextafter(full, math.Inf(1))); got != full {
			t.Errorf("n=%d, bound just above: %v, SqDist %v", n, got, full)
		}
		for _, bound := range []float64{0, full / 10, full / 2, full} {
			if got := sqDistFrom(a, b, 0, 0, 0, 0, bound); got < bound {
				t.Errorf("n=%d bound %v: %v below the bound, SqDist %v", n, bound, got, full)
			}
		}
		if n == 0 {
			continue
		}
		// The same through an index holding the row b, split into its
		// head and tail.
		h := min(headCols, n)
		ix := &Index{n: 1, r: n, h: h, head: append([]float64(nil), b[:h]...), tail: append([]float64(nil), b[h:]...)}
		if got := ix.sqDist(a, 0, math.Inf(1)); got != full {
			t.Errorf("n=%d index: %v, SqDist %v", n, got, full)
		}
		for _, bound := range []float64{0, full / 10, full / 2, full} {
			if got := ix.sqDist(a, 0, bound); got < bound {
				t.Errorf("n=%d index bound %v: %v below the bound", n, bound, got)
			}
		}
	}
}

func TestIndexRefuses(t *testing.T) {
	ctx := context.Background()
	x, labels := clusters(4, 20, 3, 2)
	m := testModel(t, x, 0, 3, 5)
	ref := &Reference{X: x, Labels: labels}
	kern, _ := model.NewKernel(mat.NewDense(2, 1, []float64{1, 2}), []float64{1})
	nan := mat.DenseCopyOf(x)
	nan.Set(17, 1, math.NaN())
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"kernel model", second(NewIndex(ctx, &model.Model{Kind: model.KindKernel, Kernel: kern}, ref))},
		{"nil model", second(NewIndex(ctx, nil, ref))},
		{"nil reference", second(NewIndex(ctx, m, nil))},
		{"empty reference", second(NewIndex(ctx, m, &Reference{X: &mat.Dense{}}))},
		{"features", second(NewIndex(ctx, m, &Reference{X: mat.NewDense(20, 4, nil), Labels: labels}))},
		{"labels", second(NewIndex(ctx, m, &Reference{X: x, Labels: labels[1:]}))},
		{"empty label", second(NewIndex(ctx, m, &Reference{X: x, Labels: append(append([]string{}, labels[:19]...), "")}))},
		{"NaN", second(NewIndex(ctx, m, &Reference{X: nan, Labels: labels}))},
	} {
		if !errors.Is(tc.err, errs.ErrInvalid) {
			t.Errorf("%s: %v, want an errs.ErrInvalid", tc.name, tc.err)
		}
	}
	if _, err := NewIndex(cancelled, m, ref); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	ix, err := NewIndex(ctx, m, ref)
	if err != nil {
		t.Fatal(err)
	}
	var s Scratch
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"k = 0", third(ix.Predict(&s, x.RawRowView(0), 0))},
		{"k > n", third(ix.Predict(&s, x.RawRowView(0), 21))},
		{"short row", third(ix.Predict(&s, x.RawRowView(0)[:2], 1))},
		{"NaN row", third(ix.Predict(&s, []float64{1, math.NaN(), 1}, 1))},
		{"Search dimension", second(ix.Search(&s, []float64{1}, 1))},
		{"Search Inf", second(ix.Search(&s, []float64{1, math.Inf(1), 0}, 1))},
		{"Search k", second(ix.Search(&s, []float64{1, 1, 1}, 0))},
	} {
		if !errors.Is(tc.err, errs.ErrInvalid) {
			t.Errorf("%s: %v, want an errs.ErrInvalid", tc.name, tc.err)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func third[T, U any](_ T, _ U, err error) error { return err }

// TestPredictAllocatesNothing: with a Scratch that has served a query of
// the same k, a prediction allocates nothing.
func TestPredictAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation changes allocation counts")
	}
	ix, _, q := testIndex(t, 500, 30, 16, 16, 4, 3)
	var s Scratch
	var err error
	if allocs := testing.AllocsPerRun(20, func() { _, _, err = ix.Predict(&s, q.RawRowView(1), 5) }); allocs != 0 || err != nil {
		t.Errorf("Predict: %v allocations, error %v", allocs, err)
	}
}
