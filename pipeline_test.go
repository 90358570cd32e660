package psdlearn_test

import (
	"context"
	"errors"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/algos/frob"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/model"
)

// runSplit runs l on a train/validation/test split and accepts a capped
// solve (its model comes with an error matching errs.ErrNotConverged).
func runSplit(t *testing.T, l psdlearn.Learner, parts []*data.Dataset) *psdlearn.Result {
	t.Helper()
	r, err := psdlearn.Run(context.Background(), l, psdlearn.Data{X: parts[0].X, Y: parts[0].Y, Test: parts[2]})
	if err != nil && !(errors.Is(err, errs.ErrNotConverged) && r != nil && !r.Certificate.Converged) {
		t.Fatalf("%s: %v", l.Name(), err)
	}
	return r
}

// TestResultCertificate runs learners twice on iris — with their defaults,
// and capped at 2 iterations — and requires the result to say whether the
// model is certified: converged with no warnings in the first case, not
// converged with a warning naming the cap in the second. The phase
// breakdown has one timed solve per C tried (and FrobMetric's chosen C
// solved again to the certificate), inside the training time.
func TestResultCertificate(t *testing.T) {
	parts, err := data.Split(open(t, "iris"), []float64{0.7, 0.15, 0.15}, 1)
	if err != nil {
		t.Fatal(err)
	}
	c := psdlearn.Common{Standardize: true, Seed: 1, Validation: parts[1]}
	for _, tc := range []struct {
		l      func(iters int) psdlearn.Learner
		solves int
	}{
		// Two candidates, and the chosen one solved to the certificate.
		{func(it int) psdlearn.Learner { return psdlearn.FrobMetric{Common: c, C: []float64{1, 10}, Iters: it} }, 3},
		{func(it int) psdlearn.Learner { return psdlearn.BoostMetric{Common: c, Iters: it} }, 1},
		{func(it int) psdlearn.Learner { return psdlearn.PSDBoost{Common: c, C: []float64{20}, Iters: it} }, 1},
	} {
		for _, capped := range []bool{false, true} {
			iters := 0
			if capped {
				iters = 2
			}
			l := tc.l(iters)
			rep := runSplit(t, l, parts)
			algo := l.Name()
			if rep.Certificate.Converged == capped || rep.Model.Certificate.Converged != rep.Certificate.Converged {
				t.Errorf("%s capped=%v: converged %v (%s)", algo, capped, rep.Certificate.Converged, rep.Certificate.Reason)
			}
			if capped != (len(rep.Warnings) > 0) {
				t.Errorf("%s capped=%v: warnings %q", algo, capped, rep.Warnings)
			}
			for _, w := range rep.Warnings {
				// A capped model may also be worse than the Euclidean
				// metric on the validation rows, which is said too.
				if capped && strings.Contains(w, "above the Euclidean") {
					continue
				}
				if !strings.Contains(w, "iteration limit") || !strings.HasPrefix(w, algo) {
					t.Errorf("%s: warning %q does not name the algorithm and the cap", algo, w)
				}
			}
			ph := rep.Phases
			if len(ph.Solves) != tc.solves {
				t.Fatalf("%s: %d solves, want %d", algo, len(ph.Solves), tc.solves)
			}
			var sum float64
			for _, s := range ph.Solves {
				if !(s.Seconds > 0) || (capped && (s.Converged || s.Iterations > 2)) {
					t.Errorf("%s capped=%v: solve %+v", algo, capped, s)
				}
				sum += s.Seconds
			}
			if sum > ph.Train || !(ph.Triplets > 0) || !(ph.Evaluation > 0) || !(ph.Preprocess > 0) {
				t.Errorf("%s: phases %+v", algo, ph)
			}
			if algo == "frobmetric" && rep.Certificate.Tolerance != frob.DefaultGapTol {
				t.Errorf("frobmetric gap tolerance %g", rep.Certificate.Tolerance)
			}
			if algo == "boostmetric" && !math.IsNaN(rep.Certificate.Tolerance) {
				t.Errorf("boostmetric reports a gap tolerance %g", rep.Certificate.Tolerance)
			}
		}
	}
	// A negative iteration limit is an error, never a "converged" result.
	for _, l := range []psdlearn.Learner{psdlearn.FrobMetric{Iters: -1}, psdlearn.BoostMetric{Iters: -1}, psdlearn.PSDBoost{Iters: -1}} {
		r, err := psdlearn.Run(context.Background(), l, psdlearn.Data{X: parts[0].X, Y: parts[0].Y})
		if !errors.Is(err, errs.ErrInvalid) || r != nil {
			t.Errorf("%s Iters -1: result %v, error %v", l.Name(), r, err)
		}
	}
}

