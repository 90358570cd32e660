package sdp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/engine/enginetest"
	"github.com/psdlearn/psdlearn/progress"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// waterFill returns ν with Σ_i σ·max(c_i − ν, 0) = t, by bisection.
func waterFill(c []float64, sigma, t float64) float64 {
	lo, hi := -1e6, 1e6
	for it := 0; it < 200; it++ {
		mid := 0.5 * (lo + hi)
		var s float64
		for _, v := range c {
			s += sigma * math.Max(v-mid, 0)
		}
		if s > t {
			lo = mid
		} else {
			hi = mid
		}
	}
	return 0.5 * (lo + hi)
}

// TestSDPTraceConstraint checks min ⟨C,X⟩ + ‖X‖²/(2σ) s.t. X ⪰ 0, tr X = t
// (or ≤ t) against its analytic solution: with −C = Q diag(c) Qᵀ,
// X* = Q diag(σ(c_i − ν)_+) Qᵀ where ν solves Σ σ(c_i − ν)_+ = t (ν = 0 when
// the inequality is slack).
func TestSDPTraceConstraint(t *testing.T) {
	const n = 40
	rng := rand.New(rand.NewPCG(3, 4))
	var qr mat.QR
	g := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	qr.Factorize(g)
	var q mat.Dense
	qr.QTo(&q)
	c := make([]float64, n)
	for i := range c {
		c[i] = -1 - rng.Float64() // mostly negative: few eigenvalues of −C are positive
	}
	for i := 0; i < 5; i++ {
		c[i] = 1 + 2*rng.Float64()
	}
	cm := mat.NewSymDense(n, nil) // C = −Q diag(c) Qᵀ
	for i := 0; i < n; i++ {
		cm.SymRankOne(cm, -c[i], q.ColView(i))
	}
	var entries []Entry
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			entries = append(entries, Entry{i, j, cm.At(i, j)})
		}
	}
	var trace []Entry
	for i := 0; i < n; i++ {
		trace = append(trace, Entry{i, i, 1})
	}
	const sigma = 2.0
	for _, tc := range []struct {
		name     string
		t        float64
		equality bool
		slack    bool
	}{
		{"equality", 3, true, false},
		{"equality-large", 40, true, false},
		{"inequality-active", 2, false, false},
		{"inequality-slack", 1e3, false, true},
	} {
		nu := 0.0
		if !tc.slack {
			nu = waterFill(c, sigma, tc.t)
		}
		want := mat.NewSymDense(n, nil)
		for i := 0; i < n; i++ {
			if v := sigma * (c[i] - nu); v > 0 {
				want.SymRankOne(want, v, q.ColView(i))
			}
		}
		p := &Problem{N: n, Sigma: sigma, C: SymMatrix{Entries: entries},
			Constraints: []Constraint{{A: SymMatrix{Entries: trace}, B: tc.t, Equality: tc.equality}}}
		for _, b := range enginetest.Backends(t) {
			for _, method := range []Method{Dense, Sparse} {
				t.Run(tc.name+"/"+b.Name()+"/"+method.String(), func(t *testing.T) {
					var stopped string // the last round's progress line
					report := func(e progress.Event) {
						if strings.Contains(e.Message, "stopped") {
							stopped = e.Message
						}
					}
					sol, err := Solve(context.Background(), p, Options{Method: method, Backend: b, InitRank: 2, Progress: report})
					if err != nil {
						t.Fatal(err)
					}
					// The progress line reports the violation of the certified point.
					_, after, ok := strings.Cut(stopped, "max violation ")
					if v, err := strconv.ParseFloat(after, 64); !ok || err != nil || v > 1e-6 || v < 0 {
						t.Errorf("last round line %q: want a max violation in [0, 1e-6]", stopped)
					}
					if !sol.Certified || math.Abs(sol.RelGap) > 1e-6 || sol.MaxViolation > 1e-6 {
						t.Errorf("not certified: rel. gap %.3g, violation %.3g (%s)", sol.RelGap, sol.MaxViolation, sol.Reason)
					}
					if sol.Method != method {
						t.Errorf("method %v used, want %v", sol.Method, method)
					}
					x := sol.X()
					if !mat.EqualApprox(x, want, 1e-5) {
						t.Errorf("X* differs from the analytic solution")
					}
					if math.Abs(sol.U[0]-nu) > 1e-5*math.Max(1, math.Abs(nu)) {
						t.Errorf("multiplier %.10g, want ν = %.10g", sol.U[0], nu)
					}
				})
			}
		}
	}
}

