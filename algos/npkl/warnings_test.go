package npkl

import (
	"math"
	"strings"
	"testing"
)

func TestBaselineWarning(t *testing.T) {
	for _, tc := range []struct {
		acc, km float64
		k, n    int
		want    []string // substrings; nil: no warning
	}{
		{0.8926, 0.9304, 5, 20000, []string{"0.8926 < 0.9304", "5-nearest-neighbour", "a larger --k"}},
		{0.69, 0.83, 50, 990, []string{"0.6900 < 0.8300", "--weight heat"}},
		{0.95, 0.90, 5, 150, nil},
		{0.90, 0.90, 5, 150, nil},
		{math.NaN(), 0.9, 5, 150, nil},
		{0.5, math.NaN(), 5, 150, nil},
	} {
		got := BaselineWarning(tc.acc, tc.km, tc.k, tc.n)
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
		if tc.k >= 50 && strings.Contains(got, "larger --k") {
			t.Errorf("k = %d: still advises a larger k: %q", tc.k, got)
		}
	}
}

func TestSpectrumWarning(t *testing.T) {
	if w := SpectrumWarning(true, 64); w != "" {
		t.Errorf("covered: %q", w)
	}
	if w := SpectrumWarning(false, 256); !strings.Contains(w, "cap of 256") || !strings.Contains(w, "--max-rank") {
		t.Errorf("not covered: %q", w)
	}
}
