package lapack

import (
	"slices"
	"testing"
)

func TestCoreFor(t *testing.T) {
	all := features{avx2: true, fma: true, avx512: true, avx512bf16: true}
	skx := features{avx2: true, fma: true, avx512: true}
	hsw := features{avx2: true, fma: true}
	for _, tc := range []struct {
		detected string
		f        features
		want     []string
	}{
		{"Prescott", all, []string{"Cooperlake", "SkylakeX", "Haswell"}},
		{"Prescott", skx, []string{"SkylakeX", "Haswell"}},
		{"Prescott", hsw, []string{"Haswell"}},
		{"Barcelona", hsw, []string{"Haswell"}},
		{"Nehalem", skx, []string{"SkylakeX", "Haswell"}},
		// No AVX2 (or the system does not save its registers): OpenBLAS's
		// choice stands, whatever it is.
		{"Prescott", features{avx2: true}, nil},
		{"Nehalem", features{}, nil},
		// A set with AVX is OpenBLAS's deliberate choice.
		{"Haswell", all, nil},
		{"SkylakeX", all, nil},
		{"Zen", skx, nil},
		{"Sandybridge", hsw, nil},
		{"", all, nil},
	} {
		if got := coreFor(tc.detected, tc.f); !slices.Equal(got, tc.want) {
			t.Errorf("coreFor(%q, %+v) = %q, want %q", tc.detected, tc.f, got, tc.want)
		}
	}
}
