package boost

import (
	"context"
	"math"
	"sort"

	"github.com/psdlearn/psdlearn/engine"
)

// master is PSDBoost's restricted master LP, solved in its dual form
//
//	min π  s.t.  Σ_{r∈W} u_r H_rj ≤ π (every term j), Σ_{r∈W} u_r = 1, 0 ≤ u_r ≤ C
//
// over the triplets: one row per term and one bounded column per triplet,
// so the simplex basis has #terms + 2 rows however many triplets carry
// weight (the primal form, one row per triplet, has a basis of one row per
// triplet: at C = 1/(0.5·m) about m of them). The primal
//
//	max ρ − C Σ_r ξ_r  s.t.  H_r w + ξ_r − ρ ≥ 0, 1ᵀw = 1, w, ξ ≥ 0
//
// is read from the row duals: w_j = −y_j (term rows), ρ = y_0 (the
// equality), and the reduced cost of u_r is d_r = H_r w − ρ.
//
// Only the triplets whose weight is undecided are LP columns (dual form).
// Each triplet is in one of three states: at 0 (not in the LP), in the LP
// (a column in [0, C]) or at C (folded into the row bounds: row 0 becomes
// Σ_LP u = 1 − C·#atC, term row j Σ_LP u_r H_rj − π ≤ −C Σ_atC H_rj).
// Fixing variables restricts a minimisation, so the LP's optimum bounds the
// full one from above; once no triplet at 0 has d_r < 0 and none at C has
// d_r > 0
// (the optimality conditions of the full LP at these duals) the two
// coincide: w solves the full primal and u, extended by 0 and C, the full
// dual. solve moves such triplets into the LP, the most violated first and
// at most ⌈1/C⌉ per round, and re-solves: entering triplets are new columns
// at their lower bound (dual infeasible, primal feasible), released ones
// are new columns at their lower bound with their C moved back into the row
// bounds (dual feasible), and CLP continues from the previous basis. At
// the end of each solve the LP columns non-basic at a bound (|d_r| above a
// tolerance) leave it, down to keep columns (see shrink). The LP then
// holds the basic triplets and few more: at small C, where most triplets
// carry weight, tens of times fewer columns than the triplets of W (on
// letters at C = 1/(0.5·m): 94,500 columns before).
//
// The margins of every term over all triplets are kept in Go (m floats per
// term) to price the triplets outside the LP and to fold those at C.
//
// Terms leave as triplets do: a term that carried no weight in termAge
// consecutive solves and does not bind at the last one (its row strictly
// inside its bound, its column at 0 with a positive reduced cost) is
// removed, and the solution stays optimal. Column generation keeps adding
// terms, and without this the LP grows by up to Columns rows per
// iteration although few of them carry weight: on PSDBoost's Figure 1
// problem (24 dimensions) 3,005 terms after 309 iterations, 170 of them
// with weight, and every pivot of the dual simplex costs a pass over
// every term's row.
type master struct {
	model engine.LPModel
	m     int
	c     float64
	hs    [][]float64 // margins of every term over all triplets
	rows  []int       // the triplet of each LP column 1, 2, … (primal form: row)
	state []int8      // per triplet: atZero, inLP or atC
	nUp   int         // triplets at C
	upSum []float64   // per term j: Σ_atC H_rj
	keep  int         // triplet columns kept in the LP by shrink
	age   []int       // per term: consecutive solves without weight
	// termAge: a term without weight in this many consecutive solves leaves
	// when it does not bind (see dropTerms).
	termAge int
	g       []float64 // workspace: H w over all triplets

	// primal selects the primal form (one row and one slack column ξ_r per
	// triplet of the working set W, one column per term) on problems of a
	// few thousand triplets (see newMaster): its basis has #W rows against
	// #terms in the dual form, and new terms are columns, which primal
	// simplex takes from the previous basis. It has no atC state: triplets
	// enter W and never leave it.
	primal bool
	wCol   []int // primal form: LP column of each term
	ncols  int   // primal form: columns so far
}

// The states of a triplet in the master.
const (
	atZero int8 = iota // u_r = 0, not in the LP
	inLP               // an LP column
	atC                // u_r = C, folded into the row bounds
)

