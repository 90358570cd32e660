package lp

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Go is the pure-Go solver, always available: a dense revised simplex method
// for bounded variables (two phases with artificial variables, Dantzig
// pricing with a switch to Bland's rule on long degenerate runs, Harris's
// two-pass ratio test, the basis inverse updated by elementary row
// operations and recomputed every few dozen pivots). It keeps the optimal
// basis of a solve and restarts from it after AddColumns. Its cost is
// O(rows·(rows + columns)) per pivot and O(rows²) memory, so it suits problems
// of up to a few thousand rows; its duals are those of the optimal basis,
// y = B⁻ᵀ c_B.
var Go Solver = goSolver{}

type goSolver struct{}

func (goSolver) Name() string { return "go" }

// GoMaxRows is the largest number of rows the Go solver accepts: it keeps
// dense rows×rows basis matrices (three at a reinversion, 1.5 GiB at this
// size), so larger problems get ErrTooLarge instead of an allocation that
// could exhaust the machine. The native solver (CLP) has no such limit.
const GoMaxRows = 8192

func (goSolver) NewModel(p Problem) (Model, error) {
	q, err := validateProblem(p)
	if err != nil {
		return nil, fmt.Errorf("lp go: %w", err)
	}
	if m := len(q.RowLower); m > GoMaxRows {
		return nil, fmt.Errorf("lp go: %w: %d rows need dense %d×%d basis matrices (%.0f GiB); the limit is %d rows, use the native (CLP) solver",
			ErrTooLarge, m, m, m, 3*8*float64(m)*float64(m)/(1<<30), GoMaxRows)
	}
	return &goModel{p: q}, nil
}

type goModel struct {
	p      Problem
	warm   *basisState // optimal basis of the last solve, nil if none
	closed bool
}

// basisState is a basis over the structural and logical variables with its
// inverse (adding columns leaves B and B⁻¹ unchanged).
type basisState struct {
	basis       []int     // variable basic in each position (structural j < n, logical n+i)
	status      []int8    // per variable
	binv        []float64 // B⁻¹, row-major
	sinceInvert int       // pivots since B⁻¹ was last computed from scratch
}

func (m *goModel) NumRows() int { return len(m.p.RowLower) }
func (m *goModel) NumCols() int { return len(m.p.Cols) }

func (m *goModel) Close() error {
	m.closed = true
	m.p = Problem{}
	m.warm = nil
	return nil
}

func (m *goModel) AddColumns(cols ...Column) error {
	if m.closed {
		return ErrClosed
	}
	for k, c := range cols {
		if err := validateColumn(len(m.p.Cols)+k, c, len(m.p.RowLower)); err != nil {
			return fmt.Errorf("lp go: %w", err)
		}
	}
	for _, c := range cols {
		m.p.Cols = append(m.p.Cols, copyColumn(c))
	}
	return nil
}

// AddRows appends rows; the next solve starts from scratch (the kept basis
// inverse has the old dimension).
func (m *goModel) AddRows(rows ...Row) error {
	if m.closed {
		return ErrClosed
	}
	for k, r := range rows {
		if err := validateRow(len(m.p.RowLower)+k, r, len(m.p.Cols)); err != nil {
			return fmt.Errorf("lp go: %w", err)
		}
	}
	if n := len(m.p.RowLower) + len(rows); n > GoMaxRows {
		return fmt.Errorf("lp go: %w: %d rows; the limit is %d rows, use the native (CLP) solver", ErrTooLarge, n, GoMaxRows)
	}
	for _, r := range rows {
		i := len(m.p.RowLower)
		m.p.RowLower = append(m.p.RowLower, r.Lower)
		m.p.RowUpper = append(m.p.RowUpper, r.Upper)
		for k, j := range r.Cols {
			c := &m.p.Cols[j]
			c.Rows = append(c.Rows, i)
			c.Vals = append(c.Vals, r.Vals[k])
		}
	}
	m.warm = nil
	return nil
}

