package data

import (
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// seqData is an n×2 data set whose first column is the row number.
func seqData(n int) *Dataset {
	x := mat.NewDense(n, 2, nil)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		x.Set(i, 0, float64(i))
		x.Set(i, 1, float64(i%3))
		y[i] = i % 3
	}
	return &Dataset{Name: "seq", X: x, Y: y, Classes: []string{"a", "b", "c"}}
}

func TestSplitPartition(t *testing.T) {
	for _, tc := range []struct {
		n     int
		fracs []float64
		sizes []int
	}{
		{150, []float64{0.7, 0.15, 0.15}, []int{105, 23, 22}},
		{178, []float64{0.7, 0.15, 0.15}, []int{125, 26, 27}},
		{10, []float64{0.5, 0.5}, []int{5, 5}},
		{7, []float64{1}, []int{7}},
	} {
		d := seqData(tc.n)
		parts, err := Split(d, tc.fracs, 42)
		if err != nil {
			t.Fatal(err)
		}
		seen := make([]int, tc.n)
		for p, part := range parts {
			if part.Len() != tc.sizes[p] {
				t.Errorf("n=%d %v: part %d has %d rows, want %d", tc.n, tc.fracs, p, part.Len(), tc.sizes[p])
			}
			prev := -1.0
			for i := 0; i < part.Len(); i++ {
				row := part.X.At(i, 0)
				if row <= prev {
					t.Errorf("part %d not in original order", p)
				}
				prev = row
				seen[int(row)]++
				if part.Y[i] != int(row)%3 || part.X.At(i, 1) != float64(int(row)%3) {
					t.Errorf("row %v lost its label", row)
				}
			}
		}
		for i, c := range seen {
			if c != 1 {
				t.Errorf("n=%d: row %d appears %d times", tc.n, i, c)
			}
		}
	}
}

func TestSplitSeeded(t *testing.T) {
	d := seqData(200)
	a, _ := SplitIndices(200, []float64{0.7, 0.3}, 1)
	b, _ := SplitIndices(200, []float64{0.7, 0.3}, 1)
	c, _ := SplitIndices(200, []float64{0.7, 0.3}, 2)
	if !slices.Equal(a[0], b[0]) || !slices.Equal(a[1], b[1]) {
		t.Error("same seed, different split")
	}
	if slices.Equal(a[0], c[0]) {
		t.Error("different seeds, same split")
	}
	parts, _ := Split(d, []float64{0.7, 0.3}, 1)
	for i, r := range a[1] {
		if parts[1].X.At(i, 0) != float64(r) {
			t.Fatal("Split and SplitIndices disagree")
		}
	}
}

func TestSplitRows(t *testing.T) {
	d := seqData(20)
	parts, err := SplitRows(d, []int{10, 5, 4})
	if err != nil {
		t.Fatal(err)
	}
	for p, lo := range []int{0, 10, 15} {
		for i := 0; i < parts[p].Len(); i++ {
			if parts[p].X.At(i, 0) != float64(lo+i) {
				t.Errorf("part %d row %d is %v", p, i, parts[p].X.At(i, 0))
			}
		}
	}
	if _, err := SplitRows(d, []int{10, 11}); err == nil || !strings.Contains(err.Error(), "21 rows requested") {
		t.Errorf("error %v", err)
	}
}

func TestParseSplit(t *testing.T) {
	for _, tc := range []struct {
		in, str string
		parts   int
	}{
		{"0.7,0.15,0.15", "0.7,0.15,0.15", 3},
		{" rows:10500, 4500,5000", "rows:10500,4500,5000", 3},
		{"0.8,0.2", "0.8,0.2", 2},
	} {
		s, err := ParseSplit(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if s.String() != tc.str || s.Parts() != tc.parts {
			t.Errorf("ParseSplit(%q) = %v (%d parts)", tc.in, s, s.Parts())
		}
	}
	for _, bad := range []string{"", "0.7,0.2", "0.7,x", "rows:1,-2", "rows:", "1.5,-0.5", "0,1"} {
		if _, err := ParseSplit(bad); err == nil {
			t.Errorf("ParseSplit(%q) accepted", bad)
		}
	}
	if _, err := Split(seqData(3), []float64{0.9, 0.1}, 1); err == nil || !strings.Contains(err.Error(), "part 1 is empty") {
		t.Errorf("tiny split: %v", err)
	}
}

// TestCut checks Cut against Apply, its definition, on generated specs: the
// same parts, as views of the reordered data set, and the same errors.
func TestCut(t *testing.T) {
	clone := func(d *Dataset) *Dataset {
		return &Dataset{Name: d.Name, X: mat.DenseCopyOf(d.X), Y: slices.Clone(d.Y), Classes: d.Classes}
	}
	var specs []SplitSpec
	for _, n := range []int{1, 2, 5, 37} {
		specs = append(specs, SplitSpec{Rows: []int{n}}, SplitSpec{Rows: []int{n, 1, 2}})
	}
	specs = append(specs,
		SplitSpec{Fracs: []float64{0.7, 0.15, 0.15}}, SplitSpec{Fracs: []float64{0.5, 0.5}},
		SplitSpec{Fracs: []float64{0.1, 0.2, 0.3, 0.4}}, SplitSpec{Rows: []int{0}},
		SplitSpec{Rows: []int{40, 3}}, SplitSpec{Fracs: []float64{0.7, 0.7}})
	for _, spec := range specs {
		for seed := uint64(1); seed <= 3; seed++ {
			d := seqData(43)
			want, werr := spec.Apply(clone(d), seed)
			got, err := spec.Cut(d, seed)
			if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
				t.Fatalf("%v seed %d: error %v, Apply's %v", spec, seed, err, werr)
			}
			if err != nil {
				continue
			}
			if len(got) != len(want) {
				t.Fatalf("%v: %d parts, want %d", spec, len(got), len(want))
			}
			seen := map[float64]bool{}
			for p := range got {
				if !mat.Equal(got[p].X, want[p].X) || !slices.Equal(got[p].Y, want[p].Y) || got[p].Name != "seq" || len(got[p].Classes) != 3 {
					t.Fatalf("%v seed %d part %d differs from Apply's", spec, seed, p)
				}
				for i := 0; i < got[p].Len(); i++ {
					seen[got[p].X.At(i, 0)] = true
				}
			}
			// d is a permutation of its rows, the parts first and views of it.
			rows := map[float64]bool{}
			for i := 0; i < d.Len(); i++ {
				v := d.X.At(i, 0)
				if d.X.At(i, 1) != float64(int(v)%3) || d.Y[i] != int(v)%3 || rows[v] {
					t.Fatalf("%v seed %d: row %d of d is %v, %v", spec, seed, i, d.X.RawRowView(i), d.Y[i])
				}
				rows[v] = true
			}
			last := got[len(got)-1]
			last.X.Set(0, 1, -1)
			if off := d.Len() - len(rows); off != 0 || d.X.At(len(seen)-last.Len(), 1) != -1 {
				t.Errorf("%v seed %d: the last part is not a view of d", spec, seed)
			}
		}
	}
}
