package train_test

import (
	"context"
	"sync"
	"testing"

	_ "github.com/psdlearn/psdlearn/algos/frob" // registers "frobmetric"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/train"
)

// TestConcurrentTrainingRace trains 10 metrics at once — mixed algorithms
// (stage-wise and corrective BoostMetric, PSDBoost, FrobMetric whole and by
// working sets), data sets
// and backends — and requires exactly (bitwise) the metrics and errors of
// sequential runs. Under -race it also proves that the algorithms and both
// backends share no mutable state.
func TestConcurrentTrainingRace(t *testing.T) {
	type job struct {
		algo, data string
		backend    string
		opts       train.Options
	}
	var jobs []job
	for _, b := range engine.Names() {
		jobs = append(jobs,
			job{"boostmetric", "iris", b, train.Options{Loss: "exp", Mode: "stagewise", Iters: 30}},
			job{"boostmetric", "wine", b, train.Options{Loss: "logistic", Mode: "corrective", Iters: 10}},
			job{"psdboost", "iris", b, train.Options{C: []float64{20}, Iters: 30}},
			job{"frobmetric", "wine", b, train.Options{C: []float64{1}}},
			job{"frobmetric", "wine", b, train.Options{C: []float64{10}, WorkingSet: "on"}},
		)
	}
	exps := make([]train.Experiment, len(jobs))
	for i, j := range jobs {
		d, err := datasets.Open(j.data)
		if err != nil {
			t.Fatal(err)
		}
		parts, err := data.Split(d, []float64{0.7, 0.15, 0.15}, uint64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		b, err := engine.Get(j.backend)
		if err != nil {
			t.Fatal(err)
		}
		exps[i] = train.Experiment{Algo: j.algo, Train: parts[0], Val: parts[1], Test: parts[2], Standardize: true, Seed: 7, Backend: b, Options: j.opts}
	}
	run := func(i int) (*train.Report, error) { return train.RunExperiment(context.Background(), exps[i]) }
	want := make([]*train.Report, len(jobs))
	for i := range jobs {
		var err error
		if want[i], err = run(i); err != nil {
			t.Fatalf("%s on %s (%s): %v", jobs[i].algo, jobs[i].data, jobs[i].backend, err)
		}
	}
	got := make([]*train.Report, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i := range jobs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			got[i], errs[i] = run(i)
		}(i)
	}
	wg.Wait()
	for i, j := range jobs {
		if errs[i] != nil {
			t.Fatalf("%s on %s (%s), concurrent: %v", j.algo, j.data, j.backend, errs[i])
		}
		g, w := got[i], want[i]
		if g.TestError != w.TestError || g.Iterations != w.Iterations || g.Objective != w.Objective {
			t.Errorf("%s on %s (%s): concurrent test error %v, %d iterations, objective %v; sequential %v, %d, %v",
				j.algo, j.data, j.backend, g.TestError, g.Iterations, g.Objective, w.TestError, w.Iterations, w.Objective)
		}
		gm, wm := g.Metric.M.RawSymmetric().Data, w.Metric.M.RawSymmetric().Data
		for k := range gm {
			if gm[k] != wm[k] {
				t.Errorf("%s on %s (%s): metric entry %d differs: concurrent %v, sequential %v", j.algo, j.data, j.backend, k, gm[k], wm[k])
				break
			}
		}
	}
}