// DeleteColumns removes columns. The kept basis follows the remaining
// columns when every removed one is non-basic in it (B and B⁻¹ are then
// unchanged); otherwise the next solve starts from scratch.
func (m *goModel) DeleteColumns(cols []int) error {
	if m.closed {
		return ErrClosed
	}
	del, err := validateDelete("column", cols, len(m.p.Cols))
	if err != nil {
		return fmt.Errorf("lp go: %w", err)
	}
	if len(cols) == 0 {
		return nil
	}
	if m.warm != nil {
		m.warm = m.warm.without(del)
	}
	kept := m.p.Cols[:0]
	for j, c := range m.p.Cols {
		if !del[j] {
			kept = append(kept, c)
		}
	}
	clear(m.p.Cols[len(kept):])
	m.p.Cols = kept
	return nil
}

// DeleteRows removes rows; the next solve starts from scratch (the kept
// basis inverse has the old dimension).
func (m *goModel) DeleteRows(rows []int) error {
	if m.closed {
		return ErrClosed
	}
	del, err := validateDelete("row", rows, len(m.p.RowLower))
	if err != nil {
		return fmt.Errorf("lp go: %w", err)
	}
	if len(rows) == 0 {
		return nil
	}
	newIndex := make([]int, len(del)) // −1 for a deleted row
	lo, hi := m.p.RowLower[:0], m.p.RowUpper[:0]
	for i, gone := range del {
		if gone {
			newIndex[i] = -1
			continue
		}
		newIndex[i] = len(lo)
		lo, hi = append(lo, m.p.RowLower[i]), append(hi, m.p.RowUpper[i])
	}
	m.p.RowLower, m.p.RowUpper = lo, hi
	for j := range m.p.Cols {
		c := &m.p.Cols[j]
		rs, vs := c.Rows[:0], c.Vals[:0]
		for k, i := range c.Rows {
			if ni := newIndex[i]; ni >= 0 {
				rs, vs = append(rs, ni), append(vs, c.Vals[k])
			}
		}
		c.Rows, c.Vals = rs, vs
	}
	m.warm = nil
	return nil
}

// without returns the basis with the structural columns marked in del
// removed, or nil when one of them is basic. Columns added after the basis
// was saved (beyond its own) have no status in it and need no remapping.
func (w *basisState) without(del []bool) *basisState {
	nOld := len(w.status) - len(w.basis)
	shift := make([]int, nOld+1) // removed columns before each old index
	for j := 0; j < nOld; j++ {
		shift[j+1] = shift[j]
		if del[j] {
			if w.status[j] == stBasic {
				return nil
			}
			shift[j+1]++
		}
	}
	gone := shift[nOld]
	out := &basisState{basis: make([]int, len(w.basis)), binv: w.binv, sinceInvert: w.sinceInvert}
	out.status = make([]int8, 0, len(w.status)-gone)
	for j, st := range w.status {
		if j < nOld && del[j] {
			continue
		}
		out.status = append(out.status, st)
	}
	for k, j := range w.basis {
		if j < nOld {
			out.basis[k] = j - shift[j]
		} else {
			out.basis[k] = j - gone
		}
	}
	return out
}

// SetRowBounds sets row bounds. The next solve starts from the kept basis
// when it stays primal feasible, from scratch otherwise.
func (m *goModel) SetRowBounds(rows []int, lower, upper []float64) error {
	if m.closed {
		return ErrClosed
	}
	if err := validateRowBounds(rows, lower, upper, len(m.p.RowLower)); err != nil {
		return fmt.Errorf("lp go: %w", err)
	}
	for k, i := range rows {
		m.p.RowLower[i], m.p.RowUpper[i] = lower[k], upper[k]
	}
	return nil
}

func (m *goModel) Solve(ctx context.Context) (Solution, error) {
	if m.closed {
		return Solution{}, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return Solution{}, fmt.Errorf("lp go: %w", err)
	}
	s := newSimplex(&m.p)
	status, err := s.solve(ctx, m.warm)
	if err != nil {
		return Solution{Status: NotSolved, Iterations: s.iters}, fmt.Errorf("lp go: %w", err)
	}
	m.warm = nil
	sol := Solution{Status: status, Iterations: s.iters}
	if status == Optimal {
		m.warm = s.state()
		sol.X = append([]float64(nil), s.x[:s.n]...)
		sol.Duals = s.duals()
		completeSolution(&m.p, &sol)
	}
	return sol, statusError("go", status)
}

