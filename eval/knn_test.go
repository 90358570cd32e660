package eval

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/psdlearn/psdlearn/engine/enginetest"
	"github.com/psdlearn/psdlearn/model"
	"gonum.org/v1/gonum/mat"
)

// bruteKNNPredict is the reference classifier: all distances, sorted by
// (distance, index), majority vote, ties to the lowest tied label.
func bruteKNNPredict(trainX *mat.Dense, trainY []int, testX *mat.Dense, k int) []int {
	n, d := trainX.Dims()
	m, _ := testX.Dims()
	pred := make([]int, m)
	for q := 0; q < m; q++ {
		idx := make([]int, n)
		dist := make([]float64, n)
		for i := 0; i < n; i++ {
			idx[i] = i
			for j := 0; j < d; j++ {
				e := testX.At(q, j) - trainX.At(i, j)
				dist[i] += e * e
			}
		}
		sort.SliceStable(idx, func(a, b int) bool { return dist[idx[a]] < dist[idx[b]] })
		votes := map[int]int{}
		for _, i := range idx[:k] {
			votes[trainY[i]]++
		}
		best := -1
		for _, i := range idx[:k] {
			if best < 0 || votes[trainY[i]] > votes[best] || (votes[trainY[i]] == votes[best] && trainY[i] < best) {
				best = trainY[i]
			}
		}
		pred[q] = best
	}
	return pred
}

func blobs(seed uint64, n, d, classes int, spread float64) (*mat.Dense, []int) {
	rng := rand.New(rand.NewPCG(seed, 3))
	x := mat.NewDense(n, d, nil)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		y[i] = rng.IntN(classes)
		for j := 0; j < d; j++ {
			x.Set(i, j, spread*rng.NormFloat64()+float64((y[i]+j)%classes))
		}
	}
	return x, y
}

func TestKNNMatchesBruteForce(t *testing.T) {
	trX, trY := blobs(1, 400, 5, 4, 0.8)
	teX, teY := blobs(2, 150, 5, 4, 0.8)
	for _, b := range enginetest.Backends(t) {
		for _, k := range []int{1, 3, 4, 7} {
			pred, err := KNNPredict(b, trX, trY, teX, k)
			if err != nil {
				t.Fatal(err)
			}
			want := bruteKNNPredict(trX, trY, teX, k)
			for i := range pred {
				if pred[i] != want[i] {
					t.Fatalf("%s k=%d: point %d predicted %d, brute force %d", b.Name(), k, i, pred[i], want[i])
				}
			}
			e, err := KNNError(b, trX, trY, teX, teY, k)
			if err != nil {
				t.Fatal(err)
			}
			if want := errorRate(want, teY); e != want || e <= 0 || e >= 0.75 {
				t.Errorf("%s k=%d: error %v, brute force %v", b.Name(), k, e, want)
			}
		}
	}
}

// TestKNNTieBreaking checks distance ties and the nearest-neighbour vote rule.
func TestKNNTieBreaking(t *testing.T) {
	// Training points on a line; query at 0.
	trX := mat.NewDense(5, 1, []float64{-1, 1, 2, -2, 3})
	for _, tc := range []struct {
		name string
		y    []int
		k    int
		want int
	}{
		// Distances: idx0 = 1, idx1 = 1, idx3 = 4, idx2 = 4, idx4 = 9.
		{"distance tie: lower index first", []int{5, 6, 7, 8, 9}, 1, 5},
		{"vote tie 1-1: nearest wins", []int{6, 5, 7, 8, 9}, 2, 6},
		// k = 4 takes idx 0,1,2,3 (2 before 3 on the tie at distance 4).
		{"vote tie 2-2: class of the nearest", []int{1, 2, 2, 1, 0}, 4, 1},
		{"majority beats nearest", []int{1, 2, 2, 0, 0}, 3, 2},
	} {
		pred, err := KNNPredictTie(nil, trX, tc.y, mat.NewDense(1, 1, []float64{0}), tc.k, TieNearest)
		if err != nil {
			t.Fatal(err)
		}
		if pred[0] != tc.want {
			t.Errorf("%s: predicted %d, want %d", tc.name, pred[0], tc.want)
		}
	}
}