func TestSDPInputErrors(t *testing.T) {
	ok := Constraint{A: SymMatrix{Entries: []Entry{{0, 0, 1}}}, B: 1}
	for _, tc := range []struct {
		name string
		p    *Problem
	}{
		{"nil", nil},
		{"size", &Problem{N: 0, Sigma: 1, Constraints: []Constraint{ok}}},
		{"sigma", &Problem{N: 3, Sigma: 0, Constraints: []Constraint{ok}}},
		{"sigma-inf", &Problem{N: 3, Sigma: math.Inf(1), Constraints: []Constraint{ok}}},
		{"no constraints", &Problem{N: 3, Sigma: 1}},
		{"entry range", &Problem{N: 3, Sigma: 1, Constraints: []Constraint{{A: SymMatrix{Entries: []Entry{{0, 3, 1}}}}}}},
		{"entry NaN", &Problem{N: 3, Sigma: 1, Constraints: []Constraint{{A: SymMatrix{Entries: []Entry{{0, 1, math.NaN()}}}}}}},
		{"C range", &Problem{N: 3, Sigma: 1, C: SymMatrix{Entries: []Entry{{-1, 0, 1}}}, Constraints: []Constraint{ok}}},
		{"dense rank-one length", &Problem{N: 3, Sigma: 1, Constraints: []Constraint{{A: SymMatrix{RankOnes: []RankOne{{W: 1, Value: []float64{1, 2}}}}}}}},
		{"sparse rank-one mismatch", &Problem{N: 3, Sigma: 1, Constraints: []Constraint{{A: SymMatrix{RankOnes: []RankOne{{W: 1, Index: []int{0, 1}, Value: []float64{1}}}}}}}},
		{"sparse rank-one repeat", &Problem{N: 3, Sigma: 1, Constraints: []Constraint{{A: SymMatrix{RankOnes: []RankOne{{W: 1, Index: []int{1, 1}, Value: []float64{1, 1}}}}}}}},
		{"b NaN", &Problem{N: 3, Sigma: 1, Constraints: []Constraint{{A: ok.A, B: math.NaN()}}}},
		{"negative penalty", &Problem{N: 3, Sigma: 1, Constraints: []Constraint{{A: ok.A, Penalty: -1}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Solve(context.Background(), tc.p, Options{}); !errors.Is(err, ErrInput) {
				t.Errorf("got %v, want ErrInput", err)
			}
		})
	}
}

var _ = sort.Float64s

// TestSDPGradient checks the dual gradient σ⟨(C+Â)_−, A_i⟩ + b_i against
// central differences on an MVU-type problem (off-diagonal entries, a dense
// rank-one, equalities) for both methods.
func TestSDPGradient(t *testing.T) {
	x, _, _ := datasets.SwissRoll(60, 3)
	for _, method := range []Method{Dense, Sparse} {
		for _, b := range enginetest.Backends(t) {
			t.Run(method.String()+"/"+b.Name(), func(t *testing.T) {
				p := mvuProblem(t, x, 5, 10)
				ev, err := compileSDP(p, Options{Method: method, Backend: b, EigTol: 1e-14})
				if err != nil {
					t.Fatal(err)
				}
				ev.ctx = context.Background()
				m := len(p.Constraints)
				rng := rand.New(rand.NewPCG(5, 6))
				u := make([]float64, m)
				for i := range u {
					u[i] = 0.05 + 0.02*rng.Float64()
				}
				u[m-1] = 2.0 / 60
				grad := make([]float64, m)
				if _, err := ev.eval(u, grad); err != nil {
					t.Fatal(err)
				}
				t.Logf("rank of the negative part: %d", len(ev.lam))
				g2 := make([]float64, m)
				dir := make([]float64, m)
				var want float64
				for i := range dir {
					dir[i] = rng.NormFloat64()
					want += dir[i] * grad[i]
				}
				const h = 1e-6
				up := make([]float64, m)
				dn := make([]float64, m)
				for i := range u {
					up[i] = u[i] + h*dir[i]
					dn[i] = u[i] - h*dir[i]
				}
				fu, err := ev.eval(up, g2)
				if err != nil {
					t.Fatal(err)
				}
				fd, err := ev.eval(dn, g2)
				if err != nil {
					t.Fatal(err)
				}
				if fdv := (fu - fd) / (2 * h); math.Abs(fdv-want) > 1e-5*math.Max(1, math.Abs(want)) {
					t.Errorf("directional derivative %.10g, finite difference %.10g", want, fdv)
				}
			})
		}
	}
}

// TestSDPNewton hands over from L-BFGS-B to the semismooth Newton-CG phase
// after one iteration: Newton alone must certify a problem with an equality
// and active inequalities and find its analytic solution. With C diagonal,
// min ⟨C,X⟩ + ‖X‖²/(2σ) s.t. tr X = t, X_ii ≤ cap_i (i < 5), X ⪰ 0 has the
// diagonal solution X_ii = clamp(σ(c_i − ν), 0, cap_i), Σ X_ii = t.
func TestSDPNewton(t *testing.T) {
	const n, sigma, tr, capv = 30, 1.5, 2.0, 0.2
	rng := rand.New(rand.NewPCG(8, 9))
	c := make([]float64, n)
	caps := make([]float64, n)
	var entries, trace []Entry
	for i := range c {
		c[i] = 3*rng.Float64() - 2
		caps[i] = math.Inf(1)
		if i < 5 {
			c[i] = 1 + rng.Float64() // large: these hit their caps
			caps[i] = capv
		}
		entries = append(entries, Entry{i, i, -c[i]})
		trace = append(trace, Entry{i, i, 1})
	}
	xOf := func(nu float64) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = math.Min(math.Max(sigma*(c[i]-nu), 0), caps[i])
		}
		return x
	}
	lo, hi := -10.0, 10.0
	for it := 0; it < 200; it++ {
		mid := 0.5 * (lo + hi)
		var s float64
		for _, v := range xOf(mid) {
			s += v
		}
		if s > tr {
			lo = mid
		} else {
			hi = mid
		}
	}
	want := xOf(0.5 * (lo + hi))
	active := 0
	for i := 0; i < 5; i++ {
		if want[i] == capv {
			active++
		}
	}
	if active == 0 {
		t.Fatal("test problem has no active cap")
	}
	p := &Problem{N: n, Sigma: sigma, C: SymMatrix{Entries: entries}}
	p.Constraints = []Constraint{{A: SymMatrix{Entries: trace}, B: tr, Equality: true}}
	for i := 0; i < 5; i++ {
		p.Constraints = append(p.Constraints, Constraint{A: SymMatrix{Entries: []Entry{{i, i, 1}}}, B: capv})
	}
	for _, b := range enginetest.Backends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			sol, err := Solve(context.Background(), p, Options{Method: Dense, Backend: b, LBFGSIter: 1})
			if err != nil {
				t.Fatal(err)
			}
			if !sol.Certified || sol.Reason != "Newton-CG" {
				t.Fatalf("not certified by Newton-CG: %s, rel. gap %.3g, violation %.3g", sol.Reason, sol.RelGap, sol.MaxViolation)
			}
			x := sol.X()
			for i := 0; i < n; i++ {
				if math.Abs(x.At(i, i)-want[i]) > 1e-6 {
					t.Errorf("X[%d,%d] = %.10g, want %.10g", i, i, x.At(i, i), want[i])
				}
			}
		})
	}
}

