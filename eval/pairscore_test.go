package eval

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn/model"
	"gonum.org/v1/gonum/mat"
)

// bruteAUC is the definition: the fraction of (similar, dissimilar) pairs of
// pairs in which the similar one is closer, ties counting 1/2.
func bruteAUC(dist []float64, y []int) float64 {
	var wins, total float64
	for i := range dist {
		for j := range dist {
			if y[i] != 1 || y[j] != -1 {
				continue
			}
			total++
			switch {
			case dist[i] < dist[j]:
				wins++
			case dist[i] == dist[j]:
				wins += 0.5
			}
		}
	}
	return wins / total
}

func TestPairAUC(t *testing.T) {
	for _, tc := range []struct {
		name string
		dist []float64
		y    []int
		want float64
	}{
		{"perfect", []float64{1, 2, 3, 4}, []int{1, 1, -1, -1}, 1},
		{"inverted", []float64{1, 2, 3, 4}, []int{-1, -1, 1, 1}, 0},
		{"all tied", []float64{5, 5, 5, 5}, []int{1, -1, 1, -1}, 0.5},
		{"interleaved", []float64{1, 2, 3, 4}, []int{1, -1, 1, -1}, 0.75},      // 3 of 4 orderings right
		{"one tie", []float64{1, 2, 2, 3}, []int{1, 1, -1, -1}, 0.875},         // 3 right + ½
		{"unsorted input", []float64{4, 1, 3, 2}, []int{-1, 1, -1, 1}, 1},      // order of the pairs does not matter
		{"one of each", []float64{0, 0}, []int{1, -1}, 0.5},                    // a single tie
		{"negative scores", []float64{-3, -1, -2}, []int{1, -1, -1}, 1},        // any finite distance
		{"two ties", []float64{1, 1, 2, 2}, []int{1, -1, 1, -1}, 0.5},          // ½ + 1 + 0 + ½ over 4
		{"3 vs 1", []float64{0.5, 0.1, 0.9, 0.7}, []int{1, 1, 1, -1}, 2.0 / 3}, // 0.9 is beyond the dissimilar 0.7
	} {
		got, err := PairAUC(tc.dist, tc.y)
		if err != nil || math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("%s: PairAUC = %v, %v; want %v", tc.name, got, err, tc.want)
		}
		if b := bruteAUC(tc.dist, tc.y); math.Abs(b-tc.want) > 1e-15 {
			t.Errorf("%s: the brute-force AUC is %v, the table says %v", tc.name, b, tc.want)
		}
	}
	// Random integer distances (many ties) against the O(n²) definition.
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 50; trial++ {
		n := 2 + rng.IntN(60)
		dist, y := make([]float64, n), make([]int, n)
		for i := range dist {
			dist[i] = float64(rng.IntN(8))
			y[i] = 1 - 2*rng.IntN(2)
		}
		y[0], y[1] = 1, -1
		got, err := PairAUC(dist, y)
		if want := bruteAUC(dist, y); err != nil || math.Abs(got-want) > 1e-12 {
			t.Fatalf("trial %d: PairAUC = %v, %v; brute force %v", trial, got, err, want)
		}
	}
}

func TestPairThreshold(t *testing.T) {
	for _, tc := range []struct {
		name       string
		dist       []float64
		y          []int
		threshold  float64
		accuracy   float64
		t, wantAtT float64 // PairAccuracy at t is wantAtT
	}{
		// Separable: the cut midway between the last similar and the first dissimilar distance.
		{name: "separable", dist: []float64{1, 2, 3, 4}, y: []int{1, 1, -1, -1}, threshold: 2.5, accuracy: 1, t: 2, wantAtT: 1},
		// A tie at 2 across the classes: cuts at 1.5 and 2.5 both give 3/4; the smaller wins.
		{name: "tie across classes", dist: []float64{1, 2, 2, 3}, y: []int{1, 1, -1, -1}, threshold: 1.5, accuracy: 0.75, t: 2, wantAtT: 0.75},
		// Everything dissimilar: reject all, at half the smallest distance.
		{name: "all dissimilar", dist: []float64{1, 2}, y: []int{-1, -1}, threshold: 0.5, accuracy: 1, t: 1, wantAtT: 0.5},
		// ... or the smallest minus 1 when that distance is 0.
		{name: "all dissimilar from 0", dist: []float64{0, 1}, y: []int{-1, -1}, threshold: -1, accuracy: 1, t: 0, wantAtT: 0.5},
		// Everything similar: accept all, at the largest distance.
		{name: "all similar", dist: []float64{2, 1}, y: []int{1, 1}, threshold: 2, accuracy: 1, t: 1.5, wantAtT: 0.5},
		// Tied pairs move together: accepting the 1s gains one and loses one, no better than rejecting all.
		{name: "tied pair decided together", dist: []float64{1, 1, 2}, y: []int{1, -1, -1}, threshold: 0.5, accuracy: 2.0 / 3, t: 1, wantAtT: 2.0 / 3},
		// A threshold equal to a distance accepts it (≤).
		{name: "inclusive", dist: []float64{1, 2, 3}, y: []int{1, 1, -1}, threshold: 2.5, accuracy: 1, t: 1.999, wantAtT: 2.0 / 3},
		{name: "interleaved", dist: []float64{1, 2, 3, 4}, y: []int{1, -1, 1, -1}, threshold: 1.5, accuracy: 0.75, t: math.Inf(1), wantAtT: 0.5},
	} {
		th, acc, err := CalibrateThreshold(tc.dist, tc.y)
		if err != nil || th != tc.threshold || math.Abs(acc-tc.accuracy) > 1e-15 {
			t.Errorf("%s: CalibrateThreshold = %v, %v, %v; want %v, %v", tc.name, th, acc, err, tc.threshold, tc.accuracy)
		}
		// The calibrated threshold reproduces its accuracy.
		if a, err := PairAccuracy(tc.dist, tc.y, th); err != nil || a != acc {
			t.Errorf("%s: PairAccuracy at the calibrated %v = %v, %v; want %v", tc.name, th, a, err, acc)
		}
		if a, err := PairAccuracy(tc.dist, tc.y, tc.t); err != nil || math.Abs(a-tc.wantAtT) > 1e-15 {
			t.Errorf("%s: PairAccuracy at %v = %v, %v; want %v", tc.name, tc.t, a, err, tc.wantAtT)
		}
	}
}

