package reliability

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/algos/frob"
	"github.com/psdlearn/psdlearn/algos/meg"
	"github.com/psdlearn/psdlearn/algos/mvu"
	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/algos/sdp"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/lbfgsb"
	"github.com/psdlearn/psdlearn/progress"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// This file audits the cancellation contract of every long-running entry
// point: cancelled during a run, it stops within one further iteration and
// returns the best iterate so far (where the API returns a result next to
// the error) with an error wrapping the context's error.
//
// Every case runs in four modes:
//
//   - before:   the context is cancelled before the call;
//   - deadline: the context's deadline has already passed;
//   - hook:     the context is cancelled from the algorithm's own progress
//     callback after hookAt iterations (deterministic);
//   - poll:     the context is cancelled at its pollAt-th ctx.Err() check
//     after hookAt iterations, which lands inside an iteration (in an inner
//     eigensolver, L-BFGS-B or LP solve) and exercises the mid-iteration
//     paths (deterministic too: the algorithms poll in a fixed order).

// mode is how a run is cancelled.
type mode int

const (
	modeBefore mode = iota
	modeDeadline
	modeHook
	modePoll
)

func (m mode) String() string {
	return [...]string{"before", "deadline", "hook", "poll"}[m]
}

// probe counts iterations (ticks of the algorithm's callback) and context
// polls, and cancels the run at the point the mode asks for.
type probe struct {
	mode   mode
	hookAt int // hook: cancel after this many ticks; poll: count polls from here
	pollAt int // poll: cancel at this poll

	mu          sync.Mutex
	cancel      context.CancelFunc
	start       time.Time
	ticks       int
	polls       int
	cancelled   bool
	atCancel    int // ticks when the context was cancelled
	pollsCancel int // polls when the context was cancelled
	cancelTime  time.Time
}

// tick records one iteration; the algorithms call it from their callbacks.
func (p *probe) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ticks++
	if p.mode == modeHook && !p.cancelled && p.ticks == p.hookAt {
		p.fireLocked()
	}
}

func (p *probe) fireLocked() {
	p.cancelled = true
	p.atCancel = p.ticks
	p.pollsCancel = p.polls
	p.cancelTime = time.Now()
	p.cancel()
}

// ticksAfter returns the iterations reported after the cancellation.
func (p *probe) ticksAfter() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ticks - p.atCancel
}

// pollCtx is a cancellable context that cancels itself at the probe's
// pollAt-th Err() call once hookAt iterations are done. Contexts derived from
// it (context.WithCancel) are cancelled with it, synchronously: its Value
// exposes the embedded *cancelCtx.
type pollCtx struct {
	context.Context
	p *probe
}

func (c pollCtx) Err() error {
	p := c.p
	p.mu.Lock()
	if !p.cancelled && p.ticks >= p.hookAt {
		p.polls++
		if p.polls == p.pollAt {
			p.fireLocked()
		}
	}
	p.mu.Unlock()
	return c.Context.Err()
}

// cancelCase is one entry point under audit.
type cancelCase struct {
	name string
	// hookAt > 0: the API has a per-iteration callback that the case's run
	// wires to probe.tick, and hook mode cancels after hookAt iterations.
	hookAt int
	// pollAt > 0: poll mode cancels at that ctx.Err() check after hookAt
	// iterations. Zero: no poll mode.
	pollAt int
	// run calls the entry point and returns what it returned next to the error.
	run func(ctx context.Context, p *probe) (any, error)
	// result checks the returned value against the contract; nil means the
	// API returns no result next to the error.
	result func(m mode, p *probe, v any) error
	// finding, if set, is a known violation of the result contract in a
	// package this audit may not change: a failing result check skips the
	// subtest with the finding instead of failing it.
	finding string
}

// runCase drives c in mode m.
func runCase(t *testing.T, c cancelCase, m mode) {
	p := &probe{mode: m, hookAt: c.hookAt, pollAt: c.pollAt}
	var ctx context.Context
	switch m {
	case modeBefore:
		cctx, cancel := context.WithCancel(context.Background())
		cancel()
		ctx = cctx
		p.cancel = func() {}
	case modeDeadline:
		cctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer cancel()
		ctx = cctx
		p.cancel = func() {}
	case modeHook:
		cctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ctx, p.cancel = cctx, cancel
	case modePoll:
		cctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		p.cancel = cancel
		ctx = pollCtx{cctx, p}
	}
	p.start = time.Now()
	v, err, panicked := protect(func() (any, error) { return c.run(ctx, p) })
	end := time.Now()
	if panicked != nil {
		t.Fatalf("panic: %v", panicked)
	}
	want := context.Canceled
	if m == modeDeadline {
		want = context.DeadlineExceeded
	}
	switch {
	case err == nil:
		if (m == modeHook || m == modePoll) && !p.cancelled {
			t.Fatalf("the run ended (%d iterations, %d polls) before the cancellation point: the case needs a longer run", p.ticks, p.polls)
		}
		t.Errorf("no error after cancellation (%d iterations, %d after the cancellation)", p.ticks, p.ticksAfter())
	case !errors.Is(err, want):
		t.Errorf("error %q does not wrap %v", err, want)
	}
	switch m {
	case modeBefore, modeDeadline:
		if p.ticks != 0 {
			t.Errorf("%d iterations ran on a context that was already done", p.ticks)
		}
		if d := end.Sub(p.start); d > 2*time.Second {
			t.Errorf("took %v to notice a context that was already done", d)
		}
	case modeHook, modePoll:
		if !p.cancelled {
			t.Fatalf("the run returned %v before the cancellation point (%d iterations, %d polls)", err, p.ticks, p.polls)
		}
		if a := p.ticksAfter(); a > 1 {
			t.Errorf("%d iterations ran after the cancellation (at most 1 allowed)", a)
		}
		// Wall time after the cancellation, against the mean iteration
		// time before it: loose (the machine is shared), but it catches a
		// run that keeps going.
		before := p.cancelTime.Sub(p.start)
		per := before / time.Duration(max(1, p.atCancel))
		after := end.Sub(p.cancelTime)
		if limit := 3*per + 300*time.Millisecond; after > limit {
			t.Errorf("returned %v after the cancellation (mean iteration %v, limit %v)", after, per, limit)
		}
		t.Logf("cancelled after %d iterations (%d polls) at %v; returned %v later with %d further iterations: %v",
			p.atCancel, p.pollsCancel, before.Round(time.Microsecond), after.Round(time.Microsecond), p.ticksAfter(), err)
	}
	if c.result == nil {
		return
	}
	if rerr := c.result(m, p, v); rerr != nil {
		if c.finding != "" {
			t.Skipf("finding: %s (observed: %v)", c.finding, rerr)
		}
		t.Errorf("result: %v", rerr)
	} else if c.finding != "" && (m == modeHook || m == modePoll) {
		t.Logf("the recorded finding did not show here: %s", c.finding)
	}
}

