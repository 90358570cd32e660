package reliability

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/algos/frob"
	"github.com/psdlearn/psdlearn/algos/lmnn"
	"github.com/psdlearn/psdlearn/algos/meg"
	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/model"
	"gonum.org/v1/gonum/mat"
)

// expect says what a case must do: fail with an error, or (for degenerate
// but valid input) either fail cleanly or succeed with finite numbers.
type expect int

const (
	wantError expect = iota
	errorOrFinite
)

// call runs f, turning a panic into a test failure with the case name.
func call(t *testing.T, name string, f func() (float64, error)) (v float64, err error, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: panic: %v", name, r)
			panicked = true
		}
	}()
	v, err = f()
	return v, err, false
}

// twoClasses returns n points in d dimensions with labels 0/1 alternating.
func twoClasses(n, d int) (*mat.Dense, []int) {
	x := mat.NewDense(n, d, nil)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		y[i] = i % 2
		for j := 0; j < d; j++ {
			x.Set(i, j, math.Sin(float64(3*i+7*j))+float64(y[i]))
		}
	}
	return x, y
}

func withValue(x *mat.Dense, i, j int, v float64) *mat.Dense {
	c := mat.DenseCopyOf(x)
	c.Set(i, j, v)
	return c
}

func dataset(x *mat.Dense, y []int) *data.Dataset {
	return &data.Dataset{Name: "test", X: x, Y: y, Classes: []string{"a", "b", "c"}[:max(1, maxLabel(y)+1)]}
}

func maxLabel(y []int) int {
	m := 0
	for _, v := range y {
		m = max(m, v)
	}
	return m
}