// TestSDPComplement evaluates the dual where the negative part of C + Â has
// far more eigenpairs than the sparse path's cap (as at the long trial
// steps of a line search), so the sparse evaluator goes through the
// low-rank positive part. Objective, gradient, certificate and violation
// must equal the dense evaluator's, and the factor, recomputed on demand,
// must be the dense one.
func TestSDPComplement(t *testing.T) {
	x, _, _ := datasets.SwissRoll(300, 3)
	// Multiplier scales: positive part of rank 1, of rank about 44, and both
	// parts above the cap (then the sparse path falls back as before).
	for _, tc := range []struct {
		scale    float64
		wantComp bool
	}{{0.12, true}, {0.2, true}, {0.4, false}} {
		for _, b := range enginetest.Backends(t) {
			t.Run(fmt.Sprintf("%g/%s", tc.scale, b.Name()), func(t *testing.T) {
				p := mvuProblem(t, x, 5, 10)
				m := len(p.Constraints)
				rng := rand.New(rand.NewPCG(8, 9))
				u := make([]float64, m)
				for i := range u {
					u[i] = tc.scale * rng.Float64()
				}
				var f [2]float64
				var g [2][]float64
				var prim, dual, viol [2]float64
				var evs [2]*dualEval
				for k, method := range []Method{Dense, Sparse} {
					ev, err := compileSDP(p, Options{Method: method, Backend: b, EigTol: 1e-14, InitRank: 8})
					if err != nil {
						t.Fatal(err)
					}
					ev.ctx = context.Background()
					g[k] = make([]float64, m)
					if f[k], err = ev.eval(u, g[k]); err != nil {
						t.Fatal(err)
					}
					prim[k], dual[k] = ev.certificate()
					viol[k] = ev.maxViol
					evs[k] = ev
				}
				if evs[1].comp != tc.wantComp {
					t.Fatalf("complement evaluation %v, want %v (negative rank %d)", evs[1].comp, tc.wantComp, len(evs[0].lam))
				}
				t.Logf("negative part rank %d of %d", len(evs[0].lam), p.N)
				scale := math.Max(1, math.Abs(f[0]))
				if math.Abs(f[0]-f[1]) > 1e-9*scale {
					t.Errorf("objective: dense %.12g, complement %.12g", f[0], f[1])
				}
				for i := range g[0] {
					if math.Abs(g[0][i]-g[1][i]) > 1e-8*math.Max(1, math.Abs(g[0][i])) {
						t.Fatalf("gradient %d: dense %.12g, complement %.12g", i, g[0][i], g[1][i])
					}
				}
				if math.Abs(prim[0]-prim[1]) > 1e-9*math.Max(1, math.Abs(prim[0])) || math.Abs(dual[0]-dual[1]) > 1e-9*scale || math.Abs(viol[0]-viol[1]) > 1e-8*math.Max(1, viol[0]) {
					t.Errorf("certificate: dense (%.12g, %.12g, %.6g), complement (%.12g, %.12g, %.6g)", prim[0], dual[0], viol[0], prim[1], dual[1], viol[1])
				}
				fd, fs := evs[0].factor(), evs[1].factor()
				var xd, xs mat.SymDense
				xd.SymOuterK(1, fd)
				xs.SymOuterK(1, fs)
				if !mat.EqualApprox(&xd, &xs, 1e-8*math.Max(1, mat.Norm(&xd, math.Inf(1)))) {
					t.Errorf("factors differ")
				}
			})
		}
	}
}

