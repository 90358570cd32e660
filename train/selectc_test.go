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

func TestSelectCFolds(t *testing.T) {
	errStop := errors.New("stop")
	for _, tc := range []struct {
		name     string
		cs       []float64
		folds    int
		errs     [][]float64 // errs[fold][i]: the error of cs[i] on the fold
		fail     [2]int      // valErr fails at (fold, index) when fail[0] ≥ 0
		wantC    float64
		wantMean []float64
		wantErr  bool
	}{
		{"mean over folds", []float64{1, 10, 100}, 2, [][]float64{{0.2, 0.1, 0.3}, {0.2, 0.3, 0.0}}, [2]int{-1}, 100, []float64{0.2, 0.2, 0.15}, false},
		{"equal means: the first", []float64{1, 10}, 3, [][]float64{{0.1, 0.2}, {0.2, 0.1}, {0.3, 0.3}}, [2]int{-1}, 1, []float64{0.2, 0.2}, false},
		{"one fold is a validation set", []float64{0.5, 5}, 1, [][]float64{{0.4, 0.3}}, [2]int{-1}, 5, []float64{0.4, 0.3}, false},
		{"error stops", []float64{1, 10}, 2, [][]float64{{0.1, 0.2}, {0.2, 0.1}}, [2]int{1, 0}, math.NaN(), nil, true},
		{"NaN error", []float64{1, 10}, 2, [][]float64{{0.1, math.NaN()}, {0.2, 0.1}}, [2]int{-1}, math.NaN(), nil, true},
		{"no folds", []float64{1}, 0, nil, [2]int{-1}, math.NaN(), nil, true},
		{"no values", nil, 2, nil, [2]int{-1}, math.NaN(), nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls [][2]int
			c, mean, err := SelectCFolds(tc.cs, tc.folds, func(f int, c float64) (float64, error) {
				i := -1
				for j, v := range tc.cs {
					if v == c {
						i = j
					}
				}
				calls = append(calls, [2]int{f, i})
				if tc.fail[0] == f && tc.fail[1] == i {
					return 0, errStop
				}
				return tc.errs[f][i], nil
			})
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if tc.fail[0] >= 0 && !errors.Is(err, errStop) {
				t.Errorf("err %v, want the fit's error", err)
			}
			if tc.wantErr {
				return
			}
			if c != tc.wantC || len(mean) != len(tc.wantMean) {
				t.Fatalf("C %v, means %v; want %v, %v", c, mean, tc.wantC, tc.wantMean)
			}
			for i := range mean {
				if math.Abs(mean[i]-tc.wantMean[i]) > 1e-15 {
					t.Errorf("means %v, want %v", mean, tc.wantMean)
				}
			}
			for n, call := range calls { // fold by fold, every C in order
				if call != [2]int{n / len(tc.cs), n % len(tc.cs)} {
					t.Fatalf("calls %v, want fold by fold", calls)
				}
			}
		})
	}
}
