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
// over a working set W of triplets: one row per term and one bounded
// column per triplet, so the simplex basis has #terms + 2 rows however many
// triplets carry weight (the primal form, one row per triplet, has a basis
// of |W| rows: at C = 1/(0.5·m) about m of them). The primal
//
//	max ρ − C Σ_{r∈W} ξ_r  s.t.  H_r w + ξ_r − ρ ≥ 0 (r ∈ W), 1ᵀw = 1, w, ξ ≥ 0
//
// is read from the row duals: w_j = −y_j (term rows), ρ = y_0 (the
// equality). Leaving a triplet out of W fixes u_r = 0, so the optimum over W
// bounds the optimum over all m triplets from above; once no triplet outside
// W has a negative reduced cost H_r w − ρ the two coincide, w solves the
// full primal LP and u, extended by zeros, the full dual. solve adds such
// triplets, the most violated first and at most ⌈1/C⌉ per round, and
// re-solves (primal simplex from the previous basis: new columns at their
// lower bound keep it primal feasible) until none is left; a new term is a
// new row, after which dual simplex continues from the previous basis.
// Triplets never leave W.
//
// A dense term costs |W| entries instead of m. The margins of every term
// over all triplets are kept in Go (m floats per term) to check the
// triplets outside W.
type master struct {
	model engine.LPModel
	m     int
	c     float64
	hs    [][]float64 // margins of every term over all triplets
	rows  []int       // W: the triplet of each LP column 1, 2, … (primal form: row)
	inW   []bool
	g     []float64 // workspace: H w over all triplets

	// primal selects the primal form (one row and one slack column ξ_r per
	// triplet, one column per term) for LP solvers without a warm start
	// after AddRows: the pure-Go simplex re-solves from scratch there, and
	// from scratch the degenerate dual form can exhaust its iteration limit.
	primal bool
	wCol   []int // primal form: LP column of each term
	ncols  int   // primal form: columns so far
}

// newMaster builds the master LP with the first term (margins h) and the
// triplets with the ⌈2/C⌉ smallest margins of it in W.
func newMaster(solver engine.LPSolver, h []float64, c float64) (*master, error) {
	m := len(h)
	k := int(math.Ceil(2/c - 1e-9))
	k = min(max(k, 1), m)
	order := make([]int, m)
	for r := range order {
		order[r] = r
	}
	sort.Slice(order, func(a, b int) bool { return h[order[a]] < h[order[b]] })
	w := order[:k]
	sort.Ints(w) // triplet order: better locality for the margins
	ms := &master{m: m, c: c, inW: make([]bool, m), g: make([]float64, m), primal: solver.Name() != "native"}
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
	if err := ms.addRows(w); err != nil {
		model.Close()
		return nil, err
	}
	return ms, nil
}

// close releases the LP.
func (ms *master) close() { ms.model.Close() }

// addRows adds the triplets rs to W: each as a column u_r ∈ [0, C] (dual
// form) or as a row with its slack column ξ_r (primal form).
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
		ms.inW[r] = true
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
		ms.inW[r] = true
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
func (ms *master) addTerm(h []float64) error {
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
	var err error
	if ms.primal {
		err = ms.model.AddColumns(engine.LPNonNegative(0, idx, vals))
		ms.wCol = append(ms.wCol, ms.ncols)
		ms.ncols++
	} else {
		err = ms.model.AddRows(engine.LPRow{Lower: math.Inf(-1), Upper: 0, Cols: idx, Vals: vals})
	}
	if err != nil {
		return err
	}
	ms.hs = append(ms.hs, h)
	return nil
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
	u      []float64 // triplet weights, zero outside W
	rounds int       // LP solves, the first included
	pivots int       // simplex iterations over those solves
	added  int       // triplets added to W
}

// solve solves the master over W and adds the violated triplets until none
// is left outside W.
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
		var viol []int
		for r, v := range g {
			if !ms.inW[r] && v < rho {
				viol = append(viol, r)
			}
		}
		if len(viol) == 0 {
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
			}
			feasibleDuals(out.u, ms.c)
			return out, nil
		}
		if q := ms.batch(); len(viol) > q {
			// The most violated first: a new term can move most margins
			// below ρ at the intermediate weights (on letters 40,000 of
			// 94,500 after the second term), while few of them end up
			// carrying weight.
			sort.Slice(viol, func(a, b int) bool { return g[viol[a]] < g[viol[b]] })
			viol = viol[:q]
			sort.Ints(viol)
		}
		out.added += len(viol)
		if err := ms.addRows(viol); err != nil {
			return out, err
		}
	}
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
