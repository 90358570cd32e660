package lmnn

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	"gonum.org/v1/gonum/mat"
)

// fakeSplit is a Splitter over p goroutines: Sum adds the parts in process
// order (the same bits everywhere), Broadcast copies process 0's buffer.
type fakeSplit struct {
	rank int
	g    *splitGroup
}

type splitGroup struct {
	p     int
	mu    sync.Mutex
	cond  *sync.Cond
	round int
	bufs  [][]float64
	count int
	out   []float64
}

func newSplitGroup(p int) *splitGroup {
	g := &splitGroup{p: p, bufs: make([][]float64, p)}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// exchange hands v in and returns combine(all parts) once every process has.
func (g *splitGroup) exchange(rank int, v []float64, combine func([][]float64) []float64) []float64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	round := g.round
	g.bufs[rank] = append([]float64(nil), v...)
	g.count++
	if g.count == g.p {
		g.out = combine(g.bufs)
		g.count = 0
		g.round++
		g.cond.Broadcast()
	} else {
		for g.round == round {
			g.cond.Wait()
		}
	}
	return g.out
}

func (f fakeSplit) Block(n int) (int, int) { return n * f.rank / f.g.p, n * (f.rank + 1) / f.g.p }

func (f fakeSplit) Sum(v []float64) error {
	out := f.g.exchange(f.rank, v, func(parts [][]float64) []float64 {
		s := make([]float64, len(parts[0]))
		for _, p := range parts {
			for i, x := range p {
				s[i] += x
			}
		}
		return s
	})
	copy(v, out)
	return nil
}

func (f fakeSplit) Broadcast(v []float64) error {
	out := f.g.exchange(f.rank, v, func(parts [][]float64) []float64 { return parts[0] })
	copy(v, out)
	return nil
}

// learnSplit runs Learn on p fake processes and returns every process's
// result and error.
func learnSplit(ctx context.Context, p int, x *mat.Dense, y []int, opt Options, cancelRank int) ([]*Result, []error) {
	g := newSplitGroup(p)
	res, errs := make([]*Result, p), make([]error, p)
	var wg sync.WaitGroup
	for r := 0; r < p; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			o := opt
			o.Split = fakeSplit{rank: r, g: g}
			c := ctx
			if r == cancelRank {
				cc, cancel := context.WithCancel(ctx)
				cancel()
				c = cc
			}
			res[r], errs[r] = Learn(c, x, y, nil, o)
		}(r)
	}
	wg.Wait()
	return res, errs
}

// TestSplitMatchesOneProcess: LMNN spread over 1 to 4 processes gives
// every process the same result, and the one-process result to rounding:
// the parts of the objective and of the subgradient are summed in another
// order, nothing else differs. Both parametrisations, with impostor lists
// cut by Candidates so that the per-block searches decide.
func TestSplitMatchesOneProcess(t *testing.T) {
	tr, _ := splitStd(t, loadSet(t, "wine"))
	b := engine.Default()
	for _, tc := range []struct{ rank, iters int }{{0, 150}, {5, 150}, {0, 0}} {
		rank := tc.rank
		opt := Options{Backend: b, Candidates: 10, MaxIter: tc.iters, Rank: rank}
		want, err := Learn(context.Background(), tr.X, tr.Y, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		for p := 1; p <= 4; p++ {
			res, errs := learnSplit(context.Background(), p, tr.X, tr.Y, opt, -1)
			for r := range res {
				if errs[r] != nil {
					t.Fatalf("rank %d, %d processes, process %d: %v", rank, p, r, errs[r])
				}
				if !mat.Equal(res[r].M, res[0].M) || res[r].Objective != res[0].Objective {
					t.Fatalf("rank %d, %d processes: process %d's result differs from process 0's", rank, p, r)
				}
			}
			got := res[0]
			if got.Iterations != want.Iterations || got.Active != want.Active || got.Candidates != want.Candidates || got.Truncated != want.Truncated {
				t.Errorf("rank %d, %d processes: %d iterations, %d active, %d candidates, %d truncated; one process %d, %d, %d, %d",
					rank, p, got.Iterations, got.Active, got.Candidates, got.Truncated, want.Iterations, want.Active, want.Candidates, want.Truncated)
			}
			// Each of the iterations' sums is rounded differently:
			// allow a few ulps of growth per iteration.
			tol := float64(want.Iterations) * 64 * 0x1p-52
			if d := math.Abs(got.Objective-want.Objective) / want.Objective; d > tol {
				t.Errorf("rank %d, %d processes: objective %v, one process %v (relative %.3g > %.3g)", rank, p, got.Objective, want.Objective, d, tol)
			}
			if d := relDiff(got.M, want.M); d > tol {
				t.Errorf("rank %d, %d processes: M differs from one process's by %.3g relative (> %.3g)", rank, p, d, tol)
			}
			if got.Converged != want.Converged {
				t.Errorf("rank %d, %d processes: converged %v, one process %v", rank, p, got.Converged, want.Converged)
			}
			t.Logf("rank %d, %d processes: objective rel. diff %.3g, M rel. diff %.3g, %d iterations, converged %v",
				rank, p, math.Abs(got.Objective-want.Objective)/want.Objective, relDiff(got.M, want.M), got.Iterations, got.Converged)
		}
	}
}

// TestSplitCancel: a process whose context is cancelled stops every
// process at the same iteration, each with an error and the same iterate.
func TestSplitCancel(t *testing.T) {
	tr, _ := splitStd(t, loadSet(t, "wine"))
	opt := Options{Backend: engine.Default(), Candidates: 10, MaxIter: 50}
	res, errs := learnSplit(context.Background(), 3, tr.X, tr.Y, opt, 1)
	for r, err := range errs {
		if err == nil {
			t.Fatalf("process %d: no error after process 1 was cancelled", r)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("process %d: %v, want a cancellation", r, err)
		}
		if res[r] == nil || !mat.Equal(res[r].M, res[0].M) {
			t.Fatalf("process %d: no iterate, or another than process 0's", r)
		}
	}
}