func TestPairScoresInvalid(t *testing.T) {
	for _, tc := range []struct {
		name string
		dist []float64
		y    []int
		auc  bool // only PairAUC rejects it
	}{
		{"no pairs", nil, nil, false},
		{"lengths differ", []float64{1, 2}, []int{1}, false},
		{"label 0", []float64{1, 2}, []int{1, 0}, false},
		{"label 2", []float64{1, 2}, []int{2, -1}, false},
		{"NaN distance", []float64{1, math.NaN()}, []int{1, -1}, false},
		{"infinite distance", []float64{math.Inf(1), 1}, []int{1, -1}, false},
		{"only similar", []float64{1, 2}, []int{1, 1}, true},
		{"only dissimilar", []float64{1, 2}, []int{-1, -1}, true},
	} {
		if _, err := PairAUC(tc.dist, tc.y); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: PairAUC error %v, want ErrInvalid", tc.name, err)
		}
		_, _, errC := CalibrateThreshold(tc.dist, tc.y)
		_, errA := PairAccuracy(tc.dist, tc.y, 1)
		if tc.auc {
			if errC != nil || errA != nil {
				t.Errorf("%s: CalibrateThreshold %v, PairAccuracy %v; want no error", tc.name, errC, errA)
			}
			continue
		}
		if !errors.Is(errC, ErrInvalid) || !errors.Is(errA, ErrInvalid) {
			t.Errorf("%s: CalibrateThreshold %v, PairAccuracy %v; want ErrInvalid", tc.name, errC, errA)
		}
	}
	if _, err := PairAccuracy([]float64{1}, []int{1}, math.NaN()); !errors.Is(err, ErrInvalid) {
		t.Errorf("NaN threshold: %v", err)
	}
}

// col returns a one-feature matrix.
func col(v ...float64) *mat.Dense { return mat.NewDense(len(v), 1, v) }

func TestPrecisionAtK(t *testing.T) {
	// Two classes on a line: 0, 1, 2 (class 0) and 10, 11, 12 (class 1).
	ref, refY := col(0, 1, 2, 10, 11, 12), []int{0, 0, 0, 1, 1, 1}
	// Queries near each class, and one (class 1) at 6: equally far (4) from
	// 2 and 10, a tie the lower reference index (2, class 0) wins.
	q, qY := col(1.1, 10.9, 6), []int{0, 1, 1}
	for _, tc := range []struct {
		k    int
		want float64
	}{
		{1, 2.0 / 3},               // 1, 1, 0 (the tie goes to 2)
		{2, (1 + 1 + 0.5) / 3},     // the query at 6 gets 2 and 10
		{3, (1 + 1 + 1.0/3) / 3},   // ... then 1: 5 away like 11, and the lower index
		{6, (0.5 + 0.5 + 0.5) / 3}, // every reference point
	} {
		got, err := PrecisionAtK(nil, ref, refY, q, qY, tc.k)
		if err != nil || math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("k = %d: PrecisionAtK = %v, %v; want %v", tc.k, got, err, tc.want)
		}
	}
	// Leave-one-out on the reference points.
	for _, tc := range []struct {
		k    int
		want float64
	}{
		{1, 1}, {2, 1},
		{3, 2.0 / 3}, // the third neighbour is across the gap for every point
		{5, 2.0 / 5}, // two of the five others share the class
	} {
		got, err := LOOPrecisionAtK(nil, ref, refY, tc.k)
		if err != nil || math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("k = %d: LOOPrecisionAtK = %v, %v; want %v", tc.k, got, err, tc.want)
		}
	}
	// No queries: 0.
	if got, err := PrecisionAtK(nil, ref, refY, ref.Slice(0, 0, 0, 1).(*mat.Dense), nil, 1); err != nil || got != 0 {
		t.Errorf("no queries: %v, %v", got, err)
	}
}

