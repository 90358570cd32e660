package eval

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/model"
	"gonum.org/v1/gonum/mat"
)

func brutePairwise(truth, pred []int) float64 {
	n := len(truth)
	agree := 0
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			if (truth[i] == truth[j]) == (pred[i] == pred[j]) {
				agree++
			}
		}
	}
	return float64(agree) / float64(n*(n-1)/2)
}

func TestPairwiseAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for trial := 0; trial < 20; trial++ {
		n := 2 + rng.IntN(80)
		truth, pred := make([]int, n), make([]int, n)
		for i := range truth {
			truth[i] = rng.IntN(4)
			pred[i] = rng.IntN(5) - 1
		}
		if got, want := PairwiseAccuracy(truth, pred), brutePairwise(truth, pred); math.Abs(got-want) > 1e-15 {
			t.Fatalf("n=%d: %v, brute force %v", n, got, want)
		}
	}
	// Renumbering clusters changes nothing; a perfect clustering scores 1.
	if got := PairwiseAccuracy([]int{0, 0, 1, 1, 2}, []int{7, 7, 3, 3, 9}); got != 1 {
		t.Errorf("relabelled perfect clustering: %v", got)
	}
	// All in one cluster against two equal groups of 2: 2 of 6 pairs agree.
	if got := PairwiseAccuracy([]int{0, 0, 1, 1}, []int{0, 0, 0, 0}); math.Abs(got-2.0/6) > 1e-15 {
		t.Errorf("one cluster: %v", got)
	}
	if !math.IsNaN(PairwiseAccuracy([]int{0}, []int{0})) || !math.IsNaN(PairwiseAccuracy([]int{0, 1}, []int{0})) {
		t.Error("want NaN for n < 2 or mismatched lengths")
	}
}

