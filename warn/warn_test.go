package warn

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestWarnings checks each warning's decision at its boundary: silent on
// one side, worded with the numbers on the other.
func TestWarnings(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  string
		want string // "" : no warning
	}{
		{"metric fine", DegenerateMetric(1e-3, 4), ""},
		{"metric NaN", DegenerateMetric(math.NaN(), 4), ""},
		{"metric zero", DegenerateMetric(0, 4), "the metric M (4×4) is zero (rank 0)"},
		{"metric tiny", DegenerateMetric(4e-320, 4), "numerically zero (trace 4e-320"},
		{"metric just normal enough", DegenerateMetric(1e-290, 4), ""},
		{"kernel zero", DegenerateKernel(0, 150), "the kernel on 150 points is zero"},
		{"kernel fine", DegenerateKernel(1, 150), ""},
		{"resubstitution all", Resubstitution(178, 178), "178 of the 178 evaluated rows are also rows of the k-NN reference"},
		{"resubstitution half", Resubstitution(5, 10), "5 of the 10"},
		{"a few duplicates", Resubstitution(4, 10), ""},
		{"no rows", Resubstitution(0, 0), ""},
		{"missing classes", MissingClasses("test", []string{"2"}, 40), "40 test rows have classes the training rows never have (class 2)"},
		{"no missing class", MissingClasses("test", nil, 0), ""},
		{"worse than Euclidean", WorseThanEuclidean("frobmetric", 0.30, 0.20, 26, "rows"), "frobmetric: the chosen model's validation error 30.00% is above the Euclidean metric's 20.00% on the same 26 validation rows"},
		{"equal to Euclidean", WorseThanEuclidean("frobmetric", 0.20, 0.20, 26, "rows"), ""},
		{"better than Euclidean", WorseThanEuclidean("frobmetric", 0.10, 0.20, 26, "rows"), ""},
		{"no validation error", WorseThanEuclidean("frobmetric", math.NaN(), 0.20, 26, "rows"), ""},
		{"no Euclidean error", WorseThanEuclidean("frobmetric", 0.30, math.NaN(), 26, "rows"), ""},
		{"many missing classes", MissingClasses("test", []string{"a", "b", "c", "d", "e", "f", "g"}, 70), "a, b, c, d, e, … (7 classes)"},
		{"unused rows", UnusedRows(90, 178), "uses 90 of the 178 rows: the last 88"},
		{"all rows", UnusedRows(178, 178), ""},
		{"gap above", GapAboveTolerance("DefiniteBoost", true, 0.109, 1.1e-9, "why"), "DefiniteBoost reports converged (why), but its duality gap 0.109 is above the tolerance 1.1e-09"},
		{"gap within", GapAboveTolerance("frobmetric", true, 1e-8, 1e-7, ""), ""},
		{"not converged", GapAboveTolerance("frobmetric", false, 1, 1e-7, ""), ""},
		{"no gap", GapAboveTolerance("meg", true, math.NaN(), 1e-7, ""), ""},
	} {
		switch {
		case tc.want == "" && tc.got != "":
			t.Errorf("%s: warned %q", tc.name, tc.got)
		case tc.want != "" && !strings.Contains(tc.got, tc.want):
			t.Errorf("%s: %q, want it to contain %q", tc.name, tc.got, tc.want)
		case strings.Contains(tc.got, "\n"):
			t.Errorf("%s: not one line: %q", tc.name, tc.got)
		}
	}
}

func ExampleUnusedRows() {
	fmt.Println(UnusedRows(90, 178))
	fmt.Printf("%q\n", UnusedRows(178, 178))
	// Output:
	// the split uses 90 of the 178 rows: the last 88 are in no part
	// ""
}

func TestBelowKMeans(t *testing.T) {
	for _, tc := range []struct {
		acc, km float64
		k, n    int
		want    []string // substrings; nil: no warning
	}{
		{0.8926, 0.9304, 5, 20000, []string{"0.8926 < 0.9304", "5-nearest-neighbour", "a larger k"}},
		{0.69, 0.83, 50, 990, []string{"0.6900 < 0.8300", "heat weights"}},
		{0.95, 0.90, 5, 150, nil},
		{0.90, 0.90, 5, 150, nil},
		{math.NaN(), 0.9, 5, 150, nil},
		{0.5, math.NaN(), 5, 150, nil},
	} {
		got := BelowKMeans(tc.acc, tc.km, tc.k, tc.n)
		if tc.want == nil {
			if got != "" {
				t.Errorf("%v vs %v: unexpected warning %q", tc.acc, tc.km, got)
			}
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%v vs %v: %q lacks %q", tc.acc, tc.km, got, w)
			}
		}
		if tc.k >= 50 && strings.Contains(got, "larger k") {
			t.Errorf("k = %d: still advises a larger k: %q", tc.k, got)
		}
	}
}

func TestUncoveredSpectrum(t *testing.T) {
	if w := UncoveredSpectrum(true, 64); w != "" {
		t.Errorf("covered: %q", w)
	}
	if w := UncoveredSpectrum(false, 256); !strings.Contains(w, "cap of 256") || !strings.Contains(w, "rank cap") {
		t.Errorf("not covered: %q", w)
	}
}