// Tolerances on reduced costs (the LP is built on normalised data, so
// these are relative to the data's scale). A triplet outside the LP enters
// when its reduced cost has the wrong sign by more than enterTol; an LP
// column leaves when it is non-basic at a bound with |d_r| > leaveTol, so a
// triplet that left can come back only after the duals moved.
const (
	enterTol = 1e-12
	leaveTol = 1e-9
)

// defaultKeep is the number of triplet columns the LP keeps after a solve.
// Letters, 94,500 triplets, C = 5/m (about 15,000 triplets at C at the
// optimum), one run each: keeping 500, 1,000, 2,000, 4,000, 8,000 and
// 16,000 columns certified in 41, 33, 35, 51, 66 and 116 s; at C = 2/m
// (47,000 at C) 500, 1,000 and 2,000 took 78, 74 and 22 s. Keeping too few
// makes the re-solve after new terms bring back thousands of triplets they
// moved across ρ; keeping many makes every pivot dearer. Before folding
// (every triplet that ever entered kept) C = 5/m took 885 s. (Measured
// before the master started at the first term's optimum.)
const defaultKeep = 2000

// newMaster builds the master LP with the first term (margins h), in the
// form that suits the solver and the number of triplets: the primal form
// (one row per triplet in the working set) below primalMax triplets, the
// dual form (one row per term) above.
func newMaster(solver engine.LPSolver, h []float64, c float64, keep int) (*master, error) {
	limit := goPrimalMax
	if solver.Name() == "native" {
		limit = nativePrimalMax
	}
	return newMasterForm(solver, h, c, keep, len(h) < limit)
}

// goPrimalMax bounds the triplets of a pure-Go master in the primal form:
// the Go simplex re-solves from scratch after AddRows and its dense basis
// grows with the rows, but the dual form's rows grow with the terms; its
// rows grow up to one per triplet, and lp.GoMaxRows (8,192) is its limit.
const goPrimalMax = 8000

// nativePrimalMax bounds the triplets of a CLP master in the primal form.
// PSDBoost with its defaults on 70% of each set (k = 3), seconds to a
// certified gap, primal form against dual form, one run each:
//
//	triplets   550 (Figure 1)  1,314 (sonar)  2,214 (ionosphere)  3,942 (balance)
//	primal     13.2            28.0           37.5                0.18
//	dual       23.4            43.5           55.3                0.35
//
//	triplets   4,842 (diabetes)  5,328 (vehicle)  6,237 (vowel)
//	primal     4.1               39.7             3.9
//	dual       1.2               15.1             1.2
//
// Above a few thousand triplets the working set of the primal form (the
// triplets that carry weight and those near the margin) outgrows the
// dual form's rows, the terms.
const nativePrimalMax = 4000

// newMasterForm builds the master in the form given, keeping keep triplet
// columns (dual form). The primal form starts from the ⌈2/C⌉ triplets of
// smallest margin. The dual form starts at the first term's optimum, which
// is known: u = C on the ⌊1/C⌋ triplets of smallest margin and the rest of
// the unit weight on the next one. The triplets far below that boundary
// start at C, those near it (keep of them, at least ⌈1/C⌉ in all) as LP
// columns and the others at 0, so the first solve works on a few columns
// whatever C.
func newMasterForm(solver engine.LPSolver, h []float64, c float64, keep int, primal bool) (*master, error) {
	m := len(h)
	order := make([]int, m)
	for r := range order {
		order[r] = r
	}
	sort.SliceStable(order, func(a, b int) bool { return h[order[a]] < h[order[b]] })
	var up, cols []int
	if primal {
		cols = append(cols, order[:min(max(int(math.Ceil(2/c-1e-9)), 1), m)]...)
	} else {
		q := min(int(math.Floor(1/c+1e-9)), m) // triplets at C at the optimum
		lo := max(q-keep/2, 0)
		hi := min(max(lo+keep, int(math.Ceil(1/c-1e-9)), q+1), m)
		up = append(up, order[:lo]...)
		cols = append(cols, order[lo:hi]...)
	}
	sort.Ints(up)
	sort.Ints(cols) // triplet order: better locality for the margins
	ms := &master{m: m, c: c, state: make([]int8, m), g: make([]float64, m), keep: keep, primal: primal, termAge: defaultTermAge}
	var prob engine.LPProblem
	if ms.primal {
		// Row 0: 1ᵀw = 1. Columns: ρ (free, cost −1); the first term.
		prob = engine.LPProblem{RowLower: []float64{1}, RowUpper: []float64{1}}
		prob.Cols = append(prob.Cols, engine.LPFree(-1, nil, nil), engine.LPNonNegative(0, []int{0}, []float64{1}))
		ms.wCol, ms.ncols = []int{1}, 2
	} else {
		// Row 0: Σ u = 1; row 1: the first term, Σ u_r h_r − π ≤ 0.
		// Column 0: π (free, cost 1).
		prob = engine.LPProblem{RowLower: []float64{1, math.Inf(-1)}, RowUpper: []float64{1, 0}}
		prob.Cols = append(prob.Cols, engine.LPFree(1, []int{1}, []float64{-1}))
	}
	model, err := solver.NewModel(prob)
	if err != nil {
		return nil, err
	}
	ms.model = model
	ms.hs = append(ms.hs, h)
	ms.upSum = append(ms.upSum, 0)
	ms.age = append(ms.age, 0)
	if err := ms.addRows(cols); err != nil {
		model.Close()
		return nil, err
	}
	if err := ms.fold(up, true); err != nil {
		model.Close()
		return nil, err
	}
	return ms, nil
}

