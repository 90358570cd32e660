package boost

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/lp"
	"github.com/psdlearn/psdlearn/progress"
	"gonum.org/v1/gonum/mat"
)

// hingeValue returns max_ρ ρ − C Σ_r (ρ − g_r)_+ by evaluating the concave
// piecewise-linear function at every breakpoint (independent of primalValue).
func hingeValue(g []float64, c float64) float64 {
	best := math.Inf(-1)
	for _, rho := range g {
		v := rho
		for _, gr := range g {
			if gr < rho {
				v -= c * (rho - gr)
			}
		}
		best = math.Max(best, v)
	}
	return best
}

// naiveAhat assembles Σ_r u_r A_r from the points (tests only: the library never forms an A_r).
func naiveAhat(x *mat.Dense, ts *constraints.TripletSet, u []float64) *mat.SymDense {
	_, d := x.Dims()
	a := mat.NewSymDense(d, nil)
	p := mat.NewVecDense(d, nil)
	q := mat.NewVecDense(d, nil)
	for r, tr := range ts.Triplets {
		for c := 0; c < d; c++ {
			p.SetVec(c, x.At(tr.I, c)-x.At(tr.K, c))
			q.SetVec(c, x.At(tr.I, c)-x.At(tr.J, c))
		}
		a.SymRankOne(a, u[r], p)
		a.SymRankOne(a, -u[r], q)
	}
	return a
}

// TestPSDBoostSmall is the acceptance test of PSDBoost on small problems
// (D ≤ 13, 200 triplets): it terminates on the column-generation optimality
// criterion λmax(Â(u)) ≤ π + ε with an LP duality gap ≤ 1e-8, the learned X
// is feasible for the trace-one SDP, its hinge objective recomputed from X
// itself is π, and the SDP optimum is certified to lie in [π, π + ε].
func TestPSDBoostSmall(t *testing.T) {
	const (
		m   = 200
		eps = 1e-7
	)
	c := 1 / (0.1 * m)
	type tc struct {
		data   string
		solver lp.Solver
		age    int // Options.termAge: 2 drops terms from the master early
	}
	cases := []tc{{"iris", lp.Go, 0}, {"wine", lp.Go, 0}, {"wine", lp.Go, 2}}
	if lp.HaveNative {
		cases = append(cases, tc{"iris", lp.Native, 0}, tc{"wine", lp.Native, 0}, tc{"wine", lp.Native, 2})
	}
	for _, k := range cases {
		t.Run(fmt.Sprintf("%s/%s/term-age=%d", k.data, k.solver.Name(), k.age), func(t *testing.T) {
			x, y := standardized(t, k.data)
			b := engine.Default()
			all, err := makeTriplets(b, x, y, 3)
			if err != nil {
				t.Fatal(err)
			}
			ts := subsample(t, all, m, 1)
			res, err := PSDBoost(context.Background(), x, ts, Options{Backend: b, lp: k.solver, C: c, Eps: eps, termAge: k.age})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s, %s LP: %d iterations (%s), π = %.12g, λmax − π = %.3g, LP duality gap = %.3g, %d terms",
				k.data, k.solver.Name(), res.Iterations, res.Stop, res.Pi, res.SDPGap, res.DualityGap, len(res.W))
			t.Logf("π per iteration (Figure 1): %.8g", res.Curve)
			if res.Stop != StopConverged {
				t.Fatalf("stopped on %v, want convergence", res.Stop)
			}
			// LP duality gap of the last restricted master problem.
			if !(res.DualityGap <= 1e-8 && res.DualityGap >= -1e-12) {
				t.Errorf("LP duality gap %g, want in [0, 1e-8]", res.DualityGap)
			}
			// The duals are feasible for (D1): 1ᵀu = 1, 0 ≤ u ≤ C.
			var su float64
			for r, v := range res.U {
				su += v
				if v < -1e-9 || v > c+1e-9 {
					t.Errorf("u[%d] = %g outside [0, C=%g]", r, v, c)
				}
			}
			if math.Abs(su-1) > 1e-9 {
				t.Errorf("Σu = %.15g, want 1", su)
			}
			// X is feasible for the trace-one SDP.
			_, d := x.Dims()
			xm := res.Matrix(d)
			if tr := mat.Trace(xm); math.Abs(tr-1) > 1e-9 {
				t.Errorf("tr X = %.15g, want 1", tr)
			}
			if ev := spectrum(t, xm); ev[0] < -1e-12 {
				t.Errorf("X has eigenvalue %g < 0", ev[0])
			}
			for j, w := range res.W {
				if !(w > 0) {
					t.Errorf("w[%d] = %g", j, w)
				}
				nrm := mat.Norm(res.V.ColView(j), 2)
				if math.Abs(nrm-1) > 1e-12 {
					t.Errorf("‖v_%d‖ = %.15g", j, nrm)
				}
			}
			// Its hinge objective, from X alone, is π.
			pX := hingeValue(naiveMargins(x, ts, xm), c)
			if math.Abs(pX-res.Pi) > 1e-8 {
				t.Errorf("objective of X = %.12g, π = %.12g", pX, res.Pi)
			}
			// SDP certificate: λmax(Σ u_r A_r), recomputed densely from the A_r,
			// is the smallest pricing value, π + SDPGap, and bounds the
			// optimum: π ≤ opt ≤ λ ≤ π + ε.
			ev := spectrum(t, naiveAhat(x, ts, res.U))
			lam := ev[len(ev)-1]
			if best := minOf(res.Lambda); math.Abs(lam-best) > 1e-9*(1+math.Abs(lam)) || math.Abs(lam-(res.Pi+res.SDPGap)) > 1e-9*(1+math.Abs(lam)) {
				t.Errorf("λmax(Â(u)) = %.12g, smallest pricing value %.12g, π + SDPGap = %.12g", lam, best, res.Pi+res.SDPGap)
			}
			if lam > res.Pi+eps+1e-12 {
				t.Errorf("λmax(Â(u)) = %.12g > π + ε = %.12g", lam, res.Pi+eps)
			}
			// π increases towards the optimum (restricted masters grow).
			for i := 1; i < len(res.Curve); i++ {
				if res.Curve[i] < res.Curve[i-1]-1e-10 {
					t.Errorf("π decreased at iteration %d: %.12g → %.12g", i+1, res.Curve[i-1], res.Curve[i])
				}
			}
			if res.Curve[len(res.Curve)-1] != res.Pi {
				t.Errorf("curve ends at %g, π = %g", res.Curve[len(res.Curve)-1], res.Pi)
			}
		})
	}
}

