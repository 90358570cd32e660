package mvu

import (
	"context"
	"math"
	"testing"

	"github.com/psdlearn/psdlearn/algos/sdp"
	"github.com/psdlearn/psdlearn/eval"
	"gonum.org/v1/gonum/mat"
)

// TestMVUDefaultsCertify: with nothing but the neighbourhood size, MVU
// solves the paper's inequality form to its default certificate (relative
// gap ≤ DefaultGapTol, violation ≤ DefaultFeasTol), reports the form and
// tolerances it used, and unrolls the roll.
func TestMVUDefaultsCertify(t *testing.T) {
	x, angle, _ := swissRoll(400, 7)
	emb, err := Embed(context.Background(), x, Options{K: 6})
	if err != nil {
		t.Fatal(err)
	}
	sol := emb.Solution
	rho := math.Abs(eval.Spearman(mat.Col(nil, 0, emb.Coords), angle))
	t.Logf("%d iterations (%s), σ %g, relative gap %.3g, violation %.3g, |ρ(y1, angle)| %.4f",
		emb.Iterations, sol.Reason, emb.Sigma, sol.RelGap, sol.MaxViolation, rho)
	if emb.Equalities || emb.Relaxation != nil {
		t.Errorf("default form: equalities %v, relaxation %v; want the inequality form alone", emb.Equalities, emb.Relaxation != nil)
	}
	if emb.GapTol != DefaultGapTol || emb.FeasTol != DefaultFeasTol {
		t.Errorf("tolerances %g, %g; want the defaults %g, %g", emb.GapTol, emb.FeasTol, DefaultGapTol, DefaultFeasTol)
	}
	if !sol.Certified || math.Abs(sol.RelGap) > DefaultGapTol || sol.MaxViolation > DefaultFeasTol {
		t.Errorf("not certified: gap %.3g, violation %.3g (%s)", sol.RelGap, sol.MaxViolation, sol.Reason)
	}
	if rho < 0.99 {
		t.Errorf("|ρ(y1, angle)| = %.4f: not unrolled", rho)
	}
	// Tolerances given explicitly win (loose ones, to stay quick: the
	// solve must stop before the default certificate).
	loose, err := Embed(context.Background(), x, Options{K: 6, SDP: sdp.Options{GapTol: 1e-2, FeasTol: 5e-2}})
	if err != nil {
		t.Fatal(err)
	}
	ls := loose.Solution
	if loose.GapTol != 1e-2 || loose.FeasTol != 5e-2 || !ls.Certified || math.Abs(ls.RelGap) > 1e-2 || ls.MaxViolation > 5e-2 || loose.Iterations >= emb.Iterations {
		t.Errorf("explicit tolerances: reported %g, %g; certified %v at gap %.3g, violation %.3g after %d iterations (defaults: %d)",
			loose.GapTol, loose.FeasTol, ls.Certified, ls.RelGap, ls.MaxViolation, loose.Iterations, emb.Iterations)
	}
}