func TestBadInputs(t *testing.T) {
	ctx := context.Background()
	x, y := twoClasses(40, 3)
	ones := make([]int, 40)
	dup := mat.NewDense(40, 3, nil) // every point identical
	constant := mat.DenseCopyOf(x)  // a constant feature
	for i := 0; i < 40; i++ {
		constant.Set(i, 1, 5)
	}
	ts, err := constraints.Triplets(x, y, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, bname := range scaleBackends() {
		b, _ := engine.Get(bname)
		// experimentRank runs the protocol; rank > 0 selects LMNN's
		// low-rank factor (train.Options.Rank, --rank).
		experimentRank := func(algo string, rank int, xt *mat.Dense, yt []int, k int) func() (float64, error) {
			return func() (float64, error) {
				tr := dataset(xt, yt)
				opts := runOpts{Iters: 20, Rank: rank}
				if algo != "boostmetric" && algo != "lmnn" { // the learners with a C
					opts.C = []float64{1}
				}
				r, err := psdlearn.Run(ctx, learnerOf(algo, opts, psdlearn.Common{Validation: tr, Standardize: true, K: k, Backend: b}),
					psdlearn.Data{X: tr.X, Y: tr.Y, Test: tr})
				if err != nil && !(errors.Is(err, errs.ErrNotConverged) && r != nil) { // a capped solve keeps its model
					return 0, err
				}
				return r.Eval.TestError, nil
			}
		}
		experiment := func(algo string, xt *mat.Dense, yt []int, k int) func() (float64, error) {
			return experimentRank(algo, 0, xt, yt, k)
		}
		lmnnRank := func(rank int) func() (float64, error) {
			return func() (float64, error) {
				_, err := lmnn.Learn(ctx, x, y, nil, lmnn.Options{Rank: rank, Backend: b})
				return 0, err
			}
		}
		cases := []struct {
			name string
			want expect
			f    func() (float64, error)
		}{
			{"Triplets NaN", wantError, func() (float64, error) {
				_, err := constraints.Triplets(withValue(x, 3, 1, math.NaN()), y, 3)
				return 0, err
			}},
			{"Triplets single class", wantError, func() (float64, error) { _, err := constraints.Triplets(x, ones, 3); return 0, err }},
			{"Triplets k = 0", wantError, func() (float64, error) { _, err := constraints.Triplets(x, y, 0); return 0, err }},
			{"Triplets label count", wantError, func() (float64, error) { _, err := constraints.Triplets(x, y[:10], 3); return 0, err }},
			{"NewTripletSet empty", wantError, func() (float64, error) { _, err := constraints.NewTripletSet(10, nil); return 0, err }},
			{"KNNError k > n", wantError, func() (float64, error) { return eval.KNNError(b, x, y, x, y, 41) }},
			{"KNNError dims", wantError, func() (float64, error) { return eval.KNNError(b, x, y, mat.NewDense(2, 5, nil), []int{0, 1}, 1) }},
			{"NewMetric NaN", wantError, func() (float64, error) {
				_, err := model.NewMetric(mat.NewSymDense(2, []float64{1, math.NaN(), math.NaN(), 1}))
				return 0, err
			}},
			{"NewMetric non-PSD", wantError, func() (float64, error) {
				_, err := model.NewMetric(mat.NewSymDense(2, []float64{1, 2, 2, 1}))
				return 0, err
			}},
			{"BoostMetric dims", wantError, func() (float64, error) {
				_, err := boost.BoostMetric(ctx, mat.NewDense(10, 3, nil), ts, boost.Options{Backend: b})
				return 0, err
			}},
			{"BoostMetric Inf", wantError, func() (float64, error) {
				_, err := boost.BoostMetric(ctx, withValue(x, 0, 0, math.Inf(1)), ts, boost.Options{Backend: b})
				return 0, err
			}},
			{"PSDBoost NaN", wantError, func() (float64, error) {
				_, err := boost.PSDBoost(ctx, withValue(x, 0, 0, math.NaN()), ts, boost.Options{Backend: b})
				return 0, err
			}},
			{"FrobMetric dims", wantError, func() (float64, error) {
				_, err := frob.Learn(ctx, mat.NewDense(10, 3, nil), ts, frob.MetricOptions{C: 1, Backend: b})
				return 0, err
			}},
			{"FrobMetric C = 0", wantError, func() (float64, error) {
				_, err := frob.Learn(ctx, x, ts, frob.MetricOptions{C: 0 * math.Inf(1), Backend: b})
				return 0, err
			}},
			{"DefiniteBoost no constraints", wantError, func() (float64, error) {
				_, err := meg.DefiniteBoost(ctx, nil, meg.BoostOptions{Backend: b})
				return 0, err
			}},
			{"psdlearn.Cluster NaN", wantError, func() (float64, error) {
				_, err := psdlearn.Cluster(ctx, withValue(x, 2, 2, math.NaN()), y, psdlearn.ClusterOptions{Runs: 1, Learn: npkl.Options{Backend: b}})
				return 0, err
			}},
			{"psdlearn.Cluster single class", wantError, func() (float64, error) {
				_, err := psdlearn.Cluster(ctx, x, ones, psdlearn.ClusterOptions{Runs: 1, Learn: npkl.Options{Backend: b}})
				return 0, err
			}},
			{"psdlearn.Cluster k ≥ n", wantError, func() (float64, error) {
				_, err := psdlearn.Cluster(ctx, x, y, psdlearn.ClusterOptions{Neighbors: 40, Runs: 1, Learn: npkl.Options{Backend: b}})
				return 0, err
			}},
			{"LMNN rank -1", wantError, lmnnRank(-1)},
			{"LMNN rank D+1", wantError, lmnnRank(4)},
			{"lmnn rank 2 NaN", wantError, experimentRank("lmnn", 2, withValue(x, 5, 0, math.NaN()), y, 3)},
			{"lmnn rank 2 single class", wantError, experimentRank("lmnn", 2, x, ones, 3)},
			{"lmnn rank 4 (D+1)", wantError, experimentRank("lmnn", 4, x, y, 3)},
			{"lmnn rank 2 duplicate points", errorOrFinite, experimentRank("lmnn", 2, dup, y, 3)},
			{"lmnn rank 2 constant feature", errorOrFinite, experimentRank("lmnn", 2, constant, y, 3)},
			{"lmnn rank 3 (D) constant feature", errorOrFinite, experimentRank("lmnn", 3, constant, y, 3)},
		}
		for _, algo := range psdlearn.Algorithms() {
			cases = append(cases,
				struct {
					name string
					want expect
					f    func() (float64, error)
				}{algo + " NaN", wantError, experiment(algo, withValue(x, 5, 0, math.NaN()), y, 3)},
				struct {
					name string
					want expect
					f    func() (float64, error)
				}{algo + " single class", wantError, experiment(algo, x, ones, 3)},
				struct {
					name string
					want expect
					f    func() (float64, error)
				}{algo + " k > n", wantError, experiment(algo, x, y, 41)},
				struct {
					name string
					want expect
					f    func() (float64, error)
				}{algo + " duplicate points", errorOrFinite, experiment(algo, dup, y, 3)},
				struct {
					name string
					want expect
					f    func() (float64, error)
				}{algo + " constant feature", errorOrFinite, experiment(algo, constant, y, 3)},
			)
		}
		for _, c := range cases {
			name := fmt.Sprintf("%s/%s", bname, c.name)
			start := time.Now()
			v, err, panicked := call(t, name, c.f)
			if d := time.Since(start); d > time.Second {
				t.Logf("%s took %v", name, d)
			}
			if panicked {
				continue
			}
			switch c.want {
			case wantError:
				if err == nil {
					t.Errorf("%s: no error", name)
				}
			case errorOrFinite:
				if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
					t.Errorf("%s: non-finite result %v without an error", name, v)
				}
				t.Logf("%s: result %v, error %v", name, v, err)
			}
		}
	}
}