// TestPSDBoostLPAgreement checks that CLP and the pure-Go simplex reach the
// same SDP optimum, and so does CLP with a master that keeps only a few
// triplet columns: all finals satisfy π ≤ opt ≤ π + ε, so they differ by ≤ ε.
func TestPSDBoostLPAgreement(t *testing.T) {
	if !lp.HaveNative {
		t.Skip("CLP not compiled in")
	}
	x, y := standardized(t, "iris")
	b := goBackend(t)
	all, err := makeTriplets(b, x, y, 3)
	if err != nil {
		t.Fatal(err)
	}
	ts := subsample(t, all, 120, 2)
	const eps = 1e-7
	for _, frac := range []float64{0.2, 0.6} {
		// Both LPs (Go in the primal form), and both in the dual form keeping
		// 10 columns (most triplets then move between the LP, 0 and C from
		// term to term).
		var pis []float64
		for _, o := range []Options{{lp: lp.Go}, {lp: lp.Native}, {lp: lp.Native, keep: 10}, {lp: lp.Go, keep: 10, lpDual: true}, {lp: lp.Native, termAge: 1}, {lp: lp.Go, termAge: 1}} {
			o.Backend, o.C, o.Eps = b, 1/(frac*120), eps
			res, err := PSDBoost(context.Background(), x, ts, o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Stop != StopConverged {
				t.Fatalf("fraction %g, %s LP, keep %d: stopped on %v", frac, o.lp.Name(), o.keep, res.Stop)
			}
			if !(res.DualityGap <= 1e-8 && res.DualityGap >= -1e-12) {
				t.Errorf("fraction %g, %s LP, keep %d: LP duality gap %g", frac, o.lp.Name(), o.keep, res.DualityGap)
			}
			pis = append(pis, res.Pi)
		}
		if math.Abs(pis[0]-pis[1]) > eps || math.Abs(pis[0]-pis[2]) > eps || math.Abs(pis[0]-pis[3]) > eps || math.Abs(pis[0]-pis[4]) > eps || math.Abs(pis[0]-pis[5]) > eps {
			t.Errorf("fraction %g: π go %.12g, native %.12g, keeping 10 columns: native %.12g, go %.12g, dropping terms after one solve: native %.12g, go %.12g", frac, pis[0], pis[1], pis[2], pis[3], pis[4], pis[5])
		}
	}
}

func TestPSDBoostInvalid(t *testing.T) {
	x, y := standardized(t, "iris")
	b := goBackend(t)
	ts, err := makeTriplets(b, x, y, 1)
	if err != nil {
		t.Fatal(err)
	}
	m := float64(ts.Len())
	tests := []struct {
		name string
		x    *mat.Dense
		opt  Options
	}{
		{"C below 1/m", x, Options{C: 0.5 / m}},
		{"negative C", x, Options{C: -1}},
		{"negative eps", x, Options{Eps: -1}},
		{"nil data", nil, Options{}},
		{"wrong rows", mat.NewDense(10, 4, nil), Options{}},
		{"NaN data", func() *mat.Dense { z := mat.DenseCopyOf(x); z.Set(3, 1, math.NaN()); return z }(), Options{}},
		{"bad eig method", x, Options{Eig: EigMethod(7)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opt.Backend = b
			_, err := PSDBoost(context.Background(), tc.x, ts, tc.opt)
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v, want ErrInvalid", err)
			}
		})
	}
}

