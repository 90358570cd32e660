package lp_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn/lp"
	"github.com/psdlearn/psdlearn/lp/lptest"
)

// The pure-Go simplex's own limits, which CLP does not share: the row limit
// of its dense basis and a cancellation between pivots.

// TestGoTooLarge: the Go solver refuses, with ErrTooLarge and before any
// dense allocation, a problem whose basis matrices would not fit.
func TestGoTooLarge(t *testing.T) {
	m := lp.GoMaxRows + 1
	p := lp.Problem{RowLower: make([]float64, m), RowUpper: make([]float64, m)}
	for i := range p.RowUpper {
		p.RowUpper[i] = 1
	}
	if _, err := lp.Go.NewModel(p); !errors.Is(err, lp.ErrTooLarge) {
		t.Fatalf("NewModel with %d rows: got %v, want ErrTooLarge", m, err)
	}
	p.RowLower, p.RowUpper = p.RowLower[:lp.GoMaxRows], p.RowUpper[:lp.GoMaxRows]
	if _, err := lp.Go.NewModel(p); err != nil {
		t.Fatalf("NewModel with %d rows: %v", lp.GoMaxRows, err)
	}
}

// cancelAfter is a context whose Err reports context.Canceled from its
// (n+1)-th call on: a cancellation at a deterministic point of a solve.
type cancelAfter struct {
	context.Context
	n, calls int
}

func (c *cancelAfter) Err() error {
	c.calls++
	if c.calls > c.n {
		return context.Canceled
	}
	return nil
}

// TestCancelMidSolve: a Go solve whose context is cancelled after it started
// stops before the next pivot, returns NotSolved with the pivots made and an
// error wrapping context.Canceled, and the same model then solves to the
// optimum of a fresh model. (A CLP call cannot be interrupted: the native
// solver checks ctx only before and after it.)
func TestCancelMidSolve(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	p := lptest.MixedLP(rng, 200, 400)
	fresh, err := lp.Solve(context.Background(), lp.Go, p)
	if err != nil {
		t.Fatal(err)
	}
	model, err := lp.Go.NewModel(p)
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	// Err is checked before the solve and before every pivot: the solve
	// stops after a few pivots.
	ctx := &cancelAfter{Context: context.Background(), n: 20}
	sol, err := model.Solve(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if sol.Status != lp.NotSolved || sol.Iterations <= 0 || sol.Iterations >= fresh.Iterations {
		t.Fatalf("cancelled solve: status %v after %d pivots (a whole solve takes %d)", sol.Status, sol.Iterations, fresh.Iterations)
	}
	again, err := model.Solve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	lptest.CheckKKT(t, p, again, 1e-7)
	if math.Abs(again.Objective-fresh.Objective) > 1e-9*(1+math.Abs(fresh.Objective)) {
		t.Errorf("after the cancelled solve %.15g, fresh %.15g", again.Objective, fresh.Objective)
	}
}
