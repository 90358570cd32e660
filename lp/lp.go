// Package lp solves linear programs for column generation: a restricted master
// problem is built once from its rows, columns are added one at a time, and
// each re-solve starts from the previous optimal basis when the implementation
// can do so.
//
// A problem is
//
//	minimise    cᵀx
//	subject to  RowLower ≤ A x ≤ RowUpper
//	            Lower_j ≤ x_j ≤ Upper_j
//
// with ±Inf allowed for absent bounds (RowLower[i] == RowUpper[i] is an
// equality). A Solution holds the primal column values, the row activities
// A x, the row duals y and the reduced costs c − Aᵀy, with the sign
// convention of a minimisation: y_i = ∂(optimal objective)/∂(active bound of
// row i), so y_i ≥ 0 on a row at its lower bound and y_i ≤ 0 on a row at its
// upper bound; a column at its lower bound has a reduced cost ≥ 0, one at its
// upper bound ≤ 0, a basic column 0. At an optimum the primal objective cᵀx
// equals the dual objective Σ_i y_i·(active bound of row i) + Σ_j d_j·(active
// bound of column j): see DualObjective.
//
// Two implementations share one API. Native (cgo builds without the purego
// tag) drives COIN-OR CLP through its C interface <coin/Clp_C_Interface.h>:
// the first solve is CLP's default (dual simplex after presolve) and a re-solve
// after AddColumns runs primal simplex from the previous basis, which stays
// primal feasible when columns are added. CLP's own SIGINT handler is turned
// off, so signals stay with the Go program and concurrent models do not race
// on it. Go, always compiled, is a dense
// revised simplex method for bounded variables in pure Go (see Go) with the
// same warm start; its duals are those of the optimal basis. Both are checked
// against each other, against known optima and against the optimality
// conditions (primal and dual feasibility, complementary slackness, equal
// primal and dual objectives) in the tests.
//
// A Model is not safe for concurrent use; distinct Models are independent.
package lp

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/errs"
)

// The problem, model and solution types are the engine's (the algorithms
// use them through the engine without importing this package).
type (
	// Status is the outcome of a solve.
	Status = engine.LPStatus
	// Column is one variable of a problem.
	Column = engine.LPColumn
	// Row is one constraint on existing columns, for Model.AddRows.
	Row = engine.LPRow
	// Problem is a linear program: the row bounds and the columns.
	Problem = engine.LPProblem
	// Solution is the result of a solve.
	Solution = engine.LPSolution
	// Model is a linear program that grows by columns and rows.
	Model = engine.LPModel
	// Solver creates models.
	Solver = engine.LPSolver
)

// The statuses of a solve.
const (
	NotSolved      = engine.LPNotSolved
	Optimal        = engine.LPOptimal
	Infeasible     = engine.LPInfeasible
	Unbounded      = engine.LPUnbounded
	IterationLimit = engine.LPIterationLimit
	Failed         = engine.LPFailed
)

// Column constructors (see the engine's LPNonNegative and LPFree).
var (
	NonNegative = engine.LPNonNegative
	Free        = engine.LPFree
)

// Solve builds a model of p with s, solves it once and closes it.
func Solve(ctx context.Context, s Solver, p Problem) (Solution, error) {
	if s == nil {
		return Solution{}, fmt.Errorf("%w: nil solver", ErrInvalidArgument)
	}
	m, err := s.NewModel(p)
	if err != nil {
		return Solution{}, err
	}
	defer m.Close()
	return m.Solve(ctx)
}

var (
	// ErrInvalidArgument is wrapped by every error about a malformed problem.
	ErrInvalidArgument = errs.New("lp: invalid argument", errs.ErrInvalid)
	// ErrTooLarge is wrapped by errors about a problem beyond a solver's
	// size limit (see GoMaxRows).
	ErrTooLarge = engine.ErrLPTooLarge
	// ErrInfeasible is wrapped when a problem has no feasible point.
	ErrInfeasible = errors.New("lp: problem is infeasible")
	// ErrUnbounded is wrapped when a problem is unbounded below.
	ErrUnbounded = errors.New("lp: problem is unbounded")
	// ErrNotSolved is wrapped when a solve stops without a proof of optimality
	// (iteration limit or numerical failure).
	ErrNotSolved = errs.New("lp: not solved to optimality", errs.ErrNotConverged)
	// ErrClosed is returned by the methods of a closed Model.
	ErrClosed = errors.New("lp: model is closed")
)