// TestPairSatisfaction: the share of pairs a clustering respects, against
// hand counts; NaN without pairs or with an index outside the clustering.
func TestPairSatisfaction(t *testing.T) {
	assign := []int{0, 0, 1, 1, 2}
	p := func(list ...constraints.LabelledPair) *constraints.Pairs { return &constraints.Pairs{N: 5, List: list} }
	for _, c := range []struct {
		name  string
		pairs *constraints.Pairs
		want  float64
	}{
		{"all respected", p(constraints.LabelledPair{A: 0, B: 1, Same: true}, constraints.LabelledPair{A: 1, B: 2}), 1},
		{"one of four", p(constraints.LabelledPair{A: 0, B: 2, Same: true}, constraints.LabelledPair{A: 0, B: 1},
			constraints.LabelledPair{A: 2, B: 3}, constraints.LabelledPair{A: 3, B: 4}), 0.25},
		{"none respected", p(constraints.LabelledPair{A: 2, B: 4, Same: true}), 0},
		{"no pair", p(), math.NaN()},
		{"nil", nil, math.NaN()},
		{"index outside", &constraints.Pairs{N: 9, List: []constraints.LabelledPair{{A: 0, B: 8, Same: true}}}, math.NaN()},
	} {
		got := PairSatisfaction(assign, c.pairs)
		if got != c.want && !(math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestKMeansSeparated(t *testing.T) {
	x, y := blobs(9, 300, 2, 3, 0.05)
	for i := 0; i < 300; i++ { // spread the blob centres far apart
		x.Set(i, 0, x.At(i, 0)+10*float64(y[i]))
	}
	res, err := KMeans(context.Background(), x, 3, KMeansOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if acc := PairwiseAccuracy(y, res.Assign); acc != 1 {
		t.Errorf("pairwise accuracy %v on separated blobs", acc)
	}
	// The inertia is the sum of squared distances to the reported centres,
	// and every point is at its nearest centre.
	var inertia float64
	for i := 0; i < 300; i++ {
		best := math.Inf(1)
		for c := 0; c < 3; c++ {
			best = math.Min(best, sqDist(x.RawRowView(i), res.Centers.RawRowView(c)))
		}
		own := sqDist(x.RawRowView(i), res.Centers.RawRowView(res.Assign[i]))
		if own != best {
			t.Fatalf("point %d not at its nearest centre", i)
		}
		inertia += own
	}
	if math.Abs(inertia-res.Inertia) > 1e-9*inertia {
		t.Errorf("inertia %v, recomputed %v", res.Inertia, inertia)
	}
	again, _ := KMeans(context.Background(), x, 3, KMeansOptions{Seed: 1})
	for i := range again.Assign {
		if again.Assign[i] != res.Assign[i] {
			t.Fatal("same seed, different clustering")
		}
	}
}

func TestKMeansRestartsNotWorse(t *testing.T) {
	x, _ := blobs(10, 200, 3, 5, 0.6)
	one, _ := KMeans(context.Background(), x, 5, KMeansOptions{Seed: 4, Restarts: 1})
	many, _ := KMeans(context.Background(), x, 5, KMeansOptions{Seed: 4, Restarts: 8})
	// The first restart of the 8 is the single run (same stream), so the best of 8 is no worse.
	if many.Inertia > one.Inertia {
		t.Errorf("8 restarts: inertia %v > single start %v", many.Inertia, one.Inertia)
	}
	// Duplicate points and k = n still work.
	dup := mat.NewDense(4, 1, []float64{1, 1, 1, 1})
	if r, err := KMeans(context.Background(), dup, 4, KMeansOptions{}); err != nil || r.Inertia != 0 {
		t.Errorf("duplicates: %v %v", r, err)
	}
	if _, err := KMeans(context.Background(), dup, 5, KMeansOptions{}); err == nil {
		t.Error("5 clusters of 4 points accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := KMeans(ctx, x, 3, KMeansOptions{}); err == nil {
		t.Error("cancelled context ignored")
	}
}

func TestKernelKMeans(t *testing.T) {
	// A kernel whose factor is known: K = V diag(λ) Vᵀ with V = F diag(1/√λ).
	f, y := blobs(11, 150, 2, 3, 0.05)
	for i := 0; i < 150; i++ {
		f.Set(i, 1, f.At(i, 1)+5*float64(y[i]))
	}
	lam := []float64{4, 0.25}
	v := mat.NewDense(150, 2, nil)
	v.Apply(func(_, j int, x float64) float64 { return x / math.Sqrt(lam[j]) }, f)
	kern, err := model.NewKernel(v, lam)
	if err != nil {
		t.Fatal(err)
	}
	res, err := KernelKMeans(context.Background(), kern, 3, KMeansOptions{Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if acc := PairwiseAccuracy(y, res.Assign); acc != 1 {
		t.Errorf("kernel k-means accuracy %v", acc)
	}
}

func TestVerification(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 1))
	y := make([]int, 60)
	for i := range y {
		y[i] = rng.IntN(3)
	}
	pairs, err := constraints.RandomPairs(y, 300, 3)
	if err != nil {
		t.Fatal(err)
	}
	dist := make([]float64, pairs.Len())
	for r, p := range pairs.List {
		dist[r] = 3 + math.Round(7*rng.Float64()) // many ties
		if p.Same {
			dist[r] = math.Round(5 * rng.Float64())
		}
	}
	thr, acc, err := BestThreshold(dist, pairs)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := VerificationAccuracy(dist, pairs, thr); got != acc {
		t.Errorf("accuracy at the best threshold %v: %v, reported %v", thr, got, acc)
	}
	// No threshold does better (brute force over all candidates).
	for _, c := range append([]float64{-1, 100}, dist...) {
		if a, _ := VerificationAccuracy(dist, pairs, c); a > acc {
			t.Errorf("threshold %v gives %v > best %v", c, a, acc)
		}
	}
	ml, _ := pairs.Counts()
	if base := math.Max(float64(ml), float64(pairs.Len()-ml)) / float64(pairs.Len()); acc <= base {
		t.Errorf("best accuracy %v not above the constant predictor %v", acc, base)
	}
	if _, _, err := BestThreshold(dist[:3], pairs); err == nil {
		t.Error("length mismatch accepted")
	}
}
