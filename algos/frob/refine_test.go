package frob

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/engine/enginetest"
	"github.com/psdlearn/psdlearn/limits"
	"github.com/psdlearn/psdlearn/progress"
	"gonum.org/v1/gonum/mat"
)

// TestFaceHessian compares faceHessian with ⟨A_r, P_T(A_s)⟩ formed
// explicitly, P_T(S) = S − Q_N Q_NᵀSQ_N Q_Nᵀ, for an orthonormal Q_N of
// several sizes (none, some, all of the dimension). f spans three row
// blocks, so the lower-triangle blocks on both cores and the mirrored upper
// triangle are all checked, on a lattice of entries.
func TestFaceHessian(t *testing.T) {
	const f, d = 600, 7
	rng := rand.New(rand.NewPCG(3, 5))
	p := make([]float64, f*d)
	q := make([]float64, f*d)
	for i := range p {
		p[i], q[i] = rng.NormFloat64(), rng.NormFloat64()
	}
	g := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			g.SetSym(i, j, rng.NormFloat64())
		}
	}
	var es mat.EigenSym
	if !es.Factorize(g, true) {
		t.Fatal("eigen failed")
	}
	var qall mat.Dense
	es.VectorsTo(&qall)
	for _, b := range enginetest.Backends(t) {
		for _, nn := range []int{0, 3, d} {
			t.Run(fmt.Sprintf("%s/off-face=%d", b.Name(), nn), func(t *testing.T) {
				qn := make([]float64, d*max(nn, 1))
				for i := 0; i < d; i++ {
					for k := 0; k < nn; k++ {
						qn[i*nn+k] = qall.At(i, k)
					}
				}
				pn := make([]float64, f*max(nn, 1))
				qnr := make([]float64, f*max(nn, 1))
				if nn > 0 {
					engine.MulRows(b.BLAS(), f, nn, d, p, d, qn, nn, pn, nn)
					engine.MulRows(b.BLAS(), f, nn, d, q, d, qn, nn, qnr, nn)
				}
				h := faceHessian(b.BLAS(), f, d, nn, p, q, pn, qnr, nil)
				a := func(r int) *mat.Dense {
					m := mat.NewDense(d, d, nil)
					for i := 0; i < d; i++ {
						for j := 0; j < d; j++ {
							m.Set(i, j, p[r*d+i]*p[r*d+j]-q[r*d+i]*q[r*d+j])
						}
					}
					return m
				}
				qnm := mat.NewDense(d, max(nn, 1), qn)
				project := func(s *mat.Dense) *mat.Dense {
					out := mat.DenseCopyOf(s)
					if nn == 0 {
						return out
					}
					var t1, t2, t3, t4 mat.Dense
					t1.Mul(qnm.T(), s)
					t2.Mul(&t1, qnm)
					t3.Mul(qnm, &t2)
					t4.Mul(&t3, qnm.T())
					out.Sub(out, &t4)
					return out
				}
				var worst, scale float64
				for r := 0; r < f; r += 7 {
					ar := a(r)
					for s := 0; s < f; s += 5 {
						as := a(s)
						want := mat.Sum(mulElem(ar, project(as)))
						worst = math.Max(worst, math.Abs(h[r*f+s]-want))
						scale = math.Max(scale, math.Abs(mat.Sum(mulElem(ar, as))))
					}
				}
				if worst > 1e-12*scale {
					t.Errorf("max |H − explicit| = %.3g (scale %.3g)", worst, scale)
				}
			})
		}
	}
}

func mulElem(a, b *mat.Dense) *mat.Dense {
	var m mat.Dense
	m.MulElem(a, b)
	return &m
}

