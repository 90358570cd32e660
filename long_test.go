package psdlearn_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/errs"
	"gonum.org/v1/gonum/stat"
)

// The experiments of the paper's Table 1 take minutes: they run only with
// PSDLEARN_LONG=1 (go test -run Long -timeout 2h .).
func longOnly(t *testing.T) {
	if os.Getenv("PSDLEARN_LONG") == "" {
		t.Skip("set PSDLEARN_LONG=1 to run")
	}
}

// runProtocol runs l on the train, validation and test parts (k = 3
// triplets, C chosen on the validation rows, preprocessing as l's Common
// says).
func runProtocol(t *testing.T, l psdlearn.Learner, parts []*data.Dataset) *psdlearn.Result {
	r, err := psdlearn.Run(context.Background(), l, psdlearn.Data{X: parts[0].X, Y: parts[0].Y, Test: parts[2]})
	if err != nil && !(errors.Is(err, errs.ErrNotConverged) && r != nil) {
		t.Fatalf("%s: %v", l.Name(), err)
	}
	return r
}

// TestLongLetters is the letters experiment: fixed split (first 10,500 rows
// train, next 4,500 validation, last 5,000 test), standardised, k = 3
// triplets, C chosen on the validation rows. Among the fixed list
// DefaultFrobMetricC (the list the reference figure was measured on) the
// test error is at most 2.84%; with the default, which follows the data
// (here: the list extended beyond its top edge), it is at most 3.08%, the
// bound FrobMetric's letters figure must keep.
func TestLongLetters(t *testing.T) {
	longOnly(t)
	parts, err := data.SplitRows(open(t, "letters"), []int{10500, 4500, 5000})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		c    []float64
		want float64
	}{
		{"fixed list", psdlearn.DefaultFrobMetricC, 0.0284},
		{"default", nil, 0.0308},
	} {
		start := time.Now()
		r := runProtocol(t, psdlearn.FrobMetric{Common: psdlearn.Common{Standardize: true, Validation: parts[1]}, C: tc.c}, parts)
		t.Logf("letters, %s (%s backend, %d triplets): Euclidean 3-NN test error %.2f%%; FrobMetric C=%g (validation %.2f%%): test %.2f%%, rel. duality gap %.3g, %v for C in %v (validation errors %v)",
			tc.name, r.Backend, r.Triplets, 100*r.Eval.EuclideanTestError, r.ChosenC, 100*r.Eval.ValError, 100*r.Eval.TestError, r.DualityGap, time.Since(start).Round(time.Second), r.Searched, r.Scores)
		if r.Eval.TestError > tc.want {
			t.Errorf("%s: test error %.2f%%, want ≤ %.2f%%", tc.name, 100*r.Eval.TestError, 100*tc.want)
		}
		if !(r.DualityGap <= 1e-6) {
			t.Errorf("%s: relative duality gap %.3g", tc.name, r.DualityGap)
		}
	}
}

// TestLongSmallSets is the UCI part of Table 1: 10 seeded 70/15/15 splits
// of each set, standardised, 3-NN test error mean (sd) of Euclidean,
// BoostMetric, FrobMetric, LMNN and ITML (C chosen on the validation
// rows). It reports; it asserts only FrobMetric's duality gaps.
func TestLongSmallSets(t *testing.T) {
	longOnly(t)
	smallSets(t, true)
}

// TestLongSmallSetsRaw is TestLongSmallSets on the raw features (the
// papers' protocol: no standardisation), FrobMetric's C following the
// data.
func TestLongSmallSetsRaw(t *testing.T) {
	longOnly(t)
	smallSets(t, false)
}

// TestLongRawWine is the acceptance figure of FrobMetric's default C on
// the papers' protocol: the raw wine features, 10 seeded 70/15/15 splits
// (as psdlearn train --algo frobmetric --data builtin:wine --split
// 0.7,0.15,0.15 --seed S), mean 3-NN test error at most 5.3% — the paper's
// 3.85% plus one standard error of its 10 runs (4.44/√10). The fixed list
// {0.1, 1, 10, 100} gives 26.7% here.
func TestLongRawWine(t *testing.T) {
	longOnly(t)
	d := open(t, "wine")
	var errs []float64
	for seed := uint64(1); seed <= 10; seed++ {
		parts, err := data.Split(d, []float64{0.7, 0.15, 0.15}, seed)
		if err != nil {
			t.Fatal(err)
		}
		r := runProtocol(t, psdlearn.FrobMetric{Common: psdlearn.Common{Validation: parts[1], Seed: seed}}, parts)
		if !r.Certificate.Converged || len(r.Warnings) > 0 {
			t.Errorf("seed %d: converged %v, warnings %q", seed, r.Certificate.Converged, r.Warnings)
		}
		errs = append(errs, 100*r.Eval.TestError)
	}
	m, s := stat.MeanStdDev(errs, nil)
	t.Logf("raw wine, FrobMetric with the default C: %.2f (%.2f) over 10 splits: %v", m, s, errs)
	if m > 5.3 {
		t.Errorf("mean test error %.2f%%, want ≤ 5.3%%", m)
	}
}

// smallSets runs the UCI part of the papers' Table 1, standardised or on
// the raw features, and logs the table.
func smallSets(t *testing.T, standardize bool) {
	var table strings.Builder
	fmt.Fprintf(&table, "\n%-11s %-16s %-16s %-16s %-16s %-16s %s\n", "set", "Euclidean", "BoostMetric", "FrobMetric", "LMNN", "ITML", "FrobMetric C chosen")
	for _, name := range []string{"iris", "wine", "glass", "vowel", "vehicle", "sonar", "ionosphere"} {
		d := open(t, name)
		var eu, bm, fm, lm, it []float64
		var chosen []string
		for seed := uint64(1); seed <= 10; seed++ {
			parts, err := data.Split(d, []float64{0.7, 0.15, 0.15}, seed)
			if err != nil {
				t.Fatal(err)
			}
			c := psdlearn.Common{Standardize: standardize, Validation: parts[1]}
			r := runProtocol(t, psdlearn.BoostMetric{Common: c}, parts)
			eu, bm = append(eu, 100*r.Eval.EuclideanTestError), append(bm, 100*r.Eval.TestError)
			r = runProtocol(t, psdlearn.FrobMetric{Common: c}, parts)
			fm, chosen = append(fm, 100*r.Eval.TestError), append(chosen, fmt.Sprint(r.ChosenC))
			if !(r.DualityGap <= 1e-6) {
				t.Errorf("%s seed %d: relative duality gap %.3g", name, seed, r.DualityGap)
			}
			lm = append(lm, 100*runProtocol(t, psdlearn.LMNN{Common: c}, parts).Eval.TestError)
			it = append(it, 100*runProtocol(t, psdlearn.ITML{Common: c}, parts).Eval.TestError)
		}
		ms := func(v []float64) string {
			m, s := stat.MeanStdDev(v, nil)
			return fmt.Sprintf("%5.2f (%5.2f)", m, s)
		}
		fmt.Fprintf(&table, "%-11s %-16s %-16s %-16s %-16s %-16s %s\n", name, ms(eu), ms(bm), ms(fm), ms(lm), ms(it), strings.Join(chosen, ","))
	}
	t.Log(table.String())
}
