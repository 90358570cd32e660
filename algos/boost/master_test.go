package boost

import (
	"context"
	"github.com/psdlearn/psdlearn/engine"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn/lp"
)

// fullMaster is the restricted master LP over every triplet (the LP that
// PSDBoost solved before row generation): rows 0..m−1 H_r w + ξ_r − ρ ≥ 0,
// row m 1ᵀw = 1; columns ρ, ξ_r, w_j.
func fullMaster(hs [][]float64, c float64) lp.Problem {
	m := len(hs[0])
	p := lp.Problem{RowLower: make([]float64, m+1), RowUpper: make([]float64, m+1)}
	rows := make([]int, m)
	neg := make([]float64, m)
	for r := 0; r < m; r++ {
		p.RowUpper[r] = math.Inf(1)
		rows[r], neg[r] = r, -1
	}
	p.RowLower[m], p.RowUpper[m] = 1, 1
	p.Cols = append(p.Cols, lp.Free(-1, rows, neg))
	for r := 0; r < m; r++ {
		p.Cols = append(p.Cols, lp.NonNegative(c, []int{r}, []float64{1}))
	}
	for _, h := range hs {
		col := lp.NonNegative(0, append(append([]int(nil), rows...), m), append(append([]float64(nil), h...), 1))
		p.Cols = append(p.Cols, col)
	}
	return p
}

// TestMasterRowGeneration: the master solved over part of the triplets
// (triplets fixed at C in the row bounds, columns shed after each solve and
// priced back in) has the optimum of the LP over
// all triplets (solved directly), its weights w are feasible with primal
// value π over all triplets, its triplet weights u are feasible for the
// full dual (0 ≤ u ≤ C, 1ᵀu = 1) with dual value π (zero duality gap over
// the full set), and the LP stays smaller than the triplet set; on both LP
// implementations, which agree. The small-C cases, where most triplets
// carry weight, shrink the LP to a few columns so that triplets move
// between the LP, 0 and C from term to term.
func TestMasterRowGeneration(t *testing.T) {
	if !lp.HaveNative {
		t.Skip("the full LP has 1,501 rows: native LP needed for the reference")
	}
	const m, terms = 1500, 6
	for _, tc := range []struct {
		name     string
		fraction float64 // C = 1/(fraction·m)
		keep     int     // columns kept by shrink (dual form)
		dual     bool    // force the dual form (Go takes the primal one at this size)
		solvers  []lp.Solver
	}{
		{"large-C", 0.05, 200, false, []lp.Solver{lp.Native, lp.Go}},
		{"small-C-folded", 0.5, 40, true, []lp.Solver{lp.Native, lp.Go}},
		{"mid-C-folded", 0.2, 10, true, []lp.Solver{lp.Native, lp.Go}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := 1 / (tc.fraction * m)
			rng := rand.New(rand.NewPCG(7, 8))
			// Margins of terms that share most of their structure (as the
			// leading eigenvectors of successive PSDBoost iterations do): a
			// common part and a term-specific part.
			base := make([]float64, m)
			for r := range base {
				base[r] = rng.NormFloat64() + 1
			}
			hs := make([][]float64, terms)
			for j := range hs {
				hs[j] = make([]float64, m)
				for r := range hs[j] {
					hs[j][r] = base[r] + 0.3*rng.NormFloat64()
				}
			}
			full, err := lp.Solve(context.Background(), lp.Native, fullMaster(hs, c))
			if err != nil {
				t.Fatal(err)
			}
			want := -full.Objective
			pis := make([]float64, len(tc.solvers))
			for i, s := range tc.solvers {
				t.Run(s.Name(), func(t *testing.T) {
					newM := newMaster
					if tc.dual {
						newM = func(s engine.LPSolver, h []float64, c float64, keep int) (*master, error) {
							return newMasterForm(s, h, c, keep, false)
						}
					}
					ms, err := newM(s, hs[0], c, tc.keep)
					if err != nil {
						t.Fatal(err)
					}
					defer ms.close()
					var sol masterSolution
					folded := 0
					for j := 0; j < terms; j++ {
						if j > 0 {
							if err := ms.addTerm(hs[j]); err != nil {
								t.Fatal(err)
							}
						}
						if sol, err = ms.solve(context.Background()); err != nil {
							t.Fatal(err)
						}
						folded = max(folded, sol.up)
						if !ms.primal && len(ms.rows) > ms.keep {
							t.Errorf("term %d: %d LP columns after shrinking to %d", j, len(ms.rows), ms.keep)
						}
					}
					t.Logf("%s: π = %.15g (full LP %.15g), %d LP columns, %d at C, %d rounds in the last solve", s.Name(), sol.pi, want, sol.lpCols, sol.up, sol.rounds)
					if math.Abs(sol.pi-want) > 1e-9*(1+math.Abs(want)) {
						t.Errorf("π = %.15g, full LP optimum %.15g", sol.pi, want)
					}
					if !ms.primal && sol.lpCols >= m/2 || ms.primal && len(ms.rows) >= m/2 {
						t.Errorf("%d LP columns for %d triplets", sol.lpCols, m)
					}
					if tc.dual && folded == 0 {
						t.Error("no triplet was ever fixed at C")
					}
					var sw, su float64
					for _, w := range sol.w {
						if w < 0 {
							t.Errorf("w = %g < 0", w)
						}
						sw += w
					}
					for r, u := range sol.u {
						if u < 0 || u > c {
							t.Errorf("u[%d] = %g outside [0, C = %g]", r, u, c)
						}
						su += u
					}
					if math.Abs(sw-1) > 1e-9 || math.Abs(su-1) > 1e-12 {
						t.Errorf("Σw = %.15g, Σu = %.15g, want 1", sw, su)
					}
					// Primal value of w and dual value of u over all triplets.
					if p := primalValue(hs, sol.w, c, m); math.Abs(p-sol.pi) > 1e-9*(1+math.Abs(want)) {
						t.Errorf("primal value of w over all triplets %.15g, π = %.15g", p, sol.pi)
					}
					if g := lpGap(hs, sol.w, sol.u, c); !(g >= -1e-12 && g <= 1e-9) {
						t.Errorf("duality gap over all triplets %g", g)
					}
					pis[i] = sol.pi
				})
			}
			if len(pis) == 2 && math.Abs(pis[0]-pis[1]) > 1e-9*(1+math.Abs(want)) {
				t.Errorf("native π %.15g, Go π %.15g", pis[0], pis[1])
			}
		})
	}
}