// Variable status.
const (
	stBasic int8 = iota
	stLower      // non-basic at its lower bound
	stUpper      // non-basic at its upper bound
	stFree       // non-basic free variable at zero
)

// Tolerances of the pure-Go simplex.
const (
	primalTol   = 1e-9  // bound violation allowed for basic variables
	dualTol     = 1e-9  // reduced-cost tolerance for optimality
	pivotTol    = 1e-9  // smallest |α| accepted as a pivot
	reinvertMin = 50    // pivots between recomputations of B⁻¹: at least this many, and m/4
	residualTol = 1e-9  // relative residuals accepted at an optimum without a fresh B⁻¹
	blandAfter  = 50    // consecutive degenerate pivots before Bland's rule
	phase1Tol   = 1e-8  // largest sum of artificials accepted as feasible (scaled)
	zeroStep    = 1e-12 // a step this small counts as degenerate
)

// simplex is the state of one solve. Variables are the n structural
// columns, then one logical r_i per row (A x − r = 0, RowLower ≤ r ≤ RowUpper),
// then the artificials of phase 1 (column s·e_i, bounds [0, ∞) in phase 1 and
// [0, 0] afterwards).
type simplex struct {
	m, n   int
	rows   [][]int     // structural columns, sparse: row indices
	vals   [][]float64 // and values
	artRow []int       // artificial k: its row
	artSgn []float64   // and its coefficient
	cost   []float64   // structural objective
	lo, hi []float64   // bounds of all variables
	x      []float64
	status []int8
	basis  []int
	binv   []float64 // m×m row-major B⁻¹
	iters  int
	// pivots since B⁻¹ was last computed from scratch
	sinceInvert int

	// workspace
	y, alpha, col []float64
}

func newSimplex(p *Problem) *simplex {
	m, n := len(p.RowLower), len(p.Cols)
	s := &simplex{m: m, n: n, rows: make([][]int, n), vals: make([][]float64, n), cost: make([]float64, n)}
	s.lo = make([]float64, n+m)
	s.hi = make([]float64, n+m)
	for j, c := range p.Cols {
		s.rows[j], s.vals[j] = c.Rows, c.Vals // validated copies owned by the model
		s.cost[j] = c.Obj
		s.lo[j], s.hi[j] = c.Lower, c.Upper
	}
	for i := 0; i < m; i++ {
		s.lo[n+i], s.hi[n+i] = p.RowLower[i], p.RowUpper[i]
	}
	s.y = make([]float64, m)
	s.alpha = make([]float64, m)
	s.col = make([]float64, m)
	return s
}

func (s *simplex) nvar() int { return s.n + s.m + len(s.artRow) }

// column writes the constraint column of variable j into dst.
func (s *simplex) column(j int, dst []float64) {
	switch {
	case j < s.n:
		clear(dst)
		for t, r := range s.rows[j] {
			dst[r] = s.vals[j][t]
		}
	case j < s.n+s.m:
		clear(dst)
		dst[j-s.n] = -1
	default:
		clear(dst)
		k := j - s.n - s.m
		dst[s.artRow[k]] = s.artSgn[k]
	}
}

// dot returns a_jᵀ y.
func (s *simplex) dot(j int, y []float64) float64 {
	switch {
	case j < s.n:
		var d float64
		for t, r := range s.rows[j] {
			d += s.vals[j][t] * y[r]
		}
		return d
	case j < s.n+s.m:
		return -y[j-s.n]
	default:
		k := j - s.n - s.m
		return s.artSgn[k] * y[s.artRow[k]]
	}
}