// close releases the LP.
func (ms *master) close() { ms.model.Close() }

// addRows adds the triplets rs to the LP: each as a column u_r ∈ [0, C]
// at its lower bound (dual form) or as a row with its slack column ξ_r
// (primal form).
func (ms *master) addRows(rs []int) error {
	if len(rs) == 0 {
		return nil
	}
	if ms.primal {
		return ms.addPrimalRows(rs)
	}
	cols := make([]engine.LPColumn, len(rs))
	for k, r := range rs {
		cs := make([]int, 0, 1+len(ms.hs))
		vs := make([]float64, 0, 1+len(ms.hs))
		cs, vs = append(cs, 0), append(vs, 1)
		for j, h := range ms.hs {
			if h[r] != 0 {
				cs, vs = append(cs, 1+j), append(vs, h[r])
			}
		}
		cols[k] = engine.LPColumn{Obj: 0, Lower: 0, Upper: ms.c, Rows: cs, Vals: vs}
		ms.state[r] = inLP
	}
	if err := ms.model.AddColumns(cols...); err != nil {
		return err
	}
	ms.rows = append(ms.rows, rs...)
	return nil
}

// addPrimalRows adds the triplets rs to W in the primal form.
func (ms *master) addPrimalRows(rs []int) error {
	rows := make([]engine.LPRow, len(rs))
	cols := make([]engine.LPColumn, len(rs))
	first := 1 + len(ms.rows)
	for k, r := range rs {
		cs := make([]int, 0, 1+len(ms.hs))
		vs := make([]float64, 0, 1+len(ms.hs))
		cs, vs = append(cs, 0), append(vs, -1)
		for j, h := range ms.hs {
			if h[r] != 0 {
				cs, vs = append(cs, ms.wCol[j]), append(vs, h[r])
			}
		}
		rows[k] = engine.LPRow{Lower: 0, Upper: math.Inf(1), Cols: cs, Vals: vs}
		cols[k] = engine.LPNonNegative(ms.c, []int{first + k}, []float64{1})
		ms.state[r] = inLP
	}
	if err := ms.model.AddRows(rows...); err != nil {
		return err
	}
	if err := ms.model.AddColumns(cols...); err != nil {
		return err
	}
	ms.rows = append(ms.rows, rs...)
	ms.ncols += len(rs)
	return nil
}

// addTerm adds a term with margins h over all triplets: a row of the dual
// form, a column of the primal form.
func (ms *master) addTerm(h []float64) error { return ms.addTerms([][]float64{h}) }

