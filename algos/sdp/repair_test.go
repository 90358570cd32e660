package sdp

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine/enginetest"
	"gonum.org/v1/gonum/mat"
)

// TestAsRankOne checks which constraint matrices the repair takes as
// w·a·aᵀ, and the a and w it finds.
func TestAsRankOne(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    SymMatrix
		ok   bool
		idx  []int
		val  []float64
		w    float64
	}{
		{"squared distance", SymMatrix{Entries: []Entry{{2, 2, 1}, {5, 5, 1}, {2, 5, -1}}}, true, []int{2, 5}, []float64{1, -1}, 1},
		{"distance, transposed off-diagonal", SymMatrix{Entries: []Entry{{5, 2, -3}, {2, 2, 3}, {5, 5, 3}}}, true, []int{2, 5}, []float64{1, -1}, 3},
		{"diagonal entry", SymMatrix{Entries: []Entry{{4, 4, 2}}}, true, []int{4}, []float64{1}, 2},
		{"rank-one term", SymMatrix{RankOnes: []RankOne{{W: 1, Index: []int{0, 3}, Value: []float64{2, 1}}}}, true, []int{0, 3}, []float64{2, 1}, 1},
		{"dense rank-one term", SymMatrix{RankOnes: []RankOne{{W: 0.5, Value: []float64{1, 1, 1}}}}, true, nil, []float64{1, 1, 1}, 0.5},
		{"negative diagonal", SymMatrix{Entries: []Entry{{4, 4, -2}}}, false, nil, nil, 0},
		{"negative rank-one weight", SymMatrix{RankOnes: []RankOne{{W: -1, Value: []float64{1, 1}}}}, false, nil, nil, 0},
		{"unequal diagonal", SymMatrix{Entries: []Entry{{2, 2, 1}, {5, 5, 2}, {2, 5, -1}}}, false, nil, nil, 0},
		{"positive off-diagonal", SymMatrix{Entries: []Entry{{2, 2, 1}, {5, 5, 1}, {2, 5, 1}}}, false, nil, nil, 0},
		{"off-diagonal elsewhere", SymMatrix{Entries: []Entry{{2, 2, 1}, {5, 5, 1}, {2, 6, -1}}}, false, nil, nil, 0},
		{"entries and a rank-one term", SymMatrix{Entries: []Entry{{1, 1, 1}}, RankOnes: []RankOne{{W: 1, Value: []float64{1, 1}}}}, false, nil, nil, 0},
		{"two rank-one terms", SymMatrix{RankOnes: []RankOne{{W: 1, Value: []float64{1, 0}}, {W: 1, Value: []float64{0, 1}}}}, false, nil, nil, 0},
		{"off-diagonal alone", SymMatrix{Entries: []Entry{{1, 2, 1}}}, false, nil, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, ok := asRankOne(tc.a)
			if ok != tc.ok {
				t.Fatalf("recognised = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if f.w != tc.w || len(f.val) != len(tc.val) || len(f.idx) != len(tc.idx) {
				t.Fatalf("w = %v, idx %v, a %v; want %v, %v, %v", f.w, f.idx, f.val, tc.w, tc.idx, tc.val)
			}
			// Same w·a·aᵀ as the input, entry by entry.
			n := 7
			dense := func(a SymMatrix) *mat.SymDense {
				m := mat.NewSymDense(n, nil)
				for _, e := range a.Entries {
					m.SetSym(e.I, e.J, m.At(e.I, e.J)+e.V)
				}
				for _, r := range a.RankOnes {
					for s, vs := range r.Value {
						for q, vq := range r.Value {
							is, iq := s, q
							if r.Index != nil {
								is, iq = r.Index[s], r.Index[q]
							}
							if is <= iq {
								m.SetSym(is, iq, m.At(is, iq)+r.W*vs*vq)
							}
						}
					}
				}
				return m
			}
			got := dense(SymMatrix{RankOnes: []RankOne{{W: f.w, Index: f.idx, Value: f.val}}})
			if want := dense(tc.a); !mat.EqualApprox(got, want, 0) {
				t.Errorf("w·a·aᵀ = %v, want %v", mat.Formatted(got), mat.Formatted(want))
			}
		})
	}
}

