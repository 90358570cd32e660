package engine

import (
	"context"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/errs"
)

// LPMaxValue bounds the magnitude of every finite number of a linear
// program (see lp.MaxValue: CLP aborts the process beyond it).
const LPMaxValue = 1e20

// ErrLPTooLarge is wrapped by errors about a linear program beyond a
// solver's size limit.
var ErrLPTooLarge = errs.New("lp: problem too large for this solver", errs.ErrResource)

// LPStatus is the outcome of a linear-programming solve.
type LPStatus int

const (
	// LPNotSolved means Solve has not completed.
	LPNotSolved LPStatus = iota
	// LPOptimal means an optimal solution was found.
	LPOptimal
	// LPInfeasible means the constraints admit no solution.
	LPInfeasible
	// LPUnbounded means the objective is unbounded below.
	LPUnbounded
	// LPIterationLimit means the solver stopped on an iteration or time limit.
	LPIterationLimit
	// LPFailed means the solver stopped on a numerical difficulty.
	LPFailed
)

var statusNames = [...]string{"not solved", "optimal", "infeasible", "unbounded", "iteration limit", "failed"}

// String returns a short description of s.
func (s LPStatus) String() string {
	if s >= 0 && int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("LPStatus(%d)", int(s))
}

// LPColumn is one variable of a problem: its objective coefficient, bounds and
// its non-zero constraint coefficients A[Rows[k], j] = Vals[k]. Use
// math.Inf(1) for a missing upper bound and math.Inf(-1) for a missing lower
// bound: the zero LPColumn is a variable fixed at 0.
type LPColumn struct {
	Obj          float64
	Lower, Upper float64
	Rows         []int
	Vals         []float64
}

// LPNonNegative returns the column of a variable x ≥ 0 with objective obj and
// the given coefficients.
func LPNonNegative(obj float64, rows []int, vals []float64) LPColumn {
	return LPColumn{Obj: obj, Lower: 0, Upper: math.Inf(1), Rows: rows, Vals: vals}
}

// LPFree returns the column of an unbounded variable with objective obj and the
// given coefficients.
func LPFree(obj float64, rows []int, vals []float64) LPColumn {
	return LPColumn{Obj: obj, Lower: math.Inf(-1), Upper: math.Inf(1), Rows: rows, Vals: vals}
}

// LPRow is one constraint Lower ≤ Σ_k Vals[k]·x[Cols[k]] ≤ Upper on existing
// columns, for LPModel.AddRows.
type LPRow struct {
	Lower, Upper float64
	Cols         []int
	Vals         []float64
}

// LPProblem is a linear program: the row bounds and the columns.
type LPProblem struct {
	RowLower, RowUpper []float64
	Cols               []LPColumn
}

// LPSolution is the result of a solve. Slices are fresh copies owned by the caller.
type LPSolution struct {
	Status       LPStatus
	Objective    float64   // cᵀx
	X            []float64 // column values
	RowActivity  []float64 // A x
	Duals        []float64 // row duals y (minimisation convention, see the package doc)
	ReducedCosts []float64 // c − Aᵀy
	Iterations   int       // simplex iterations of this solve (0 when the implementation does not count them)
}

// LPModel is a linear program that grows by columns and rows and can shed
// both. The columns keep the order in which they were given (less the
// deleted ones), so LPSolution.X[j] belongs to the j-th column.
type LPModel interface {
	// NumRows returns the number of rows.
	NumRows() int
	// NumCols returns the number of columns.
	NumCols() int
	// AddColumns appends columns. The next Solve starts from the previous
	// basis with the new columns non-basic at their bounds, when the
	// implementation supports warm starts.
	AddColumns(cols ...LPColumn) error
	// AddRows appends constraints on the existing columns (row generation).
	// The next Solve of the native model starts from the previous basis with
	// the new rows' logicals basic, which stays dual feasible, so dual
	// simplex continues from it; the Go model solves from scratch.
	AddRows(rows ...LPRow) error
	// DeleteColumns removes the columns with the given indices (in any
	// order, each at most once); the others keep their order. When every
	// removed column is non-basic the next Solve starts from the previous
	// basis, which stays optimal if the columns sat at their bounds with
	// reduced costs of the right sign.
	DeleteColumns(cols []int) error
	// DeleteRows removes the rows with the given indices (in any order,
	// each at most once); the others keep their order. When every removed
	// row's logical is basic the next Solve of the native model starts
	// from the previous basis, which stays optimal (the rows were not
	// binding); the Go model solves from scratch, as after AddRows.
	DeleteRows(rows []int) error
	// SetRowBounds sets the bounds of the given rows to lower[k] ≤ row
	// rows[k] ≤ upper[k]. The next Solve of the native model starts from the
	// previous basis, which stays dual feasible, with dual simplex; the Go
	// model keeps the basis when it stays primal feasible.
	SetRowBounds(rows []int, lower, upper []float64) error
	// Solve optimises the current problem. When the status is not Optimal it
	// returns the LPSolution with that status and an error (package lp:
	// ErrInfeasible, ErrUnbounded or ErrNotSolved). On cancellation it returns an error
	// wrapping ctx.Err() with the LPSolution reached: the pure-Go simplex checks
	// ctx before every pivot and stops with Status NotSolved and the pivots
	// made; the native CLP simplex is not interruptible, so ctx is checked
	// only before and after its solve (whose LPSolution is returned), and a
	// deadline becomes its time limit.
	Solve(ctx context.Context) (LPSolution, error)
	// Close releases the resources of the model; it is safe to call twice.
	// Using a closed model returns an error.
	Close() error
}

// LPSolver creates linear-programming models. Implementations are safe for concurrent use.
type LPSolver interface {
	// Name is "native" (CLP) or "go".
	Name() string
	// NewModel builds a model from p (which may have no columns yet). p is
	// validated and copied.
	NewModel(p LPProblem) (LPModel, error)
}
