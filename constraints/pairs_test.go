package constraints

import (
	"errors"
	"slices"
	"testing"
)

func labels(n, classes int) []int {
	y := make([]int, n)
	for i := range y {
		y[i] = (i * 7) % classes
	}
	return y
}

func checkPairs(t *testing.T, p *Pairs, y []int) {
	t.Helper()
	q, err := NewPairs(p.N, p.List) // distinct, in range, normalised
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range q.List {
		if l != p.List[i] {
			t.Fatalf("pair %d not normalised: %v", i, p.List[i])
		}
		if l.Same != (y[l.A] == y[l.B]) {
			t.Fatalf("pair %v mislabelled", l)
		}
	}
}

func TestRandomPairs(t *testing.T) {
	y := labels(60, 3)
	p, err := RandomPairs(y, 200, 5)
	if err != nil {
		t.Fatal(err)
	}
	if p.Len() != 200 {
		t.Fatalf("%d pairs", p.Len())
	}
	checkPairs(t, p, y)
	q, _ := RandomPairs(y, 200, 5)
	r, _ := RandomPairs(y, 200, 6)
	if !slices.Equal(p.List, q.List) || slices.Equal(p.List, r.List) {
		t.Error("seeding: same seed must repeat, different seeds must differ")
	}
	// All pairs of 4 points.
	all, err := RandomPairs([]int{0, 0, 1, 1}, 6, 1)
	if err != nil || all.Len() != 6 {
		t.Fatalf("all pairs: %v %v", all, err)
	}
	if ml, cl := all.Counts(); ml != 2 || cl != 4 {
		t.Errorf("counts %d, %d", ml, cl)
	}
	if _, err := RandomPairs([]int{0, 1, 1}, 4, 1); !errors.Is(err, ErrInvalid) {
		t.Errorf("too many pairs: %v", err)
	}
}

func TestBalancedPairs(t *testing.T) {
	y := labels(90, 4)
	p, err := BalancedPairs(y, 40, 30, 9)
	if err != nil {
		t.Fatal(err)
	}
	checkPairs(t, p, y)
	if ml, cl := p.Counts(); ml != 40 || cl != 30 {
		t.Errorf("counts %d, %d", ml, cl)
	}
	for i, l := range p.List {
		if l.Same != (i < 40) {
			t.Fatalf("must-links are not first")
		}
	}
	if _, err := BalancedPairs([]int{0, 0, 1}, 2, 0, 1); !errors.Is(err, ErrInvalid) {
		t.Errorf("2 must-links from one same-class pair: %v", err)
	}
}

func TestXingPairs(t *testing.T) {
	for _, ratio := range []float64{0.9, 0.7, 0.3} {
		y := labels(200, 3)
		p, err := XingPairs(y, ratio, 11)
		if err != nil {
			t.Fatal(err)
		}
		checkPairs(t, p, y)
		want := int(ratio*200 + 0.5)
		if c := p.Components(); c != want {
			t.Errorf("ratio %v: %d components, want %d", ratio, c, want)
		}
		// Minimal: without the last pair (a must-link that merged two
		// components) there is one more component.
		last := p.List[p.Len()-1]
		if !last.Same {
			t.Errorf("ratio %v: the last pair is a cannot-link", ratio)
		}
		shorter := &Pairs{N: p.N, List: p.List[:p.Len()-1]}
		if c := shorter.Components(); c != want+1 {
			t.Errorf("ratio %v: %d components before the last pair", ratio, c)
		}
		ml, cl := p.Counts()
		if ml == 0 || cl == 0 {
			t.Errorf("ratio %v: %d must-links, %d cannot-links", ratio, ml, cl)
		}
	}
	if p, err := XingPairs(labels(10, 2), 1, 1); err != nil || p.Len() != 0 {
		t.Errorf("ratio 1: %v %v", p, err)
	}
	for _, bad := range []float64{0, -0.5, 1.5, 0.1} { // 0.1·20 = 2 < 3 classes
		if _, err := XingPairs(labels(20, 3), bad, 1); !errors.Is(err, ErrInvalid) {
			t.Errorf("ratio %v: %v", bad, err)
		}
	}
}

func TestNewPairsErrors(t *testing.T) {
	for _, l := range [][]LabelledPair{
		{{A: 0, B: 0}},
		{{A: 0, B: 5}},
		{{A: -1, B: 2}},
		{{A: 0, B: 1}, {A: 1, B: 0}},
	} {
		if _, err := NewPairs(4, l); !errors.Is(err, ErrInvalid) {
			t.Errorf("NewPairs(%v): %v", l, err)
		}
	}
}