// addTerms adds terms with margins hs over all triplets in one call to the
// LP (rows of the dual form, columns of the primal form): CLP copies its
// matrix at every AddRows, which one row at a time cost 40% of a run on
// ionosphere.
func (ms *master) addTerms(hs [][]float64) error {
	if len(hs) == 0 {
		return nil
	}
	rows := make([]engine.LPRow, len(hs))
	cols := make([]engine.LPColumn, len(hs))
	sums := make([]float64, len(hs))
	for t, h := range hs {
		idx := make([]int, 0, len(ms.rows)+1)
		vals := make([]float64, 0, len(ms.rows)+1)
		if ms.primal {
			idx, vals = append(idx, 0), append(vals, 1)
		} else {
			idx, vals = append(idx, 0), append(vals, -1)
		}
		for k, r := range ms.rows {
			if h[r] != 0 {
				idx, vals = append(idx, 1+k), append(vals, h[r])
			}
		}
		if ms.primal {
			cols[t] = engine.LPNonNegative(0, idx, vals)
			continue
		}
		if ms.nUp > 0 {
			for r, st := range ms.state {
				if st == atC {
					sums[t] += h[r]
				}
			}
		}
		rows[t] = engine.LPRow{Lower: math.Inf(-1), Upper: -ms.c * sums[t], Cols: idx, Vals: vals}
	}
	var err error
	if ms.primal {
		err = ms.model.AddColumns(cols...)
	} else {
		err = ms.model.AddRows(rows...)
	}
	if err != nil {
		return err
	}
	for t, h := range hs {
		if ms.primal {
			ms.wCol = append(ms.wCol, ms.ncols)
			ms.ncols++
		}
		ms.hs = append(ms.hs, h)
		ms.upSum = append(ms.upSum, sums[t])
		ms.age = append(ms.age, 0)
	}
	return nil
}

// defaultTermAge is the number of consecutive solves a term may go without
// weight before it may leave the master, at defaultColumns columns per
// iteration (PSDBoost scales it to keep about the last 160 terms priced
// whatever the columns per iteration). PSDBoost with its defaults, one run
// each, iterations and seconds to a certified gap, by termAge:
//
//	                        never        20          10          5           3
//	Figure 1 problem        309, 123 s   308, 25 s   327, 21 s   439, 16 s   718, 18 s
//	ionosphere (70% rows)   382, 210 s               465, 47 s
//
// (Figure 1: 600 points, 24 dimensions, 550 triplets; ionosphere: 34
// dimensions, 2,214 triplets.) A term dropped too early costs iterations to
// price it back; one kept too long makes every pivot dearer. With one
// column per iteration and no smoothing (the paper's protocol), 1,000
// iterations reach π = 0.179448 in 32 s at termAge 160, against 0.179654 in
// 51 s when no term leaves (the optimum is 0.182242).
const defaultTermAge = 10

// dropTerms removes the terms that carried no weight in ms.termAge
// consecutive solves, including sol, and do not bind at sol, and returns
// their indices (ascending, into the terms before the call) with w, the
// weights of sol, compacted to the terms that stay. The basis stays
// optimal: a removed row's logical is basic (the row is strictly inside
// its bound), a removed column is non-basic at 0 with a positive reduced
// cost.
func (ms *master) dropTerms(sol engine.LPSolution, w []float64) ([]int, []float64, error) {
	var drop []int
	for j, wj := range w {
		if wj > 0 {
			ms.age[j] = 0
			continue
		}
		ms.age[j]++
		if ms.age[j] < ms.termAge {
			continue
		}
		if ms.primal {
			if sol.ReducedCosts[ms.wCol[j]] > leaveTol && sol.X[ms.wCol[j]] == 0 {
				drop = append(drop, j)
			}
		} else if -ms.c*ms.upSum[j]-sol.RowActivity[1+j] > leaveTol {
			drop = append(drop, j)
		}
	}
	if len(drop) == 0 || len(drop) == len(w) {
		return nil, w, nil
	}
	idx := make([]int, len(drop))
	for k, j := range drop {
		if ms.primal {
			idx[k] = ms.wCol[j]
		} else {
			idx[k] = 1 + j
		}
	}
	var err error
	if ms.primal {
		err = ms.model.DeleteColumns(idx)
	} else {
		err = ms.model.DeleteRows(idx)
	}
	if err != nil {
		return nil, nil, err
	}
	if ms.primal {
		// The columns after a deleted one move down.
		gone := make([]bool, ms.ncols)
		for _, col := range idx {
			gone[col] = true
		}
		shift := make([]int, ms.ncols)
		n := 0
		for col := range shift {
			shift[col] = n
			if gone[col] {
				n++
			}
		}
		for j, col := range ms.wCol {
			ms.wCol[j] = col - shift[col]
		}
		ms.ncols -= len(idx)
	}
	dropped := make([]bool, len(w))
	for _, j := range drop {
		dropped[j] = true
	}
	keep := func(j int) bool { return !dropped[j] }
	ms.hs = compact(ms.hs, keep)
	ms.upSum = compact(ms.upSum, keep)
	ms.age = compact(ms.age, keep)
	if ms.primal {
		ms.wCol = compact(ms.wCol, keep)
	}
	return drop, compact(w, keep), nil
}

