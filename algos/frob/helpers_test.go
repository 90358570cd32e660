package frob

import (
	"testing"

	"github.com/psdlearn/psdlearn/algos/constraints"
	"github.com/psdlearn/psdlearn/algos/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine"
	"gonum.org/v1/gonum/mat"
)

// backends returns the registered backends, "go" first.
func backends(t testing.TB) []engine.Backend {
	var out []engine.Backend
	for _, name := range []string{"go", "native"} {
		if b, err := engine.Get(name); err == nil {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		t.Fatal("no backend registered")
	}
	return out
}

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
	s, err := data.FitStandardizer(train.X)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*data.Dataset, 0, 1+len(rest))
	for _, d := range append([]*data.Dataset{train}, rest...) {
		x, err := s.Apply(d.X)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d.WithX(x))
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
