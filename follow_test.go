package psdlearn_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/errs"
)

// TestAdaptiveGrid: the learner's list first, then one value beyond the
// edge where the validation optimum sits strictly, and nothing once the
// optimum is inside.
func TestAdaptiveGrid(t *testing.T) {
	start := []float64{0.1, 1, 10, 100}
	sc := func(v ...float64) []psdlearn.Score {
		var out []psdlearn.Score
		for i := 0; i+1 < len(v); i += 2 {
			out = append(out, psdlearn.Score{C: v[i], ValError: v[i+1]})
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		g      psdlearn.AdaptiveGrid
		scored []psdlearn.Score
		want   []float64
	}{
		{"first call", psdlearn.AdaptiveGrid{}, nil, start},
		{"interior optimum", psdlearn.AdaptiveGrid{}, sc(0.1, .3, 1, .2, 10, .25, 100, .3), nil},
		{"top edge", psdlearn.AdaptiveGrid{}, sc(0.1, .3, 1, .2, 10, .15, 100, .1), []float64{1000}},
		{"bottom edge", psdlearn.AdaptiveGrid{}, sc(0.1, .1, 1, .2, 10, .3, 100, .3), []float64{0.01}},
		{"step 2", psdlearn.AdaptiveGrid{Step: 2}, sc(0.1, .3, 1, .2, 10, .15, 100, .1), []float64{200}},
		{"one extension allowed, made", psdlearn.AdaptiveGrid{MaxExtend: 1}, sc(0.1, .3, 1, .2, 10, .15, 100, .1, 1000, .05), nil},
		{"no extension", psdlearn.AdaptiveGrid{MaxExtend: -1}, sc(0.1, .3, 1, .2, 10, .15, 100, .1), nil},
	} {
		if got := tc.g.Next(start, tc.scored); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Next = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// wineParts is the raw wine data cut 70/15/15 with seed 2.
func wineParts(t *testing.T) []*data.Dataset {
	t.Helper()
	parts, err := data.Split(open(t, "wine"), []float64{0.7, 0.15, 0.15}, 2)
	if err != nil {
		t.Fatal(err)
	}
	return parts
}

// runParts runs l on parts (train, validation, test) and accepts a model
// that did not converge.
func runParts(t *testing.T, l psdlearn.Learner, parts []*data.Dataset) *psdlearn.Result {
	t.Helper()
	r, err := psdlearn.Run(context.Background(), l, psdlearn.Data{X: parts[0].X, Y: parts[0].Y, Test: parts[2]})
	if err != nil && !(errors.Is(err, errs.ErrNotConverged) && r != nil) {
		t.Fatal(err)
	}
	return r
}

// TestFrobMetricCFollowsData: without C, FrobMetric's values of C follow
// the data. On the raw wine features, whose scales span 0.13 to 300 and
// which standardising makes far better for the Euclidean 3-NN, the list
// is joined by its multiples for the spread of the feature scales; on the
// standardised features it stays the default list. The search is
// recorded (CPolicy, Searched, the model's Info), the chosen model's
// certificate is the full one, and it is not worse than the Euclidean
// metric on the validation rows.
func TestFrobMetricCFollowsData(t *testing.T) {
	parts := wineParts(t)
	for _, std := range []bool{false, true} {
		r := runParts(t, psdlearn.FrobMetric{Common: psdlearn.Common{Standardize: std, Validation: parts[1], Seed: 2}}, parts)
		scaled := slices.ContainsFunc(r.Searched, func(c float64) bool { return c > 1e6 })
		if scaled == std || strings.Contains(r.CPolicy, "the spread of the feature scales") == std {
			t.Errorf("standardize %v: searched %v, policy %q", std, r.Searched, r.CPolicy)
		}
		for _, c := range psdlearn.DefaultFrobMetricC {
			if !slices.Contains(r.Searched, c) {
				t.Errorf("standardize %v: searched %v without the default %g", std, r.Searched, c)
			}
		}
		if !slices.Contains(r.Searched, r.ChosenC) || r.Model.Info["c_policy"] != r.CPolicy {
			t.Errorf("standardize %v: chose %g of %v; model info policy %v", std, r.ChosenC, r.Searched, r.Model.Info["c_policy"])
		}
		t.Logf("standardize %v: C = %g of %v (%s); validation %.4f, test %.4f", std, r.ChosenC, r.Searched, r.CPolicy, r.Eval.ValError, r.Eval.TestError)
		if !r.Certificate.Converged || !(r.DualityGap <= 1e-6) {
			t.Errorf("standardize %v: certificate %+v", std, r.Certificate)
		}
		if r.Eval.ValError > r.Eval.EuclideanValError || len(r.Warnings) > 0 {
			t.Errorf("standardize %v: validation error %.4f, Euclidean %.4f, warnings %q", std, r.Eval.ValError, r.Eval.EuclideanValError, r.Warnings)
		}
	}
}

// TestWorseThanEuclideanWarns runs FrobMetric on the raw wine features
// with a deliberately bad C (0.1: far too strong a regulariser for
// features whose scales span 0.13 to 300; the metric is then about the
// proline axis) and requires the result and the model's certificate to
// warn that its validation error is above the Euclidean one, with both
// errors reported.
func TestWorseThanEuclideanWarns(t *testing.T) {
	parts := wineParts(t)
	r := runParts(t, psdlearn.FrobMetric{Common: psdlearn.Common{Validation: parts[1], Seed: 2}, C: []float64{0.1}}, parts)
	if !(r.Eval.ValError > r.Eval.EuclideanValError) {
		t.Fatalf("C = 0.1: validation error %v not above the Euclidean %v: the test needs a worse model", r.Eval.ValError, r.Eval.EuclideanValError)
	}
	has := func(ws []string) bool {
		return slices.ContainsFunc(ws, func(w string) bool { return strings.Contains(w, "above the Euclidean") })
	}
	if !has(r.Warnings) || !has(r.Certificate.Warnings) || !has(r.Model.Certificate.Warnings) {
		t.Errorf("validation error %.4f above the Euclidean %.4f, warnings %q, model's %q", r.Eval.ValError, r.Eval.EuclideanValError, r.Warnings, r.Model.Certificate.Warnings)
	}
	if r.Model.Info["euclidean_val_error"] != r.Eval.EuclideanValError {
		t.Errorf("model info euclidean_val_error %v, want %v", r.Model.Info["euclidean_val_error"], r.Eval.EuclideanValError)
	}
}

// TestBoostMetricTermsFollowData: with validation rows and no iteration
// limit, BoostMetric chooses its terms on the validation rows (of every
// pass) and says so in its reason; the stage-wise model it keeps is at least as good there
// as the run of the same length without the choice (whose terms it holds,
// see boost's TestMonitor); a given limit keeps the algorithm's own stop.
func TestBoostMetricTermsFollowData(t *testing.T) {
	parts := wineParts(t)
	c := psdlearn.Common{Validation: parts[1], Seed: 2}
	for _, mode := range []boost.Mode{boost.Stagewise, boost.Corrective} {
		r := runParts(t, psdlearn.BoostMetric{Common: c, Mode: mode}, parts)
		if !strings.Contains(r.Certificate.Reason, "validation error") || !r.Certificate.Converged {
			t.Errorf("%v, default limit: converged %v, reason %q", mode, r.Certificate.Converged, r.Certificate.Reason)
		}
		given := runParts(t, psdlearn.BoostMetric{Common: c, Mode: mode, Iters: r.Iterations}, parts)
		if strings.Contains(given.Certificate.Reason, "validation") {
			t.Errorf("%v, given limit: reason %q", mode, given.Certificate.Reason)
		}
		if mode == boost.Stagewise && !(r.Eval.ValError <= given.Eval.ValError) {
			t.Errorf("%v: kept a model of validation error %v, the whole run's is %v", mode, r.Eval.ValError, given.Eval.ValError)
		}
		t.Logf("%v: %d iterations, validation %.4f (whole run %.4f): %s", mode, r.Iterations, r.Eval.ValError, given.Eval.ValError, r.Certificate.Reason)
	}
	r := runParts(t, psdlearn.BoostMetric{Common: c, Passes: 2}, parts)
	if !strings.Contains(r.Certificate.Reason, "pass 2: ") || !strings.Contains(r.Certificate.Reason, "validation error") {
		t.Errorf("two passes: reason %q", r.Certificate.Reason)
	}
}
