package sdp

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine/enginetest"
	"gonum.org/v1/gonum/mat"
)

// TestEnvLDLSolve: the envelope LDLᵀ factorization of a random sparse
// symmetric matrix plus a shift solves it to rounding, in any order of the
// rows (the pattern is a scrambled path plus random chords and two
// components), and counts the negative eigenvalues of an indefinite one.
func TestEnvLDLSolve(t *testing.T) {
	const n = 300
	rng := rand.New(rand.NewPCG(4, 2))
	perm := rng.Perm(n)
	a := make([]map[int]float64, n)
	for i := range a {
		a[i] = map[int]float64{i: 0}
	}
	add := func(i, j int, v float64) {
		a[i][j] += v
		if i != j {
			a[j][i] += v
		}
	}
	for t := 0; t+1 < n; t++ {
		if t == n/2 {
			continue // two components
		}
		add(perm[t], perm[t+1], rng.NormFloat64())
	}
	for c := 0; c < 40; c++ {
		i, j := rng.IntN(n), rng.IntN(n)
		if i != j && (perm[i] < n/2) == (perm[j] < n/2) {
			add(i, j, rng.NormFloat64())
		}
	}
	indptr := []int{0}
	var ind []int
	var data []float64
	for i := range a {
		for j := 0; j < n; j++ {
			if v, ok := a[i][j]; ok {
				ind = append(ind, j)
				data = append(data, v)
			}
		}
		indptr = append(indptr, len(ind))
	}
	c := newEnvLDL(n, indptr, ind)
	c.data = make([]float64, c.start[n])
	if got := c.start[n]; got >= n*(n+1)/2 {
		t.Errorf("envelope of %d values: no reduction from the full triangle", got)
	}
	// Gershgorin: a shift of 1 + max row sum makes it positive definite.
	var rowMax float64
	for i := range a {
		var s float64
		for _, v := range a[i] {
			s += math.Abs(v)
		}
		rowMax = math.Max(rowMax, s)
	}
	shift := 1 + rowMax
	if neg, err := c.factor(indptr, ind, data, shift); err != nil || neg != 0 {
		t.Fatalf("factor: %d negative pivots, error %v", neg, err)
	}
	b := make([]float64, n)
	for i := range b {
		b[i] = rng.NormFloat64()
	}
	x := make([]float64, n)
	c.solve(x, b)
	var worst float64
	for i := range a {
		r := shift*x[i] - b[i]
		for j, v := range a[i] {
			r += v * x[j]
		}
		worst = math.Max(worst, math.Abs(r))
	}
	if worst > 1e-12 {
		t.Errorf("residual %.3g", worst)
	}
	if neg, err := c.factor(indptr, ind, data, -shift); err != nil || neg != n {
		t.Errorf("negative definite matrix: %d negative pivots of %d, error %v", neg, n, err)
	}
	// Indefinite: the pivots count the eigenvalues below −shift (Sylvester)
	// and the solve still holds.
	dense := mat.NewSymDense(n, nil)
	for i := range a {
		for j, v := range a[i] {
			dense.SetSym(i, j, v)
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(dense, false) {
		t.Fatal("eigendecomposition")
	}
	vals := eig.Values(nil)
	shift = -0.5 * (vals[n/4] + vals[n/4+1])
	neg, err := c.factor(indptr, ind, data, shift)
	if err != nil {
		t.Fatal(err)
	}
	if neg != n/4+1 {
		t.Errorf("%d negative pivots, want %d", neg, n/4+1)
	}
	c.solve(x, b)
	worst = 0
	for i := range a {
		r := shift*x[i] - b[i]
		for j, v := range a[i] {
			r += v * x[j]
		}
		worst = math.Max(worst, math.Abs(r))
	}
	if worst > 1e-9 {
		t.Errorf("indefinite solve: residual %.3g", worst)
	}
}

// mvuStartPoint returns the dual point MVU starts from (mvu.mvuStart):
// every edge multiplier c = 1/λ₆ of the unweighted graph Laplacian, so that
// −I + cL has a handful of negative eigenvalues next to a cluster of
// others, and the centring multiplier 2/n.
func mvuStartPoint(t *testing.T, p *Problem) []float64 {
	n, m := p.N, len(p.Constraints)
	l := mat.NewSymDense(n, nil)
	for _, c := range p.Constraints[:m-1] {
		a, b := c.A.Entries[0].I, c.A.Entries[0].J
		for _, en := range c.A.Entries {
			if en.I != en.J {
				a, b = en.I, en.J
			}
		}
		l.SetSym(a, a, l.At(a, a)+1)
		l.SetSym(b, b, l.At(b, b)+1)
		l.SetSym(a, b, l.At(a, b)-1)
	}
	var eig mat.EigenSym
	if !eig.Factorize(l, false) {
		t.Fatal("Laplacian spectrum")
	}
	u := make([]float64, m)
	for i := range u {
		u[i] = 1 / eig.Values(nil)[6]
	}
	u[m-1] = 2 / float64(n)
	return u
}

// TestSDPShiftInvert evaluates the dual of an unfolding problem along a
// sequence of nearby points, as L-BFGS-B does, with Lanczos on
// (C + Â + sI)⁻¹ (the default), with Lanczos on C + Â and with the dense
// method, on both backends: objectives must agree to 1e-8 (relative) and
// gradients to 1e-6, and shift-and-invert must use a few times fewer
// operator applications.
func TestSDPShiftInvert(t *testing.T) {
	x, _, _ := datasets.SwissRoll(300, 3)
	p := mvuProblem(t, x, 5, 10)
	m := len(p.Constraints)
	for _, b := range enginetest.Backends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			evs := make([]*dualEval, 3)
			for i, opt := range []Options{
				{Method: Dense, Backend: b},
				{Method: Sparse, Backend: b, InitRank: 8},
				{Method: Sparse, Backend: b, InitRank: 8, NoShiftInvert: true},
			} {
				ev, err := compileSDP(p, opt)
				if err != nil {
					t.Fatal(err)
				}
				ev.ctx = context.Background()
				evs[i] = ev
			}
			if evs[1].ldl == nil || evs[2].ldl != nil {
				t.Fatalf("shift-and-invert set up: %v by default, %v with NoShiftInvert", evs[1].ldl != nil, evs[2].ldl != nil)
			}
			rng := rand.New(rand.NewPCG(8, 9))
			u := mvuStartPoint(t, p)
			for step := 0; step < 6; step++ {
				for i := range u[:m-1] {
					u[i] *= 1 + 0.01*(rng.Float64()-0.5)
				}
				var f [3]float64
				var g [3][]float64
				for i, ev := range evs {
					g[i] = make([]float64, m)
					var err error
					if f[i], err = ev.eval(u, g[i]); err != nil {
						t.Fatal(err)
					}
				}
				if len(evs[0].lam) == 0 {
					t.Fatal("no negative part: the test point is wrong")
				}
				for i := 1; i < 3; i++ {
					if math.Abs(f[i]-f[0]) > 1e-8*math.Max(1, math.Abs(f[0])) {
						t.Errorf("step %d, evaluator %d: dual %.12g, dense %.12g", step, i, f[i], f[0])
					}
					var worst float64
					for j := range g[0] {
						worst = math.Max(worst, math.Abs(g[i][j]-g[0][j]))
					}
					if worst > 1e-6 {
						t.Errorf("step %d, evaluator %d: gradient differs by %.3g", step, i, worst)
					}
				}
			}
			// The first evaluation has no shift yet (plain Lanczos); the
			// following five are inverted.
			if evs[1].factorizations < 5 {
				t.Errorf("%d factorizations, want at least 5", evs[1].factorizations)
			}
			if 2*evs[1].applies > evs[2].applies {
				t.Errorf("shift-and-invert: %d operator applications, plain Lanczos %d: want at most half", evs[1].applies, evs[2].applies)
			}
			t.Logf("operator applications over 6 evaluations: shift-and-invert %d (%d factorizations), plain Lanczos %d", evs[1].applies, evs[1].factorizations, evs[2].applies)
		})
	}
}
