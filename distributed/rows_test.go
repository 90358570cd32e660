package distributed_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/distributed"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/mpi"
	"gonum.org/v1/gonum/mat"
)

// TestLoadRows: every rank keeps its block of the rows, in order, with the
// one-process labels; one file per rank gives the same rows, labels
// renumbered on the union of the files' classes; too few rows per rank and
// standardisation across rank files are refused.
func TestLoadRows(t *testing.T) {
	iris, err := datasets.Open("iris")
	if err != nil {
		t.Fatal(err)
	}
	whole := func(string) (*data.Dataset, error) { return iris, nil }
	// Rank files: rank 0 rows 0–99 (classes 0 and 1), rank 1 rows 100–149
	// (class 2 only), as names: the union must renumber them.
	parts := func(spec string) (*data.Dataset, error) {
		lo, hi := 0, 100
		if strings.HasSuffix(spec, "-1") {
			lo, hi = 100, 150
		}
		d := iris.Subset(seq(lo, hi))
		// Keep only the classes this part has, as data.Load would.
		var classes []string
		code := map[int]int{}
		for _, y := range d.Y {
			if _, ok := code[y]; !ok {
				code[y] = len(classes)
				classes = append(classes, iris.Classes[y])
			}
		}
		y := make([]int, len(d.Y))
		for i, v := range d.Y {
			y[i] = code[v]
		}
		return &data.Dataset{Name: spec, X: d.X, Y: y, Classes: classes}, nil
	}
	for _, tc := range []struct {
		spec string
		load distributed.Loader
	}{{"iris", whole}, {"part-" + distributed.RankPlaceholder, parts}} {
		for _, p := range []int{1, 2} {
			if p == 1 && strings.Contains(tc.spec, distributed.RankPlaceholder) {
				continue
			}
			got := make([]*distributed.Rows, p)
			labels := make([][]int, p)
			errs := runRanks(p, func(c mpi.Comm) error {
				rw, err := distributed.LoadRows(c, tc.spec, tc.load, 2, nil)
				if err != nil {
					return err
				}
				counts, err := rw.Counts(c)
				if err != nil {
					return err
				}
				y, err := rw.AllLabels(c, counts)
				got[c.Rank()], labels[c.Rank()] = rw, y
				return err
			})
			for r, err := range errs {
				if err != nil {
					t.Fatalf("%s, %d ranks, rank %d: %v", tc.spec, p, r, err)
				}
			}
			for r, rw := range got {
				if rw.N != 150 || rw.Dim != 4 || !slices.Equal(labels[r], iris.Y) || !slices.Equal(rw.Classes, iris.Classes) {
					t.Errorf("%s, %d ranks, rank %d: n %d dim %d classes %v, labels equal %v", tc.spec, p, r, rw.N, rw.Dim, rw.Classes, slices.Equal(labels[r], iris.Y))
				}
				n, _ := rw.X.Dims()
				if !mat.Equal(rw.X, iris.X.Slice(rw.Lo, rw.Lo+n, 0, 4)) || !slices.Equal(rw.Y, iris.Y[rw.Lo:rw.Lo+n]) {
					t.Errorf("%s, %d ranks, rank %d: rows %d… are not the data's", tc.spec, p, r, rw.Lo)
				}
				if (r == 0) != (rw.Data != nil) {
					t.Errorf("%s, rank %d: data description %v", tc.spec, r, rw.Data)
				}
			}
		}
	}
	few := runRanks(3, func(c mpi.Comm) error {
		_, err := distributed.LoadRows(c, "iris", func(string) (*data.Dataset, error) { return iris.Subset(seq(0, 5)), nil }, 2, nil)
		return err
	})
	for r, err := range few {
		if !errors.Is(err, distributed.ErrTooFewRows) {
			t.Errorf("5 rows on 3 ranks, rank %d: %v, want ErrTooFewRows", r, err)
		}
	}
	prep := func(x *mat.Dense) (*mat.Dense, error) { return x, nil }
	if _, err := distributed.LoadRows(mpi.Single, "part-{rank}.csv", parts, 1, prep); !errors.Is(err, errs.ErrInvalid) {
		t.Errorf("standardising rank files: %v, want ErrInvalid", err)
	}
}

func seq(lo, hi int) []int {
	out := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

func goBackend(t *testing.T) engine.Backend {
	b, err := engine.Get("go")
	if err != nil {
		t.Fatal(err)
	}
	return b
}
