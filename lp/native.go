//go:build cgo && !purego

package lp

/*
#cgo LDFLAGS: -lClp -lCoinUtils
#include <float.h>
#include <stdlib.h>
#include <coin/Clp_C_Interface.h>

// psd_initial_solve is Clp_initialSolve (CLP's default solve) without CLP's
// SIGINT handler: by default initialSolve installs one with signal() for the
// length of the solve, pointing at a process-wide static model. That takes
// Ctrl-C away from the Go program (CLP swallows it as "stop iterating"),
// and with concurrent models the save and restore of the handler race, so a
// handler for a freed model can be left installed. Special option 2 = 1
// turns the handler off.
static int psd_initial_solve(Clp_Simplex *model) {
	Clp_Solve *options = ClpSolve_new();
	if (options == NULL) {
		return -1;
	}
	ClpSolve_setSpecialOption(options, 2, 1, 0);
	int r = Clp_initialSolveWithOptions(model, options);
	ClpSolve_delete(options);
	return r;
}
*/
import "C"

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"time"
	"unsafe"
)

// HaveNative reports whether the native (CLP) implementation is compiled in.
const HaveNative = true

// Native is the COIN-OR CLP solver through its C interface. Each Model owns
// one ClpSimplex; a re-solve after AddColumns runs primal simplex from the
// previous basis.
var Native Solver = clpSolver{}

type clpSolver struct{}

// nativeTol is CLP's primal and dual feasibility tolerance.
const nativeTol = 1e-10

func (clpSolver) Name() string { return "native" }

// clpInf maps ±Inf to CLP's infinity (±DBL_MAX).
func clpInf(v float64) C.double {
	switch {
	case math.IsInf(v, 1):
		return C.DBL_MAX
	case math.IsInf(v, -1):
		return -C.DBL_MAX
	}
	return C.double(v)
}

// clpHandle owns the C model so that a cleanup can free it when the Go
// model is dropped without Close.
type clpHandle struct{ ptr unsafe.Pointer } // Clp_Simplex* (void* in the C interface)

func (clpSolver) NewModel(p Problem) (Model, error) {
	q, err := validateProblem(p)
	if err != nil {
		return nil, fmt.Errorf("lp native: %w", err)
	}
	h := &clpHandle{ptr: C.Clp_newModel()}
	if h.ptr == nil {
		return nil, fmt.Errorf("lp native: Clp_newModel failed")
	}
	C.Clp_setLogLevel(h.ptr, 0)
	// Tighter than CLP's defaults (1e-7): column generation prices with the
	// duals, and their accuracy bounds the accuracy of the whole method.
	C.Clp_setPrimalTolerance(h.ptr, nativeTol)
	C.Clp_setDualTolerance(h.ptr, nativeTol)
	m := &clpModel{h: h, p: Problem{RowLower: q.RowLower, RowUpper: q.RowUpper}}
	m.cleanup = runtime.AddCleanup(m, func(h *clpHandle) {
		if h.ptr != nil {
			C.Clp_deleteModel(h.ptr)
			h.ptr = nil
		}
	}, h)
	nr := len(q.RowLower)
	rl := make([]C.double, max(nr, 1))
	ru := make([]C.double, max(nr, 1))
	for i := 0; i < nr; i++ {
		rl[i], ru[i] = clpInf(q.RowLower[i]), clpInf(q.RowUpper[i])
	}
	start := []C.CoinBigIndex{0}
	var dummyIdx [1]C.int
	var dummyVal [1]C.double
	C.Clp_loadProblem(h.ptr, 0, C.int(nr), &start[0], &dummyIdx[0], &dummyVal[0],
		nil, nil, nil, &rl[0], &ru[0])
	runtime.KeepAlive(rl)
	runtime.KeepAlive(ru)
	if len(q.Cols) > 0 {
		if err := m.addColumns(q.Cols); err != nil {
			m.Close()
			return nil, err
		}
	}
	return m, nil
}

type clpModel struct {
	h       *clpHandle
	p       Problem // the row bounds; the columns live in CLP only
	ncols   int     // columns passed to CLP so far
	cleanup runtime.Cleanup
	solved  bool // a basis from a previous solve exists
	newRows bool // rows were added or row bounds changed since that solve: dual simplex first
}

func (m *clpModel) NumRows() int { return len(m.p.RowLower) }
func (m *clpModel) NumCols() int { return m.ncols }

func (m *clpModel) Close() error {
	if m.h == nil || m.h.ptr == nil {
		return nil
	}
	m.cleanup.Stop()
	C.Clp_deleteModel(m.h.ptr)
	m.h.ptr = nil
	return nil
}

func (m *clpModel) closed() bool { return m.h == nil || m.h.ptr == nil }