// protect calls f and also returns what it panicked with, if it did.
//
//lint:ignore ST1008 the recovered panic comes after the call's own results
func protect(f func() (any, error)) (v any, err error, panicked any) {
	defer func() {
		if r := recover(); r != nil {
			panicked = r
		}
	}()
	v, err = f()
	return v, err, nil
}

// iterations checks that a result holding iters iterations holds every
// iteration the callback reported and at most one more.
func iterations(p *probe, iters int) error {
	p.mu.Lock()
	ticks := p.ticks
	p.mu.Unlock()
	if iters < ticks || iters > ticks+1 {
		return fmt.Errorf("result holds %d iterations, the callback reported %d", iters, ticks)
	}
	return nil
}

// needResult reports whether a nil result breaks the contract: an iteration
// had completed when the context was cancelled.
func needResult(m mode, p *probe) bool {
	return (m == modeHook || m == modePoll) && p.atCancel > 0
}

// checkPSD checks that a is finite, symmetric positive semidefinite to
// rounding and, when nonzero is set, not zero.
func checkPSD(a mat.Symmetric, nonzero bool) error {
	n := a.SymmetricDim()
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := a.At(i, j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("entry (%d,%d) = %v", i, j, v)
			}
			s.SetSym(i, j, v)
		}
	}
	var e mat.EigenSym
	if !e.Factorize(s, false) {
		return errors.New("eigendecomposition failed")
	}
	vals := e.Values(nil)
	top := math.Max(math.Abs(vals[0]), math.Abs(vals[n-1]))
	if vals[0] < -1e-9*math.Max(top, 1e-300) {
		return fmt.Errorf("not PSD: λmin = %g, λmax = %g", vals[0], vals[n-1])
	}
	if nonzero && !(top > 0) {
		return errors.New("zero matrix")
	}
	return nil
}

// standardized returns the embedded data set name, standardised.
func standardized(t *testing.T, name string) *data.Dataset {
	t.Helper()
	d, err := datasets.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := data.Standardize(d)
	if err != nil {
		t.Fatal(err)
	}
	return ds[0]
}

// rows returns the dataset restricted to every step-th row.
func rows(d *data.Dataset, step int) *data.Dataset {
	n, dim := d.X.Dims()
	var idx []int
	for i := 0; i < n; i += step {
		idx = append(idx, i)
	}
	x := mat.NewDense(len(idx), dim, nil)
	y := make([]int, len(idx))
	for k, i := range idx {
		x.SetRow(k, d.X.RawRowView(i))
		y[k] = d.Y[i]
	}
	return &data.Dataset{Name: d.Name, X: x, Y: y, Classes: d.Classes}
}

