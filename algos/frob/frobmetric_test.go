package frob

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn/algos/internal/dualsolve"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine/enginetest"
	"github.com/psdlearn/psdlearn/progress"
	"gonum.org/v1/gonum/mat"
)

// smallSet returns a standardised data set with its protocol triplets (k = 3).
func smallSet(t testing.TB, name string) (*data.Dataset, *constraints.TripletSet) {
	d := standardize(t, loadSet(t, name))[0]
	return d, tripletsOf(t, d.X, d.Y, 3)
}

// explicitDual computes Σ_r u_r A_r by forming every A_r (fine for tests
// only), its positive part and the dual objective Σu − ½‖(Σ u A)_+‖²,
// independently of the weighted Gram / pair-distance path.
func explicitDual(x *mat.Dense, ts *constraints.TripletSet, u []float64) (*mat.SymDense, float64) {
	_, d := x.Dims()
	g := mat.NewSymDense(d, nil)
	p := make([]float64, d)
	q := make([]float64, d)
	var sum float64
	for r, tr := range ts.Triplets {
		for c := 0; c < d; c++ {
			p[c] = x.At(tr.I, c) - x.At(tr.K, c)
			q[c] = x.At(tr.I, c) - x.At(tr.J, c)
		}
		g.SymRankOne(g, u[r], mat.NewVecDense(d, p))
		g.SymRankOne(g, -u[r], mat.NewVecDense(d, q))
		sum += u[r]
	}
	var es mat.EigenSym
	if !es.Factorize(g, true) {
		panic("eigen failed")
	}
	var v mat.Dense
	es.VectorsTo(&v)
	vals := es.Values(nil)
	pos := mat.NewSymDense(d, nil)
	var half float64
	for j, l := range vals {
		if l > 0 {
			pos.SymRankOne(pos, l, v.ColView(j))
			half += 0.5 * l * l
		}
	}
	return pos, sum - half
}

// explicitPrimal computes ½‖M‖² + (C/m) Σ max(0, 1 − ⟨A_r, M⟩) from the triplet vectors.
func explicitPrimal(x *mat.Dense, ts *constraints.TripletSet, m *mat.SymDense, c float64) (float64, []float64) {
	_, d := x.Dims()
	p := mat.NewVecDense(d, nil)
	q := mat.NewVecDense(d, nil)
	margins := make([]float64, ts.Len())
	var hinge float64
	for r, tr := range ts.Triplets {
		for k := 0; k < d; k++ {
			p.SetVec(k, x.At(tr.I, k)-x.At(tr.K, k))
			q.SetVec(k, x.At(tr.I, k)-x.At(tr.J, k))
		}
		margins[r] = mat.Inner(p, m, p) - mat.Inner(q, m, q)
		hinge += math.Max(0, 1-margins[r])
	}
	var fro float64
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			fro += m.At(i, j) * m.At(i, j)
		}
	}
	return 0.5*fro + c/float64(ts.Len())*hinge, margins
}

func TestMetricGradient(t *testing.T) {
	d, ts := smallSet(t, "iris")
	m := ts.Len()
	for _, b := range enginetest.Backends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			c := 10.0
			ev := &metricEval{b: b, x: d.X, ts: ts, cm: c / float64(m), n: d.Len(), d: d.Dim(),
				g: mat.NewSymDense(d.Dim(), nil), pd: make([]float64, len(ts.Pairs)), margin: make([]float64, m)}
			rng := rand.New(rand.NewPCG(1, 2))
			u := make([]float64, m)
			for i := range u {
				u[i] = rng.Float64() * c / float64(m)
			}
			grad := make([]float64, m)
			f, err := ev.eval(u, grad)
			if err != nil {
				t.Fatal(err)
			}
			// The value agrees with the explicit dual.
			_, dual := explicitDual(d.X, ts, u)
			if math.Abs(-f-dual) > 1e-10*math.Max(1, math.Abs(dual)) {
				t.Errorf("dual %.15g, explicit %.15g", -f, dual)
			}
			// Central differences along coordinates and a random direction.
			g2 := make([]float64, m)
			check := func(dir []float64, want float64) {
				h := 1e-6 * c / float64(m)
				up := make([]float64, m)
				dn := make([]float64, m)
				for i := range u {
					up[i] = u[i] + h*dir[i]
					dn[i] = u[i] - h*dir[i]
				}
				fu, _ := ev.eval(up, g2)
				fd, _ := ev.eval(dn, g2)
				fdv := (fu - fd) / (2 * h)
				if math.Abs(fdv-want) > 1e-5*math.Max(1, math.Abs(want)) {
					t.Errorf("directional derivative %.10g, finite difference %.10g", want, fdv)
				}
			}
			for _, r := range []int{0, 17, m / 2, m - 1} {
				dir := make([]float64, m)
				dir[r] = 1
				check(dir, grad[r])
			}
			dir := make([]float64, m)
			var want float64
			for i := range dir {
				dir[i] = rng.NormFloat64()
				want += dir[i] * grad[i]
			}
			check(dir, want)
		})
	}
}