// TestConcurrentRunsRace runs 10 pipelines at once — mixed algorithms
// (stage-wise and corrective BoostMetric, PSDBoost, FrobMetric whole and by
// working sets), data sets and backends — and requires exactly (bitwise)
// the metrics and errors of sequential runs. Under -race it also proves
// that the pipeline, the algorithms and both backends share no mutable
// state.
func TestConcurrentRunsRace(t *testing.T) {
	type job struct {
		data    string
		backend string
		l       func(psdlearn.Common) psdlearn.Learner
	}
	var jobs []job
	for _, b := range engine.Names() {
		jobs = append(jobs,
			job{"iris", b, func(c psdlearn.Common) psdlearn.Learner { return psdlearn.BoostMetric{Common: c, Iters: 30} }},
			job{"wine", b, func(c psdlearn.Common) psdlearn.Learner {
				return psdlearn.BoostMetric{Common: c, Loss: boost.Logistic, Mode: boost.Corrective, Iters: 10}
			}},
			job{"iris", b, func(c psdlearn.Common) psdlearn.Learner {
				return psdlearn.PSDBoost{Common: c, C: []float64{20}, Iters: 30}
			}},
			job{"wine", b, func(c psdlearn.Common) psdlearn.Learner { return psdlearn.FrobMetric{Common: c, C: []float64{1}} }},
			job{"wine", b, func(c psdlearn.Common) psdlearn.Learner {
				return psdlearn.FrobMetric{Common: c, C: []float64{10}, WorkingSet: frob.WorkingSetOn}
			}},
		)
	}
	type prepared struct {
		l     psdlearn.Learner
		parts []*data.Dataset
	}
	runs := make([]prepared, len(jobs))
	for i, j := range jobs {
		parts, err := data.Split(open(t, j.data), []float64{0.7, 0.15, 0.15}, uint64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		b, err := engine.Get(j.backend)
		if err != nil {
			t.Fatal(err)
		}
		runs[i] = prepared{j.l(psdlearn.Common{Standardize: true, Seed: 7, Backend: b, Validation: parts[1]}), parts}
	}
	want := make([]*psdlearn.Result, len(jobs))
	for i := range jobs {
		want[i] = runSplit(t, runs[i].l, runs[i].parts)
	}
	got := make([]*psdlearn.Result, len(jobs))
	var wg sync.WaitGroup
	for i := range jobs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			got[i], _ = psdlearn.Run(context.Background(), runs[i].l, psdlearn.Data{X: runs[i].parts[0].X, Y: runs[i].parts[0].Y, Test: runs[i].parts[2]})
		}(i)
	}
	wg.Wait()
	for i, j := range jobs {
		g, w := got[i], want[i]
		if g == nil {
			t.Fatalf("%s on %s (%s), concurrent: no result", w.Algorithm, j.data, j.backend)
		}
		if g.Eval.TestError != w.Eval.TestError || g.Iterations != w.Iterations || g.Objective != w.Objective {
			t.Errorf("%s on %s (%s): concurrent test error %v, %d iterations, objective %v; sequential %v, %d, %v",
				w.Algorithm, j.data, j.backend, g.Eval.TestError, g.Iterations, g.Objective, w.Eval.TestError, w.Iterations, w.Objective)
		}
		gm, wm := g.Model.Metric.M.RawSymmetric().Data, w.Model.Metric.M.RawSymmetric().Data
		for k := range gm {
			if gm[k] != wm[k] {
				t.Errorf("%s on %s (%s): metric entry %d differs: concurrent %v, sequential %v", w.Algorithm, j.data, j.backend, k, gm[k], wm[k])
				break
			}
		}
	}
}

// TestResultProvenance checks the provenance Run records in the model: the
// backend, seed and split of the run and the data set as read before the
// split (its hash included), a separate test set, or the training rows
// when the caller gives no source.
func TestResultProvenance(t *testing.T) {
	d := open(t, "iris")
	spec, _ := data.ParseSplit("0.7,0.15,0.15")
	parts, err := spec.Apply(d, 5)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := engine.Get("go")
	l := psdlearn.BoostMetric{Common: psdlearn.Common{Standardize: true, Seed: 5, Backend: b, Validation: parts[1]}, Iters: 3}
	in := psdlearn.Data{X: parts[0].X, Y: parts[0].Y, Test: parts[2], Source: &psdlearn.Source{Name: "builtin:iris", Data: d, Split: spec.String()}}
	before := time.Now().UTC().Add(-time.Second)
	run := func() *model.Provenance {
		r, err := psdlearn.Run(context.Background(), l, in)
		if r == nil {
			t.Fatal(err)
		}
		return r.Model.Provenance
	}
	p := run()
	want := model.DataInfo{Name: "builtin:iris", Rows: 150, Features: 4, SHA256: model.DataSHA256(d.X, d.Y, d.Classes)}
	if p.Backend != "go" || p.Seed != 5 || p.Split != "0.7,0.15,0.15" || p.Data == nil || *p.Data != want || p.Test != nil {
		t.Errorf("provenance %+v, data %+v", p, p.Data)
	}
	if p.Module == "" || p.GoVersion != runtime.Version() || p.Created.Before(before) || p.Created.After(time.Now().UTC()) {
		t.Errorf("provenance versions and time: %+v", p)
	}
	// A separate test set, and no source at all.
	in.Source = &psdlearn.Source{Name: "train.csv", Data: d, Split: "0.8,0.2", TestName: "test.csv", Test: parts[2]}
	if p := run(); p.Test == nil || p.Test.Name != "test.csv" || p.Test.Rows != parts[2].Len() || p.Data.Name != "train.csv" || p.Split != "0.8,0.2" {
		t.Errorf("with a test set: %+v %+v", p, p.Test)
	}
	in.Source = nil
	if p := run(); p.Split != "" || p.Data.Rows != parts[0].Len() || p.Data.SHA256 != model.DataSHA256(parts[0].X, parts[0].Y, nil) {
		t.Errorf("without a source: %+v %+v", p, p.Data)
	}
}
