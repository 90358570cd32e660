package frob

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"gonum.org/v1/gonum/mat"
)

// loadSet opens an embedded data set.
func loadSet(t testing.TB, name string) *data.Dataset {
	t.Helper()
	d, err := datasets.Open(name)
	if err != nil {
		t.Fatalf("data set %s: %v", name, err)
	}
	return d
}

// standardize fits a standardizer on train and applies it to every set.
func standardize(t testing.TB, train *data.Dataset, rest ...*data.Dataset) []*data.Dataset {
	t.Helper()
	out, err := data.Standardize(train, rest...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// tripletsOf builds the protocol's triplets (k targets × k impostors per point).
func tripletsOf(t testing.TB, x *mat.Dense, y []int, k int) *constraints.TripletSet {
	t.Helper()
	s, err := constraints.Triplets(x, y, k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// clusterTriplets returns n points in d dimensions in Gaussian clusters
// around random centres (one class per cluster, anisotropic spectrum) and
// 9n random triplets: for every point 3 random same-class targets × 3
// random other-class impostors. Their FrobMetric duals are very sparse.
func clusterTriplets(tb testing.TB, n, d, classes int, seed uint64) (*mat.Dense, *constraints.TripletSet) {
	rng := rand.New(rand.NewPCG(seed, uint64(d)))
	centres := mat.NewDense(classes, d, nil)
	for c := 0; c < classes; c++ {
		for j := 0; j < d; j++ {
			centres.Set(c, j, 2*rng.NormFloat64()/math.Sqrt(1+float64(j)/8))
		}
	}
	x := mat.NewDense(n, d, nil)
	y := make([]int, n)
	byClass := make([][]int, classes)
	for i := 0; i < n; i++ {
		c := i % classes
		y[i] = c
		byClass[c] = append(byClass[c], i)
		for j := 0; j < d; j++ {
			x.Set(i, j, centres.At(c, j)+rng.NormFloat64()*3/math.Sqrt(1+float64(j)/4))
		}
	}
	ts := make([]constraints.Triplet, 0, 9*n)
	for i := 0; i < n; i++ {
		same := byClass[y[i]]
		for a := 0; a < 3; a++ {
			j := i
			for j == i {
				j = same[rng.IntN(len(same))]
			}
			for b := 0; b < 3; b++ {
				k := rng.IntN(n)
				for y[k] == y[i] {
					k = rng.IntN(n)
				}
				ts = append(ts, constraints.Triplet{I: i, J: j, K: k})
			}
		}
	}
	s, err := constraints.NewTripletSet(n, ts)
	if err != nil {
		tb.Fatal(err)
	}
	return x, s
}