// statusError returns the error that goes with a non-optimal status.
func statusError(impl string, s Status) error {
	switch s {
	case Optimal:
		return nil
	case Infeasible:
		return fmt.Errorf("lp %s: %w", impl, ErrInfeasible)
	case Unbounded:
		return fmt.Errorf("lp %s: %w", impl, ErrUnbounded)
	default:
		return fmt.Errorf("lp %s: %w (%s)", impl, ErrNotSolved, s)
	}
}

// DualObjective returns the value of the dual of p at the duals y and reduced
// costs d of sol: Σ_i y_i·b_i + Σ_j d_j·l_j, where b_i is the lower bound of
// row i when y_i > 0 and its upper bound when y_i < 0, and l_j likewise the
// lower or upper bound of column j by the sign of d_j. Duals and reduced
// costs with |v| ≤ tol count as zero (round-off on a row or column whose bound
// on that side is infinite). The result is −Inf when a larger dual points at
// an infinite bound (the duals are then not feasible). At an optimum it equals
// sol.Objective (strong duality).
func DualObjective(p Problem, sol Solution, tol float64) float64 {
	var s float64
	for i, y := range sol.Duals {
		switch {
		case y > tol:
			s += y * p.RowLower[i]
		case y < -tol:
			s += y * p.RowUpper[i]
		}
	}
	for j, d := range sol.ReducedCosts {
		c := p.Cols[j]
		switch {
		case d > tol:
			s += d * c.Lower
		case d < -tol:
			s += d * c.Upper
		}
	}
	if math.IsNaN(s) {
		return math.Inf(-1)
	}
	return s
}

// validateRows checks row bounds.
func validateRows(lo, hi []float64) error {
	if len(lo) != len(hi) {
		return fmt.Errorf("%w: %d row lower bounds, %d upper bounds", ErrInvalidArgument, len(lo), len(hi))
	}
	for i := range lo {
		if math.IsNaN(lo[i]) || math.IsNaN(hi[i]) || math.IsInf(lo[i], 1) || math.IsInf(hi[i], -1) || lo[i] > hi[i] {
			return fmt.Errorf("%w: row %d has bounds [%g, %g]", ErrInvalidArgument, i, lo[i], hi[i])
		}
		if err := checkBound(fmt.Sprintf("row %d lower bound", i), lo[i]); err != nil {
			return err
		}
		if err := checkBound(fmt.Sprintf("row %d upper bound", i), hi[i]); err != nil {
			return err
		}
	}
	return nil
}

// validateColumn checks one column against a problem with nrows rows.
func validateColumn(j int, c Column, nrows int) error {
	if math.IsNaN(c.Obj) || math.IsInf(c.Obj, 0) {
		return fmt.Errorf("%w: column %d has objective %g", ErrInvalidArgument, j, c.Obj)
	}
	if math.IsNaN(c.Lower) || math.IsNaN(c.Upper) || math.IsInf(c.Lower, 1) || math.IsInf(c.Upper, -1) || c.Lower > c.Upper {
		return fmt.Errorf("%w: column %d has bounds [%g, %g]", ErrInvalidArgument, j, c.Lower, c.Upper)
	}
	if err := checkValue(fmt.Sprintf("column %d objective", j), c.Obj); err != nil {
		return err
	}
	if err := checkBound(fmt.Sprintf("column %d lower bound", j), c.Lower); err != nil {
		return err
	}
	if err := checkBound(fmt.Sprintf("column %d upper bound", j), c.Upper); err != nil {
		return err
	}
	if len(c.Rows) != len(c.Vals) {
		return fmt.Errorf("%w: column %d has %d row indices and %d values", ErrInvalidArgument, j, len(c.Rows), len(c.Vals))
	}
	seen := make(map[int]struct{}, len(c.Rows))
	for k, r := range c.Rows {
		if r < 0 || r >= nrows {
			return fmt.Errorf("%w: column %d: row index %d outside [0,%d)", ErrInvalidArgument, j, r, nrows)
		}
		if _, dup := seen[r]; dup {
			return fmt.Errorf("%w: column %d: row %d given twice", ErrInvalidArgument, j, r)
		}
		seen[r] = struct{}{}
		if v := c.Vals[k]; math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: column %d: coefficient in row %d is %g", ErrInvalidArgument, j, r, v)
		}
		if err := checkValue(fmt.Sprintf("column %d coefficient in row %d", j, r), c.Vals[k]); err != nil {
			return err
		}
	}
	return nil
}