// compact keeps the elements of s whose index keep accepts, in order, in
// place.
func compact[T any](s []T, keep func(int) bool) []T {
	out := s[:0]
	for j, v := range s {
		if keep(j) {
			out = append(out, v)
		}
	}
	clear(s[len(out):])
	return out
}

// fold moves the triplets rs between the LP and C (to C when toUp, back
// otherwise) in the row bounds: row 0's right-hand side 1 − C·#atC and term
// row j's upper bound −C Σ_atC H_rj. The columns themselves are deleted or
// added by the caller.
func (ms *master) fold(rs []int, toUp bool) error {
	if len(rs) == 0 {
		return nil
	}
	sign := 1.0
	if !toUp {
		sign = -1
	}
	for _, r := range rs {
		if toUp {
			ms.state[r] = atC
			ms.nUp++
		} else {
			ms.nUp--
		}
	}
	n := len(ms.hs)
	rows := make([]int, 1+n)
	lo := make([]float64, 1+n)
	hi := make([]float64, 1+n)
	b0 := 1 - ms.c*float64(ms.nUp)
	lo[0], hi[0] = b0, b0
	for j, h := range ms.hs {
		var s float64
		for _, r := range rs {
			s += h[r]
		}
		ms.upSum[j] += sign * s
		rows[1+j], lo[1+j], hi[1+j] = 1+j, math.Inf(-1), -ms.c*ms.upSum[j]
	}
	return ms.model.SetRowBounds(rows, lo, hi)
}

// shrink removes from the LP the columns of an optimal solution sol that
// are non-basic at a bound with |d_r| > leaveTol, those farthest from
// changing sides first, until ms.keep columns are left: those at C are
// folded, those at 0 dropped. The solution stays optimal for the smaller LP. The columns
// kept are the triplets whose margins are nearest ρ, the ones the next
// terms are most likely to move across it.
func (ms *master) shrink(sol engine.LPSolution) error {
	if ms.primal || len(ms.rows) <= ms.keep {
		return nil
	}
	type cand struct {
		k int     // LP column − 1
		d float64 // |reduced cost|
	}
	var cands []cand
	for k := range ms.rows {
		col := 1 + k
		x, d := sol.X[col], sol.ReducedCosts[col]
		if (d < -leaveTol && x >= ms.c*(1-1e-9)) || (d > leaveTol && x <= ms.c*1e-9) {
			cands = append(cands, cand{k, math.Abs(d)})
		}
	}
	n := min(len(ms.rows)-ms.keep, len(cands))
	if n <= 0 {
		return nil
	}
	sort.Slice(cands, func(a, b int) bool {
		if cands[a].d != cands[b].d {
			return cands[a].d > cands[b].d
		}
		return cands[a].k < cands[b].k
	})
	gone := make([]bool, len(ms.rows))
	del := make([]int, 0, n)
	var toUp []int
	for _, c := range cands[:n] {
		gone[c.k] = true
		del = append(del, 1+c.k)
		if r := ms.rows[c.k]; sol.ReducedCosts[1+c.k] < 0 {
			toUp = append(toUp, r)
		} else {
			ms.state[r] = atZero
		}
	}
	kept := ms.rows[:0]
	for k, r := range ms.rows {
		if !gone[k] {
			kept = append(kept, r)
		}
	}
	ms.rows = kept
	if err := ms.model.DeleteColumns(del); err != nil {
		return err
	}
	return ms.fold(toUp, true)
}

// batch is the largest number of triplets added to W in one round: ⌈1/C⌉,
// the number of triplets that carry the weight of u.
func (ms *master) batch() int {
	return max(int(math.Ceil(1/ms.c-1e-9)), 1)
}

// masterSolution is an optimum of the master LP over all triplets.
type masterSolution struct {
	pi     float64   // optimal value ρ − C Σ ξ (= the dual value of u)
	w      []float64 // one weight per term
	u      []float64 // triplet weights: LP values, C at C, 0 at 0
	rounds int       // LP solves, the first included
	pivots int       // simplex iterations over those solves
	added  int       // triplets moved into the LP
	lpCols int       // triplet columns of the LP at the optimum (before shrinking)
	up     int       // triplets fixed at C
	// dropped are the terms removed after the solve (ascending indices into
	// the terms before it); w covers the terms that stay.
	dropped []int
}

