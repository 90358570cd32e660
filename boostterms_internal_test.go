package psdlearn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"gonum.org/v1/gonum/mat"
)

// simulateTerms drives c as BoostMetric's loop does (Due and Check after
// every iteration, Extend at the limit when extend), with one term per
// iteration, converged after converge iterations when positive, and returns the result choose keeps and its note. The term
// of iteration j has weight j, so the kept weights name their iterations.
func simulateTerms(c *termChooser, extend bool, converge int) (res, kept *boost.Result, note string) {
	res = &boost.Result{Stop: boost.StopIterations}
	limit := DefaultBoostIters
	for it := 1; it <= limit; it++ {
		res.W = append(res.W, float64(it))
		res.V = mat.NewDense(1, it, nil)
		res.Iterations, res.Objective = it, -float64(it)
		if c.Due(it) && c.Check(it, res) {
			res.Stop = boost.StopMonitor
			break
		}
		if it == converge {
			res.Stop = boost.StopConverged
			break
		}
		if it == limit && extend {
			limit += c.extend(it, res)
		}
	}
	kept = c.Keep(res)
	return res, kept, c.note()
}

// TestTermChooser checks BoostMetric's default stopping on scripted
// validation curves: where it scores, when it stops, which terms it keeps
// and when it extends the limit.
func TestTermChooser(t *testing.T) {
	steps := func(pts map[int]float64) func(*boost.Result, int) float64 {
		return func(_ *boost.Result, j int) float64 {
			best, e := -1, math.NaN()
			for at, v := range pts {
				if at <= j && at > best {
					best, e = at, v
				}
			}
			return e
		}
	}
	falling := func(_ *boost.Result, j int) float64 { return 0.5 / math.Sqrt(float64(j)) }
	for _, tc := range []struct {
		name     string
		n        int
		curve    func(*boost.Result, int) float64
		extend   bool
		converge int // the run converges after this many iterations (0: never)
		scored   []int
		stop     boost.Stop
		iters    int // iterations run
		kept     int // terms kept
	}{
		{"falls, then rises", 10000, steps(map[int]float64{1: 0.10, 50: 0.05, 100: 0.04, 200: 0.041}), false, 0,
			[]int{25, 50, 100, 200}, boost.StopMonitor, 200, 100},
		{"flat: the earlier terms on a tie", 1000, steps(map[int]float64{1: 0.04}), true, 0,
			[]int{25, 50}, boost.StopMonitor, 50, 25},
		{"falls clearly: stage-wise doubles three times", 10000, falling, true, 0,
			[]int{25, 50, 100, 200, 400, 500, 800, 1000, 1600, 2000, 3200, 4000}, boost.StopIterations, 4000, 4000},
		{"falls clearly: corrective keeps the limit", 10000, falling, false, 0,
			[]int{25, 50, 100, 200, 400, 500}, boost.StopIterations, 500, 500},
		{"falls within the noise: stage-wise keeps the limit", 1000, func(_ *boost.Result, j int) float64 { return 0.05 - 1e-6*float64(j) }, true, 0,
			[]int{25, 50, 100, 200, 400, 500}, boost.StopIterations, 500, 500},
		{"rises after the first doubling", 10000, func(_ *boost.Result, j int) float64 {
			if j <= 500 {
				return 0.5 / math.Sqrt(float64(j))
			}
			return 0.05
		}, true, 0, []int{25, 50, 100, 200, 400, 500, 800}, boost.StopMonitor, 800, 500},
		{"converges above the best", 10000, steps(map[int]float64{1: 0.06, 50: 0.05, 100: 0.04, 120: 0.045}), false, 130,
			[]int{25, 50, 100}, boost.StopConverged, 130, 100},
		{"converges below the best", 10000, steps(map[int]float64{1: 0.06, 50: 0.05, 100: 0.04, 120: 0.035}), false, 130,
			[]int{25, 50, 100}, boost.StopConverged, 130, 130},
		{"converges at a tie", 10000, steps(map[int]float64{1: 0.06, 50: 0.05, 100: 0.04}), false, 130,
			[]int{25, 50, 100}, boost.StopConverged, 130, 130},
		{"no score", 100, func(*boost.Result, int) float64 { return math.NaN() }, true, 0,
			[]int{25, 50, 100, 200, 400, 500}, boost.StopIterations, 500, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &termChooser{n: tc.n, score: tc.curve}
			c.StartPass(1, nil)
			res, kept, note := simulateTerms(c, tc.extend, tc.converge)
			var scored []int
			for _, s := range c.scores {
				scored = append(scored, s.iter)
			}
			if !slices.Equal(scored, tc.scored) {
				t.Errorf("scored at %v, want %v", scored, tc.scored)
			}
			if res.Stop != tc.stop || res.Iterations != tc.iters {
				t.Errorf("stopped %v after %d iterations, want %v after %d", res.Stop, res.Iterations, tc.stop, tc.iters)
			}
			if len(kept.W) != tc.kept || kept.W[len(kept.W)-1] != float64(tc.kept) || kept.Objective != -float64(tc.kept) {
				t.Errorf("kept %d terms (last weight %v, objective %v), want the %d terms of iteration %d", len(kept.W), kept.W[len(kept.W)-1], kept.Objective, tc.kept, tc.kept)
			}
			want := "kept the final terms"
			if tc.kept != tc.iters {
				want = fmt.Sprintf("kept the %d terms of iteration %d", tc.kept, tc.kept)
			}
			if c.kept != nil && !strings.Contains(note, want) {
				t.Errorf("note %q, want %q", note, want)
			}
		})
	}
}

// knnRecorder is a KNNDistributor that scores in this process and records
// the query rows of every call.
type knnRecorder struct {
	Distributor
	queries []int
}

func (k *knnRecorder) KNNErrors(b engine.Backend, l, refX *mat.Dense, refY []int, nn int, sets ...eval.Queries) ([]float64, error) {
	for _, q := range sets {
		k.queries = append(k.queries, len(q.Y))
	}
	return eval.FactorKNNErrors(b, l, refX, refY, nn, sets...)
}

// TestTermChooserScoresOverProcesses: in a sharded solve (the Problem's
// Distributor a KNNDistributor) the validation checkpoints are scored by
// the Distributor, which splits the query rows over the processes, and
// the score is the one-process score.
func TestTermChooserScoresOverProcesses(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	x, val := mat.NewDense(60, 4, nil), mat.NewDense(20, 4, nil)
	y, valY := make([]int, 60), make([]int, 20)
	for _, m := range []struct {
		x *mat.Dense
		y []int
	}{{x, y}, {val, valY}} {
		for i := range m.y {
			m.y[i] = i % 3
			for j := 0; j < 4; j++ {
				m.x.Set(i, j, rng.NormFloat64()+float64(m.y[i]*j%3))
			}
		}
	}
	rec := &knnRecorder{}
	p := &Problem{X: x, Y: y, ValX: val, ValY: valY, K: 3, Backend: engine.Default()}
	res := &boost.Result{V: mat.NewDense(4, 2, []float64{1, 0, 0, 1, 0.5, 0, 0, 0.5}), W: []float64{2, 1}}
	local := newTermChooser(p).valError(res, 2)
	p.Dist = rec
	dist := newTermChooser(p).valError(res, 2)
	if !slices.Equal(rec.queries, []int{20}) {
		t.Fatalf("the Distributor scored query sets of %v rows, want one of 20", rec.queries)
	}
	if math.IsNaN(local) || dist != local {
		t.Fatalf("validation error %v through the Distributor, %v in this process", dist, local)
	}
}
