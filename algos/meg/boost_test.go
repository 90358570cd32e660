package meg

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/psdlearn/psdlearn/engine/enginetest"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// kernelConstraints returns the batch kernel experiment on d wine objects:
// the constraints ½‖x_a − x_b‖²_W ≤ ε = 0.2/d for the pairs closer than ε
// under the trace-normalised RBF target with γ = 0.25/median squared
// distance (which makes 27 of the 66 pairs close for d = 12, 189 of 435 for
// d = 30).
func kernelConstraints(t testing.TB, d int) ([]Sym, [][2]int, float64, *mat.SymDense) {
	t.Helper()
	u, _ := targetKernel(t, d, 0.25)
	eps := 0.2 / float64(d)
	cons, pairs, err := CloseConstraints(u, eps)
	if err != nil {
		t.Fatal(err)
	}
	if len(cons) < 10 {
		t.Fatalf("only %d close pairs", len(cons))
	}
	pp := make([][2]int, len(pairs))
	for i, p := range pairs {
		pp[i] = [2]int{p.A, p.B}
	}
	return cons, pp, eps, u
}

// TestDefiniteBoostKernel runs the batch kernel experiment with both
// projections and checks Theorem 4.1 step by step: the dual objective
// strictly decreases, by at least −log ρ(r_t); at the end every constraint
// holds within the tolerance (recomputed from W independently) and W is
// trace one and positive definite. The exact projection must leave the
// chosen constraint active. Δ(W, W1) + dual must equal the duality gap
// −Σ α_j tr(W C_j) ≥ 0.
func TestDefiniteBoostKernel(t *testing.T) {
	const d = 30
	cons, pairs, eps, _ := kernelConstraints(t, d)
	tol := 1e-6 * eps
	for _, b := range enginetest.Backends(t) {
		ws := map[Projection]*mat.SymDense{}
		for _, proj := range []Projection{Approximate, Exact} {
			t.Run(fmt.Sprintf("%s/%v", b.Name(), proj), func(t *testing.T) {
				prev := 0.0
				res, err := DefiniteBoost(context.Background(), cons, BoostOptions{
					Projection: proj, Tol: tol, MaxIter: 20000, Backend: b,
					Observe: func(s BoostStep) error {
						if !(s.Violation > tol) || !(s.Alpha > 0) {
							return fmt.Errorf("iter %d: violation %g, alpha %g", s.Iter, s.Violation, s.Alpha)
						}
						if !(s.Dual < prev) {
							return fmt.Errorf("iter %d: dual %.17g did not decrease from %.17g", s.Iter, s.Dual, prev)
						}
						if s.Dual-prev > s.LogRho+1e-12 {
							return fmt.Errorf("iter %d: dual decrease %.6g smaller than −log ρ = %.6g", s.Iter, prev-s.Dual, -s.LogRho)
						}
						if proj == Exact {
							if h := cons[s.Constraint].Inner(s.W); math.Abs(h) > 1e-9*s.Violation+1e-15 {
								return fmt.Errorf("iter %d: exact projection leaves tr(W C) = %g (was %g)", s.Iter, h, s.Violation)
							}
						}
						prev = s.Dual
						return nil
					},
				})
				if err != nil {
					t.Fatal(err)
				}
				if !res.Converged || res.MaxViolation > tol {
					t.Fatalf("not converged after %d iterations: max violation %g > %g", res.Iterations, res.MaxViolation, tol)
				}
				checkTraceOnePD(t, b, res.W, 1e-12, "final W")
				for j, p := range pairs {
					if v := HalfSqDist(res.W, p[0], p[1]) - eps*mat.Trace(res.W); v > tol+1e-15 {
						t.Fatalf("constraint %d (%d,%d) violated by %g", j, p[0], p[1], v)
					}
				}
				if res.LogBound < res.Dual {
					t.Fatalf("Theorem 4.1 bound %g below the dual %g", res.LogBound, res.Dual)
				}
				// −Σ α_j tr(W C_j) = Δ(W, W1) + dual is the primal-dual gap.
				var gap float64
				for j, a := range res.Alpha {
					if a < 0 {
						t.Fatalf("alpha[%d] = %g < 0", j, a)
					}
					gap -= a * res.Violations[j]
				}
				div, err := VonNeumann(b, res.W, mat.NewDiagDense(d, constSlice(d, 1/float64(d))))
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(div+res.Dual-gap) > 1e-9 {
					t.Fatalf("Δ(W,W1) + dual = %.12g, want Σ −α_j tr(W C_j) = %.12g", div+res.Dual, gap)
				}
				// DefiniteBoost stops at the first feasible W and never lowers an α_j,
				// so the gap (an upper bound on Δ(W,W1) − Δ(W*,W1)) need not vanish;
				// weak duality makes it non-negative up to the tolerance.
				if gap < -tol*sumAlpha(res.Alpha)-1e-12 {
					t.Fatalf("negative duality gap %g", gap)
				}
				t.Logf("%d constraints, %d iterations, %d eigendecompositions, dual %.6f (bound %.4f), Δ(W,W1) %.6f, gap %.2g",
					len(cons), res.Iterations, res.Eigs, res.Dual, res.LogBound, div, gap)
				ws[proj] = res.W
			})
		}
		if ws[Approximate] != nil && ws[Exact] != nil {
			// Both stop at a feasible point near, not at, the projection W*.
			t.Logf("%s: max |W_approx − W_exact| = %.3g", b.Name(), maxAbsDiff(ws[Approximate], ws[Exact]))
		}
	}
}