// TestShake checks the cyclic projections on a random factor and a random
// tree of distance inequalities, a third of them tighter than the factor
// meets and the rest far looser, plus MVU's centring equality: afterwards
// every constraint holds to the tolerance and the rows of no violated
// constraint have not moved.
func TestShake(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, r = 60, 3
	y := mat.NewDense(n, r, nil)
	for i := 0; i < n; i++ {
		for k := 0; k < r; k++ {
			y.Set(i, k, rng.NormFloat64())
		}
	}
	dist2 := func(y *mat.Dense, a, b int) float64 {
		var s float64
		for k := 0; k < r; k++ {
			d := y.At(a, k) - y.At(b, k)
			s += d * d
		}
		return s
	}
	p := &Problem{N: n, Sigma: 1}
	touched := make([]bool, n)
	// A random tree (rigid nowhere, so the projections converge) of
	// distance bounds, a third of them 10% below the current squared
	// distance and the others 100 times above it.
	for v := 1; v < n; v++ {
		u := rng.IntN(v)
		b := dist2(y, u, v)
		if rng.IntN(3) == 0 {
			b *= 0.9
			touched[u], touched[v] = true, true
		} else {
			b *= 100
		}
		p.Constraints = append(p.Constraints, Constraint{A: SymMatrix{Entries: []Entry{{u, u, 1}, {v, v, 1}, {u, v, -1}}}, B: b})
	}
	ones := make([]float64, n)
	for i := range ones {
		ones[i] = 1
	}
	p.Constraints = append(p.Constraints, Constraint{A: SymMatrix{RankOnes: []RankOne{{W: 1, Value: ones}}}, Equality: true})
	rs := newRepairSet(p)
	if rs == nil || len(rs.sparse) != n-1 || len(rs.dense) != 1 || !rs.translationFree {
		t.Fatalf("repair set: %+v", rs)
	}
	// Centre first, so that the untouched rows stay put.
	for k := 0; k < r; k++ {
		var mean float64
		for i := 0; i < n; i++ {
			mean += y.At(i, k) / n
		}
		for i := 0; i < n; i++ {
			y.Set(i, k, y.At(i, k)-mean)
		}
	}
	y0 := mat.DenseCopyOf(y)
	const tol = 1e-10
	if !rs.shake(y, p.Constraints, tol) {
		t.Fatal("shake did not converge")
	}
	for ci, c := range p.Constraints {
		q := quadForm(y, c.A)
		v := q - c.B
		if c.Equality {
			v = math.Abs(v)
		}
		if v > tol*(1+math.Abs(c.B)) {
			t.Errorf("constraint %d: ⟨A, YYᵀ⟩ = %.12g, b = %.12g", ci, q, c.B)
		}
	}
	// A projection on a distance moves its two rows by opposite amounts,
	// leaving the mean, and so the centring, unchanged.
	for i := 0; i < n; i++ {
		if touched[i] {
			continue
		}
		for k := 0; k < r; k++ {
			if d := math.Abs(y.At(i, k) - y0.At(i, k)); d > 1e-12 {
				t.Errorf("row %d moved by %.3g though no violated constraint touches it", i, d)
			}
		}
	}
}

// TestSDPRepair solves the inequality form of a Swiss roll's unfolding SDP
// (MVU's scaling) to a relative gap of 1e-4 and a violation of 1e-3, with
// and without the primal repair, on both backends. Both must certify; the
// repaired solve must say so and take fewer evaluations; and its
// certificate must be exact: the primal objective and the violations
// recomputed from the returned factor, and the dual objective from a fresh
// evaluation at the returned U, give the reported figures and the
// tolerances.
func TestSDPRepair(t *testing.T) {
	x, _, _ := datasets.SwissRoll(400, 7)
	p := scaledUnfolding(t, x, 1e4, true)
	const gapTol, feasTol = 1e-4, 1e-3
	for _, b := range enginetest.Backends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			u0 := mvuStartPoint(t, p)
			var sols [2]*Solution
			for i, noRepair := range []bool{true, false} {
				sol, err := Solve(context.Background(), p, Options{Method: Sparse, Backend: b, GapTol: gapTol, FeasTol: feasTol,
					MaxIter: 20000, U0: u0, NewtonSteps: -1, Seed: 3, Memory: 40, NoRepair: noRepair})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("repair=%v: %d iterations, %d evaluations, %d repairs, repaired %v, gap %.3g, violation %.3g",
					!noRepair, sol.Iterations, sol.Evaluations, sol.Repairs, sol.Repaired, sol.RelGap, sol.MaxViolation)
				if !sol.Certified {
					t.Fatalf("repair=%v: not certified (%s)", !noRepair, sol.Reason)
				}
				sols[i] = sol
			}
			plain, rep := sols[0], sols[1]
			if plain.Repaired || plain.Repairs != 0 {
				t.Errorf("NoRepair: Repaired %v, Repairs %d", plain.Repaired, plain.Repairs)
			}
			if !rep.Repaired || rep.Evaluations >= plain.Evaluations {
				t.Errorf("repair: Repaired %v with %d evaluations, against %d without", rep.Repaired, rep.Evaluations, plain.Evaluations)
			}
			// The primal side, from the factor alone.
			xs := rep.X()
			var tr, fro float64
			for i := 0; i < p.N; i++ {
				tr += xs.At(i, i)
				for j := 0; j < p.N; j++ {
					fro += xs.At(i, j) * xs.At(i, j)
				}
			}
			primal := -tr + fro/(2*p.Sigma)
			var viol float64
			for _, c := range p.Constraints {
				var ax float64
				for _, e := range c.A.Entries {
					v := e.V * xs.At(e.I, e.J)
					if e.I != e.J {
						v *= 2
					}
					ax += v
				}
				for _, ro := range c.A.RankOnes {
					var s float64
					for a, va := range ro.Value {
						for bb, vb := range ro.Value {
							s += va * vb * xs.At(a, bb)
						}
					}
					ax += ro.W * s
				}
				v := ax - c.B
				if c.Equality {
					v = math.Abs(v)
				}
				viol = math.Max(viol, v/(1+math.Abs(c.B)))
			}
			if math.Abs(primal-rep.Primal) > 1e-9*math.Abs(primal) || math.Abs(viol-rep.MaxViolation) > 1e-9 {
				t.Errorf("recomputed primal %.12g, violation %.6g; reported %.12g, %.6g", primal, viol, rep.Primal, rep.MaxViolation)
			}
			// The dual side, from a fresh evaluation at U on the dense path.
			_, du := evalAt(t, p, Options{Method: Dense, Backend: b}, rep.U).certificate()
			if math.Abs(du-rep.Dual) > 1e-9*math.Abs(du) {
				t.Errorf("dual at U: %.12g, reported %.12g", du, rep.Dual)
			}
			if g := math.Abs(primal-du) / math.Max(1, math.Abs(primal)); g > gapTol || viol > feasTol {
				t.Errorf("recomputed certificate: relative gap %.3g (tolerance %g), violation %.3g (tolerance %g)", g, gapTol, viol, feasTol)
			}
		})
	}
}