// backendsOf returns "go" and, in cgo builds, "native".
func backendsOf(t *testing.T) []engine.Backend {
	var out []engine.Backend
	for _, name := range []string{"go", "native"} {
		b, err := engine.Get(name)
		if err != nil {
			t.Logf("backend %s not available: %v", name, err)
			continue
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		t.Fatal("no backend")
	}
	return out
}

func TestCancellation(t *testing.T) {
	iris := standardized(t, "iris")
	wine := standardized(t, "wine")
	irisTS, err := constraints.Triplets(iris.X, iris.Y, 3)
	if err != nil {
		t.Fatal(err)
	}
	wineTS, err := constraints.Triplets(wine.X, wine.Y, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range backendsOf(t) {
		var cases []cancelCase
		cases = append(cases, boostCases(t, b, iris, irisTS)...)
		cases = append(cases, frobCases(b, wine, wineTS)...)
		cases = append(cases, megCases(t, b, iris)...)
		cases = append(cases, npklCases(t, b, iris)...)
		cases = append(cases, trainCases(b, iris, wine)...)
		cases = append(cases, engineCases(b)...)
		cases = append(cases, evalCases(iris)...)
		for _, c := range cases {
			for _, m := range []mode{modeBefore, modeDeadline, modeHook, modePoll} {
				if (m == modeHook && c.hookAt == 0) || (m == modePoll && c.pollAt == 0) {
					continue
				}
				t.Run(fmt.Sprintf("%s/%s/%s", b.Name(), c.name, m), func(t *testing.T) { runCase(t, c, m) })
			}
		}
	}
}

// boostResult checks a boost.Result returned with a cancellation error:
// the metric of the completed iterations (their objectives as reported),
// PSD, marked cancelled.
func boostResult(d int, reported *[]float64) func(mode, *probe, any) error {
	return func(m mode, p *probe, v any) error {
		r, _ := v.(*boost.Result)
		if r == nil {
			if needResult(m, p) {
				return fmt.Errorf("nil result after %d completed iterations", p.atCancel)
			}
			return nil
		}
		if r.Stop != boost.StopCancelled {
			return fmt.Errorf("Stop = %v, want %v", r.Stop, boost.StopCancelled)
		}
		if err := iterations(p, r.Iterations); err != nil {
			return err
		}
		if len(r.Curve) != r.Iterations {
			return fmt.Errorf("%d objectives for %d iterations", len(r.Curve), r.Iterations)
		}
		for i, o := range *reported {
			if i < len(r.Curve) && r.Curve[i] != o {
				return fmt.Errorf("objective %d is %v, the callback reported %v", i+1, r.Curve[i], o)
			}
		}
		if r.Iterations > 0 && r.Objective != r.Curve[r.Iterations-1] {
			return fmt.Errorf("objective %v is not that of the last iteration (%v)", r.Objective, r.Curve[r.Iterations-1])
		}
		for j, w := range r.W {
			if !(w > 0) || math.IsInf(w, 0) {
				return fmt.Errorf("weight %d = %v", j, w)
			}
		}
		return checkPSD(r.Matrix(d), r.Iterations > 0)
	}
}

// boostCases audits package boost on iris: BoostMetric on 3×3 triplets per
// point, PSDBoost (a dense LP per iteration on the "go" backend) on 1×1.
func boostCases(t *testing.T, b engine.Backend, iris *data.Dataset, ts *constraints.TripletSet) []cancelCase {
	_, d := iris.X.Dims()
	ts1, err := constraints.Triplets(iris.X, iris.Y, 1)
	if err != nil {
		t.Fatal(err)
	}
	type variant struct {
		name string
		opt  boost.Options
		call func(context.Context, boost.Options) (*boost.Result, error)
	}
	bm := func(ctx context.Context, o boost.Options) (*boost.Result, error) {
		return boost.BoostMetric(ctx, iris.X, ts, o)
	}
	psd := func(ctx context.Context, o boost.Options) (*boost.Result, error) {
		return boost.PSDBoost(ctx, iris.X, ts1, o)
	}
	tr := func(ctx context.Context, o boost.Options) (*boost.Result, error) {
		if o.Loss == boost.Hinge {
			return boost.Train(ctx, iris.X, ts1, o)
		}
		return boost.Train(ctx, iris.X, ts, o)
	}
	vs := []variant{
		{"BoostMetric/exp/stagewise", boost.Options{Loss: boost.Exp, Mode: boost.Stagewise}, bm},
		{"BoostMetric/exp/stagewise/lanczos", boost.Options{Loss: boost.Exp, Mode: boost.Stagewise, Eig: boost.EigLanczos}, bm},
		{"BoostMetric/exp/corrective", boost.Options{Loss: boost.Exp, Mode: boost.Corrective}, bm},
		{"BoostMetric/logistic/stagewise", boost.Options{Loss: boost.Logistic, Mode: boost.Stagewise}, bm},
		{"BoostMetric/logistic/corrective", boost.Options{Loss: boost.Logistic, Mode: boost.Corrective}, bm},
		{"PSDBoost", boost.Options{Loss: boost.Hinge}, psd},
		{"PSDBoost/lanczos", boost.Options{Loss: boost.Hinge, Eig: boost.EigLanczos}, psd},
		{"Train/hinge", boost.Options{Loss: boost.Hinge}, tr},
		{"Train/logistic/corrective", boost.Options{Loss: boost.Logistic, Mode: boost.Corrective}, tr},
	}
	var out []cancelCase
	for _, v := range vs {
		var reported []float64
		out = append(out, cancelCase{
			name: "boost." + v.name, hookAt: 2, pollAt: 2,
			run: func(ctx context.Context, p *probe) (any, error) {
				reported = reported[:0]
				o := v.opt
				o.Backend, o.Seed, o.Iters = b, 1, 40
				o.Progress = func(e progress.Event) {
					reported = append(reported, e.Objective)
					p.tick()
				}
				return v.call(ctx, o)
			},
			result: boostResult(d, &reported),
		})
	}
	return append(out, multiPassCase(b, iris))
}

// multiPassCase cancels boost.MultiPass (4 iterations per pass) during its
// second pass: the result must be the metric of the first pass, exactly as
// an uncancelled one-pass run learns it.
func multiPassCase(b engine.Backend, iris *data.Dataset) cancelCase {
	_, d := iris.X.Dims()
	opt := boost.Options{Loss: boost.Exp, Iters: 4, Backend: b, Seed: 1}
	var (
		passStart int // iterations reported before the current pass
		reported  []float64
	)
	return cancelCase{
		name: "boost.MultiPass", hookAt: 6, pollAt: 2,
		run: func(ctx context.Context, p *probe) (any, error) {
			passStart, reported = 0, reported[:0]
			o := opt
			o.Progress = func(e progress.Event) {
				p.mu.Lock()
				if e.Iteration == 1 {
					passStart = p.ticks
				}
				p.mu.Unlock()
				reported = append(reported, e.Objective)
				p.tick()
			}
			return boost.MultiPass(ctx, iris.X, iris.Y, 3, 3, nil, o)
		},
		result: func(m mode, p *probe, v any) error {
			if passStart == 0 { // still in the first pass
				return boostResult(d, &reported)(m, p, v)
			}
			r, _ := v.(*boost.Result)
			if r == nil {
				return fmt.Errorf("nil result after %d completed passes", passStart/opt.Iters)
			}
			if r.Stop != boost.StopCancelled || r.Iterations != passStart {
				return fmt.Errorf("stop %v after %d iterations, want %v after the %d of the completed passes", r.Stop, r.Iterations, boost.StopCancelled, passStart)
			}
			ref, err := boost.MultiPass(context.Background(), iris.X, iris.Y, 3, passStart/opt.Iters, nil, opt)
			if err != nil {
				return err
			}
			var diff mat.Dense
			diff.Sub(r.Matrix(d), ref.Matrix(d))
			if n := mat.Norm(&diff, 2); n > 1e-12*mat.Norm(ref.Matrix(d), 2) {
				return fmt.Errorf("metric differs from that of the completed passes by %g", n)
			}
			return checkPSD(r.Matrix(d), true)
		},
	}
}

// swissSDP is the Frobenius-perturbed MVU problem on n points of a Swiss roll
// (6 nearest neighbours, centred, distances in units of their mean),
// solved directly with sdp.Solve.
func swissSDP(n int) *sdp.Problem {
	x, _, _ := datasets.SwissRoll(n, 3)
	nb, err := sparse.KNN(x, x, 6, true)
	if err != nil {
		panic(err)
	}
	a, b, d2 := nb.Edges()
	var mean float64
	for _, v := range d2 {
		mean += v
	}
	mean /= float64(len(d2))
	edges := make([]engine.Pair, len(a))
	for t := range a {
		edges[t] = engine.Pair{A: a[t], B: b[t]}
		d2[t] /= mean
	}
	return sdp.UnfoldingProblem(n, 100, edges, d2)
}

// learnCase is frob.Learn on wine's triplets with the given working-set mode.
func learnCase(name string, ws frob.WorkingSetMode, b engine.Backend, wine *data.Dataset, ts *constraints.TripletSet) cancelCase {
	_, d := wine.X.Dims()
	tick := func(p *probe) progress.Func { return func(progress.Event) { p.tick() } }
	return cancelCase{
		name: name, hookAt: 1, pollAt: 1,
		run: func(ctx context.Context, p *probe) (any, error) {
			return frob.Learn(ctx, wine.X, ts, frob.MetricOptions{C: 1e4, GapTol: 1e-12, WorkingSet: ws, Backend: b, Progress: tick(p)})
		},
		result: func(m mode, p *probe, v any) error {
			r, _ := v.(*frob.MetricResult)
			if r == nil {
				if needResult(m, p) {
					return errors.New("nil result")
				}
				return nil
			}
			for _, u := range r.U {
				if !(u >= 0 && u <= 1e4/float64(ts.Len())) {
					return fmt.Errorf("dual point outside the box: %v", u)
				}
			}
			if r.M == nil || r.M.SymmetricDim() != d {
				return errors.New("no metric")
			}
			if !(r.Primal >= r.Dual-1e-9*math.Max(1, math.Abs(r.Primal))) {
				return fmt.Errorf("primal %v below dual %v", r.Primal, r.Dual)
			}
			if r.Certified || math.Abs(r.Gap-(r.Primal-r.Dual)) > 1e-12*math.Max(1, math.Abs(r.Primal)) {
				return fmt.Errorf("certified %v with gap %v for primal %v, dual %v (tolerance 1e-12 not reachable here)", r.Certified, r.Gap, r.Primal, r.Dual)
			}
			return checkPSD(r.M, false)
		},
	}
}

func frobCases(b engine.Backend, wine *data.Dataset, ts *constraints.TripletSet) []cancelCase {
	roll80 := swissSDP(80)
	roll, _, _ := datasets.SwissRoll(120, 5)
	tick := func(p *probe) progress.Func { return func(progress.Event) { p.tick() } }
	return []cancelCase{
		learnCase("frob.Learn", frob.WorkingSetOff, b, wine, ts),
		learnCase("frob.Learn working set", frob.WorkingSetOn, b, wine, ts),
		{
			// No poll mode: sdp.Solve checks its context itself only between
			// L-BFGS-B rounds (the rounds check a derived context).
			name: "sdp.Solve", hookAt: 1,
			run: func(ctx context.Context, p *probe) (any, error) {
				return sdp.Solve(ctx, roll80, sdp.Options{Method: sdp.Dense, GapTol: 1e-12, FeasTol: 1e-12, Backend: b, Progress: tick(p)})
			},
			result: func(m mode, p *probe, v any) error {
				s, _ := v.(*sdp.Solution)
				if s == nil {
					if needResult(m, p) {
						return errors.New("nil result")
					}
					return nil
				}
				if s.Factor == nil || len(s.U) != len(roll80.Constraints) {
					return errors.New("no primal factor or dual point")
				}
				if s.Certified || math.IsNaN(s.Primal) || math.IsNaN(s.Dual) || math.IsNaN(s.MaxViolation) {
					return fmt.Errorf("certified %v, primal %v, dual %v, violation %v", s.Certified, s.Primal, s.Dual, s.MaxViolation)
				}
				return checkPSD(s.X(), false)
			},
		},
		{
			name: "mvu.Embed", hookAt: 1,
			run: func(ctx context.Context, p *probe) (any, error) {
				return mvu.Embed(ctx, roll, mvu.Options{K: 6, Dims: 2, SDP: sdp.Options{Method: sdp.Dense, GapTol: 1e-12, Backend: b, Progress: tick(p)}})
			},
			result: func(m mode, p *probe, v any) error {
				e, _ := v.(*mvu.Embedding)
				if e == nil {
					if needResult(m, p) {
						return errors.New("nil result")
					}
					return nil
				}
				if e.Coords == nil || e.Solution == nil {
					return errors.New("no embedding")
				}
				if r, c := e.Coords.Dims(); r != 120 || c != 2 || len(e.Edges) != len(e.Dist2) {
					return fmt.Errorf("embedding %d×%d with %d edges, %d distances", r, c, len(e.Edges), len(e.Dist2))
				}
				return checkPSD(e.Solution.X(), false)
			},
		},
	}
}

func megCases(t *testing.T, b engine.Backend, iris *data.Dataset) []cancelCase {
	sub := rows(iris, 5) // 30 objects
	gamma, err := meg.MedianGamma(sub.X)
	if err != nil {
		t.Fatal(err)
	}
	k, err := meg.RBFKernel(sub.X, gamma)
	if err != nil {
		t.Fatal(err)
	}
	u, err := meg.TraceNormalize(k)
	if err != nil {
		t.Fatal(err)
	}
	cons, _, err := meg.CloseConstraints(u, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	seq, err := meg.SampleDistances(u, 2000, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	var learner *meg.Learner
	boostCase := func(name string, proj meg.Projection) cancelCase {
		return cancelCase{
			name: name, hookAt: 2, pollAt: 2,
			run: func(ctx context.Context, p *probe) (any, error) {
				return meg.DefiniteBoost(ctx, cons, meg.BoostOptions{Projection: proj, Tol: 1e-12, Backend: b,
					Observe: func(meg.BoostStep) error { p.tick(); return nil }})
			},
			result: func(m mode, p *probe, v any) error {
				r, _ := v.(*meg.BoostResult)
				if r == nil {
					if needResult(m, p) {
						return errors.New("nil result")
					}
					return nil
				}
				if err := iterations(p, r.Iterations); err != nil {
					return err
				}
				if err := checkPSD(r.W, true); err != nil {
					return err
				}
				if tr := mat.Trace(r.W); math.Abs(tr-1) > 1e-9 {
					return fmt.Errorf("tr W = %v", tr)
				}
				top := math.Inf(-1)
				for j, c := range cons {
					v := c.Inner(r.W)
					if math.Abs(v-r.Violations[j]) > 1e-12 {
						return fmt.Errorf("violation %d is %v, tr(W C) = %v", j, r.Violations[j], v)
					}
					top = math.Max(top, v)
				}
				if top != r.MaxViolation {
					return fmt.Errorf("MaxViolation %v, max tr(W C) = %v", r.MaxViolation, top)
				}
				if r.Dual > r.LogBound+1e-9 {
					return fmt.Errorf("dual %v above the Theorem 4.1 bound %v", r.Dual, r.LogBound)
				}
				return nil
			},
		}
	}
	return []cancelCase{
		boostCase("meg.DefiniteBoost/approx", meg.Approximate),
		boostCase("meg.DefiniteBoost/exact", meg.Exact),
		{
			name: "meg.Learner.Run", hookAt: 3, pollAt: 1,
			run: func(ctx context.Context, p *probe) (any, error) {
				var err error
				learner, err = meg.NewLearner(u.SymmetricDim(), meg.LearnerOptions{R: 1, C: math.Inf(1), Backend: b})
				if err != nil {
					return nil, err
				}
				return learner.Run(ctx, seq, func(meg.Step) error { p.tick(); return nil })
			},
			result: func(m mode, p *probe, v any) error {
				r := v.(meg.RunResult)
				if err := iterations(p, r.Steps); err != nil {
					return err
				}
				if learner.Steps() != r.Steps || math.Abs(learner.TotalLoss()-r.TotalLoss) > 1e-12*math.Max(1, r.TotalLoss) {
					return fmt.Errorf("run reports %d steps, loss %v; the learner made %d, loss %v", r.Steps, r.TotalLoss, learner.Steps(), learner.TotalLoss())
				}
				w, err := learner.W()
				if err != nil {
					return err
				}
				return checkPSD(w, true)
			},
		},
	}
}

// npklResult checks an npkl.Result returned with a cancellation error.
func npklResult(m mode, p *probe, v any) error {
	r, _ := v.(*npkl.Result)
	if r == nil {
		if needResult(m, p) {
			return fmt.Errorf("nil result after %d completed iterations", p.atCancel)
		}
		return nil
	}
	if err := iterations(p, r.Iterations); err != nil {
		return err
	}
	if len(r.History) != r.Iterations || r.V == nil || r.Rank() == 0 {
		return fmt.Errorf("result has %d iterations, %d history entries, kernel %v", r.Iterations, len(r.History), r.V != nil)
	}
	for _, l := range r.Lambda {
		if !(l > 0) || math.IsInf(l, 0) {
			return fmt.Errorf("kernel eigenvalue %v", l)
		}
	}
	for _, a := range r.Alpha {
		if !(a >= 0) || math.IsInf(a, 0) {
			return fmt.Errorf("dual variable %v", a)
		}
	}
	return nil
}

func npklCases(t *testing.T, b engine.Backend, iris *data.Dataset) []cancelCase {
	lap, err := npkl.Laplacian(iris.X, 5, sparse.GraphOptions{}, b)
	if err != nil {
		t.Fatal(err)
	}
	pairs, err := constraints.XingPairs(iris.Y, 0.7, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Reference accuracies of the k-means baseline's runs (seeds as in npkl).
	const kmRuns, kmSeed = 6, 2
	var ref []float64
	for r := 0; r < kmRuns; r++ {
		km, err := eval.KMeans(context.Background(), iris.X, 3, eval.KMeansOptions{Restarts: 2, Seed: kmSeed*1000003 + uint64(r)})
		if err != nil {
			t.Fatal(err)
		}
		ref = append(ref, eval.PairwiseAccuracy(iris.Y, km.Assign))
	}
	return []cancelCase{
		{
			name: "npkl.Learn/squared-hinge", hookAt: 2, pollAt: 2,
			run: func(ctx context.Context, p *probe) (any, error) {
				return npkl.Learn(ctx, lap, pairs, npkl.Options{Loss: npkl.SquaredHinge, C: 0.5, Iters: 30, Seed: 1, Backend: b,
					Progress: func(progress.Event) { p.tick() }})
			},
			result: npklResult,
		},
		{
			// One closed-form solve: poll mode cancels inside the eigensolver.
			name: "npkl.Learn/linear", pollAt: 3,
			run: func(ctx context.Context, p *probe) (any, error) {
				return npkl.Learn(ctx, lap, pairs, npkl.Options{Loss: npkl.Linear, C: 0.5, Seed: 1, Backend: b,
					Progress: func(progress.Event) { p.tick() }})
			},
			result: npklResult,
		},
		{
			name: "psdlearn.Cluster", hookAt: 2, pollAt: 2,
			run: func(ctx context.Context, p *probe) (any, error) {
				return psdlearn.Cluster(ctx, iris.X, iris.Y, psdlearn.ClusterOptions{Runs: 6, Restarts: 2, Seed: 1,
					Learn:    npkl.Options{Loss: npkl.SquaredHinge, C: 0.5, Iters: 3, Backend: b},
					Progress: func(progress.Event) { p.tick() }})
			},
			result: func(m mode, p *probe, v any) error {
				r, _ := v.(*psdlearn.ClusterReport)
				if r == nil {
					if needResult(m, p) {
						return fmt.Errorf("nil report after %d completed runs", p.atCancel)
					}
					return nil
				}
				if err := iterations(p, len(r.Runs)); err != nil {
					return err
				}
				var mean float64
				for _, run := range r.Runs {
					if !(run.Accuracy >= 0 && run.Accuracy <= 1) {
						return fmt.Errorf("run %d: accuracy %v", run.Run, run.Accuracy)
					}
					mean += run.Accuracy / float64(len(r.Runs))
				}
				if len(r.Runs) > 0 && math.Abs(mean-r.AccuracyMean) > 1e-12 {
					return fmt.Errorf("mean accuracy %v, runs average %v", r.AccuracyMean, mean)
				}
				return nil
			},
		},
		{
			// No callback: poll mode cancels inside a later run's k-means.
			name: "psdlearn.KMeansBaseline", pollAt: 40,
			run: func(ctx context.Context, p *probe) (any, error) {
				mean, sd, err := psdlearn.KMeansBaseline(ctx, iris.X, iris.Y, 3, kmRuns, 2, kmSeed)
				return [2]float64{mean, sd}, err
			},
			result: func(m mode, p *probe, v any) error {
				ms := v.([2]float64)
				if math.IsNaN(ms[0]) && math.IsNaN(ms[1]) {
					if m == modePoll {
						return errors.New("no runs reported")
					}
					return nil
				}
				// The mean and deviation must be those of the first j runs.
				for j := 1; j <= kmRuns; j++ {
					var mean, ss float64
					for _, a := range ref[:j] {
						mean += a / float64(j)
					}
					for _, a := range ref[:j] {
						ss += (a - mean) * (a - mean)
					}
					sd := 0.0
					if j > 1 {
						sd = math.Sqrt(ss / float64(j-1))
					}
					if math.Abs(mean-ms[0]) < 1e-12 && math.Abs(sd-ms[1]) < 1e-12 {
						return nil
					}
				}
				return fmt.Errorf("mean %v, sd %v are not those of the runs completed before the cancellation", ms[0], ms[1])
			},
		},
	}
}

// isIterationLine reports whether a progress line of a trainer (not of the
// protocol itself) reports an iteration: the boosting lines ("iter N"), and
// LMNN's and ITML's events, which carry their iteration (LMNN reports at
// every impostor refresh, ITML after every cycle).
func isIterationLine(e progress.Event) bool {
	switch e.Algorithm {
	case "train", "boostmetric", "psdboost", "frobmetric":
		return strings.Contains(e.Message, "iter ")
	case "lmnn", "itml":
		return e.Iteration > 0
	}
	return strings.Contains(e.Message, "iter ")
}

func trainCases(b engine.Backend, iris, wine *data.Dataset) []cancelCase {
	var out []cancelCase
	type config struct {
		variant string // "" or a name for a variant's options
		data    *data.Dataset
		opts    runOpts
	}
	cfg := map[string][]config{
		"boostmetric": {{"", iris, runOpts{Iters: 40}}},
		"psdboost":    {{"", rows(iris, 2), runOpts{Iters: 40, C: []float64{20}}}},
		"frobmetric":  {{"", wine, runOpts{C: []float64{1e4}}}},
		"lmnn": {
			{"", wine, runOpts{Iters: 200}},
			{"rank 3", wine, runOpts{Iters: 200, Rank: 3}}, // the low-rank factor (--rank)
		},
		"itml": {{"", wine, runOpts{C: []float64{1e4}}}},
	}
	for _, algo := range psdlearn.Algorithms() {
		for _, c := range cfg[algo] { // none: registered by a test elsewhere
			out = append(out, trainCase(b, algo, c.variant, c.data, c.opts))
		}
	}
	return out
}

// trainCase is the cancellation case of one trainer (and option variant)
// through psdlearn.Run.
func trainCase(b engine.Backend, algo, variant string, d *data.Dataset, opts runOpts) cancelCase {
	name := "psdlearn.Run/" + algo
	if variant != "" {
		name += " " + variant
	}
	tc := cancelCase{
		name: name, hookAt: 2, pollAt: 2,
		run: func(ctx context.Context, p *probe) (any, error) {
			r, err := psdlearn.Run(ctx, learnerOf(algo, opts, psdlearn.Common{K: 3, Seed: 1, Backend: b,
				Progress: func(e progress.Event) {
					// FrobMetric's dual driver reports its evaluation
					// count (every 100 evaluations); the pipeline's own
					// lines carry none.
					if algo == "frobmetric" && e.Iteration > 0 || isIterationLine(e) {
						p.tick()
					}
				}}), psdlearn.Data{X: d.X, Y: d.Y, Test: d})
			if r == nil {
				return nil, err
			}
			return r, err
		},
		result: func(m mode, p *probe, v any) error {
			r, _ := v.(*psdlearn.Result)
			if r == nil {
				if needResult(m, p) {
					return fmt.Errorf("nil report after %d completed iterations", p.atCancel)
				}
				return nil
			}
			if r.Model == nil || r.Model.Metric == nil {
				return errors.New("result without a metric")
			}
			if algo != "frobmetric" {
				if err := iterations(p, r.Iterations); err != nil {
					return err
				}
			}
			if te := r.Eval.TestError; !math.IsNaN(te) && !(te >= 0 && te <= 1) {
				return fmt.Errorf("test error %v", te)
			}
			return checkPSD(r.Model.Metric.M, r.Iterations > 0)
		},
	}
	if algo == "frobmetric" {
		tc.hookAt = 1 // progress lines come every 100 dual evaluations
	}
	return tc
}

// rosenbrock is the n-dimensional Rosenbrock function.
func rosenbrock(x, g []float64) float64 {
	var f float64
	for i := range g {
		g[i] = 0
	}
	for i := 0; i+1 < len(x); i++ {
		a, c := 1-x[i], x[i+1]-x[i]*x[i]
		f += a*a + 100*c*c
		g[i] += -2*a - 400*x[i]*c
		g[i+1] += 200 * c
	}
	return f
}

// chain is the operator of the path-graph Laplacian (slowly converging
// Lanczos at its low end); every application ticks the probe.
type chain struct {
	n     int
	apply func()
}

func (c chain) Dim() int { return c.n }
func (c chain) Apply(dst, x []float64) {
	c.apply()
	for i := range dst {
		v := 2 * x[i]
		if i > 0 {
			v -= x[i-1]
		}
		if i+1 < c.n {
			v -= x[i+1]
		}
		dst[i] = v
	}
}

// randomLP is a feasible, bounded LP: maximise 1ᵀx s.t. A x ≤ 1, x ≥ 0, with
// A dense and positive; the simplex needs many pivots.
func randomLP(rowsN, cols int) engine.LPProblem {
	rng := rand.New(rand.NewPCG(5, 6))
	p := engine.LPProblem{RowLower: make([]float64, rowsN), RowUpper: make([]float64, rowsN)}
	for i := range p.RowLower {
		p.RowLower[i], p.RowUpper[i] = math.Inf(-1), 1
	}
	idx := make([]int, rowsN)
	for i := range idx {
		idx[i] = i
	}
	for j := 0; j < cols; j++ {
		vals := make([]float64, rowsN)
		for i := range vals {
			vals[i] = 0.1 + rng.Float64()
		}
		p.Cols = append(p.Cols, engine.LPNonNegative(-1-rng.Float64(), idx, vals))
	}
	return p
}

func engineCases(b engine.Backend) []cancelCase {
	const n = 30
	lp := randomLP(120, 240)
	var evalsAfter int
	out := []cancelCase{
		{
			name: "engine.Minimize", hookAt: 3, pollAt: 2,
			run: func(ctx context.Context, p *probe) (any, error) {
				evalsAfter = 0
				x0 := make([]float64, n)
				for i := range x0 {
					x0[i] = -1.2
				}
				f := func(x, g []float64) float64 {
					p.mu.Lock()
					if p.cancelled {
						evalsAfter++
					}
					p.mu.Unlock()
					return rosenbrock(x, g)
				}
				return b.Minimize(ctx, engine.Problem{Func: f}, x0, engine.MinimizeSettings{
					Callback: func(engine.MinimizeIteration) bool { p.tick(); return true }})
			},
			result: func(m mode, p *probe, v any) error {
				r := v.(engine.MinimizeResult)
				if evalsAfter > 0 {
					return fmt.Errorf("%d evaluations after the cancellation", evalsAfter)
				}
				if r.Reason != lbfgsb.ReasonCancelled {
					return fmt.Errorf("reason %v, want %v", r.Reason, lbfgsb.ReasonCancelled)
				}
				if len(r.X) != n {
					return fmt.Errorf("best point of length %d", len(r.X))
				}
				g := make([]float64, n)
				if f := rosenbrock(r.X, g); f != r.F && !(math.IsNaN(r.F) && r.Evaluations == 0) {
					return fmt.Errorf("F = %v but f(X) = %v", r.F, f)
				}
				if m == modeHook || m == modePoll {
					if err := iterations(p, r.Iterations); err != nil {
						return err
					}
					x0 := make([]float64, n)
					for i := range x0 {
						x0[i] = -1.2
					}
					if f0 := rosenbrock(x0, g); !(r.F < f0) {
						return fmt.Errorf("best value %v not below the start %v", r.F, f0)
					}
				}
				return nil
			},
		},
		{
			// The Apply hook counts operator products: cancellation must
			// stop the solve before the next one.
			name: "engine.Eigs", hookAt: 30, pollAt: 5,
			run: func(ctx context.Context, p *probe) (any, error) {
				op := chain{n: 400, apply: p.tick}
				return b.Eigs(ctx, op, 4, engine.SmallestAlgebraic, engine.EigsOptions{Seed: 1})
			},
			result: func(m mode, p *probe, v any) error {
				r := v.(engine.EigsResult)
				if len(r.Values) != 0 {
					if r.Vectors == nil {
						return errors.New("eigenvalues without eigenvectors")
					}
					if _, c := r.Vectors.Dims(); c != len(r.Values) {
						return fmt.Errorf("%d eigenvalues, %d eigenvectors", len(r.Values), c)
					}
				}
				return nil
			},
		},
	}
	lpCase := cancelCase{
		// No callback: poll mode cancels at the tenth context check (the
		// full solve takes 189 pivots on the "go" backend).
		name: "engine.LP", pollAt: 10,
		run: func(ctx context.Context, p *probe) (any, error) {
			model, err := b.LP().NewModel(lp)
			if err != nil {
				return nil, err
			}
			defer model.Close()
			return model.Solve(ctx)
		},
		result: func(m mode, p *probe, v any) error {
			s, ok := v.(engine.LPSolution)
			if !ok {
				return fmt.Errorf("no solution value (%T)", v)
			}
			// Each context check may be followed by at most one pivot.
			if s.Iterations > p.pollsCancel {
				return fmt.Errorf("%d simplex iterations for %d context checks before the cancellation", s.Iterations, p.pollsCancel)
			}
			return nil
		},
	}
	if b.Name() == "native" {
		lpCase.pollAt = 2 // CLP checks the context only before and after the solve
		lpCase.finding = "the CLP simplex is not interruptible: a cancellation (without deadline) is noticed only after the solve (lp/native.go Solve)"
	}
	out = append(out, lpCase)
	return out
}

func evalCases(iris *data.Dataset) []cancelCase {
	return []cancelCase{{
		name: "eval.KMeans", pollAt: 15,
		run: func(ctx context.Context, p *probe) (any, error) {
			return eval.KMeans(ctx, iris.X, 3, eval.KMeansOptions{Restarts: 10, Seed: 1})
		},
		result: func(m mode, p *probe, v any) error {
			r, _ := v.(*eval.KMeansResult)
			if r == nil {
				if m == modePoll {
					return errors.New("nil result after completed k-means starts")
				}
				return nil
			}
			if len(r.Assign) != iris.Len() || math.IsNaN(r.Inertia) {
				return errors.New("incomplete clustering")
			}
			return nil
		},
	}}
}

// runOpts are the options the reliability cases set on a learner.
type runOpts struct {
	Iters, Rank int
	C           []float64
}

// learnerOf returns the learner algo with the options o and the settings c.
func learnerOf(algo string, o runOpts, c psdlearn.Common) psdlearn.Learner {
	switch algo {
	case "boostmetric":
		return psdlearn.BoostMetric{Common: c, Iters: o.Iters}
	case "psdboost":
		return psdlearn.PSDBoost{Common: c, Iters: o.Iters, C: o.C}
	case "frobmetric":
		return psdlearn.FrobMetric{Common: c, Iters: o.Iters, C: o.C}
	case "lmnn":
		return psdlearn.LMNN{Common: c, Iters: o.Iters, Rank: o.Rank}
	case "itml":
		return psdlearn.ITML{Common: c, Iters: o.Iters, Gamma: o.C}
	}
	panic("unknown algorithm " + algo)
}