func (m *clpModel) AddColumns(cols ...Column) error {
	if m.closed() {
		return ErrClosed
	}
	for k, c := range cols {
		if err := validateColumn(m.ncols+k, c, len(m.p.RowLower)); err != nil {
			return fmt.Errorf("lp native: %w", err)
		}
	}
	return m.addColumns(cols)
}

// addColumns passes validated columns to CLP, which copies them (the Go
// arrays hold no Go pointers and are not retained by C). No Go copy is
// kept: column generation adds dense columns of every constraint row
// (PSDBoost on letters: 94,500 entries each), and a second copy of all of
// them would double the memory of a long run.
func (m *clpModel) addColumns(cols []Column) error {
	n := len(cols)
	if n == 0 {
		return nil
	}
	nnz := 0
	for _, c := range cols {
		nnz += len(c.Rows)
	}
	lo := make([]C.double, n)
	hi := make([]C.double, n)
	obj := make([]C.double, n)
	start := make([]C.CoinBigIndex, n+1)
	idx := make([]C.int, max(nnz, 1))
	val := make([]C.double, max(nnz, 1))
	k := 0
	for j, c := range cols {
		lo[j], hi[j], obj[j] = clpInf(c.Lower), clpInf(c.Upper), C.double(c.Obj)
		start[j] = C.CoinBigIndex(k)
		for t, r := range c.Rows {
			idx[k] = C.int(r)
			val[k] = C.double(c.Vals[t])
			k++
		}
	}
	start[n] = C.CoinBigIndex(k)
	C.Clp_addColumns(m.h.ptr, C.int(n), &lo[0], &hi[0], &obj[0], &start[0], &idx[0], &val[0])
	runtime.KeepAlive(lo)
	runtime.KeepAlive(hi)
	runtime.KeepAlive(obj)
	runtime.KeepAlive(start)
	runtime.KeepAlive(idx)
	runtime.KeepAlive(val)
	m.ncols += n
	return nil
}

// AddRows passes rows to CLP, which keeps the basis with the new rows'
// logicals basic (dual feasible: their duals are zero).
func (m *clpModel) AddRows(rows ...Row) error {
	if m.closed() {
		return ErrClosed
	}
	n := len(rows)
	if n == 0 {
		return nil
	}
	nnz := 0
	for k, r := range rows {
		if err := validateRow(len(m.p.RowLower)+k, r, m.ncols); err != nil {
			return fmt.Errorf("lp native: %w", err)
		}
		nnz += len(r.Cols)
	}
	lo := make([]C.double, n)
	hi := make([]C.double, n)
	start := make([]C.CoinBigIndex, n+1)
	idx := make([]C.int, max(nnz, 1))
	val := make([]C.double, max(nnz, 1))
	k := 0
	for i, r := range rows {
		lo[i], hi[i] = clpInf(r.Lower), clpInf(r.Upper)
		start[i] = C.CoinBigIndex(k)
		for t, j := range r.Cols {
			idx[k] = C.int(j)
			val[k] = C.double(r.Vals[t])
			k++
		}
		m.p.RowLower = append(m.p.RowLower, r.Lower)
		m.p.RowUpper = append(m.p.RowUpper, r.Upper)
	}
	start[n] = C.CoinBigIndex(k)
	C.Clp_addRows(m.h.ptr, C.int(n), &lo[0], &hi[0], &start[0], &idx[0], &val[0])
	runtime.KeepAlive(lo)
	runtime.KeepAlive(hi)
	runtime.KeepAlive(start)
	runtime.KeepAlive(idx)
	runtime.KeepAlive(val)
	m.newRows = true
	return nil
}

// DeleteColumns removes columns from CLP, which keeps the status of the
// others (the basis, when every removed column was non-basic).
func (m *clpModel) DeleteColumns(cols []int) error {
	if m.closed() {
		return ErrClosed
	}
	if _, err := validateDelete("column", cols, m.ncols); err != nil {
		return fmt.Errorf("lp native: %w", err)
	}
	if len(cols) == 0 {
		return nil
	}
	which := make([]C.int, len(cols))
	for k, j := range cols {
		which[k] = C.int(j)
	}
	C.Clp_deleteColumns(m.h.ptr, C.int(len(cols)), &which[0])
	runtime.KeepAlive(which)
	m.ncols -= len(cols)
	return nil
}

