package meg

import (
	"context"
	"math"
	"testing"

	"github.com/psdlearn/psdlearn/datasets"
)

// TestStratifiedSample checks the sample's size, order and class
// proportions (largest remainders).
func TestStratifiedSample(t *testing.T) {
	y := make([]int, 0, 100)
	for c, n := range []int{50, 30, 20} {
		for i := 0; i < n; i++ {
			y = append(y, c)
		}
	}
	idx := StratifiedSample(y, 10, 3)
	if len(idx) != 10 {
		t.Fatalf("%d indices, want 10", len(idx))
	}
	count := map[int]int{}
	for k, i := range idx {
		if k > 0 && idx[k-1] >= i {
			t.Fatal("indices not strictly increasing")
		}
		count[y[i]]++
	}
	if count[0] != 5 || count[1] != 3 || count[2] != 2 {
		t.Errorf("class counts %v, want 5, 3, 2", count)
	}
	if len(StratifiedSample(y, 0, 1)) != 100 {
		t.Error("m = 0 must return every row")
	}
}

// TestRunOnlineMeetsLemma32 runs MEG on wine's target kernel without
// noise: the total loss stays within Lemma 3.2's bound at every checkpoint
// and at the end, and the learned kernel moves towards the target.
func TestRunOnlineMeetsLemma32(t *testing.T) {
	wine, err := datasets.Open("wine")
	if err != nil {
		t.Fatal(err)
	}
	tg, err := NewTarget(wine.X, wine.Y, TargetOptions{Objects: 30, Standardize: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := RunOnline(context.Background(), tg, OnlineOptions{Steps: 2000, C: 1, Checkpoints: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Bounded || rep.LossBound == nil {
		t.Fatalf("no bound for c = 1: %+v", rep)
	}
	for _, cp := range append(rep.Checkpoints, Checkpoint{Step: rep.Steps, TotalLoss: rep.TotalLoss, LossBound: rep.LossBound}) {
		if cp.LossBound == nil || !(cp.TotalLoss <= *cp.LossBound) {
			t.Errorf("step %d: total loss %v above the bound %v", cp.Step, cp.TotalLoss, cp.LossBound)
		}
	}
	if !(rep.DivergenceFinal < rep.Divergence0) || math.IsNaN(rep.NN.Mean) {
		t.Errorf("divergence %v → %v, 1-NN error %v", rep.Divergence0, rep.DivergenceFinal, rep.NN.Mean)
	}
	if _, err := RunOnline(context.Background(), tg, OnlineOptions{Steps: 0}); err == nil {
		t.Error("zero steps accepted")
	}
}
