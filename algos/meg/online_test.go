package meg

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/engine/enginetest"
	"gonum.org/v1/gonum/mat"
)

// TestLearnerLossBound checks Lemma 3.2 at every step of the online kernel
// experiment on wine: the cumulative MEG loss never exceeds
// (1 + c/2) L_U + (1/2 + 1/c) r² Δ(U, W_1) with L_U the comparator's loss on
// the same prefix, r = 1 (X_ab has eigenvalues 0 and 1) and
// η = 2c/(r²(2 + c)). For finite c it also checks Lemma 3.1 on every one of
// the first steps: η(y − ŷ)² − (c/r²)(y − tr(U X))² ≤ Δ(U, W_t) − Δ(U, W_{t+1}).
func TestLearnerLossBound(t *testing.T) {
	const (
		d     = 12
		T     = 6000
		r     = 1.0
		steps = 400 // Lemma 3.1 checked on these first steps
	)
	u, _ := targetKernel(t, d, 1)
	uDense, _ := NewDense(u)
	// A non-uniform start: W1 ∝ I + 0.5·(a rank-one matrix from the data).
	w1 := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		w1.SetSym(i, i, 1)
	}
	v := mat.NewVecDense(d, nil)
	for i := 0; i < d; i++ {
		v.SetVec(i, math.Sin(float64(i)))
	}
	w1.SymRankOne(w1, 0.5, v)

	cases := []struct {
		name  string
		noise float64
		c     float64 // 0: OptimalC in hindsight
		w1    mat.Symmetric
	}{
		{name: "noiseless c=inf (eta=2)", noise: 0, c: math.Inf(1)},
		{name: "noisy optimal c", noise: 0.01, c: 0},
		{name: "noisy c=1", noise: 0.01, c: 1},
		{name: "noiseless c=4 non-uniform W1", noise: 0, c: 4, w1: w1},
	}
	for _, b := range enginetest.Backends(t) {
		for ci, c := range cases {
			t.Run(b.Name()+"/"+c.name, func(t *testing.T) {
				seq, err := SampleDistances(u, T, c.noise, uint64(10+ci))
				if err != nil {
					t.Fatal(err)
				}
				start := c.w1
				if start == nil {
					id := mat.NewSymDense(d, nil)
					for i := 0; i < d; i++ {
						id.SetSym(i, i, 1/float64(d))
					}
					start = id
				}
				ws, _ := TraceNormalize(start)
				div, err := VonNeumann(b, u, ws)
				if err != nil {
					t.Fatal(err)
				}
				cc := c.c
				if cc == 0 {
					cc = OptimalC(SequenceLoss(u, seq), div, r)
				}
				l, err := NewLearner(d, LearnerOptions{R: r, C: cc, W1: c.w1, Backend: b})
				if err != nil {
					t.Fatal(err)
				}
				if want := EtaFromC(cc, r); l.Eta() != want {
					t.Fatalf("eta %g, want %g", l.Eta(), want)
				}
				d0, err := l.Divergence(u)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(d0-div) > 1e-10 {
					t.Fatalf("Learner.Divergence at W1 = %.15g, VonNeumann = %.15g", d0, div)
				}
				var lossU float64
				prevDiv := d0
				worst := math.Inf(-1) // max over t of L_MEG − bound
				_, err = l.Run(context.Background(), seq, func(s Step) error {
					x, y := seq.At(s.T - 1)
					ru := x.Inner(u) - y
					lossU += ru * ru
					bound := LossBound(lossU, div, r, cc)
					worst = math.Max(worst, s.TotalLoss-bound)
					if s.TotalLoss > bound {
						return fmt.Errorf("step %d: cumulative loss %.10g exceeds the Lemma 3.2 bound %.10g", s.T, s.TotalLoss, bound)
					}
					if s.T <= steps && !math.IsInf(cc, 1) {
						dv, err := l.Divergence(u)
						if err != nil {
							return err
						}
						lhs := l.Eta()*s.Loss - cc/(r*r)*ru*ru
						if lhs > prevDiv-dv+1e-12 {
							return fmt.Errorf("step %d: Lemma 3.1 fails: %.6g > Δ_t − Δ_{t+1} = %.6g", s.T, lhs, prevDiv-dv)
						}
						prevDiv = dv
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if got := SequenceLoss(uDense.Matrix(), seq); math.Abs(got-lossU) > 1e-9*(1+got) {
					t.Fatalf("SequenceLoss %g, accumulated %g", got, lossU)
				}
				final := LossBound(lossU, div, r, cc)
				t.Logf("T=%d eta=%.4g L_MEG=%.5g bound=%.5g (ratio %.2f) L_U=%.4g Δ(U,W1)=%.4g",
					T, l.Eta(), l.TotalLoss(), final, final/l.TotalLoss(), lossU, div)
				if dT, _ := l.Divergence(u); c.noise == 0 && !(dT < div) {
					t.Errorf("noiseless run did not approach the target: Δ(U,W_T)=%g ≥ Δ(U,W_1)=%g", dT, div)
				}
			})
		}
	}
}

// TestLearnerStaysPD makes 100,000 MEG updates (d = 8 wine objects, η = 2)
// and checks after every update that the eigenvalues of W_t are positive
// and finite, and every 5,000 updates that the formed W_t is trace one and
// positive definite (independent eigendecomposition and Cholesky) with
// orthonormal eigenvectors, on every backend.
func TestLearnerStaysPD(t *testing.T) {
	const (
		d = 8
		T = 100000
	)
	u, _ := targetKernel(t, d, 1)
	full, err := SampleDistances(u, T, 0, 7)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range enginetest.Backends(t) {
		seq := full
		T := seq.Len()
		t.Run(b.Name(), func(t *testing.T) {
			l, err := NewLearner(d, LearnerOptions{R: 1, C: math.Inf(1), Backend: b})
			if err != nil {
				t.Fatal(err)
			}
			minP := math.Inf(1)
			res, err := l.Run(context.Background(), seq, func(s Step) error {
				if err := l.refresh(); err != nil {
					return err
				}
				for _, p := range l.st.p {
					if !(p > 0) || math.IsInf(p, 0) {
						return fmt.Errorf("step %d: eigenvalue %g of W", s.T, p)
					}
					minP = math.Min(minP, p)
				}
				if s.T%5000 == 0 {
					w, err := l.W()
					if err != nil {
						return err
					}
					checkTraceOnePD(t, b, w, 1e-12, fmt.Sprintf("step %d", s.T))
					var vtv mat.Dense
					vtv.Mul(l.st.vecs.T(), l.st.vecs)
					for i := 0; i < d; i++ {
						vtv.Set(i, i, vtv.At(i, i)-1)
					}
					if e := mat.Norm(&vtv, math.Inf(1)); e > 1e-12 {
						return fmt.Errorf("step %d: eigenvectors not orthonormal (%g)", s.T, e)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Steps != T || l.Steps() != T {
				t.Fatalf("steps %d/%d, want %d", res.Steps, l.Steps(), T)
			}
			div, _ := VonNeumann(b, u, mat.NewDiagDense(d, constSlice(d, 1/float64(d))))
			if bound := LossBound(0, div, 1, math.Inf(1)); l.TotalLoss() > bound {
				t.Fatalf("total loss %g above bound %g", l.TotalLoss(), bound)
			}
			t.Logf("min eigenvalue of W over the run %.3g, total loss %.4g", minP, l.TotalLoss())
		})
	}
}

func constSlice(n int, v float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// TestLearnerMatchesNaiveUpdate compares the stable update with the plain
// form W_{t+1} = exp(log W_t − 2η(ŷ_t − y_t)X_t)/Z_t, computed with a
// matrix logarithm and exponential at every step, on dense, sparse and
// low-rank instances.
func TestLearnerMatchesNaiveUpdate(t *testing.T) {
	const d, T, eta = 6, 200, 0.3
	u, _ := targetKernel(t, d, 1)
	seq, err := SampleDistances(u, T, 0.01, 3)
	if err != nil {
		t.Fatal(err)
	}
	// Alternate instance representations of the same X_ab.
	inst := func(t0 int) Sym {
		x, _ := seq.At(t0)
		p := x.(DistPair)
		ref := mat.NewSymDense(d, nil)
		p.AddTo(ref, 1)
		switch t0 % 3 {
		case 1:
			s, _ := NewSparse(csrOf(ref))
			return s
		case 2:
			uu := mat.NewDense(d, 1, nil)
			uu.Set(p.A, 0, 1)
			uu.Set(p.B, 0, -1)
			s, _ := NewLowRank(uu, []float64{0.5})
			return s
		}
		s, _ := NewDense(ref)
		return s
	}
	for _, b := range enginetest.Backends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			l, err := NewLearner(d, LearnerOptions{Eta: eta, Backend: b})
			if err != nil {
				t.Fatal(err)
			}
			w := mat.NewSymDense(d, nil)
			for i := 0; i < d; i++ {
				w.SetSym(i, i, 1/float64(d))
			}
			for t0 := 0; t0 < T; t0++ {
				x := inst(t0)
				_, y := seq.At(t0)
				yhat, err := l.Update(x, y)
				if err != nil {
					t.Fatal(err)
				}
				if want := x.Inner(w); math.Abs(yhat-want) > 1e-12 {
					t.Fatalf("step %d: prediction %.15g, naive %.15g", t0, yhat, want)
				}
				lw, _, err := logOf(b, w)
				if err != nil {
					t.Fatal(err)
				}
				x.AddTo(lw, -2*eta*(yhat-y))
				w = expNormalized(t, b, lw)
			}
			got, err := l.W()
			if err != nil {
				t.Fatal(err)
			}
			if e := maxAbsDiff(got, w); e > 1e-10 {
				t.Fatalf("stable and naive MEG differ by %g after %d steps", e, T)
			}
		})
	}
}

// expNormalized returns exp(A)/tr exp(A) by the textbook route.
func expNormalized(t *testing.T, b engine.Backend, a *mat.SymDense) *mat.SymDense {
	t.Helper()
	e, err := b.SymEig(a, engine.EigRange{}, true)
	if err != nil {
		t.Fatal(err)
	}
	n := len(e.Values)
	out := mat.NewSymDense(n, nil)
	var z float64
	for k, l := range e.Values {
		z += math.Exp(l)
		out.SymRankOne(out, math.Exp(l), e.Vectors.ColView(k))
	}
	out.ScaleSym(1/z, out)
	return out
}

func TestLearnerErrors(t *testing.T) {
	if _, err := NewLearner(0, LearnerOptions{Eta: 1}); !errors.Is(err, ErrInvalid) {
		t.Errorf("d=0: %v", err)
	}
	if _, err := NewLearner(3, LearnerOptions{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("no learning rate: %v", err)
	}
	notPD := mat.NewSymDense(2, []float64{1, 2, 2, 1})
	if _, err := NewLearner(2, LearnerOptions{Eta: 1, W1: notPD}); !errors.Is(err, ErrInvalid) {
		t.Errorf("W1 not PD: %v", err)
	}
	l, err := NewLearner(3, LearnerOptions{Eta: 1, R: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Update(DistPair{N: 4, A: 0, B: 1}, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("dimension mismatch: %v", err)
	}
	if _, err := l.Update(DistPair{N: 3, A: 0, B: 1}, math.NaN()); !errors.Is(err, ErrInvalid) {
		t.Errorf("NaN label: %v", err)
	}
	wide, _ := NewDense(mat.NewSymDense(3, []float64{2, 0, 0, 0, -1, 0, 0, 0, 0}))
	if _, err := l.Update(wide, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("spread 3 > R = 1: %v", err)
	}
	if l.Steps() != 0 {
		t.Errorf("rejected updates counted: %d", l.Steps())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	seq := Examples{{X: DistPair{N: 3, A: 0, B: 1}, Y: 0.1}}
	if _, err := l.Run(ctx, seq, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: %v", err)
	}
}
