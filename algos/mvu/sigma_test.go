package mvu

import (
	"math"
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// TestAutoSigmaLine checks the geodesic estimate against its known answer:
// for points on a line the kNN graph's shortest paths are the distances
// along the line, and the variance of the distances from an end is the
// top (only) eigenvalue of the centred Gram matrix, Σ(x_i − x̄)², in units
// of the mean squared neighbour distance.
func TestAutoSigmaLine(t *testing.T) {
	for _, tc := range []struct {
		n, k    int
		floored bool
	}{
		{n: 50, k: 2, floored: true},
		{n: 150, k: 3, floored: true},
		{n: 800, k: 2, floored: false},
		{n: 2000, k: 4, floored: false},
	} {
		x := mat.NewDense(tc.n, 1, nil)
		for i := 0; i < tc.n; i++ {
			// Uneven spacing, listed out of order.
			j := (7 * i) % tc.n
			x.Set(i, 0, float64(j)+0.3*math.Sin(float64(j)))
		}
		nb, err := sparse.KNN(x, x, tc.k, true)
		if err != nil {
			t.Fatal(err)
		}
		edges, dist2 := knnEdges(nb)
		unit, scale2 := unitDistances(dist2)
		var mean, want float64
		for i := 0; i < tc.n; i++ {
			mean += x.At(i, 0)
		}
		mean /= float64(tc.n)
		for i := 0; i < tc.n; i++ {
			d := x.At(i, 0) - mean
			want += d * d
		}
		want /= scale2
		got := geodesicVariance(tc.n, edges, unit)
		if math.Abs(got-want) > 1e-9*want {
			t.Errorf("n=%d k=%d: geodesic variance %.10g, want %.10g", tc.n, tc.k, got, want)
		}
		sigma := autoSigma(tc.n, edges, unit)
		if (sigma == SigmaFloor) != tc.floored {
			t.Errorf("n=%d k=%d: σ = %g (estimate %g), floored %v, want %v", tc.n, tc.k, sigma, got, sigma == SigmaFloor, tc.floored)
		}
		if wantSigma := math.Max(SigmaFloor, 0.1*want); math.Abs(sigma-wantSigma) > 1e-9*wantSigma {
			t.Errorf("n=%d k=%d: σ = %g, want %g", tc.n, tc.k, sigma, wantSigma)
		}
	}
}

// TestGeodesicDistancesTriangle checks Dijkstra on a graph where the direct
// edge is longer than the way round.
func TestGeodesicDistancesTriangle(t *testing.T) {
	// 0–1 of length 1, 1–2 of length 1, 0–2 of length 3, 2–3 of length 2.
	g := newGeodesicGraph(4, []engine.Pair{{A: 0, B: 1}, {A: 1, B: 2}, {A: 0, B: 2}, {A: 2, B: 3}}, []float64{1, 1, 9, 4})
	got := g.distances(0)
	want := []float64{0, 1, 2, 4}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("distance to %d: %g, want %g", i, got[i], want[i])
		}
	}
}