// TestMetricPrecisionAtK: a metric that ignores a misleading second feature
// retrieves the right neighbours where the Euclidean distance does not.
func TestMetricPrecisionAtK(t *testing.T) {
	ref := mat.NewDense(4, 2, []float64{0, 0, 1, 50, 10, 50, 11, 0})
	refY := []int{0, 0, 1, 1}
	q := mat.NewDense(2, 2, []float64{0.5, 50, 10.5, 0})
	qY := []int{0, 1}
	eu, err := PrecisionAtK(nil, ref, refY, q, qY, 2)
	if err != nil || eu != 0.5 {
		t.Errorf("Euclidean precision@2 = %v, %v; want 0.5", eu, err)
	}
	m, err := model.NewMetric(mat.NewSymDense(2, []float64{1, 0, 0, 0}))
	if err != nil {
		t.Fatal(err)
	}
	got, err := MetricPrecisionAtK(nil, m, ref, refY, q, qY, 2)
	if err != nil || got != 1 {
		t.Errorf("metric precision@2 = %v, %v; want 1", got, err)
	}
	// The identity metric is the Euclidean distance.
	if got, err := MetricPrecisionAtK(nil, model.Identity(2), ref, refY, q, qY, 2); err != nil || got != eu {
		t.Errorf("identity metric: %v, %v; want %v", got, err, eu)
	}
	// No queries.
	if got, err := MetricPrecisionAtK(nil, m, ref, refY, q.Slice(0, 0, 0, 2).(*mat.Dense), nil, 1); err != nil || got != 0 {
		t.Errorf("no queries: %v, %v", got, err)
	}
}

// TestMetricKNNPredict: the labels are those MetricKNNError scores.
func TestMetricKNNPredict(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, nq, d = 80, 40, 3
	x, q := mat.NewDense(n, d, nil), mat.NewDense(nq, d, nil)
	y, qy := make([]int, n), make([]int, nq)
	for i := 0; i < n; i++ {
		y[i] = rng.IntN(3)
		for j := 0; j < d; j++ {
			x.Set(i, j, float64(y[i]*j)+rng.NormFloat64())
		}
	}
	for i := 0; i < nq; i++ {
		qy[i] = rng.IntN(3)
		for j := 0; j < d; j++ {
			q.Set(i, j, float64(qy[i]*j)+rng.NormFloat64())
		}
	}
	m, err := model.NewMetric(mat.NewSymDense(d, []float64{2, 0.5, 0, 0.5, 1, 0, 0, 0, 3}))
	if err != nil {
		t.Fatal(err)
	}
	pred, err := MetricKNNPredict(nil, m, x, y, q, 3)
	if err != nil {
		t.Fatal(err)
	}
	want, err := MetricKNNError(nil, m, x, y, q, qy, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := errorRate(pred, qy); got != want {
		t.Errorf("error of MetricKNNPredict's labels %v, MetricKNNError %v", got, want)
	}
}

func TestPrecisionAtKInvalid(t *testing.T) {
	ref, refY := col(0, 1, 2), []int{0, 0, 1}
	m := model.Identity(1)
	for _, tc := range []struct {
		name string
		f    func() error
	}{
		{"k 0", func() error { _, err := PrecisionAtK(nil, ref, refY, ref, refY, 0); return err }},
		{"k above n", func() error { _, err := PrecisionAtK(nil, ref, refY, ref, refY, 4); return err }},
		{"negative label", func() error { _, err := PrecisionAtK(nil, ref, []int{0, -1, 1}, ref, refY, 1); return err }},
		{"reference labels", func() error { _, err := PrecisionAtK(nil, ref, refY[:2], ref, refY, 1); return err }},
		{"query labels", func() error { _, err := PrecisionAtK(nil, ref, refY, ref, refY[:1], 1); return err }},
		{"nil data", func() error { _, err := PrecisionAtK(nil, nil, refY, ref, refY, 1); return err }},
		{"features differ", func() error { _, err := PrecisionAtK(nil, ref, refY, mat.NewDense(1, 2, nil), []int{0}, 1); return err }},
		{"NaN query", func() error { _, err := PrecisionAtK(nil, ref, refY, col(math.NaN()), []int{0}, 1); return err }},
		{"LOO k = n", func() error { _, err := LOOPrecisionAtK(nil, ref, refY, 3); return err }},
		{"nil metric", func() error { _, err := MetricPrecisionAtK(nil, nil, ref, refY, ref, refY, 1); return err }},
		{"metric dimension", func() error {
			_, err := MetricPrecisionAtK(nil, model.Identity(2), ref, refY, ref, refY, 1)
			return err
		}},
		{"metric no reference", func() error {
			_, err := MetricPrecisionAtK(nil, m, ref.Slice(0, 0, 0, 1).(*mat.Dense), nil, ref, refY, 1)
			return err
		}},
		{"predict k above n", func() error { _, err := MetricKNNPredict(nil, m, ref, refY, ref, 4); return err }},
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", tc.name, r)
				}
			}()
			if err := tc.f(); !errors.Is(err, ErrInvalid) {
				t.Errorf("%s: error %v, want ErrInvalid", tc.name, err)
			}
		}()
	}
}