// nonbasicValue returns the value of a non-basic variable with status st.
func (s *simplex) nonbasicValue(j int, st int8) float64 {
	switch st {
	case stLower:
		return s.lo[j]
	case stUpper:
		return s.hi[j]
	}
	return 0
}

// restStatus is the non-basic status of variable j at its preferred bound.
func (s *simplex) restStatus(j int) int8 {
	switch {
	case !math.IsInf(s.lo[j], -1):
		return stLower
	case !math.IsInf(s.hi[j], 1):
		return stUpper
	}
	return stFree
}

// state returns the basis for a warm start, or nil when an artificial is basic.
func (s *simplex) state() *basisState {
	nv := s.n + s.m
	for _, j := range s.basis {
		if j >= nv {
			return nil
		}
	}
	return &basisState{basis: append([]int(nil), s.basis...), status: append([]int8(nil), s.status[:nv]...),
		binv: s.binv, sinceInvert: s.sinceInvert}
}

// solve runs the simplex method from warm (a basis of a previous solve with
// the same rows and possibly fewer columns) or from scratch.
func (s *simplex) solve(ctx context.Context, warm *basisState) (Status, error) {
	if s.m == 0 {
		return s.solveNoRows(), nil
	}
	if warm != nil && s.tryWarm(warm) {
		return s.iterate(ctx, s.phase2Cost())
	}
	s.coldStart()
	st, err := s.iterate(ctx, s.phase1Cost())
	if err != nil || st != Optimal {
		if st == Unbounded {
			st = Failed // phase 1 is bounded below by 0
		}
		return st, err
	}
	var sum, scale float64
	for k := range s.artRow {
		sum += s.x[s.n+s.m+k]
	}
	for j := 0; j < s.n+s.m; j++ {
		scale = math.Max(scale, math.Abs(s.x[j]))
	}
	if sum > phase1Tol*math.Max(1, scale) {
		return Infeasible, nil
	}
	for k := range s.artRow {
		j := s.n + s.m + k
		s.hi[j] = 0
		if s.status[j] != stBasic {
			s.status[j] = stLower
		}
		s.x[j] = math.Min(math.Max(s.x[j], 0), 0)
	}
	s.driveOutArtificials()
	return s.iterate(ctx, s.phase2Cost())
}

// solveNoRows handles a problem without constraints: each variable sits at
// the bound its cost prefers.
func (s *simplex) solveNoRows() Status {
	s.x = make([]float64, s.n)
	s.status = make([]int8, s.n)
	for j := 0; j < s.n; j++ {
		c := s.cost[j]
		switch {
		case c > 0 && math.IsInf(s.lo[j], -1), c < 0 && math.IsInf(s.hi[j], 1):
			return Unbounded
		case c > 0:
			s.x[j], s.status[j] = s.lo[j], stLower
		case c < 0:
			s.x[j], s.status[j] = s.hi[j], stUpper
		default:
			s.status[j] = s.restStatus(j)
			s.x[j] = s.nonbasicValue(j, s.status[j])
		}
	}
	return Optimal
}

func (s *simplex) phase1Cost() []float64 {
	c := make([]float64, s.nvar())
	for k := range s.artRow {
		c[s.n+s.m+k] = 1
	}
	return c
}

func (s *simplex) phase2Cost() []float64 {
	c := make([]float64, s.nvar())
	copy(c, s.cost)
	return c
}