func TestPSDBoostCancel(t *testing.T) {
	x, y := standardized(t, "iris")
	b := goBackend(t)
	ts, err := makeTriplets(b, x, y, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	_, err = PSDBoost(ctx, x, ts, Options{Backend: b, Progress: func(progress.Event) {
		if n++; n == 2 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

// BenchmarkPSDBoostWineGoLP runs the wine acceptance problem with the pure-Go LP.
func BenchmarkPSDBoostWineGoLP(b *testing.B) {
	x, y := standardized(b, "wine")
	be := goBackend(b)
	all, err := makeTriplets(be, x, y, 3)
	if err != nil {
		b.Fatal(err)
	}
	ts := subsample(b, all, 200, 1)
	for i := 0; i < b.N; i++ {
		res, err := PSDBoost(context.Background(), x, ts, Options{Backend: be, lp: lp.Go, C: 1 / (0.1 * 200)})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Iterations), "iterations")
	}
}

func ExamplePSDBoost() {
	// Four points in two classes ({0, 1} and {2, 3}), one triplet per point:
	// a_i is closer to its same-class neighbour than to a point of the other
	// class. The hard-margin (C = 1) optimum turns the metric by −π/8 from the
	// first axis: X = v vᵀ with v = (cos π/8, −sin π/8), margin (1 + √2)·3/2.
	x := mat.NewDense(4, 2, []float64{
		0, 0,
		1, 0.5,
		3, 0,
		4, 0.5,
	})
	ts, err := constraints.NewTripletSet(4, []constraints.Triplet{
		{I: 0, J: 1, K: 2}, {I: 1, J: 0, K: 2}, {I: 2, J: 3, K: 1}, {I: 3, J: 2, K: 1},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := PSDBoost(context.Background(), x, ts, Options{C: 1, Backend: engine.Default()})
	if err != nil {
		fmt.Println(err)
		return
	}
	// PSDBoost solves the trace-one problem on x/s (s = res.Scale) and
	// returns X in the units of x: s²X is the trace-one optimum, and s²π its
	// margin in the units of x.
	xm := res.Matrix(2)
	s2 := res.Scale * res.Scale
	fmt.Printf("%s after %d iteration(s); margin π = %.4f; X = [%.4f %.4f; %.4f %.4f]\n",
		res.Stop, res.Iterations, s2*res.Pi, s2*xm.At(0, 0), s2*xm.At(0, 1), s2*xm.At(1, 0), s2*xm.At(1, 1))
	// Output: converged after 2 iteration(s); margin π = 3.6213; X = [0.8536 -0.3536; -0.3536 0.1464]
}
