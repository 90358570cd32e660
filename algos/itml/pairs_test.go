package itml

import (
	"testing"

	"github.com/psdlearn/psdlearn/constraints"
)

func TestTripletPairs(t *testing.T) {
	ts, err := constraints.NewTripletSet(4, []constraints.Triplet{{I: 0, J: 1, K: 2}, {I: 1, J: 0, K: 3}, {I: 2, J: 3, K: 0}})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := TripletPairs(ts)
	if err != nil {
		t.Fatal(err)
	}
	want := []constraints.LabelledPair{{A: 0, B: 1, Same: true}, {A: 0, B: 2}, {A: 1, B: 3}, {A: 2, B: 3, Same: true}}
	if len(ps.List) != len(want) {
		t.Fatalf("pairs %v, want %v", ps.List, want)
	}
	for r := range want {
		if ps.List[r] != want[r] {
			t.Errorf("pair %d = %v, want %v", r, ps.List[r], want[r])
		}
	}
}
