package train_test

import (
	"context"
	"math"
	"strings"
	"testing"

	_ "github.com/psdlearn/psdlearn/algos/boost" // registers boostmetric, psdboost
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/train"
)

// TestReportCertificate runs every trainer twice on iris — with its
// defaults, and capped at 2 iterations — and requires the report to say
// whether the model is certified: converged with no warnings in the first
// case, not converged with a warning naming the cap in the second. The
// phase breakdown has one timed solve per C tried, inside the training time.
func TestReportCertificate(t *testing.T) {
	d, err := datasets.Open("iris")
	if err != nil {
		t.Fatal(err)
	}
	parts, err := data.Split(d, []float64{0.7, 0.15, 0.15}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		algo   string
		opts   train.Options
		solves int
	}{
		// Two candidates and the chosen one solved to the certificate.
		{"frobmetric", train.Options{C: []float64{1, 10}}, 3},
		{"boostmetric", train.Options{}, 1},
		{"psdboost", train.Options{C: []float64{20}}, 1},
	} {
		for _, capped := range []bool{false, true} {
			opts := tc.opts
			if capped {
				opts.Iters = 2
			}
			rep, err := train.RunExperiment(context.Background(), train.Experiment{
				Algo: tc.algo, Train: parts[0], Val: parts[1], Test: parts[2], Standardize: true, Seed: 1, Options: opts,
			})
			if err != nil {
				t.Fatalf("%s capped=%v: %v", tc.algo, capped, err)
			}
			if rep.Converged == capped {
				t.Errorf("%s capped=%v: converged %v (%s)", tc.algo, capped, rep.Converged, rep.Reason)
			}
			if capped != (len(rep.Warnings) > 0) {
				t.Errorf("%s capped=%v: warnings %q", tc.algo, capped, rep.Warnings)
			}
			for _, w := range rep.Warnings {
				// A capped model may also be worse than the Euclidean
				// metric on the validation rows, which is said too.
				if strings.Contains(w, "above the Euclidean") {
					continue
				}
				if !strings.Contains(w, "iteration limit") || !strings.HasPrefix(w, tc.algo) {
					t.Errorf("%s: warning %q does not name the algorithm and the cap", tc.algo, w)
				}
			}
			ph := rep.Phases
			if len(ph.Solves) != tc.solves {
				t.Fatalf("%s: %d solves, want %d", tc.algo, len(ph.Solves), tc.solves)
			}
			var sum float64
			for _, s := range ph.Solves {
				if !(s.Seconds > 0) || (capped && (s.Converged || s.Iterations > 2)) {
					t.Errorf("%s capped=%v: solve %+v", tc.algo, capped, s)
				}
				sum += s.Seconds
			}
			if sum > ph.Train || !(ph.Triplets > 0) || !(ph.Evaluation > 0) || !(ph.Preprocess > 0) {
				t.Errorf("%s: phases %+v", tc.algo, ph)
			}
			if tc.algo == "frobmetric" && rep.GapTol != 1e-7 {
				t.Errorf("frobmetric gap tolerance %g", rep.GapTol)
			}
			if tc.algo == "boostmetric" && !math.IsNaN(rep.GapTol) {
				t.Errorf("boostmetric reports a gap tolerance %g", rep.GapTol)
			}
		}
	}
}

// TestNegativeItersRejected: a negative iteration limit is an error for
// every trainer, never a "converged, gap 0" report.
func TestNegativeItersRejected(t *testing.T) {
	d, err := datasets.Open("iris")
	if err != nil {
		t.Fatal(err)
	}
	parts, err := data.Split(d, []float64{0.7, 0.15, 0.15}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, algo := range []string{"frobmetric", "boostmetric", "psdboost"} {
		rep, err := train.RunExperiment(context.Background(), train.Experiment{
			Algo: algo, Train: parts[0], Val: parts[1], Test: parts[2], Options: train.Options{Iters: -1, C: []float64{1}},
		})
		if algo == "boostmetric" {
			rep, err = train.RunExperiment(context.Background(), train.Experiment{
				Algo: algo, Train: parts[0], Val: parts[1], Test: parts[2], Options: train.Options{Iters: -1},
			})
		}
		if err == nil || rep != nil {
			t.Errorf("%s --iters -1: report %v, error %v", algo, rep, err)
		}
	}
}