// TestDefiniteBoostRepresentations gives the same constraints C = X_ab − εI
// as Dense, Sparse, LowRank and Shift(DistPair) matrices: the runs agree.
func TestDefiniteBoostRepresentations(t *testing.T) {
	const d = 12
	cons, pairs, eps, _ := kernelConstraints(t, d)
	reps := map[string][]Sym{"pair": cons}
	for _, p := range pairs {
		ref := mat.NewSymDense(d, nil)
		Shift(DistPair{N: d, A: p[0], B: p[1]}, -eps).AddTo(ref, 1)
		ds, err := NewDense(ref)
		if err != nil {
			t.Fatal(err)
		}
		ss, err := NewSparse(csrOf(ref))
		if err != nil {
			t.Fatal(err)
		}
		u := mat.NewDense(d, d+1, nil) // X_ab − εI = ½ e eᵀ − ε Σ_i e_i e_iᵀ
		s := make([]float64, d+1)
		u.Set(p[0], 0, 1)
		u.Set(p[1], 0, -1)
		s[0] = 0.5
		for i := 0; i < d; i++ {
			u.Set(i, i+1, 1)
			s[i+1] = -eps
		}
		ls, err := NewLowRank(u, s)
		if err != nil {
			t.Fatal(err)
		}
		reps["dense"] = append(reps["dense"], ds)
		reps["sparse"] = append(reps["sparse"], ss)
		reps["lowrank"] = append(reps["lowrank"], ls)
	}
	b := enginetest.Backends(t)[0]
	for _, proj := range []Projection{Approximate, Exact} {
		var ref *BoostResult
		for _, name := range []string{"pair", "dense", "sparse", "lowrank"} {
			res, err := DefiniteBoost(context.Background(), reps[name], BoostOptions{Projection: proj, Tol: 1e-6 * eps, Backend: b})
			if err != nil {
				t.Fatalf("%v/%s: %v", proj, name, err)
			}
			if ref == nil {
				ref = res
				continue
			}
			// Each representation sums in its own order: the sweeps are
			// bounded, not equated.
			if res.Iterations < ref.Iterations-1 || res.Iterations > ref.Iterations+1 {
				t.Errorf("%v/%s: %d iterations, pair form %d", proj, name, res.Iterations, ref.Iterations)
			}
			if e := maxAbsDiff(res.W, ref.W); e > 1e-10 {
				t.Errorf("%v/%s: W differs from the pair form by %g", proj, name, e)
			}
		}
	}
}

// stumps returns ±1 decision stumps on the columns of x (thresholds at
// quantiles, both signs), deduplicated by their prediction vector and keeping
// only those that are right on some point and wrong on another.
func stumps(x *mat.Dense, y []float64) [][]float64 {
	n, p := x.Dims()
	seen := map[string]bool{}
	var hs [][]float64
	for f := 0; f < p; f++ {
		col := mat.Col(nil, f, x)
		sorted := append([]float64(nil), col...)
		sort.Float64s(sorted)
		for q := 1; q < 6; q++ {
			th := sorted[q*n/6]
			for _, sgn := range []float64{1, -1} {
				h := make([]float64, n)
				right, wrong := false, false
				for i, v := range col {
					h[i] = -sgn
					if v > th {
						h[i] = sgn
					}
					if h[i]*y[i] > 0 {
						right = true
					} else {
						wrong = true
					}
				}
				key := fmt.Sprint(h)
				if right && wrong && !seen[key] {
					seen[key] = true
					hs = append(hs, h)
				}
			}
		}
	}
	return hs
}