// tryWarm installs a previous basis; new structural columns are non-basic at
// their preferred bound. It reports whether the basis is non-singular and
// primal feasible.
func (s *simplex) tryWarm(w *basisState) bool {
	if len(w.basis) != s.m {
		return false
	}
	nOld := len(w.status) - s.m
	if nOld > s.n || nOld < 0 {
		return false
	}
	nv := s.n + s.m
	s.status = make([]int8, nv)
	s.x = make([]float64, nv)
	for j := 0; j < nv; j++ {
		var st int8
		switch {
		case j < nOld:
			st = w.status[j]
		case j < s.n:
			st = s.restStatus(j)
		default:
			st = w.status[j-s.n+nOld]
		}
		// A status that no longer matches the bounds falls back to the rest position.
		if (st == stLower && math.IsInf(s.lo[j], -1)) || (st == stUpper && math.IsInf(s.hi[j], 1)) ||
			(st == stFree && !(math.IsInf(s.lo[j], -1) && math.IsInf(s.hi[j], 1))) {
			st = s.restStatus(j)
		}
		s.status[j] = st
	}
	s.basis = make([]int, s.m)
	for k, j := range w.basis {
		if j >= nOld { // a logical: shift past the new structural columns
			j += s.n - nOld
		}
		s.basis[k] = j
		s.status[j] = stBasic
	}
	for j := 0; j < nv; j++ {
		if s.status[j] != stBasic {
			s.x[j] = s.nonbasicValue(j, s.status[j])
		}
	}
	if len(w.binv) == s.m*s.m && w.sinceInvert < s.reinvertEvery() {
		s.binv = append([]float64(nil), w.binv...)
		s.sinceInvert = w.sinceInvert
		s.basicValues()
	} else if !s.reinvert() {
		return false
	}
	for _, j := range s.basis {
		if s.x[j] < s.lo[j]-primalTol*(1+math.Abs(s.lo[j])) || s.x[j] > s.hi[j]+primalTol*(1+math.Abs(s.hi[j])) {
			return false
		}
	}
	return true
}

// coldStart builds the phase-1 basis: logicals where the row activity of the
// non-basic structurals is within the row bounds, artificials elsewhere.
func (s *simplex) coldStart() {
	nv := s.n + s.m
	s.status = make([]int8, nv)
	s.x = make([]float64, nv)
	for j := 0; j < s.n; j++ {
		s.status[j] = s.restStatus(j)
		s.x[j] = s.nonbasicValue(j, s.status[j])
	}
	act := make([]float64, s.m)
	for j := 0; j < s.n; j++ {
		if v := s.x[j]; v != 0 {
			for t, r := range s.rows[j] {
				act[r] += s.vals[j][t] * v
			}
		}
	}
	s.artRow, s.artSgn = s.artRow[:0], s.artSgn[:0]
	s.basis = make([]int, s.m)
	for i := 0; i < s.m; i++ {
		j := s.n + i
		lo, hi := s.lo[j], s.hi[j]
		if act[i] >= lo && act[i] <= hi {
			s.basis[i] = j
			s.status[j] = stBasic
			s.x[j] = act[i]
			continue
		}
		// r_i non-basic at the violated bound; the artificial takes up the residual:
		// A x − r + sgn·a = 0 with a = |bound − act| ≥ 0.
		bound, st := lo, stLower
		if act[i] > hi {
			bound, st = hi, stUpper
		}
		s.status[j] = st
		s.x[j] = bound
		sgn := 1.0
		if bound-act[i] < 0 {
			sgn = -1
		}
		s.artRow = append(s.artRow, i)
		s.artSgn = append(s.artSgn, sgn)
		s.lo = append(s.lo, 0)
		s.hi = append(s.hi, math.Inf(1))
		s.status = append(s.status, stBasic)
		s.x = append(s.x, math.Abs(bound-act[i]))
		s.basis[i] = nv + len(s.artRow) - 1
	}
	s.reinvert()
}

// reinvert recomputes B⁻¹ and the basic values from the non-basic ones. It
// reports false when B is singular.
func (s *simplex) reinvert() bool {
	m := s.m
	b := mat.NewDense(m, m, nil)
	for k, j := range s.basis {
		s.column(j, s.col)
		for i := 0; i < m; i++ {
			b.Set(i, k, s.col[i])
		}
	}
	var inv mat.Dense
	if err := inv.Inverse(b); err != nil {
		var c mat.Condition
		if !asCondition(err, &c) || math.IsInf(float64(c), 1) {
			return false
		}
	}
	raw := inv.RawMatrix()
	if s.binv == nil {
		s.binv = make([]float64, m*m)
	}
	for i := 0; i < m; i++ {
		copy(s.binv[i*m:(i+1)*m], raw.Data[i*raw.Stride:i*raw.Stride+m])
	}
	s.sinceInvert = 0
	s.basicValues()
	return true
}