func TestLearnDualityGap(t *testing.T) {
	for _, tc := range []struct {
		set string
		c   float64
	}{
		{"iris", 1}, {"iris", 100}, {"wine", 10}, {"wine", 1000},
	} {
		d, ts := smallSet(t, tc.set)
		for _, b := range enginetest.Backends(t) {
			t.Run(tc.set+"/"+b.Name(), func(t *testing.T) {
				res, err := Learn(context.Background(), d.X, ts, MetricOptions{C: tc.c, Backend: b})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("C=%g: %d iterations, %d evaluations, primal %.10g, rel. gap %.3g (%s), %d violations",
					tc.c, res.Iterations, res.Evaluations, res.Primal, res.RelGap, res.Reason, res.Violations)
				if !(res.RelGap <= 1e-6) || !res.Certified {
					t.Errorf("relative duality gap %.3g, want ≤ 1e-6", res.RelGap)
				}
				// The certificate recomputed from scratch: primal of M from the
				// triplet vectors, dual of u from explicitly formed A_r.
				cm := tc.c / float64(ts.Len())
				for r, v := range res.U {
					if v < 0 || v > cm {
						t.Fatalf("u[%d] = %g outside [0, %g]", r, v, cm)
					}
				}
				if g := checkCertificate(t, d.X, ts, res, tc.c); !(g <= 1e-6) {
					t.Errorf("explicit relative gap %.3g", g)
				}
				// At a certified optimum the primal scaling is (nearly) 1.
				if math.Abs(res.Scale-1) > 1e-3 {
					t.Errorf("primal scale %v, want ≈ 1 at the optimum", res.Scale)
				}
			})
		}
	}
}

// TestLearnDualityGapLetters is the letters part of the acceptance: the
// fixed split's 10,500 standardised training rows, 94,500 triplets (solved
// by working sets), C = 100, on every backend; the certificate is
// recomputed from explicitly formed A_r and must be ≤ 1e-6 relative.
func TestLearnDualityGapLetters(t *testing.T) {
	if testing.Short() {
		t.Skip("letters: a few seconds per backend")
	}
	parts, err := data.SplitRows(loadSet(t, "letters"), []int{10500, 4500, 5000})
	if err != nil {
		t.Fatal(err)
	}
	trn := standardize(t, parts[0])[0]
	ts := tripletsOf(t, trn.X, trn.Y, 3)
	const c = 100
	for _, b := range enginetest.Backends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			res, err := Learn(context.Background(), trn.X, ts, MetricOptions{C: c, Backend: b})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d iterations, %d evaluations (%d over all triplets, %d rounds), rel. gap %.3g (%s)",
				res.Iterations, res.Evaluations, res.FullEvaluations, res.Rounds, res.RelGap, res.Reason)
			if !res.Certified || res.Rounds == 0 {
				t.Errorf("certified %v after %d working-set rounds", res.Certified, res.Rounds)
			}
			if g := checkCertificate(t, trn.X, ts, res, c); !(g <= 1e-6) {
				t.Errorf("explicit relative gap %.3g, want ≤ 1e-6", g)
			}
		})
	}
}

