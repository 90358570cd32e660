package data

import (
	"math"
	"testing"
)

// TestSplitRowsOverflow runs the reproducers of overflowing splits: row counts
// whose sum overflows an int must give an error, not a makeslice panic.
func TestSplitRowsOverflow(t *testing.T) {
	d := seqData(10)
	for _, counts := range [][]int{
		{math.MaxInt, 1},
		{1, math.MaxInt},
		{math.MaxInt / 2, math.MaxInt / 2, 10},
		{1 << 62, 1 << 62, 10},
		{math.MaxInt},
		{11},
		{5, 6},
	} {
		parts, err := SplitRows(d, counts)
		if err == nil || parts != nil {
			t.Errorf("SplitRows(%v) on 10 rows: got %d parts, err %v; want an error", counts, len(parts), err)
		}
	}
	for _, s := range []string{
		"rows:9223372036854775807,1",
		"rows:4611686018427387904,4611686018427387904,10",
		"rows:9223372036854775808",
	} {
		if spec, err := ParseSplit(s); err == nil {
			if _, err := spec.Apply(d, 1); err == nil {
				t.Errorf("%s on 10 rows accepted", s)
			}
		}
	}
	// The largest split that fits still works.
	parts, err := SplitRows(d, []int{4, 6})
	if err != nil || len(parts) != 2 || parts[0].Len() != 4 || parts[1].Len() != 6 {
		t.Fatalf("SplitRows(4,6) on 10 rows: %v, %v", parts, err)
	}
}

// FuzzSplit parses arbitrary --split arguments and applies the accepted ones
// to a small data set: never a panic, and every accepted split gives
// non-empty disjoint parts that fit in the data set.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{
		"0.7,0.15,0.15", "rows:10500,4500,5000", "rows:9223372036854775807,1",
		"rows:4611686018427387904,4611686018427387904,10", "1", "rows:3", "0.5,0.5,0",
		"rows:-1", "rows:", "NaN", "Inf,-Inf", "1e308,1e308", "rows:1,,2",
	} {
		f.Add(s, uint8(10), uint64(1))
	}
	f.Fuzz(func(t *testing.T, s string, n uint8, seed uint64) {
		spec, err := ParseSplit(s)
		if err != nil {
			return
		}
		if spec.Parts() == 0 {
			t.Fatalf("%q: accepted with no parts", s)
		}
		again, err := ParseSplit(spec.String())
		if err != nil || again.String() != spec.String() {
			t.Fatalf("%q: String %q does not parse back (%v)", s, spec.String(), err)
		}
		if n == 0 {
			return
		}
		d := seqData(int(n))
		parts, err := spec.Apply(d, seed)
		if err != nil {
			if parts != nil {
				t.Fatalf("%q: parts with error %v", s, err)
			}
			return
		}
		if len(parts) != spec.Parts() {
			t.Fatalf("%q: %d parts, want %d", s, len(parts), spec.Parts())
		}
		seen := make([]bool, n)
		for p, part := range parts {
			if part.Len() == 0 {
				t.Fatalf("%q: part %d empty", s, p)
			}
			for i := 0; i < part.Len(); i++ {
				row := int(part.X.At(i, 0))
				if seen[row] {
					t.Fatalf("%q: row %d in two parts", s, row)
				}
				seen[row] = true
			}
		}
	})
}