// validateRow checks row i against a problem with ncols columns.
func validateRow(i int, r Row, ncols int) error {
	if err := validateRows([]float64{r.Lower}, []float64{r.Upper}); err != nil {
		return fmt.Errorf("%w: new row %d has bounds [%g, %g]", ErrInvalidArgument, i, r.Lower, r.Upper)
	}
	if len(r.Cols) != len(r.Vals) {
		return fmt.Errorf("%w: new row %d has %d column indices and %d values", ErrInvalidArgument, i, len(r.Cols), len(r.Vals))
	}
	seen := make(map[int]struct{}, len(r.Cols))
	for k, j := range r.Cols {
		if j < 0 || j >= ncols {
			return fmt.Errorf("%w: new row %d: column index %d outside [0,%d)", ErrInvalidArgument, i, j, ncols)
		}
		if _, dup := seen[j]; dup {
			return fmt.Errorf("%w: new row %d: column %d given twice", ErrInvalidArgument, i, j)
		}
		seen[j] = struct{}{}
		if v := r.Vals[k]; math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: new row %d: coefficient in column %d is %g", ErrInvalidArgument, i, j, v)
		}
	}
	return nil
}

// copyColumn returns a deep copy of c.
func copyColumn(c Column) Column {
	c.Rows = append([]int(nil), c.Rows...)
	c.Vals = append([]float64(nil), c.Vals...)
	return c
}

// validateProblem checks p and returns a deep copy of it.
func validateProblem(p Problem) (Problem, error) {
	if err := validateRows(p.RowLower, p.RowUpper); err != nil {
		return Problem{}, err
	}
	q := Problem{
		RowLower: append([]float64(nil), p.RowLower...),
		RowUpper: append([]float64(nil), p.RowUpper...),
		Cols:     make([]Column, len(p.Cols)),
	}
	for j, c := range p.Cols {
		if err := validateColumn(j, c, len(p.RowLower)); err != nil {
			return Problem{}, err
		}
		q.Cols[j] = copyColumn(c)
	}
	return q, nil
}

// completeSolution fills RowActivity, ReducedCosts and Objective from X and
// Duals by direct products with the columns of p.
func completeSolution(p *Problem, sol *Solution) {
	m := len(p.RowLower)
	sol.RowActivity = make([]float64, m)
	sol.ReducedCosts = make([]float64, len(p.Cols))
	sol.Objective = 0
	for j, c := range p.Cols {
		x := sol.X[j]
		sol.Objective += c.Obj * x
		d := c.Obj
		for k, r := range c.Rows {
			sol.RowActivity[r] += c.Vals[k] * x
			d -= c.Vals[k] * sol.Duals[r]
		}
		sol.ReducedCosts[j] = d
	}
}

// validateDelete checks the indices of DeleteColumns or DeleteRows (what
// names which) against n of them and returns a mask of the deleted ones.
func validateDelete(what string, idx []int, n int) ([]bool, error) {
	del := make([]bool, n)
	for _, j := range idx {
		if j < 0 || j >= n {
			return nil, fmt.Errorf("%w: delete %s %d outside [0,%d)", ErrInvalidArgument, what, j, n)
		}
		if del[j] {
			return nil, fmt.Errorf("%w: delete %s %d given twice", ErrInvalidArgument, what, j)
		}
		del[j] = true
	}
	return del, nil
}

// validateRowBounds checks the arguments of SetRowBounds against nrows rows.
func validateRowBounds(rows []int, lo, hi []float64, nrows int) error {
	if len(lo) != len(rows) || len(hi) != len(rows) {
		return fmt.Errorf("%w: %d rows, %d lower bounds, %d upper bounds", ErrInvalidArgument, len(rows), len(lo), len(hi))
	}
	for k, i := range rows {
		if i < 0 || i >= nrows {
			return fmt.Errorf("%w: row index %d outside [0,%d)", ErrInvalidArgument, i, nrows)
		}
		if err := validateRows(lo[k:k+1], hi[k:k+1]); err != nil {
			return fmt.Errorf("%w: row %d: bounds [%g, %g]", ErrInvalidArgument, i, lo[k], hi[k])
		}
	}
	return nil
}