// TestSDPBoundedTrial checks the lower-bound evaluation of far-off trial
// points on the sparse path: above the cutoff it reports ½σ Σ θ² + bᵀu, which
// lies between the cutoff and the exact dual objective, and the cache
// (certificate and factor) still describes the last exact point, here a
// complement evaluation whose factor is recomputed on demand.
func TestSDPBoundedTrial(t *testing.T) {
	x, _, _ := datasets.SwissRoll(300, 3)
	p := mvuProblem(t, x, 5, 10)
	m := len(p.Constraints)
	rng := rand.New(rand.NewPCG(8, 9))
	uComp := make([]float64, m) // negative part of high rank, positive part of rank 1
	uFar := make([]float64, m)  // negative edge weights: C + Â ≺ −I
	for i := range uComp {
		uComp[i] = 0.12 * rng.Float64()
		uFar[i] = -rng.Float64()
	}
	for _, b := range enginetest.Backends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			// evalAt evaluates u with a fresh evaluator of the method.
			evalAt := func(method Method, u []float64) (float64, *dualEval) {
				ev, err := compileSDP(p, Options{Method: method, Backend: b, EigTol: 1e-14, InitRank: 8})
				if err != nil {
					t.Fatal(err)
				}
				ev.ctx = context.Background()
				f, err := ev.eval(u, make([]float64, m))
				if err != nil {
					t.Fatal(err)
				}
				return f, ev
			}
			f0, ev := evalAt(Sparse, uComp)
			if !ev.comp || ev.bounded {
				t.Fatalf("first evaluation: complement %v, bounded %v; want a complement evaluation", ev.comp, ev.bounded)
			}
			pr0, du0 := ev.certificate()
			ev.cutoff = f0
			fFar, err := ev.eval(uFar, make([]float64, m))
			if err != nil {
				t.Fatal(err)
			}
			fExact, _ := evalAt(Dense, uFar)
			t.Logf("cutoff %.6g, far point %.6g (exact %.6g)", f0, fFar, fExact)
			if !ev.bounded {
				t.Fatal("the far trial point was evaluated exactly, want a bound")
			}
			if !(fFar > f0) || fFar > fExact*(1+1e-12) {
				t.Errorf("bound %.12g not in (cutoff %.12g, exact %.12g]", fFar, f0, fExact)
			}
			if pr, du := ev.certificate(); pr != pr0 || du != du0 {
				t.Errorf("certificate changed by a bounded evaluation: (%g, %g), was (%g, %g)", pr, du, pr0, du0)
			}
			// Without a cutoff the same point is evaluated exactly: C + Â ≺ 0
			// has no positive part, so the complement is all of it.
			if f, ev2 := evalAt(Sparse, uFar); ev2.bounded || math.Abs(f-fExact) > 1e-9*fExact {
				t.Errorf("far point without cutoff: %.12g (bounded %v), exact %.12g", f, ev2.bounded, fExact)
			}
			_, ref := evalAt(Dense, uComp)
			var xs, xd mat.SymDense
			xs.SymOuterK(1, ev.factor())
			xd.SymOuterK(1, ref.factor())
			if !mat.EqualApprox(&xs, &xd, 1e-8*math.Max(1, mat.Norm(&xd, math.Inf(1)))) {
				t.Error("factor after a bounded evaluation differs from the dense factor of the cached point")
			}
		})
	}
}

// mvuProblem builds the unfolding SDP of x on its k-nearest-neighbour graph.
func mvuProblem(t testing.TB, x *mat.Dense, k int, sigma float64) *Problem {
	n, _ := x.Dims()
	nb, err := sparse.KNN(x, x, k, true)
	if err != nil {
		t.Fatal(err)
	}
	a, b, d2 := nb.Edges()
	edges := make([]engine.Pair, len(a))
	for i := range a {
		edges[i] = engine.Pair{A: a[i], B: b[i]}
	}
	return UnfoldingProblem(n, sigma, edges, d2)
}