// TestBoxNewton checks the KKT conditions of the box-constrained model
// max gᵀΔ − ½ΔᵀHΔ, lo ≤ Δ ≤ hi, at boxNewton's answer: the reduced
// gradient g − HΔ vanishes on the free variables and points out of the box
// on the ones at a bound. The boxes mix variables at 0 (lo = 0 or hi = 0,
// as for multipliers at a bound) and interior ones.
func TestBoxNewton(t *testing.T) {
	for _, b := range enginetest.Backends(t) {
		for _, tc := range []struct{ n, m int }{{1, 6}, {20, 25}, {150, 155}, {300, 305}} {
			n, m := tc.n, tc.m
			t.Run(fmt.Sprintf("%s/n=%d,m=%d", b.Name(), n, m), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(n), 9))
				a := make([]float64, m*n)
				for i := range a {
					a[i] = rng.NormFloat64()
				}
				h := make([]float64, n*n)
				for i := 0; i < n; i++ {
					for j := 0; j < n; j++ {
						for k := 0; k < m; k++ {
							h[i*n+j] += a[k*n+i] * a[k*n+j]
						}
					}
				}
				g := make([]float64, n)
				lo := make([]float64, n)
				hi := make([]float64, n)
				for k := range g {
					g[k] = 5 * rng.NormFloat64()
					u := rng.Float64()
					switch k % 3 {
					case 0:
						u = 0
					case 1:
						u = 1
					}
					lo[k], hi[k] = -u, 1-u
				}
				hh := append([]float64(nil), h...)
				delta, passes, ok := boxNewton(b.BLAS(), n, hh, g, lo, hi, nil)
				if !ok {
					t.Fatal("no factorisation")
				}
				var gmax float64
				for _, v := range g {
					gmax = math.Max(gmax, math.Abs(v))
				}
				tol := 1e-9 * gmax
				for k := range delta {
					if delta[k] < lo[k] || delta[k] > hi[k] {
						t.Fatalf("Δ[%d] = %g outside [%g, %g]", k, delta[k], lo[k], hi[k])
					}
					v := g[k]
					for j := range delta {
						v -= h[k*n+j] * delta[j]
					}
					switch {
					case delta[k] > lo[k] && delta[k] < hi[k] && math.Abs(v) > tol:
						t.Errorf("free Δ[%d]: reduced gradient %g (%d passes)", k, v, passes)
					case delta[k] == lo[k] && v > tol && lo[k] < hi[k]:
						t.Errorf("Δ[%d] at its lower bound with reduced gradient %g", k, v)
					case delta[k] == hi[k] && v < -tol && lo[k] < hi[k]:
						t.Errorf("Δ[%d] at its upper bound with reduced gradient %g", k, v)
					}
				}
			})
		}
	}
}

// TestRefineCertifies solves problems whose free multipliers are few with
// and without face-Newton steps, on every backend. Both must be certified
// by an independently recomputed gap; the steps must have run and saved
// evaluations; Refined must say whether the certificate's primal point is
// a step's; and the two metrics must agree within what their gaps allow
// (the primal is 1-strongly convex).
func TestRefineCertifies(t *testing.T) {
	type problem struct {
		name string
		x    *mat.Dense
		ts   *constraints.TripletSet
		c    float64
	}
	xc, tc := clusterTriplets(t, 1500, 48, 5, 11)
	xd, td := clusterTriplets(t, 800, 24, 4, 5)
	for _, pr := range []problem{{"clusters-48", xc, tc, 100}, {"clusters-24", xd, td, 10}} {
		for _, b := range enginetest.Backends(t) {
			t.Run(pr.name+"/"+b.Name(), func(t *testing.T) {
				var res [2]*MetricResult
				for k, off := range []bool{true, false} {
					r, err := Learn(context.Background(), pr.x, pr.ts, MetricOptions{C: pr.c, Backend: b, NoRefine: off})
					if err != nil {
						t.Fatal(err)
					}
					if !r.Certified {
						t.Fatalf("NoRefine %v: not certified, rel. gap %g (%s)", off, r.RelGap, r.Reason)
					}
					if g := checkCertificate(t, pr.x, pr.ts, r, pr.c); g > DefaultGapTol {
						t.Errorf("NoRefine %v: explicit rel. gap %g above %g", off, g, DefaultGapTol)
					}
					res[k] = r
				}
				plain, refined := res[0], res[1]
				if plain.Refinements != 0 || plain.Refined {
					t.Errorf("NoRefine: %d steps, refined %v", plain.Refinements, plain.Refined)
				}
				if refined.Refinements == 0 || refined.Evaluations >= plain.Evaluations {
					t.Errorf("%d face-Newton steps, %d evaluations against %d without", refined.Refinements, refined.Evaluations, plain.Evaluations)
				}
				if refined.Refined != strings.Contains(refined.Reason, "refined primal") {
					t.Errorf("Refined %v, reason %q", refined.Refined, refined.Reason)
				}
				var diff mat.Dense
				diff.Sub(plain.M, refined.M)
				s2 := refined.DataScale * refined.DataScale // the gaps are those of x/s
				if dist, bound := mat.Norm(&diff, 2)*s2, math.Sqrt(2*plain.Gap)+math.Sqrt(2*refined.Gap); dist > bound {
					t.Errorf("‖M − M_refined‖_F = %.3g, above the strong-convexity bound %.3g", dist, bound)
				}
				t.Logf("evaluations: %d without steps, %d with %d steps", plain.Evaluations, refined.Evaluations, refined.Refinements)
			})
		}
	}
}