// basicValues sets x_B = B⁻¹(−N x_N).
func (s *simplex) basicValues() {
	m := s.m
	rhs := make([]float64, m)
	for j := 0; j < s.nvar(); j++ {
		if s.status[j] != stBasic && s.x[j] != 0 {
			s.addColumn(rhs, j, -s.x[j])
		}
	}
	for k, j := range s.basis {
		var v float64
		row := s.binv[k*m : (k+1)*m]
		for i, r := range rhs {
			v += row[i] * r
		}
		s.x[j] = v
	}
}

// addColumn adds f·a_j to dst.
func (s *simplex) addColumn(dst []float64, j int, f float64) {
	switch {
	case j < s.n:
		for t, r := range s.rows[j] {
			dst[r] += f * s.vals[j][t]
		}
	case j < s.n+s.m:
		dst[j-s.n] -= f
	default:
		k := j - s.n - s.m
		dst[s.artRow[k]] += f * s.artSgn[k]
	}
}

func asCondition(err error, c *mat.Condition) bool {
	if e, ok := err.(mat.Condition); ok {
		*c = e
		return true
	}
	return false
}

// driveOutArtificials pivots basic artificials (at zero after phase 1) out of
// the basis where a non-artificial column can replace them.
func (s *simplex) driveOutArtificials() {
	nv := s.n + s.m
	for k, j := range s.basis {
		if j < nv {
			continue
		}
		row := s.binv[k*s.m : (k+1)*s.m]
		best, bestAbs := -1, 1e-7
		for q := 0; q < nv; q++ {
			if s.status[q] == stBasic {
				continue
			}
			if a := math.Abs(s.dot(q, row)); a > bestAbs {
				best, bestAbs = q, a
			}
		}
		if best < 0 {
			continue // redundant row: the artificial stays basic at 0
		}
		s.ftran(best, s.alpha)
		s.pivot(k, best, 0, 1)
	}
}

// ftran writes B⁻¹ a_j into out.
func (s *simplex) ftran(j int, out []float64) {
	m := s.m
	switch {
	case j < s.n:
		rows, vals := s.rows[j], s.vals[j]
		for k := 0; k < m; k++ {
			row := s.binv[k*m : (k+1)*m]
			var v float64
			for t, r := range rows {
				v += row[r] * vals[t]
			}
			out[k] = v
		}
	case j < s.n+s.m:
		i := j - s.n
		for k := 0; k < m; k++ {
			out[k] = -s.binv[k*m+i]
		}
	default:
		a := j - s.n - s.m
		i, sg := s.artRow[a], s.artSgn[a]
		for k := 0; k < m; k++ {
			out[k] = sg * s.binv[k*m+i]
		}
	}
}

// pivot moves q into basis position r after a step θ in direction dir
// (the basic values are already updated), using s.alpha = B⁻¹ a_q.
func (s *simplex) pivot(r, q int, theta, dir float64) {
	m := s.m
	leave := s.basis[r]
	// The leaving variable sits at the bound it reached.
	switch {
	case s.lo[leave] == s.hi[leave]:
		s.status[leave] = stLower
		s.x[leave] = s.lo[leave]
	case !math.IsInf(s.lo[leave], -1) && (math.IsInf(s.hi[leave], 1) || math.Abs(s.x[leave]-s.lo[leave]) <= math.Abs(s.x[leave]-s.hi[leave])):
		s.status[leave] = stLower
		s.x[leave] = s.lo[leave]
	case !math.IsInf(s.hi[leave], 1):
		s.status[leave] = stUpper
		s.x[leave] = s.hi[leave]
	default:
		s.status[leave] = stFree
		s.x[leave] = 0
	}
	s.basis[r] = q
	s.status[q] = stBasic
	// Update B⁻¹: row r /= α_r; row k −= α_k·row r.
	ar := s.alpha[r]
	pr := s.binv[r*m : (r+1)*m]
	for i := range pr {
		pr[i] /= ar
	}
	for k := 0; k < m; k++ {
		if k == r || s.alpha[k] == 0 {
			continue
		}
		ak := s.alpha[k]
		pk := s.binv[k*m : (k+1)*m]
		for i, v := range pr {
			pk[i] -= ak * v
		}
	}
}

