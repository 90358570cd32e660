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

// TestPredictMatchesBruteForce checks the index's neighbours and votes
// against a full sort of every distance, and its classes against
// psdlearn's k-NN evaluation (eval.KNNPredict, a BLAS-blocked
// implementation) on the transformed rows, on the queries whose k-th and
// (k+1)-th distances are apart by more than rounding (the neighbour set is
// then the same in any exact arithmetic).
func TestPredictMatchesBruteForce(t *testing.T) {
	ix, q, _ := testIndex(t, 700, 20, 12, 9, 5, 60)
	m := ix.Model()
	zq, err := m.Transform(q)
	if err != nil {
		t.Fatal(err)
	}
	zr := mat.NewDense(ix.n, ix.r, nil)
	for i := 0; i < ix.n; i++ {
		zr.SetRow(i, ix.row(i))
	}
	ids := make([]int, ix.n)
	for i, c := range ix.ids {
		ids[i] = int(c)
	}
	var s Scratch
	for _, k := range []int{1, 3, 7} {
		want, err := eval.KNNPredict(nil, zr, ids, zq, k)
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for i := 0; i < 60; i++ {
			type rd struct {
				row int
				d2  float64
			}
			all := make([]rd, ix.n)
			for j := range all {
				all[j] = rd{j, f64.SqDist(zq.RawRowView(i), zr.RawRowView(j))}
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

// TestPredictTies: equal distances go to the lower reference row, a tied
// vote to the lowest class.
func TestPredictTies(t *testing.T) {
	m := &model.Model{Kind: model.KindMetric, Metric: model.Identity(2)}
	ref := &Reference{
		X:      mat.NewDense(6, 2, []float64{5, 5, 1, 0, 0, 1, -1, 0, 0, -1, 9, 9}),
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
	// Two neighbours, classes b and a: the tie goes to a (class 0).
	class, _, err := ix.Predict(&s, []float64{0, 0}, 2)
	if err != nil || class != 0 {
		t.Errorf("tied vote: class %d (%v), want 0 (a)", class, err)
	}
	// All six: a 2, b 2, z 2: a.
	if class, _, _ := ix.Predict(&s, []float64{0, 0}, 6); class != 0 {
		t.Errorf("three-way tie: class %d, want 0", class)
	}
	// Near (9, 9): z (row 5), then z (row 0), then b: z.
	if class, _, _ := ix.Predict(&s, []float64{8, 8}, 3); ix.Classes()[class] != "z" {
		t.Errorf("majority: class %d, want z", class)
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
		// The same through an index of the single row b, split or not.
		m := &model.Model{Kind: model.KindMetric, Metric: model.Identity(n)}
		ix, err := NewIndex(context.Background(), m, &Reference{X: mat.NewDense(1, n, append([]float64(nil), b...)), Labels: []string{"x"}})
		if err != nil {
			t.Fatal(err)
		}
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
	ix, q, _ := testIndex(t, 500, 30, 16, 16, 4, 3)
	var s Scratch
	var err error
	if allocs := testing.AllocsPerRun(20, func() { _, _, err = ix.Predict(&s, q.RawRowView(1), 5) }); allocs != 0 || err != nil {
		t.Errorf("Predict: %v allocations, error %v", allocs, err)
	}
}