// TestDefiniteBoostIsAdaBoost runs DefiniteBoost with diagonal constraints
// C_j = diag(y_i h_j(x_i)) and W1 = I/d on wine classes 0 and 1 and an
// independent AdaBoost: the chosen hypotheses, the steps α_t and the weights
// (the diagonal of W_t) agree to 1e-12 at every step, W stays diagonal, and
// the dual is the log of AdaBoost's exponential loss.
func TestDefiniteBoostIsAdaBoost(t *testing.T) {
	x, lab := loadWine(t)
	var rows []int
	for i, l := range lab {
		if l <= 1 && i%3 == 0 {
			rows = append(rows, i)
		}
	}
	d := len(rows)
	_, p := x.Dims()
	xs := mat.NewDense(d, p, nil)
	y := make([]float64, d)
	for k, i := range rows {
		xs.SetRow(k, x.RawRowView(i))
		y[k] = float64(2*lab[i] - 1)
	}
	hStumps := stumps(xs, y)
	// Real-valued hypotheses in [−1, 1]: tanh of a standardised feature.
	var hReal [][]float64
	for f := 0; f < p; f++ {
		for _, s := range []float64{1, -1} {
			h := make([]float64, d)
			for i := 0; i < d; i++ {
				h[i] = math.Tanh(s * xs.At(i, f))
			}
			hReal = append(hReal, h)
		}
	}
	cases := []struct {
		name    string
		hs      [][]float64
		bounded bool // WithBounds(C, −1, 1) instead of the computed extremes
	}{
		{"stumps, computed extremes", hStumps, false},
		{"real-valued, bounds [-1,1]", hReal, true},
	}
	const iters = 60
	for _, b := range enginetest.Backends(t) {
		for _, c := range cases {
			t.Run(b.Name()+"/"+c.name, func(t *testing.T) {
				cons := make([]Sym, len(c.hs))
				for j, h := range c.hs {
					diag := mat.NewSymDense(d, nil)
					for i := 0; i < d; i++ {
						diag.SetSym(i, i, y[i]*h[i])
					}
					s, err := NewSparse(csrOf(diag))
					if err != nil {
						t.Fatal(err)
					}
					cons[j] = s
					if c.bounded {
						cons[j] = WithBounds(s, -1, 1)
					}
				}
				// AdaBoost.
				w := constSlice(d, 1/float64(d))
				margin := make([]float64, d) // y_i Σ α_t h_t(x_i)
				step := 0
				_, err := DefiniteBoost(context.Background(), cons, BoostOptions{
					MaxIter: iters, Tol: 1e-12, Backend: b,
					Observe: func(s BoostStep) error {
						step++
						// The largest edge; edges within a relative 1e-12 of it are
						// ties that go to the lowest index (DefiniteBoost's rule).
						edges := make([]float64, len(c.hs))
						best := math.Inf(-1)
						for j, h := range c.hs {
							for i := range w {
								edges[j] += w[i] * y[i] * h[i]
							}
							best = math.Max(best, edges[j])
						}
						jt := 0
						for edges[jt] < best-1e-12*math.Abs(best) {
							jt++
						}
						best = edges[jt]
						alpha := 0.5 * math.Log((1+best)/(1-best))
						var z float64
						for i := range w {
							w[i] *= math.Exp(-alpha * y[i] * c.hs[jt][i])
							margin[i] += alpha * y[i] * c.hs[jt][i]
							z += w[i]
						}
						for i := range w {
							w[i] /= z
						}
						if s.Constraint != jt {
							return fmt.Errorf("step %d: DefiniteBoost chose %d, AdaBoost %d", step, s.Constraint, jt)
						}
						if math.Abs(s.Violation-best) > 1e-12 || math.Abs(s.Alpha-alpha) > 1e-12*math.Max(1, alpha) {
							return fmt.Errorf("step %d: r %.17g α %.17g, AdaBoost r %.17g α %.17g", step, s.Violation, s.Alpha, best, alpha)
						}
						for i := 0; i < d; i++ {
							for k := 0; k < d; k++ {
								v := s.W.At(i, k)
								if i == k && math.Abs(v-w[i]) > 1e-12 {
									return fmt.Errorf("step %d: weight %d: %.17g, AdaBoost %.17g", step, i, v, w[i])
								}
								if i != k && v != 0 {
									return fmt.Errorf("step %d: W not diagonal: W[%d,%d] = %g", step, i, k, v)
								}
							}
						}
						var expLoss float64
						for i := range margin {
							expLoss += math.Exp(-margin[i]) / float64(d)
						}
						if math.Abs(s.Dual-math.Log(expLoss)) > 1e-12 {
							return fmt.Errorf("step %d: dual %.17g, log exp-loss %.17g", step, s.Dual, math.Log(expLoss))
						}
						return nil
					},
				})
				if err != nil {
					t.Fatal(err)
				}
				if step == 0 {
					t.Fatal("no boosting step was made")
				}
				t.Logf("%d hypotheses, %d steps compared", len(c.hs), step)
			})
		}
	}
}