// TestFeasibleDuals: slightly infeasible weights are moved onto the dual
// feasible set.
func TestFeasibleDuals(t *testing.T) {
	const c = 0.25
	for _, u := range [][]float64{
		{0.25 + 1e-10, 0.25, 0.25, 0.25 - 3e-11, -1e-12, 2e-10},
		{0.1, 0.2, 0.25, 0.2, 0.1, 0.15 - 1e-9},
		{0.1, 0.2, 0.25, 0.2, 0.1, 0.15 + 1e-9},
	} {
		feasibleDuals(u, c)
		var s float64
		for r, v := range u {
			if v < 0 || v > c {
				t.Errorf("u[%d] = %g outside [0, %g]", r, v, c)
			}
			s += v
		}
		if math.Abs(s-1) > 1e-15 {
			t.Errorf("Σu − 1 = %g", s-1)
		}
	}
}

// TestMasterDropTerms: terms that carry no weight for termAge solves leave
// the master, on both forms and both LP solvers, and the master stays
// exact: after every solve its π is the optimum of the LP over the terms it
// kept (solved directly), its weights w line up with those terms (their
// primal value over all triplets is π), π never decreases (what leaves has
// no weight) and stays at most the optimum over every term ever added.
func TestMasterDropTerms(t *testing.T) {
	if !lp.HaveNative {
		t.Skip("native LP needed for the reference")
	}
	const m, rounds, perRound, age = 300, 30, 3, 3
	c := 1 / (0.1 * m)
	rng := rand.New(rand.NewPCG(9, 10))
	base := make([]float64, m)
	for r := range base {
		base[r] = rng.NormFloat64() + 1
	}
	var all [][]float64
	for k := 0; k < 1+rounds*perRound; k++ {
		h := make([]float64, m)
		for r := range h {
			h[r] = base[r] + 0.5*rng.NormFloat64()
		}
		all = append(all, h)
	}
	for _, tc := range []struct {
		name   string
		solver lp.Solver
		primal bool
	}{
		{"native/dual", lp.Native, false},
		{"native/primal", lp.Native, true},
		{"go/dual", lp.Go, false},
		{"go/primal", lp.Go, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := newMasterForm(tc.solver, all[0], c, 100, tc.primal)
			if err != nil {
				t.Fatal(err)
			}
			defer ms.close()
			ms.termAge = age
			ids := []int{0} // the term of all behind each term of the master
			next, dropped, prev := 1, 0, math.Inf(-1)
			for round := 0; round < rounds; round++ {
				if round > 0 {
					if err := ms.addTerms(all[next : next+perRound]); err != nil {
						t.Fatal(err)
					}
					for k := 0; k < perRound; k++ {
						ids = append(ids, next+k)
					}
					next += perRound
				}
				sol, err := ms.solve(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				ids = compact(ids, func(j int) bool {
					for _, d := range sol.dropped {
						if d == j {
							return false
						}
					}
					return true
				})
				dropped += len(sol.dropped)
				if len(sol.w) != len(ids) || len(ms.hs) != len(ids) {
					t.Fatalf("round %d: %d weights, %d terms in the master, %d kept", round, len(sol.w), len(ms.hs), len(ids))
				}
				kept := make([][]float64, len(ids))
				for k, id := range ids {
					kept[k] = all[id]
				}
				tol := 1e-9 * (1 + math.Abs(sol.pi))
				ref, err := lp.Solve(context.Background(), lp.Native, fullMaster(kept, c))
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(sol.pi+ref.Objective) > tol {
					t.Errorf("round %d: π = %.15g, LP over the %d kept terms %.15g", round, sol.pi, len(kept), -ref.Objective)
				}
				if p := primalValue(kept, sol.w, c, m); math.Abs(p-sol.pi) > tol {
					t.Errorf("round %d: primal value of w %.15g, π = %.15g", round, p, sol.pi)
				}
				if sol.pi < prev-tol {
					t.Errorf("round %d: π fell from %.15g to %.15g", round, prev, sol.pi)
				}
				prev = sol.pi
				every, err := lp.Solve(context.Background(), lp.Native, fullMaster(all[:next], c))
				if err != nil {
					t.Fatal(err)
				}
				if sol.pi > -every.Objective+tol {
					t.Errorf("round %d: π = %.15g above the optimum over every term %.15g", round, sol.pi, -every.Objective)
				}
			}
			if dropped == 0 {
				t.Errorf("no term left the master in %d rounds (%d terms)", rounds, next)
			}
			t.Logf("%d of %d terms dropped, %d kept", dropped, next, len(ids))
		})
	}
}