// solve solves the master and moves the triplets whose reduced costs
// violate the full LP's optimality conditions into it until none is left,
// then shrinks the LP to its undecided columns.
func (ms *master) solve(ctx context.Context) (masterSolution, error) {
	var out masterSolution
	for {
		sol, err := ms.model.Solve(ctx)
		if err != nil {
			return out, err
		}
		out.rounds++
		out.pivots += sol.Iterations
		rho, w := ms.weights(sol)
		g := ms.g
		clear(g)
		for j, h := range ms.hs {
			if w[j] == 0 {
				continue
			}
			for r, v := range h {
				g[r] += w[j] * v
			}
		}
		// Reduced costs d_r = g_r − ρ: an out triplet with d_r < 0 would
		// rise from 0, one at C with d_r > 0 fall from C.
		var viol []int
		for r, st := range ms.state {
			switch {
			case st == atZero && (g[r] < rho-enterTol || ms.primal && g[r] < rho):
				viol = append(viol, r)
			case st == atC && g[r] > rho+enterTol:
				viol = append(viol, r)
			}
		}
		if len(viol) == 0 {
			ms.finish(&out, sol, rho, w)
			if err := ms.shrink(sol); err != nil {
				return out, err
			}
			out.dropped, out.w, err = ms.dropTerms(sol, out.w)
			return out, err
		}
		if q := ms.batch(); len(viol) > q {
			// The most violated first: a new term can move most margins
			// below ρ at the intermediate weights (on letters 40,000 of
			// 94,500 after the second term), while few of them end up
			// carrying weight.
			sort.Slice(viol, func(a, b int) bool {
				return math.Abs(g[viol[a]]-rho) > math.Abs(g[viol[b]]-rho)
			})
			viol = viol[:q]
			sort.Ints(viol)
		}
		var released []int
		for _, r := range viol {
			if ms.state[r] == atC {
				released = append(released, r)
			}
		}
		out.added += len(viol)
		if err := ms.addRows(viol); err != nil {
			return out, err
		}
		if err := ms.fold(released, false); err != nil {
			return out, err
		}
	}
}

// finish fills out from an LP solution optimal over all triplets.
func (ms *master) finish(out *masterSolution, sol engine.LPSolution, rho float64, w []float64) {
	out.w = w
	out.u = make([]float64, ms.m)
	if ms.primal {
		out.pi = -sol.Objective
		for k, r := range ms.rows {
			out.u[r] = sol.Duals[1+k]
		}
	} else {
		out.pi = sol.Objective
		for k, r := range ms.rows {
			out.u[r] = sol.X[1+k]
		}
		for r, st := range ms.state {
			if st == atC {
				out.u[r] = ms.c
			}
		}
	}
	out.lpCols = len(ms.rows)
	out.up = ms.nUp
	feasibleDuals(out.u, ms.c)
}

// weights returns ρ and the term weights w of an LP solution: primal values
// of the primal form, row duals of the dual form (ρ = y_0, w_j = −y_j).
func (ms *master) weights(sol engine.LPSolution) (float64, []float64) {
	w := make([]float64, len(ms.hs))
	if ms.primal {
		for j, col := range ms.wCol {
			w[j] = sol.X[col]
		}
		return sol.X[0], w
	}
	for j := range w {
		w[j] = max(-sol.Duals[1+j], 0)
	}
	return sol.Duals[0], w
}

// feasibleDuals moves the LP's triplet weights, feasible to the solver's
// tolerances, onto 0 ≤ u ≤ C, 1ᵀu = 1 to rounding: clipped into [0, C],
// then the excess or shortfall of the sum taken from or given to every
// weight in proportion to its room to the bound on that side. The pricing
// certificate λmax(Σ u_r A_r) bounds the SDP optimum only for a feasible u.
func feasibleDuals(u []float64, c float64) {
	var s float64
	for r, v := range u {
		u[r] = min(max(v, 0), c)
		s += u[r]
	}
	d := 1 - s
	if d == 0 {
		return
	}
	var room float64
	for _, v := range u {
		if d > 0 {
			room += c - v
		} else {
			room += v
		}
	}
	if !(room > 0) {
		return
	}
	f := math.Min(math.Abs(d)/room, 1)
	for r, v := range u {
		if d > 0 {
			u[r] = v + f*(c-v)
		} else {
			u[r] = v - f*v
		}
	}
}
