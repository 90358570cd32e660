package reliability

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/algos/frob"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine"
	"gonum.org/v1/gonum/mat"
)

// TestSharedInputsConcurrentRace shares ONE data matrix and ONE triplet set
// among 8 concurrent trainers — BoostMetric (exponential and logistic,
// stage-wise and totally corrective), PSDBoost and FrobMetric (whole and by
// working sets) on both backends — and requires bitwise the results of
// running them one after the other. Training several settings on shared
// inputs is the obvious way to use both cores; under -race it proves the
// inputs are only read.
func TestSharedInputsConcurrentRace(t *testing.T) {
	d, err := datasets.Open("wine")
	if err != nil {
		t.Fatal(err)
	}
	std, err := data.Standardize(d)
	if err != nil {
		t.Fatal(err)
	}
	x := std[0].X
	ts, err := constraints.Triplets(x, d.Y, 3)
	if err != nil {
		t.Fatal(err)
	}
	type trainer struct {
		name string
		run  func(engine.Backend) ([]float64, float64, error) // metric entries, objective
	}
	metricOf := func(v *mat.Dense, w []float64) []float64 {
		_, dim := x.Dims()
		m := mat.NewSymDense(dim, nil)
		for j, wj := range w {
			m.SymRankOne(m, wj, v.ColView(j))
		}
		return append([]float64(nil), m.RawSymmetric().Data...)
	}
	boosted := func(opt boost.Options, psd bool) func(engine.Backend) ([]float64, float64, error) {
		return func(b engine.Backend) ([]float64, float64, error) {
			opt.Backend = b
			var res *boost.Result
			var err error
			if psd {
				res, err = boost.PSDBoost(context.Background(), x, ts, opt)
			} else {
				res, err = boost.BoostMetric(context.Background(), x, ts, opt)
			}
			if err != nil {
				return nil, 0, err
			}
			return metricOf(res.V, res.W), res.Objective, nil
		}
	}
	frobbed := func(opt frob.MetricOptions) func(engine.Backend) ([]float64, float64, error) {
		return func(b engine.Backend) ([]float64, float64, error) {
			opt.Backend = b
			res, err := frob.Learn(context.Background(), x, ts, opt)
			if err != nil {
				return nil, 0, err
			}
			return append([]float64(nil), res.M.RawSymmetric().Data...), res.Primal, nil
		}
	}
	trainers := []trainer{
		{"boostmetric exp stage-wise", boosted(boost.Options{Loss: boost.Exp, Mode: boost.Stagewise, Iters: 40}, false)},
		{"boostmetric logistic stage-wise", boosted(boost.Options{Loss: boost.Logistic, Mode: boost.Stagewise, Iters: 40}, false)},
		{"boostmetric exp corrective", boosted(boost.Options{Loss: boost.Exp, Mode: boost.Corrective, Iters: 10}, false)},
		{"psdboost", boosted(boost.Options{C: 0.05, Iters: 20}, true)},
		{"frobmetric C=1", frobbed(frob.MetricOptions{C: 1})},
		{"frobmetric C=10 working set", frobbed(frob.MetricOptions{C: 10, WorkingSet: frob.WorkingSetOn})},
		{"frobmetric C=100", frobbed(frob.MetricOptions{C: 100})},
		{"boostmetric exp stage-wise (again)", boosted(boost.Options{Loss: boost.Exp, Mode: boost.Stagewise, Iters: 40}, false)},
	}
	for _, b := range backendsOf(t) {
		t.Run(b.Name(), func(t *testing.T) {
			type out struct {
				m   []float64
				obj float64
				err error
			}
			want := make([]out, len(trainers))
			for i, tr := range trainers {
				m, obj, err := tr.run(b)
				if err != nil {
					t.Fatalf("%s: %v", tr.name, err)
				}
				want[i] = out{m, obj, nil}
			}
			got := make([]out, len(trainers))
			var wg sync.WaitGroup
			for i, tr := range trainers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					m, obj, err := tr.run(b)
					got[i] = out{m, obj, err}
				}()
			}
			wg.Wait()
			for i, tr := range trainers {
				if got[i].err != nil {
					t.Fatalf("%s, concurrent: %v", tr.name, got[i].err)
				}
				if got[i].obj != want[i].obj {
					t.Errorf("%s: concurrent objective %v, sequential %v", tr.name, got[i].obj, want[i].obj)
				}
				if fmt.Sprint(got[i].m) != fmt.Sprint(want[i].m) {
					t.Errorf("%s: concurrent metric differs from the sequential one", tr.name)
				}
			}
		})
	}
}
