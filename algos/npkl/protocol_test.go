package npkl

import (
	"context"
	"math"
	"testing"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/engine/enginetest"
)

// irisOptions is the paper's protocol on iris: k = 5 graph, component ratio
// 0.7, 20 runs, B = 1 and C = 0.5 (the paper tunes C in (0, 1]).
func irisOptions(loss Loss, b engine.Backend) ClusterOptions {
	return ClusterOptions{Neighbors: 5, Ratio: 0.7, Runs: 20, Seed: 1, Learn: Options{Loss: loss, B: 1, C: 0.5, Backend: b}}
}

// TestIrisAccuracy: pairwise clustering accuracy of kernel k-means on the
// learned kernel is at least 97% with both losses (the paper: 97.4 ± 0.0),
// against plain k-means far below.
func TestIrisAccuracy(t *testing.T) {
	ds, err := datasets.Open("iris")
	if err != nil {
		t.Fatal(err)
	}
	for _, loss := range []Loss{Linear, SquaredHinge} {
		rep, err := Cluster(context.Background(), ds.X, ds.Y, irisOptions(loss, nil))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("iris %v: %.2f ± %.2f %%, rank %.1f, %.0f constraints, %.1f ms per run", loss, 100*rep.AccuracyMean, 100*rep.AccuracySD, rep.RankMean, rep.ConstraintsMean, 1000*rep.LearnSecondsMean)
		if rep.AccuracyMean < 0.97 {
			t.Errorf("iris %v: accuracy %.4f < 0.97", loss, rep.AccuracyMean)
		}
		if !rep.AllCovered {
			t.Errorf("iris %v: positive spectrum not covered in some run", loss)
		}
	}
	km, sd, err := KMeansBaseline(context.Background(), ds.X, ds.Y, 3, 20, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("iris k-means: %.2f ± %.2f %%", 100*km, 100*sd)
	if km > 0.95 {
		t.Errorf("plain k-means %.4f: the protocol does not discriminate", km)
	}
}

// TestBackendsAgree: with the same seed the native and pure-Go backends give
// the same accuracies and leading eigenvalues (to 1e-8).
func TestBackendsAgree(t *testing.T) {
	bs := enginetest.Backends(t)
	if len(bs) < 2 {
		t.Skip("only one backend compiled in")
	}
	ds, err := datasets.Open("iris")
	if err != nil {
		t.Fatal(err)
	}
	for _, loss := range []Loss{Linear, SquaredHinge} {
		o := irisOptions(loss, nil)
		o.Runs = 5
		var reps []*ClusterReport
		for _, b := range bs {
			o.Learn.Backend = b
			rep, err := Cluster(context.Background(), ds.X, ds.Y, o)
			if err != nil {
				t.Fatalf("%s: %v", b.Name(), err)
			}
			reps = append(reps, rep)
		}
		a, b := reps[0], reps[1]
		t.Logf("%v: %s and %s, accuracy %.4f and %.4f", loss, bs[0].Name(), bs[1].Name(), a.AccuracyMean, b.AccuracyMean)
		for r := range a.Runs {
			ra, rb := a.Runs[r], b.Runs[r]
			if ra.Accuracy != rb.Accuracy || ra.Rank != rb.Rank {
				t.Errorf("%v run %d: %s accuracy %v rank %d, %s accuracy %v rank %d", loss, r+1, bs[0].Name(), ra.Accuracy, ra.Rank, bs[1].Name(), rb.Accuracy, rb.Rank)
			}
			for l := range ra.LeadingEigenvalues {
				if d := math.Abs(ra.LeadingEigenvalues[l] - rb.LeadingEigenvalues[l]); d > 1e-8 {
					t.Errorf("%v run %d: eigenvalue %d differs by %g", loss, r+1, l, d)
				}
			}
		}
	}
}

// TestActiveSelection checks the margin selection: it keeps every constraint
// of the chosen points, reaches the target, and takes points in order of
// margin; then it compares accuracy with a random half (reported, not asserted:
// the paper observes active ≥ random only "usually").
func TestActiveSelection(t *testing.T) {
	ds, err := datasets.Open("iris")
	if err != nil {
		t.Fatal(err)
	}
	o := irisOptions(Linear, nil)
	lap, err := Laplacian(ds.X, 5, o.Graph, nil)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := constraints.XingPairs(ds.Y, 0.7, 5)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Learn(context.Background(), lap, cons, o.Learn)
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
	for _, sl := range []Selection{AllConstraints, ActiveSelection, RandomSelection} {
		so := o
		so.Selection, so.Runs = sl, 10
		rep, err := Cluster(context.Background(), ds.X, ds.Y, so)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("iris %-6v: %.2f ± %.2f %% with %.0f of %.0f constraints, %.2f ms", sl, 100*rep.AccuracyMean, 100*rep.AccuracySD, rep.UsedMean, rep.ConstraintsMean, 1000*rep.LearnSecondsMean)
		if sl != AllConstraints && math.Abs(rep.UsedMean-rep.ConstraintsMean/2) > rep.ConstraintsMean/4 {
			t.Errorf("%v selection used %.0f of %.0f constraints", sl, rep.UsedMean, rep.ConstraintsMean)
		}
	}
}