func TestMetricKNNError(t *testing.T) {
	trX, trY := blobs(3, 200, 3, 3, 1)
	teX, teY := blobs(4, 100, 3, 3, 1)
	e0, err := KNNError(nil, trX, trY, teX, teY, 3)
	if err != nil {
		t.Fatal(err)
	}
	e1, err := MetricKNNError(nil, model.Identity(3), trX, trY, teX, teY, 3)
	if err != nil || e1 != e0 {
		t.Errorf("identity metric: %v (%v), Euclidean %v", e1, err, e0)
	}
	// A diagonal metric is the Euclidean metric on scaled features.
	scale := []float64{3, 0.5, 1}
	m := mat.NewSymDense(3, nil)
	for i, s := range scale {
		m.SetSym(i, i, s*s)
	}
	met, err := model.NewMetric(m)
	if err != nil {
		t.Fatal(err)
	}
	sc := func(x *mat.Dense) *mat.Dense {
		var o mat.Dense
		o.Apply(func(_, j int, v float64) float64 { return v * scale[j] }, x)
		return &o
	}
	want := errorRate(bruteKNNPredict(sc(trX), trY, sc(teX), 3), teY)
	got, err := MetricKNNError(nil, met, trX, trY, teX, teY, 3)
	if err != nil || got != want {
		t.Errorf("diagonal metric: %v (%v), brute force on scaled data %v", got, err, want)
	}
}

func TestLOOKNNError(t *testing.T) {
	x, y := blobs(5, 120, 2, 3, 0.7)
	got, err := LOOKNNError(nil, x, y, 3)
	if err != nil {
		t.Fatal(err)
	}
	wrong := 0
	for i := 0; i < 120; i++ {
		var rest []int
		for j := 0; j < 120; j++ {
			if j != i {
				rest = append(rest, j)
			}
		}
		tr := mat.NewDense(119, 2, nil)
		ty := make([]int, 119)
		for a, j := range rest {
			tr.SetRow(a, x.RawRowView(j))
			ty[a] = y[j]
		}
		if bruteKNNPredict(tr, ty, mat.NewDense(1, 2, x.RawRowView(i)), 3)[0] != y[i] {
			wrong++
		}
	}
	if want := float64(wrong) / 120; math.Abs(got-want) > 0 {
		t.Errorf("leave-one-out error %v, brute force %v", got, want)
	}
}

func TestKNNErrors(t *testing.T) {
	x := mat.NewDense(3, 2, nil)
	for _, tc := range []struct {
		name string
		f    func() error
	}{
		{"k too big", func() error { _, err := KNNError(nil, x, []int{0, 1, 0}, x, []int{0, 1, 0}, 4); return err }},
		{"k zero", func() error { _, err := KNNError(nil, x, []int{0, 1, 0}, x, []int{0, 1, 0}, 0); return err }},
		{"labels", func() error { _, err := KNNError(nil, x, []int{0, 1}, x, []int{0, 1, 0}, 1); return err }},
		{"test labels", func() error { _, err := KNNError(nil, x, []int{0, 1, 0}, x, []int{0}, 1); return err }},
		{"dims", func() error {
			_, err := KNNError(nil, x, []int{0, 1, 0}, mat.NewDense(1, 3, nil), []int{0}, 1)
			return err
		}},
		{"negative label", func() error { _, err := KNNError(nil, x, []int{0, -1, 0}, x, []int{0, 1, 0}, 1); return err }},
		{"NaN", func() error {
			_, err := KNNError(nil, x, []int{0, 1, 0}, mat.NewDense(1, 2, []float64{math.NaN(), 0}), []int{0}, 1)
			return err
		}},
	} {
		if err := tc.f(); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func TestKNNTieLowestLabel(t *testing.T) {
	trX := mat.NewDense(5, 1, []float64{-1, 1, 2, -2, 3})
	q := mat.NewDense(1, 1, []float64{0})
	for _, tc := range []struct {
		y            []int
		k            int
		nearest, low int
	}{
		{[]int{6, 5, 7, 8, 9}, 2, 6, 5},
		{[]int{4, 2, 2, 4, 0}, 4, 4, 2},
		{[]int{1, 2, 2, 0, 0}, 3, 2, 2}, // no tie
	} {
		for tie, want := range map[TieRule]int{TieNearest: tc.nearest, TieLowestLabel: tc.low} {
			pred, err := KNNPredictTie(nil, trX, tc.y, q, tc.k, tie)
			if err != nil {
				t.Fatal(err)
			}
			if pred[0] != want {
				t.Errorf("labels %v k=%d rule %d: %d, want %d", tc.y, tc.k, tie, pred[0], want)
			}
		}
	}
	if _, err := KNNPredictTie(nil, trX, []int{0, 0, 0, 0, 0}, q, 1, TieRule(7)); err == nil {
		t.Error("unknown tie rule accepted")
	}
}