func TestLearnBackendsAgree(t *testing.T) {
	bs := enginetest.Backends(t)
	if len(bs) < 2 {
		t.Skip("only one backend")
	}
	d, ts := smallSet(t, "wine")
	var ms []*mat.SymDense
	for _, b := range bs {
		res, err := Learn(context.Background(), d.X, ts, MetricOptions{C: 100, Backend: b, GapTol: 1e-9})
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, res.M)
	}
	// Both solve the same strictly convex primal: X* is unique.
	var diff mat.Dense
	diff.Sub(ms[0], ms[1])
	if rel := mat.Norm(&diff, 2) / mat.Norm(ms[0], 2); rel > 1e-3 {
		t.Errorf("metrics of the two backends differ by %.3g (relative)", rel)
	}
}

func TestLearnCancel(t *testing.T) {
	d, ts := smallSet(t, "wine")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Learn(ctx, d.X, ts, MetricOptions{C: 10})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

func TestLearnInputErrors(t *testing.T) {
	d, ts := smallSet(t, "iris")
	nan := mat.DenseCopyOf(d.X)
	nan.Set(3, 1, math.NaN())
	short := mat.NewDense(10, d.Dim(), nil)
	for _, tc := range []struct {
		name string
		x    *mat.Dense
		ts   *constraints.TripletSet
		opt  MetricOptions
	}{
		{"nil data", nil, ts, MetricOptions{C: 1}},
		{"nil triplets", d.X, nil, MetricOptions{C: 1}},
		{"zero C", d.X, ts, MetricOptions{C: 0}},
		{"negative C", d.X, ts, MetricOptions{C: -1}},
		{"infinite C", d.X, ts, MetricOptions{C: math.Inf(1)}},
		{"NaN data", nan, ts, MetricOptions{C: 1}},
		{"rows mismatch", short, ts, MetricOptions{C: 1}},
		{"bad U0", d.X, ts, MetricOptions{C: 1, U0: []float64{1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Learn(context.Background(), tc.x, tc.ts, tc.opt); !errors.Is(err, ErrInput) {
				t.Errorf("got %v, want ErrInput", err)
			}
		})
	}
}

// TestLearnNewtonPolish stops L-BFGS-B early: the semismooth Newton polish
// must certify the solution, and agree with a full L-BFGS-B solve.
func TestLearnNewtonPolish(t *testing.T) {
	d, ts := smallSet(t, "wine")
	for _, b := range enginetest.Backends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			full, err := Learn(context.Background(), d.X, ts, MetricOptions{C: 100, Backend: b, NewtonSteps: -1, GapTol: 1e-9})
			if err != nil {
				t.Fatal(err)
			}
			res, err := Learn(context.Background(), d.X, ts, MetricOptions{C: 100, Backend: b, HandoverGap: 1e-3, Restarts: -1})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("L-BFGS-B alone: %d iterations (%s, gap %.3g); with hand-over at 1e-3: %d iterations, %d evaluations (%s)",
				full.Iterations, full.Reason, full.RelGap, res.Iterations, res.Evaluations, res.Reason)
			if !res.Certified || res.RelGap > DefaultGapTol || !strings.Contains(res.Reason, "Newton") {
				t.Errorf("polish did not certify: %s, rel. gap %.3g", res.Reason, res.RelGap)
			}
			if !mat.EqualApprox(res.M, full.M, 1e-4*mat.Norm(full.M, math.Inf(1))) {
				t.Errorf("polished metric differs from the L-BFGS-B solution")
			}
		})
	}
}