// TestSDPRepairReturnedPoint: when a solve stops short of its certificate
// (the equality form of a Swiss roll's unfolding, 300 iterations), the
// point it returns was picked for its merit, possibly the merit of its
// repair; the solution must report the better of X(U) and its repair,
// both recomputed on a fresh evaluator (a repair is kept only when it can
// matter, so the gap tolerance is loose and the feasibility one tight).
func TestSDPRepairReturnedPoint(t *testing.T) {
	x, _, _ := datasets.SwissRoll(200, 3)
	p := scaledUnfolding(t, x, 1e4, false)
	m := len(p.Constraints)
	const gapTol, feasTol = 1e-2, 1e-6
	for _, b := range enginetest.Backends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			sol, err := Solve(context.Background(), p, Options{Method: Sparse, Backend: b, GapTol: gapTol, FeasTol: feasTol, MaxIter: 300, NewtonSteps: -1, Seed: 3, Memory: 40})
			if err != nil {
				t.Fatal(err)
			}
			ev := evalAt(t, p, Options{Method: Sparse, Backend: b, NoRepair: true}, sol.U)
			pr, du := ev.certificate()
			merit := func(pr, du, viol float64) float64 {
				return math.Max(math.Abs((pr-du)/math.Max(1, math.Abs(pr)))/gapTol, viol/feasTol)
			}
			raw, got := merit(pr, du, ev.maxViol), merit(sol.Primal, sol.Dual, sol.MaxViolation)
			// The repair of U, on a fresh evaluator.
			ev.gapTol, ev.feasTol, ev.rset = gapTol, feasTol, newRepairSet(p)
			if _, err := ev.eval(sol.U, make([]float64, m)); err != nil {
				t.Fatal(err)
			}
			ev.repairPrimal(true)
			rpr, rdu := ev.certificate()
			rep := merit(rpr, rdu, ev.maxViol)
			t.Logf("certified %v (%s), repaired %v: merit %.4g; X(U) alone %.4g, its repair %.4g", sol.Certified, sol.Reason, sol.Repaired, got, raw, rep)
			if got > math.Min(raw, rep)*(1+1e-9) {
				t.Errorf("the solution's merit %.6g is worse than X(U)'s %.6g or its repair's %.6g", got, raw, rep)
			}
		})
	}
}

// scaledUnfolding is the unfolding SDP of x on its 6-nearest-neighbour
// graph in MVU's units (squared distances over their mean), with σ and,
// when inequalities, the distances as upper bounds.
func scaledUnfolding(t *testing.T, x *mat.Dense, sigma float64, inequalities bool) *Problem {
	p := mvuProblem(t, x, 6, sigma)
	m := len(p.Constraints)
	var mean float64
	for _, c := range p.Constraints[:m-1] {
		mean += c.B / float64(m-1)
	}
	for i := range p.Constraints[:m-1] {
		p.Constraints[i].B /= mean
		p.Constraints[i].Equality = !inequalities
	}
	return p
}

// evalAt returns a fresh evaluator of p with opt whose cache holds u.
func evalAt(t *testing.T, p *Problem, opt Options, u []float64) *dualEval {
	t.Helper()
	ev, err := compileSDP(p, opt)
	if err != nil {
		t.Fatal(err)
	}
	ev.ctx = context.Background()
	if _, err := ev.eval(u, make([]float64, len(u))); err != nil {
		t.Fatal(err)
	}
	return ev
}