// DeleteRows removes rows from CLP, which keeps the status of the others
// (the basis, when every removed row's logical was basic).
func (m *clpModel) DeleteRows(rows []int) error {
	if m.closed() {
		return ErrClosed
	}
	del, err := validateDelete("row", rows, len(m.p.RowLower))
	if err != nil {
		return fmt.Errorf("lp native: %w", err)
	}
	if len(rows) == 0 {
		return nil
	}
	which := make([]C.int, len(rows))
	for k, i := range rows {
		which[k] = C.int(i)
	}
	C.Clp_deleteRows(m.h.ptr, C.int(len(rows)), &which[0])
	runtime.KeepAlive(which)
	lo, hi := m.p.RowLower[:0], m.p.RowUpper[:0]
	for i, gone := range del {
		if !gone {
			lo, hi = append(lo, m.p.RowLower[i]), append(hi, m.p.RowUpper[i])
		}
	}
	m.p.RowLower, m.p.RowUpper = lo, hi
	m.newRows = true
	return nil
}

// SetRowBounds passes the new row bounds to CLP; the basis is kept and the
// next solve starts with dual simplex (new bounds leave it dual feasible).
func (m *clpModel) SetRowBounds(rows []int, lower, upper []float64) error {
	if m.closed() {
		return ErrClosed
	}
	nr := len(m.p.RowLower)
	if err := validateRowBounds(rows, lower, upper, nr); err != nil {
		return fmt.Errorf("lp native: %w", err)
	}
	if len(rows) == 0 {
		return nil
	}
	for k, i := range rows {
		m.p.RowLower[i], m.p.RowUpper[i] = lower[k], upper[k]
	}
	rl := make([]C.double, nr)
	ru := make([]C.double, nr)
	for i := range nr {
		rl[i], ru[i] = clpInf(m.p.RowLower[i]), clpInf(m.p.RowUpper[i])
	}
	C.Clp_chgRowLower(m.h.ptr, &rl[0])
	C.Clp_chgRowUpper(m.h.ptr, &ru[0])
	runtime.KeepAlive(rl)
	runtime.KeepAlive(ru)
	m.newRows = true
	return nil
}

func (m *clpModel) Solve(ctx context.Context) (Solution, error) {
	if m.closed() {
		return Solution{}, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return Solution{}, fmt.Errorf("lp native: %w", err)
	}
	ptr := m.h.ptr
	if dl, ok := ctx.Deadline(); ok {
		C.Clp_setMaximumSeconds(ptr, C.double(math.Max(time.Until(dl).Seconds(), 1e-3)))
	} else {
		C.Clp_setMaximumSeconds(ptr, -1)
	}
	switch {
	case m.solved && m.newRows:
		// New rows with basic logicals and new row bounds keep the basis
		// dual feasible (new columns may not: then primal simplex finishes
		// the job).
		C.Clp_dual(ptr, 0)
		if C.Clp_status(ptr) != 0 {
			C.Clp_primal(ptr, 0)
		}
	case m.solved:
		// Warm start: the old basis is primal feasible with the new columns at
		// their bounds, so primal simplex continues from it.
		C.Clp_primal(ptr, 0)
	default:
		if C.psd_initial_solve(ptr) < 0 {
			return Solution{}, fmt.Errorf("lp native: ClpSolve_new failed")
		}
	}
	m.newRows = false
	status := Failed
	switch C.Clp_status(ptr) {
	case 0:
		status = Optimal
	case 1:
		status = Infeasible
	case 2:
		status = Unbounded
	case 3:
		status = IterationLimit
	}
	if status == Optimal && C.Clp_secondaryStatus(ptr) >= 2 && C.Clp_secondaryStatus(ptr) <= 4 {
		// Optimal for the scaled problem only: polish without scaling.
		C.Clp_scaling(ptr, 0)
		C.Clp_primal(ptr, 0)
		if C.Clp_status(ptr) != 0 {
			status = Failed
		}
	}
	m.solved = status == Optimal
	sol := Solution{Status: status, Iterations: int(C.Clp_getIterationCount(ptr))}
	if status == Optimal {
		nr, nc := len(m.p.RowLower), m.ncols
		sol.Objective = float64(C.Clp_getObjValue(ptr))
		sol.X = copyDoubles(C.Clp_getColSolution(ptr), nc)
		sol.RowActivity = copyDoubles(C.Clp_getRowActivity(ptr), nr)
		sol.Duals = copyDoubles(C.Clp_getRowPrice(ptr), nr)
		sol.ReducedCosts = copyDoubles(C.Clp_getReducedCost(ptr), nc)
	}
	if err := ctx.Err(); err != nil {
		return sol, fmt.Errorf("lp native: %w", err)
	}
	return sol, statusError("native", status)
}

// copyDoubles copies n doubles from C memory.
func copyDoubles(p *C.double, n int) []float64 {
	out := make([]float64, n)
	if n == 0 || p == nil {
		return out
	}
	src := unsafe.Slice((*float64)(unsafe.Pointer(p)), n)
	copy(out, src)
	return out
}