// iterate runs primal simplex iterations with the objective cost from a
// primal feasible basis until optimality, unboundedness or the iteration limit.
func (s *simplex) iterate(ctx context.Context, cost []float64) (Status, error) {
	m := s.m
	nv := s.nvar()
	maxIter := 100*(m+nv) + 1000
	degenerate := 0
	verified := false
	// Reduced costs of the non-basic variables for the current basis. A
	// bound flip (the entering variable reaching its other bound before any
	// basic one) leaves the basis, y and every reduced cost unchanged, so
	// the next pricing reuses them: a cold start of a boxed LP is mostly
	// flips (PSDBoost's master: thousands of u_r going to C).
	red := make([]float64, nv)
	fresh := false // red holds the reduced costs of the current basis
	for {
		// A pivot costs O(rows·(rows + columns)); a context check is free.
		if err := ctx.Err(); err != nil {
			return NotSolved, err
		}
		if s.sinceInvert >= s.reinvertEvery() {
			if !s.reinvert() {
				return Failed, nil
			}
			fresh = false
		}
		if !fresh {
			// y = B⁻ᵀ c_B.
			clear(s.y)
			for k, j := range s.basis {
				if c := cost[j]; c != 0 {
					row := s.binv[k*m : (k+1)*m]
					for i, v := range row {
						s.y[i] += c * v
					}
				}
			}
			for j := 0; j < nv; j++ {
				if s.status[j] != stBasic && s.lo[j] != s.hi[j] {
					red[j] = cost[j] - s.dot(j, s.y)
				}
			}
			fresh = true
		}
		// Pricing.
		bland := degenerate > blandAfter
		q, dq := -1, 0.0
		var dir float64
		for j := 0; j < nv; j++ {
			st := s.status[j]
			if st == stBasic || s.lo[j] == s.hi[j] {
				continue
			}
			d := red[j]
			var dj float64
			switch {
			case d < -dualTol && (st == stLower || st == stFree):
				dj = 1
			case d > dualTol && (st == stUpper || st == stFree):
				dj = -1
			default:
				continue
			}
			if bland {
				q, dq, dir = j, d, dj
				break
			}
			if math.Abs(d) > math.Abs(dq) {
				q, dq, dir = j, d, dj
			}
		}
		if q < 0 {
			if s.sinceInvert == 0 || verified || s.accurate(cost) {
				if !s.primalFeasible() {
					return Failed, nil
				}
				return Optimal, nil
			}
			// Confirm optimality on a fresh inverse.
			if !s.reinvert() {
				return Failed, nil
			}
			verified, fresh = true, false
			continue
		}
		verified = false
		if s.iters >= maxIter {
			return IterationLimit, nil
		}
		s.iters++
		// Direction: x_B changes by −dir·θ·α.
		s.ftran(q, s.alpha)
		// Harris ratio test, pass 1: the largest step with bounds relaxed by primalTol.
		thetaMax := math.Inf(1)
		for k, j := range s.basis {
			delta := -dir * s.alpha[k]
			switch {
			case delta < -pivotTol && !math.IsInf(s.lo[j], -1):
				thetaMax = math.Min(thetaMax, (s.x[j]-s.lo[j]+primalTol)/-delta)
			case delta > pivotTol && !math.IsInf(s.hi[j], 1):
				thetaMax = math.Min(thetaMax, (s.hi[j]-s.x[j]+primalTol)/delta)
			}
		}
		flip := s.hi[q] - s.lo[q] // finite for a boxed variable
		if math.IsInf(thetaMax, 1) && math.IsInf(flip, 1) {
			return Unbounded, nil
		}
		// Pass 2: among the blocking rows within thetaMax, the largest |α|
		// (under Bland's rule: the smallest ratio, ties to the lowest index).
		r, best := -1, 0.0
		theta := math.Inf(1)
		for k, j := range s.basis {
			delta := -dir * s.alpha[k]
			var ratio float64
			switch {
			case delta < -pivotTol && !math.IsInf(s.lo[j], -1):
				ratio = (s.x[j] - s.lo[j]) / -delta
			case delta > pivotTol && !math.IsInf(s.hi[j], 1):
				ratio = (s.hi[j] - s.x[j]) / delta
			default:
				continue
			}
			if ratio > thetaMax {
				continue
			}
			a := math.Abs(delta)
			switch {
			case r < 0:
				r, best, theta = k, a, ratio
			case bland:
				if ratio < theta-zeroStep || (ratio <= theta+zeroStep && j < s.basis[r]) {
					r, best, theta = k, a, ratio
				}
			case a > best:
				r, best, theta = k, a, ratio
			}
		}
		theta = math.Max(theta, 0)
		if flip <= theta {
			// The entering variable reaches its other bound first.
			s.step(q, dir, flip)
			if dir > 0 {
				s.status[q] = stUpper
				s.x[q] = s.hi[q]
			} else {
				s.status[q] = stLower
				s.x[q] = s.lo[q]
			}
			degenerate = 0
			continue
		}
		s.step(q, dir, theta)
		s.pivot(r, q, theta, dir)
		s.sinceInvert++
		fresh = false
		if theta*math.Max(1, math.Abs(dq)) <= zeroStep {
			degenerate++
		} else {
			degenerate = 0
		}
	}
}

