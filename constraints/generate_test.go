package constraints

import (
	"errors"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/lapack"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

func randPoints(seed uint64, n, d, classes int) (*mat.Dense, []int) {
	rng := rand.New(rand.NewPCG(seed, 7))
	x := mat.NewDense(n, d, nil)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		y[i] = rng.IntN(classes)
		for j := 0; j < d; j++ {
			x.Set(i, j, rng.NormFloat64()+float64(y[i]))
		}
	}
	return x, y
}

// bruteTriplets is the reference: all distances, sorted by (distance, index).
func bruteTriplets(x *mat.Dense, y []int, k int) []Triplet {
	n, d := x.Dims()
	dist := func(a, b int) float64 {
		var s float64
		for j := 0; j < d; j++ {
			e := x.At(a, j) - x.At(b, j)
			s += e * e
		}
		return s
	}
	var out []Triplet
	for i := 0; i < n; i++ {
		var same, other []int
		for j := 0; j < n; j++ {
			switch {
			case j == i:
			case y[j] == y[i]:
				same = append(same, j)
			default:
				other = append(other, j)
			}
		}
		byDist := func(s []int) {
			sort.Slice(s, func(a, b int) bool {
				da, db := dist(i, s[a]), dist(i, s[b])
				return da < db || (da == db && s[a] < s[b])
			})
		}
		byDist(same)
		byDist(other)
		for _, j := range same[:min(k, len(same))] {
			for _, l := range other[:min(k, len(other))] {
				out = append(out, Triplet{i, j, l})
			}
		}
	}
	return out
}

func TestTripletsMatchBruteForce(t *testing.T) {
	for _, tc := range []struct {
		name             string
		n, d, classes, k int
		integer          bool // round the data: many exact ties, broken by row index
	}{
		{"3 classes k=3", 120, 4, 3, 3, false},
		{"2 classes k=1", 50, 3, 2, 1, false},
		{"many classes k=5", 300, 6, 7, 5, false},
		{"blocked (> one KNN block)", 700, 5, 4, 3, false},
		{"integer ties", 600, 3, 5, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, y := randPoints(uint64(tc.n), tc.n, tc.d, tc.classes)
			if tc.integer {
				x.Apply(func(_, _ int, v float64) float64 { return math.Round(v) }, x)
			}
			for _, impl := range []BLAS{nil, lapack.NativeBLAS} {
				s, err := TripletsBLAS(impl, x, y, tc.k)
				if err != nil {
					t.Fatal(err)
				}
				want := bruteTriplets(x, y, tc.k)
				if s.Len() != tc.n*tc.k*tc.k || len(want) != s.Len() {
					t.Fatalf("%d triplets, brute force %d, want %d", s.Len(), len(want), tc.n*tc.k*tc.k)
				}
				for r, tr := range s.Triplets {
					if tr != want[r] {
						t.Fatalf("triplet %d = %v, brute force %v", r, tr, want[r])
					}
					if y[tr.I] != y[tr.J] || y[tr.I] == y[tr.K] {
						t.Fatalf("triplet %v has wrong classes", tr)
					}
				}
			}
		})
	}
}

func TestTripletsSmallClasses(t *testing.T) {
	// Class 0 has 2 points, class 1 has 1 point, class 2 has 5 points; k = 3.
	x := mat.NewDense(8, 1, []float64{0, 1, 10, 20, 21, 22, 23, 24})
	y := []int{0, 0, 1, 2, 2, 2, 2, 2}
	s, err := Triplets(x, y, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := bruteTriplets(x, y, 3)
	// Points 0, 1: one target × 3 impostors; point 2: no target; points 3..7: 3 × 3.
	if s.Len() != 2*3+5*9 || len(want) != s.Len() {
		t.Fatalf("%d triplets (brute force %d), want %d", s.Len(), len(want), 2*3+5*9)
	}
	for r := range want {
		if s.Triplets[r] != want[r] {
			t.Fatalf("triplet %d = %v, want %v", r, s.Triplets[r], want[r])
		}
	}
	// Two points outside the class: fewer impostors.
	s, err = Triplets(mat.NewDense(5, 1, []float64{0, 1, 2, 5, 6}), []int{0, 0, 0, 1, 1}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 3*2*2+2*1*3 {
		t.Errorf("%d triplets, want %d", s.Len(), 3*2*2+2*1*3)
	}
}

func TestTripletsErrors(t *testing.T) {
	x := mat.NewDense(4, 1, []float64{0, 1, 2, 3})
	for _, tc := range []struct {
		name string
		x    *mat.Dense
		y    []int
		k    int
		want string
	}{
		{"k zero", x, []int{0, 0, 1, 1}, 0, "k = 0"},
		{"k negative", x, []int{0, 0, 1, 1}, -2, "k = -2"},
		{"single class", x, []int{3, 3, 3, 3}, 2, "at least two classes, the labels have 1"},
		{"label count", x, []int{0, 1}, 1, "2 labels for 4 points"},
		{"negative label", x, []int{0, -1, 1, 1}, 1, "negative"},
		{"singletons", x, []int{0, 1, 2, 3}, 1, "every class has a single point"},
		{"NaN", mat.NewDense(2, 1, []float64{0, math.NaN()}), []int{0, 1}, 1, "NaN"},
		{"nil", nil, nil, 1, "nil data"},
	} {
		_, err := Triplets(tc.x, tc.y, tc.k)
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want ErrInvalid with %q", tc.name, err, tc.want)
		}
	}
}

// TestTripletsTreePath checks the per-class search that low-dimensional data
// with large classes take (k-d trees) against the class-grouped screen: on
// continuous data (no exact ties) both give the same triplets.
func TestTripletsTreePath(t *testing.T) {
	x, y := randPoints(11, 4400, 2, 2)
	if !sparse.KDTreePays(x, 3) {
		t.Fatal("the k-d tree does not pay on 2-D data: the per-class path is not exercised")
	}
	got, err := TripletsBLAS(lapack.NativeBLAS, x, y, 3)
	if err != nil {
		t.Fatal(err)
	}
	members, _ := classMembers(y)
	if len(members[0]) < kdMinClass || len(members[1]) < kdMinClass {
		t.Fatalf("classes of %d and %d points: below %d, the per-class path is not taken", len(members[0]), len(members[1]), kdMinClass)
	}
	var order []int
	starts := []int{0}
	for _, m := range members {
		order = append(order, m...)
		starts = append(starts, len(order))
	}
	same, other, err := sparse.KNNByClass(lapack.NativeBLAS, subRows(x, order), starts, order, 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	targets, impostors := make([][]int, len(y)), make([][]int, len(y))
	for a, i := range order {
		targets[i], impostors[i] = validNeighbors(same, a), validNeighbors(other, a)
	}
	r := 0
	for i := range y {
		for _, j := range targets[i] {
			for _, l := range impostors[i] {
				if want := (Triplet{I: i, J: j, K: l}); got.Triplets[r] != want {
					t.Fatalf("triplet %d = %v, class-grouped screen %v", r, got.Triplets[r], want)
				}
				r++
			}
		}
	}
	if r != got.Len() {
		t.Fatalf("%d triplets, class-grouped screen %d", got.Len(), r)
	}
}