// TestRefinerSchedule runs the step schedule through a sequence of
// outcomes: the next step at the next evaluation after the dual moved,
// base evaluations after a primal-only gain or a first step that raised
// neither bound, doubled for every further such step in a row, and the
// count reset by any gain.
func TestRefinerSchedule(t *testing.T) {
	const base = 23
	type outcome struct{ movedDual, improvedPrimal bool }
	var (
		moved   = outcome{movedDual: true}
		primal  = outcome{improvedPrimal: true}
		nothing = outcome{}
	)
	for _, tc := range []struct {
		name  string
		steps []outcome
		wait  []int // evaluations from each step to the next one allowed
	}{
		{"dual moves", []outcome{moved, moved}, []int{1, 1}},
		{"primal only", []outcome{primal, primal}, []int{base, base}},
		{"failures double from the second", []outcome{nothing, nothing, nothing}, []int{base, 2 * base, 4 * base}},
		{"a failure after a move", []outcome{moved, nothing}, []int{1, base}},
		{"a gain resets the count", []outcome{nothing, nothing, primal, nothing}, []int{base, 2 * base, base, base}},
		{"the doubling is capped", []outcome{nothing, nothing, nothing, nothing, nothing, nothing, nothing, nothing, nothing, nothing, nothing, nothing}, []int{base, 2 * base, 4 * base, 8 * base, 16 * base, 32 * base, 64 * base, 128 * base, 256 * base, 512 * base, 512 * base, 512 * base}},
	} {
		r := newRefiner(1e-7)
		eval := 5
		for i, o := range tc.steps {
			r.schedule(eval, base, o.movedDual, o.improvedPrimal)
			if got := r.next - eval; got != tc.wait[i] {
				t.Errorf("%s: step %d: next step %d evaluations later, want %d", tc.name, i+1, got, tc.wait[i])
			}
			eval = r.next
		}
	}
}

// TestUpperSym checks that H stays readable while its factor overwrites the
// lower triangle (boxNewton factors in place): at and mulVec against H,
// and restoreLower giving back H's bits, as a failed factorisation's retry
// needs.
func TestUpperSym(t *testing.T) {
	for _, b := range enginetest.Backends(t) {
		for _, n := range []int{1, 7, 130} {
			rng := rand.New(rand.NewPCG(uint64(n), 3))
			h := make([]float64, n*n)
			for i := 0; i < n; i++ {
				for j := 0; j <= i; j++ {
					v := rng.NormFloat64()
					h[i*n+j], h[j*n+i] = v, v
				}
				h[i*n+i] += 3 * float64(n)
			}
			orig := append([]float64(nil), h...)
			diag := make([]float64, n)
			for k := range diag {
				diag[k] = h[k*n+k]
			}
			if !cholesky(b.BLAS(), n, h) {
				t.Fatal("not positive definite")
			}
			m := upperSym{n: n, h: h, diag: diag}
			x := make([]float64, n)
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			y := make([]float64, n)
			m.mulVec(b.BLAS(), x, y)
			for i := 0; i < n; i++ {
				var want, scale float64
				for j := 0; j < n; j++ {
					if m.at(i, j) != orig[i*n+j] {
						t.Fatalf("%s n=%d: at(%d, %d) = %v, want %v", b.Name(), n, i, j, m.at(i, j), orig[i*n+j])
					}
					want += orig[i*n+j] * x[j]
					scale += math.Abs(orig[i*n+j] * x[j])
				}
				if math.Abs(y[i]-want) > 4*float64(n)*0x1p-52*scale {
					t.Errorf("%s n=%d: (Hx)_%d = %v, want %v", b.Name(), n, i, y[i], want)
				}
			}
			restoreLower(n, h, diag)
			if !slices.Equal(h, orig) {
				t.Errorf("%s n=%d: restoreLower does not give back H", b.Name(), n)
			}
		}
	}
}

// TestRefineMemoryLimit gives a solve a memory budget that admits it but not
// its face-Newton steps' f×f matrices: the steps are skipped, with the
// reason on the progress lines, and the solve still certifies, on the path
// of a solve without steps.
func TestRefineMemoryLimit(t *testing.T) {
	x, ts := clusterTriplets(t, 800, 24, 4, 5)
	n, d := x.Dims()
	plain, err := Learn(context.Background(), x, ts, MetricOptions{C: 10, NoRefine: true})
	if err != nil {
		t.Fatal(err)
	}
	budget := MetricMemory(n, d, ts.Len()) + limits.Words(1, 10, 10)
	defer limits.SetMaxMemory(limits.SetMaxMemory(int64(budget)))
	var lines []string
	var mu sync.Mutex
	opt := MetricOptions{C: 10, Progress: func(ev progress.Event) {
		mu.Lock()
		lines = append(lines, ev.Message)
		mu.Unlock()
	}}
	r, err := Learn(context.Background(), x, ts, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Certified || r.Refined {
		t.Fatalf("certified %v, refined %v (%s)", r.Certified, r.Refined, r.Reason)
	}
	if r.Refinements == 0 || r.Evaluations != plain.Evaluations {
		t.Errorf("%d step attempts, %d evaluations against %d without steps", r.Refinements, r.Evaluations, plain.Evaluations)
	}
	skipped := false
	for _, l := range lines {
		skipped = skipped || strings.Contains(l, "would not fit the memory limit")
	}
	if !skipped {
		t.Errorf("no progress line says a step was skipped for memory:\n%s", strings.Join(lines, "\n"))
	}
}