// reinvertEvery is the number of pivots between recomputations of B⁻¹: an
// inversion costs O(m³) and a pivot O(m²).
func (s *simplex) reinvertEvery() int { return max(reinvertMin, s.m/4) }

// accurate reports whether the updated B⁻¹ still gives small residuals: the
// rows A x − r (+ artificials) = 0, and c_B − B_ᵀ y = 0 for the current y.
func (s *simplex) accurate(cost []float64) bool {
	res := make([]float64, s.m)
	mag := make([]float64, s.m)
	for j := 0; j < s.nvar(); j++ {
		if x := s.x[j]; x != 0 {
			s.addColumn(res, j, x)
			switch {
			case j < s.n:
				for t, r := range s.rows[j] {
					mag[r] += math.Abs(s.vals[j][t] * x)
				}
			case j < s.n+s.m:
				mag[j-s.n] += math.Abs(x)
			default:
				mag[s.artRow[j-s.n-s.m]] += math.Abs(x)
			}
		}
	}
	for i, r := range res {
		if math.Abs(r) > residualTol*(1+mag[i]) {
			return false
		}
	}
	for _, j := range s.basis {
		d := cost[j] - s.dot(j, s.y)
		if math.Abs(d) > residualTol*(1+math.Abs(cost[j])) {
			return false
		}
	}
	return true
}

// primalFeasible reports whether every basic variable is within its bounds
// up to a loose tolerance (a guard against accumulated rounding).
func (s *simplex) primalFeasible() bool {
	for _, j := range s.basis {
		if s.x[j] < s.lo[j]-1e3*primalTol*(1+math.Abs(s.lo[j])) || s.x[j] > s.hi[j]+1e3*primalTol*(1+math.Abs(s.hi[j])) {
			return false
		}
	}
	return true
}

// step moves the entering variable q by dir·θ and the basic variables accordingly.
func (s *simplex) step(q int, dir, theta float64) {
	if theta == 0 {
		return
	}
	s.x[q] += dir * theta
	for k, j := range s.basis {
		s.x[j] -= dir * theta * s.alpha[k]
	}
}

// duals returns y = B⁻ᵀ c_B for the original objective.
func (s *simplex) duals() []float64 {
	y := make([]float64, s.m)
	for k, j := range s.basis {
		if j < s.n {
			if c := s.cost[j]; c != 0 {
				row := s.binv[k*s.m : (k+1)*s.m]
				for i, v := range row {
					y[i] += c * v
				}
			}
		}
	}
	return y
}
