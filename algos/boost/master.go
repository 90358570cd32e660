package boost

import (
	"context"
	"math"
	"sort"

	"github.com/psdlearn/psdlearn/engine"
)

// master is PSDBoost's restricted master LP solved by row generation: the LP
//
//	max ρ − C Σ_{r∈W} ξ_r  s.t.  H_r w + ξ_r − ρ ≥ 0 (r ∈ W), 1ᵀw = 1, w, ξ ≥ 0
//
// over a working set W of triplets. Leaving a row r out drops the term
// −C (ρ − H_r w)_+ from the objective, so the LP over W bounds the LP over
// all m triplets from above; once no triplet outside W has H_r w < ρ the
// two optima coincide, the weights w solve the full LP and the row duals on
// W, extended by zeros, are an optimal dual u of the full LP (0 ≤ u ≤ C,
// 1ᵀu = 1 hold whatever W is). solve adds such violated triplets, the most
// violated first and at most ⌈1/C⌉ per round, and re-solves (dual simplex
// from the previous basis) until none is left. Triplets never leave W.
//
// At a vertex at most (#terms + 1) duals lie strictly between 0 and C, and
// ⌈1/C⌉ triplets carry the weight, so W stays near the triplets with small
// margins instead of all m rows; a dense column costs |W| entries instead
// of m. The margins of every term over all triplets are kept in Go (m floats
// per term) to check the rows outside W.
type master struct {
	model engine.LPModel
	m     int
	c     float64
	hs    [][]float64 // margins of every term over all triplets
	wCol  []int       // LP column of each term
	rows  []int       // W: the triplet of each LP row 1, 2, …
	inW   []bool
	ncols int
	g     []float64 // workspace: H w over all triplets
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
	ms := &master{m: m, c: c, inW: make([]bool, m), g: make([]float64, m)}
	// Row 0: 1ᵀw = 1. Columns: ρ (free, cost −1); the first term.
	prob := engine.LPProblem{RowLower: []float64{1}, RowUpper: []float64{1}}
	prob.Cols = append(prob.Cols, engine.LPFree(-1, nil, nil), engine.LPNonNegative(0, []int{0}, []float64{1}))
	model, err := solver.NewModel(prob)
	if err != nil {
		return nil, err
	}
	ms.model, ms.ncols = model, 2
	ms.hs = append(ms.hs, h)
	ms.wCol = append(ms.wCol, 1)
	if err := ms.addRows(w); err != nil {
		model.Close()
		return nil, err
	}
	return ms, nil
}

// close releases the LP.
func (ms *master) close() { ms.model.Close() }

// addRows adds the triplets rs to W, each with its slack column ξ_r.
func (ms *master) addRows(rs []int) error {
	if len(rs) == 0 {
		return nil
	}
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

// addTerm adds a term with margins h over all triplets as a column.
func (ms *master) addTerm(h []float64) error {
	rows := make([]int, 0, len(ms.rows)+1)
	vals := make([]float64, 0, len(ms.rows)+1)
	rows, vals = append(rows, 0), append(vals, 1)
	for k, r := range ms.rows {
		if h[r] != 0 {
			rows, vals = append(rows, 1+k), append(vals, h[r])
		}
	}
	if err := ms.model.AddColumns(engine.LPNonNegative(0, rows, vals)); err != nil {
		return err
	}
	ms.hs = append(ms.hs, h)
	ms.wCol = append(ms.wCol, ms.ncols)
	ms.ncols++
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
	u      []float64 // triplet weights (row duals), zero outside W
	rounds int       // LP solves, the first included
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
		rho := sol.X[0]
		w := make([]float64, len(ms.wCol))
		for j, col := range ms.wCol {
			w[j] = sol.X[col]
		}
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
			out.pi = -sol.Objective
			out.w = w
			out.u = make([]float64, ms.m)
			for k, r := range ms.rows {
				out.u[r] = sol.Duals[1+k]
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
