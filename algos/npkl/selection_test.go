package npkl

import (
	"context"
	"math"
	"testing"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/sparse"
)

// TestActiveSelection checks the margin selection: it keeps every constraint
// of the chosen points, reaches the target, and takes points in order of
// margin; SelectConstraints keeps the share asked for. (The accuracy of the
// selections is psdlearn.Cluster's, tested there.)
func TestActiveSelection(t *testing.T) {
	ds, err := datasets.Open("iris")
	if err != nil {
		t.Fatal(err)
	}
	lap, err := Laplacian(ds.X, 5, sparse.GraphOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := constraints.XingPairs(ds.Y, 0.7, 5)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Learn(context.Background(), lap, cons, Options{Loss: Linear, B: 1, C: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	target := cons.Len() / 2
	sel, err := SelectActive(res, cons, target)
	if err != nil {
		t.Fatal(err)
	}
	if sel.Len() < target || sel.Len() >= cons.Len() {
		t.Fatalf("%d of %d constraints selected for target %d", sel.Len(), cons.Len(), target)
	}
	// The taken points are those of smallest margin, the kept constraints
	// exactly those touching them, and one point fewer would miss the target.
	marg := Margins(res, cons)
	for _, i := range []int{0, 50, 149} {
		var sum float64
		var l int
		for _, q := range cons.List {
			if q.A == i || q.B == i {
				sum += q.T() * res.At(q.A, q.B)
				l++
			}
		}
		if want := math.Abs(sum / float64(l)); l > 0 && math.Abs(marg[i]-want) > 1e-15 || l == 0 && !math.IsNaN(marg[i]) {
			t.Errorf("margin of point %d: %v, want %v (%d constraints)", i, marg[i], want, l)
		}
	}
	pts, keep := activePoints(marg, cons, target)
	chosen := map[int]bool{}
	for _, i := range pts {
		chosen[i] = true
	}
	var maxIn, minOut = math.Inf(-1), math.Inf(1)
	for i, v := range marg {
		if math.IsNaN(v) {
			continue
		}
		if chosen[i] {
			maxIn = math.Max(maxIn, v)
		} else {
			minOut = math.Min(minOut, v)
		}
	}
	if maxIn > minOut {
		t.Errorf("a chosen point has margin %v above an unchosen one's %v", maxIn, minOut)
	}
	var nkeep, without int
	last := pts[len(pts)-1]
	for c, k := range keep {
		q := cons.List[c]
		touches := chosen[q.A] || chosen[q.B]
		if k != touches {
			t.Fatalf("constraint %d kept=%v but touches a chosen point=%v", c, k, touches)
		}
		if k {
			nkeep++
			in := func(i int) bool { return chosen[i] && i != last }
			if in(q.A) || in(q.B) {
				without++
			}
		}
	}
	if nkeep != sel.Len() || without >= target {
		t.Errorf("kept %d (selected %d); without the last point %d ≥ target %d", nkeep, sel.Len(), without, target)
	}
	rnd, err := SelectRandom(cons, sel.Len(), 5)
	if err != nil || rnd.Len() != sel.Len() {
		t.Fatalf("random selection: %v", err)
	}
	// SelectConstraints keeps the same share by either rule, and all
	// constraints with AllConstraints.
	for _, sl := range []Selection{AllConstraints, ActiveSelection, RandomSelection} {
		lo := Options{Loss: SquaredHinge, B: 1, C: 0.5, Seed: 5}
		got, err := SelectConstraints(context.Background(), lap, cons, lo, sl, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		want := cons.Len()
		switch sl {
		case ActiveSelection:
			want = sel.Len()
		case RandomSelection:
			want = (cons.Len() + 1) / 2
		}
		if got.Len() != want {
			t.Errorf("%v: %d of %d constraints kept, want %d", sl, got.Len(), cons.Len(), want)
		}
	}
}

// numClasses is the number of distinct labels of y.
func numClasses(y []int) int {
	s := map[int]bool{}
	for _, c := range y {
		s[c] = true
	}
	return len(s)
}
