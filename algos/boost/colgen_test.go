package boost

import (
	"context"
	"math"
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/lp"
	"gonum.org/v1/gonum/mat"
)

// minOf returns the smallest element of xs.
func minOf(xs []float64) float64 {
	m := math.Inf(1)
	for _, x := range xs {
		m = math.Min(m, x)
	}
	return m
}

// TestPSDBoostPricingVariants: single-column pricing, multiple pricing and
// multiple pricing with dual smoothing all converge to the same SDP optimum
// (each certifies π ≤ opt ≤ π + ε, so two finals differ by at most ε), on
// both eigensolver paths where they differ. Each certificate is checked
// from scratch: the returned weights u are feasible (0 ≤ u ≤ C, 1ᵀu = 1),
// λmax(Σ u_r A_r) assembled densely from the A_r is π + SDPGap ≤ π + ε, and
// the objective of X recomputed from its margins is π; the LP duality gap
// of the last master is ≤ 1e-8.
func TestPSDBoostPricingVariants(t *testing.T) {
	const (
		m   = 300
		eps = 1e-7
	)
	x, y := standardized(t, "wine")
	b := engine.Default()
	all, err := makeTriplets(b, x, y, 3)
	if err != nil {
		t.Fatal(err)
	}
	ts := subsample(t, all, m, 3)
	c := 1 / (0.1 * m)
	solver := lp.Go
	if lp.HaveNative {
		solver = lp.Native
	}
	tests := []struct {
		name  string
		cols  int
		alpha float64
		eig   EigMethod
	}{
		{"single", 1, -1, EigDense},
		{"multiple", 0, -1, EigDense},
		{"multiple 4", 4, -1, EigDense},
		{"multiple smoothed (defaults)", 0, 0, EigDense},
		{"single smoothed", 1, 0.8, EigDense},
		{"lanczos", 0, -1, EigLanczos},
		{"lanczos smoothed", 0, 0.5, EigLanczos},
	}
	var ref float64
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := PSDBoost(context.Background(), x, ts, Options{Backend: b, lp: solver, C: c, Eps: eps,
				Columns: tc.cols, Stabilize: tc.alpha, Eig: tc.eig})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d iterations (%s), π = %.12g, λ − π = %.3g, %d terms", res.Iterations, res.Stop, res.Pi, res.SDPGap, len(res.W))
			if res.Stop != StopConverged {
				t.Fatalf("stopped on %v", res.Stop)
			}
			if !(res.SDPGap <= eps) {
				t.Errorf("SDP gap %g > ε", res.SDPGap)
			}
			if !(res.DualityGap <= 1e-8 && res.DualityGap >= -1e-12) {
				t.Errorf("LP duality gap %g", res.DualityGap)
			}
			var su float64
			for r, v := range res.U {
				su += v
				if v < -1e-12 || v > c+1e-12 {
					t.Errorf("u[%d] = %g outside [0, C]", r, v)
				}
			}
			if math.Abs(su-1) > 1e-9 {
				t.Errorf("Σu = %.15g", su)
			}
			ev := spectrum(t, naiveAhat(x, ts, res.U))
			lam := ev[len(ev)-1]
			if math.Abs(lam-(res.Pi+res.SDPGap)) > 1e-9*(1+math.Abs(lam)) || lam > res.Pi+eps+1e-12 {
				t.Errorf("λmax(Â(u)) = %.12g, π + SDPGap = %.12g, π + ε = %.12g", lam, res.Pi+res.SDPGap, res.Pi+eps)
			}
			_, d := x.Dims()
			xm := res.Matrix(d)
			if tr := mat.Trace(xm); math.Abs(tr-1) > 1e-9 {
				t.Errorf("tr X = %.15g", tr)
			}
			if pX := hingeValue(naiveMargins(x, ts, xm), c); math.Abs(pX-res.Pi) > 1e-8 {
				t.Errorf("objective of X %.12g, π %.12g", pX, res.Pi)
			}
			if i == 0 {
				ref = res.Pi
			} else if math.Abs(res.Pi-ref) > eps {
				t.Errorf("π = %.12g, single-column pricing %.12g", res.Pi, ref)
			}
		})
	}
}

// TestPSDBoostPricingOptions rejects invalid multiple-pricing and smoothing options.
func TestPSDBoostPricingOptions(t *testing.T) {
	x, y := standardized(t, "iris")
	b := goBackend(t)
	ts, err := makeTriplets(b, x, y, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range []Options{{Columns: -1}, {Stabilize: 1}, {Stabilize: 2}, {Stabilize: math.NaN()}} {
		opt.Backend = b
		if _, err := PSDBoost(context.Background(), x, ts, opt); err == nil {
			t.Errorf("Columns %d, Stabilize %g: no error", opt.Columns, opt.Stabilize)
		}
	}
}
