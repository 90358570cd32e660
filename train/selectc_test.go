package train

import (
	"errors"
	"math"
	"testing"
)

func TestSelectC(t *testing.T) {
	errStop := errors.New("stop")
	type fit struct {
		val float64
		err error
	}
	for _, tc := range []struct {
		name     string
		fits     map[float64]fit
		cs       []float64
		wantC    float64
		wantErr  error
		wantBest string
	}{
		{"lowest error", map[float64]fit{1: {0.3, nil}, 10: {0.1, nil}, 100: {0.2, nil}}, []float64{1, 10, 100}, 10, nil, "m10"},
		{"first of equals", map[float64]fit{1: {0.1, nil}, 10: {0.1, nil}}, []float64{1, 10}, 1, nil, "m1"},
		{"no validation: the first", map[float64]fit{5: {math.NaN(), nil}, 6: {math.NaN(), nil}}, []float64{5, 6}, 5, nil, "m5"},
		{"error keeps the best so far", map[float64]fit{1: {0.2, nil}, 10: {0.1, errStop}}, []float64{1, 10}, 1, errStop, "m1"},
		{"error first returns its model", map[float64]fit{1: {0, errStop}}, []float64{1}, 1, errStop, "m1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			best, c, _, err := SelectC(tc.cs, func(c float64) (string, float64, error) {
				calls++
				f := tc.fits[c]
				return "m" + map[float64]string{1: "1", 5: "5", 6: "6", 10: "10", 100: "100"}[c], f.val, f.err
			})
			if best != tc.wantBest || c != tc.wantC || !errors.Is(err, tc.wantErr) && !(err == nil && tc.wantErr == nil) {
				t.Errorf("got (%q, C %v, %v), want (%q, C %v, %v)", best, c, err, tc.wantBest, tc.wantC, tc.wantErr)
			}
			if tc.wantErr != nil && calls != len(tc.cs) {
				t.Errorf("%d fits after an error at the last C, want %d", calls, len(tc.cs))
			}
		})
	}
}