// TestProgressHeartbeat: with the heartbeat at zero every exact evaluation
// reports, not just every 100th.
func TestProgressHeartbeat(t *testing.T) {
	defer func(h time.Duration) { dualsolve.ProgressHeartbeat = h }(dualsolve.ProgressHeartbeat)
	dualsolve.ProgressHeartbeat = 0
	d, ts := smallSet(t, "wine")
	evalLines := 0
	res, err := Learn(context.Background(), d.X, ts, MetricOptions{C: 100, Progress: func(e progress.Event) {
		if strings.Contains(e.Message, ": eval ") {
			evalLines++
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Evaluations < 20 || evalLines < res.Evaluations/2 {
		t.Errorf("%d evaluation lines for %d evaluations, want one per exact evaluation", evalLines, res.Evaluations)
	}
}

// TestLearnCancelMidRun cancels after the first progress report (every 100
// evaluations) and checks that the best iterate comes back with the error:
// a PSD metric whose reported gap is the independently recomputed one.
func TestLearnCancelMidRun(t *testing.T) {
	d, ts := smallSet(t, "wine")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reports := 0
	res, err := Learn(ctx, d.X, ts, MetricOptions{C: 1000, GapTol: 1e-12, Progress: func(progress.Event) {
		reports++
		if reports == 1 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if res == nil {
		t.Fatal("no result returned with the cancellation error")
	}
	if res.Certified || res.Reason != "cancelled" {
		t.Errorf("Certified = %v, Reason = %q; want false, cancelled", res.Certified, res.Reason)
	}
	if res.Evaluations > 102 {
		t.Errorf("%d evaluations: cancellation at evaluation 100 was not honoured promptly", res.Evaluations)
	}
	checkCertificate(t, d.X, ts, res, 1000)
}

// checkCertificate recomputes res's certificate from scratch (primal of M
// from the triplet vectors, dual of U from explicitly formed A_r), checks
// that it matches the reported one, that M = Scale·(Σ u_r A_r)_+ unless M
// is a refined primal point, and that M is PSD, and returns the explicit
// relative gap.
func checkCertificate(t *testing.T, x *mat.Dense, ts *constraints.TripletSet, res *MetricResult, c float64) float64 {
	t.Helper()
	// Learn solves the problem on x/s (s the data's RMS deviation) and
	// returns M in the units of x: the certificate is that of x/s and M·s².
	s := naiveRMSDeviation(x)
	if math.Abs(res.DataScale-s) > 1e-12*s {
		t.Errorf("DataScale %.17g, RMS deviation of the data %.17g", res.DataScale, s)
	}
	var xs mat.Dense
	xs.Scale(1/res.DataScale, x)
	x = &xs
	mres := *res
	mres.M = mat.NewSymDense(res.M.SymmetricDim(), nil)
	mres.M.ScaleSym(res.DataScale*res.DataScale, res.M)
	res = &mres
	pos, dual := explicitDual(x, ts, res.U)
	primal, _ := explicitPrimal(x, ts, res.M, c)
	g := (primal - dual) / math.Max(1, math.Abs(primal))
	if g < -1e-9 || math.Abs(g-res.RelGap) > 1e-8+1e-6*math.Abs(g) {
		t.Errorf("explicit relative gap %.6g (primal %.12g, dual %.12g), reported %.6g", g, primal, dual, res.RelGap)
	}
	pos.ScaleSym(res.Scale, pos)
	if !res.Refined && !mat.EqualApprox(pos, res.M, 1e-9*math.Max(1, mat.Norm(pos, math.Inf(1)))) {
		t.Errorf("M differs from Scale·(Σ u_r A_r)_+")
	}
	var es mat.EigenSym
	if !es.Factorize(res.M, false) {
		t.Fatal("eigen failed")
	}
	if vals := es.Values(nil); vals[0] < -1e-12*math.Max(1, vals[len(vals)-1]) {
		t.Errorf("M has eigenvalue %g", vals[0])
	}
	return g
}

// naiveRMSDeviation is √(Σ_ij (x_ij − μ_j)² / (n·d)) computed directly.
func naiveRMSDeviation(x *mat.Dense) float64 {
	n, d := x.Dims()
	var ss float64
	for j := 0; j < d; j++ {
		var mu float64
		for i := 0; i < n; i++ {
			mu += x.At(i, j)
		}
		mu /= float64(n)
		for i := 0; i < n; i++ {
			e := x.At(i, j) - mu
			ss += e * e
		}
	}
	return math.Sqrt(ss / float64(n*d))
}