func TestDefiniteBoostErrors(t *testing.T) {
	ctx := context.Background()
	pair := Shift(DistPair{N: 4, A: 0, B: 1}, -0.01)
	if _, err := DefiniteBoost(ctx, nil, BoostOptions{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("no constraints: %v", err)
	}
	if _, err := DefiniteBoost(ctx, []Sym{pair, DistPair{N: 5, A: 0, B: 1}}, BoostOptions{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("mixed dimensions: %v", err)
	}
	if _, err := DefiniteBoost(ctx, []Sym{pair}, BoostOptions{Tol: -1}); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative tolerance: %v", err)
	}
	// A positive semidefinite C can only hold with tr(W C) ≤ 0 for a singular W.
	for _, proj := range []Projection{Approximate, Exact} {
		if _, err := DefiniteBoost(ctx, []Sym{DistPair{N: 4, A: 0, B: 1}}, BoostOptions{Projection: proj}); !errors.Is(err, ErrInfeasible) {
			t.Errorf("%v: PSD constraint: %v", proj, err)
		}
	}
	// Contradictory constraints: tr(W C) ≤ 0 and tr(W (−C + 0.1 I)) ≤ 0, i.e.
	// tr(W C) ≥ 0.1, cannot both hold, though each alone can.
	c := Shift(DistPair{N: 3, A: 0, B: 1}, -0.2)
	diag := mat.NewSymDense(3, []float64{-0.5 + 0.3, 0.5, 0, 0.5, -0.5 + 0.3, 0, 0, 0, 0.3})
	neg, _ := NewDense(diag)
	res, err := DefiniteBoost(ctx, []Sym{c, neg}, BoostOptions{MaxIter: 50})
	if err != nil {
		t.Fatalf("infeasible pair: %v", err)
	}
	if res.Converged || res.Iterations != 50 {
		t.Errorf("infeasible pair: converged %v after %d iterations", res.Converged, res.Iterations)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := DefiniteBoost(cctx, []Sym{pair}, BoostOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	// A Sparse whose CSR is not symmetric is rejected before it becomes a constraint.
	if _, err := NewSparse(&sparse.CSR{Rows: 2, Cols: 2, Indptr: []int{0, 1, 1}, Ind: []int{1}, Data: []float64{1}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("asymmetric sparse: %v", err)
	}
}

func sumAlpha(a []float64) float64 {
	var s float64
	for _, v := range a {
		s += v
	}
	return s
}

// TestExactProjectionCurvature checks the Daleckii–Krein second derivative
// used by the exact projection's Newton steps against central differences of
// h(α) = tr(W(α) C), for constraint matrices of every representation.
func TestExactProjectionCurvature(t *testing.T) {
	const d = 8
	rng := rand.New(rand.NewPCG(5, 6))
	e := randSym(rng, d)
	dense, _ := NewDense(randSym(rng, d))
	sp := mat.NewSymDense(d, nil)
	sp.SetSym(0, 0, 1)
	sp.SetSym(0, 3, -0.4)
	sp.SetSym(5, 6, 0.8)
	spS, _ := NewSparse(csrOf(sp))
	u := mat.NewDense(d, 2, nil)
	for i := 0; i < d; i++ {
		u.Set(i, 0, rng.NormFloat64())
		u.Set(i, 1, rng.NormFloat64())
	}
	lr, _ := NewLowRank(u, []float64{1, -0.3})
	for _, b := range enginetest.Backends(t) {
		for name, c := range map[string]Sym{
			"dense": dense, "sparse": spS, "lowrank": lr,
			"shifted pair": Shift(DistPair{N: d, A: 1, B: 4}, -0.05),
		} {
			p := projector{b: b, d: d, scratch: make([]float64, d)}
			const alpha, delta = 0.7, 1e-5
			st, h, err := p.eval(e, c, alpha)
			if err != nil {
				t.Fatal(err)
			}
			f2 := p.curvature(st, c, h)
			_, hm, _ := p.eval(e, c, alpha-delta)
			_, hp, _ := p.eval(e, c, alpha+delta)
			fd := (hm - hp) / (2 * delta)
			if !(f2 > 0) || math.Abs(f2-fd) > 1e-6*math.Max(1, math.Abs(fd)) {
				t.Errorf("%s/%s: f'' = %.10g, central difference %.10g", b.Name(), name, f2, fd)
			}
		}
	}
}
