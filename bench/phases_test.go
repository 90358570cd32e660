package bench

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/algos/frob"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// TestPhasesData checks the structure of the phases data: the sample
// covariance has phasesSubspace eigenvalues well above the noise and the
// others inside the Marchenko–Pastur range of unit isotropic noise,
// [(1 − √(D/n))², (1 + √(D/n))²], widened by 10% for the finite sample;
// the classes are balanced.
func TestPhasesData(t *testing.T) {
	// The structure's eigenvalues are 1 plus those of B·Bᵀ, about
	// (√D ± √16)²/16 at the extremes, clear of the noise from D ≈ 150 on.
	for _, c := range []struct{ n, d int }{{4000, 200}, {2000, 160}} {
		x, y := PhasesData(c.n, c.d, 1)
		var cov mat.SymDense
		stat.CovarianceMatrix(&cov, x, nil)
		var es mat.EigenSym
		if !es.Factorize(&cov, false) {
			t.Fatal("eigendecomposition failed")
		}
		ev := es.Values(nil) // ascending
		r := math.Sqrt(float64(c.d) / float64(c.n))
		lo, hi := 0.9*(1-r)*(1-r), 1.1*(1+r)*(1+r)
		noise := ev[:c.d-phasesSubspace]
		if noise[0] < lo || noise[len(noise)-1] > hi {
			t.Errorf("n %d, D %d: noise eigenvalues in [%.3f, %.3f], want within [%.3f, %.3f]", c.n, c.d, noise[0], noise[len(noise)-1], lo, hi)
		}
		if s := ev[c.d-phasesSubspace]; s < 2*hi {
			t.Errorf("n %d, D %d: the %dth largest eigenvalue %.3f is not above the noise (%.3f)", c.n, c.d, phasesSubspace, s, hi)
		}
		counts := make([]int, phasesClasses)
		for _, v := range y {
			counts[v]++
		}
		for k, v := range counts {
			if v != c.n/phasesClasses {
				t.Errorf("class %d has %d points", k, v)
			}
		}
	}
}

// TestPhaseFlops checks the phases' least flops against their formulas
// for given counts, the bounds and fractions against the rate, and
// "other" as the rest of the total.
func TestPhaseFlops(t *testing.T) {
	const n, d, pairs, rate, total = 1000, 50, 3000, 1e10, 10.0
	fn, fd := float64(n), float64(d)
	fp := frob.Phases{Gram: 1, Grams: 7, GramRows: 4000, Eig: 2, Eigs: 8, FullEigs: 1, EigPairs: 120, Embed: 0.5, Embeds: 7, EmbedCols: 70,
		Pairs: 0.25, PairPasses: 7, Hessian: 3, HessianProducts: 11, HessianRows: 5000}
	bl := boost.Phases{Eig: 1, Eigs: 9, Products: 90, Margins: 0.5, MarginPasses: 8, Weights: 0.25}
	bd := boost.Phases{Gram: 2, Grams: 9, GramRows: 9 * n, Eig: 1, Eigs: 9, Margins: 0.5, MarginPasses: 8, Weights: 0.25}
	for _, c := range []struct {
		name  string
		got   []Phase
		flops []float64 // per phase before "other"; NaN: no bound
	}{
		{"frobmetric", frobPhaseList(fp, n, d, pairs, rate, total), []float64{
			2 * 4000 * fd * fd,
			8*4*fd*fd*fd/3 + 2*fd*fd*120,
			2 * fn * fd * 70,
			3 * pairs * 70,
			2*5000*fd*fd + 11*(8*fd*fd*fd+2*fn*fd*fd+4*pairs*fd),
		}},
		{"boostmetric lanczos", boostPhaseList(bl, n, d, pairs, rate, total), []float64{math.NaN(), 90 * 4 * fn * fd, 8 * (2*fn*fd + 3*pairs), math.NaN()}},
		{"boostmetric dense", boostPhaseList(bd, n, d, pairs, rate, total), []float64{2 * 9 * fn * fd * fd, 9 * 4 * fd * fd * fd / 3, 8 * (2*fn*fd + 3*pairs), math.NaN()}},
	} {
		if len(c.got) != len(c.flops)+1 || c.got[len(c.got)-1].Name != "other" {
			t.Fatalf("%s: phases %+v", c.name, c.got)
		}
		sum := 0.0
		for i, p := range c.got {
			sum += p.Seconds
			if i == len(c.flops) {
				break
			}
			want := c.flops[i]
			if math.IsNaN(want) {
				if !math.IsNaN(p.Bound) || !math.IsNaN(p.Fraction) {
					t.Errorf("%s %s: bound %v, fraction %v without flops", c.name, p.Name, p.Bound, p.Fraction)
				}
				continue
			}
			if math.Abs(p.Flops-want) > 1e-12*want || math.Abs(p.Bound-want/rate) > 1e-12*want/rate || math.Abs(p.Fraction-want/rate/p.Seconds) > 1e-12*want/rate/p.Seconds {
				t.Errorf("%s %s: flops %g, bound %g, fraction %g; want %g, %g, %g", c.name, p.Name, p.Flops, p.Bound, p.Fraction, want, want/rate, want/rate/p.Seconds)
			}
		}
		if math.Abs(sum-total) > 1e-12*total {
			t.Errorf("%s: phases add up to %g, want the total %g", c.name, sum, total)
		}
	}
}

// TestPhasesSmall runs the report at one small dimension: three solves,
// each with its phases adding up to its time with a nonnegative rest (the
// phases are disjoint parts of the call), no Gram on BoostMetric's
// Lanczos path and one per eigensolve on its dense path, FrobMetric's
// Grams and Hessian products accounting for its evaluations, and the page.
func TestPhasesSmall(t *testing.T) {
	rep, err := Phases(context.Background(), PhasesOptions{Seed: 1, Dims: []int{30, 5000}, MaxDim: 100, N: 600, Iters: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 3 {
		t.Fatalf("%d rows", len(rep.Rows))
	}
	for _, row := range rep.Rows {
		if row.Error != "" || row.Dim != 30 || row.N != 600 || row.Triplets != 9*600 || row.DGEMMGflops <= 0 {
			t.Fatalf("%+v", row)
		}
		byName := map[string]Phase{}
		sum := 0.0
		for _, p := range row.Phases {
			byName[p.Name] = p
			sum += p.Seconds
		}
		if other := byName["other"]; other.Seconds < 0 || math.Abs(sum-row.Seconds) > 1e-9*row.Seconds {
			t.Errorf("%s: phases add up to %g of %g s, other %g", row.Solver, sum, row.Seconds, other.Seconds)
		}
		switch row.Solver {
		case "frobmetric":
			if byName["weighted Gram"].Count+byName["Hessian products"].Count != row.Evaluations {
				t.Errorf("frobmetric: %d Grams and %d Hessian products for %d evaluations", byName["weighted Gram"].Count, byName["Hessian products"].Count, row.Evaluations)
			}
		case "boostmetric lanczos":
			if byName["weighted Gram"].Count != 0 || byName["leading eigenpair"].Count < row.Iterations {
				t.Errorf("lanczos: %+v", row.Phases)
			}
		case "boostmetric dense":
			if g := byName["weighted Gram"].Count; g != byName["leading eigenpair"].Count || g < row.Iterations {
				t.Errorf("dense: %+v", row.Phases)
			}
		default:
			t.Errorf("solver %q", row.Solver)
		}
	}
	var md bytes.Buffer
	if err := rep.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--suite phases --max-size 100 --md docs/phases.md", "## frobmetric, D = 30", "## boostmetric lanczos, D = 30", "| Hessian products |", "| other |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("page lacks %q:\n%s", want, md.String())
		}
	}
}
