package psdlearn_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/algos/meg"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/model"
	"gonum.org/v1/gonum/mat"
)

// irisTarget is the paper's setting on 30 iris flowers: the trace-one RBF
// kernel U over them and every pair's squared distance under U.
func irisTarget(t *testing.T) (*meg.Target, []psdlearn.Distance) {
	t.Helper()
	iris, err := datasets.Open("iris")
	if err != nil {
		t.Fatal(err)
	}
	tgt, err := meg.NewTarget(iris.X, iris.Y, meg.TargetOptions{Objects: 30, Standardize: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	n := len(tgt.Y)
	var ds []psdlearn.Distance
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			ds = append(ds, psdlearn.Distance{A: a, B: b, Y: 2 * meg.HalfSqDist(tgt.U, a, b)})
		}
	}
	return tgt, ds
}

// symOf returns the n×n matrix of a model's kernel.
func symOf(k *model.Kernel) *mat.SymDense {
	n := k.N()
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			s.SetSym(i, j, k.At(i, j))
		}
	}
	return s
}

// TestMEG learns the target kernel from all its squared distances: more
// passes fit the distances better, ten passes fit them to a tenth of the
// error of the initial kernel I/n with a 1-NN error within 0.05 of the
// target's; the kernel has the asked trace, a scaled problem gives the
// scaled kernel, the seed fixes the result, the certificate makes no claim
// of convergence and the model survives a file round trip.
func TestMEG(t *testing.T) {
	tgt, ds := irisTarget(t)
	n := len(tgt.Y)
	ctx := context.Background()
	var base float64 // the error of I/n, whose every squared distance is 2/n
	for _, d := range ds {
		base += (2/float64(n) - d.Y) * (2/float64(n) - d.Y)
	}
	base /= float64(len(ds))
	one, err := psdlearn.MEG{}.FitDistances(ctx, n, ds)
	if err != nil {
		t.Fatal(err)
	}
	m, err := psdlearn.MEG{Passes: 10, Seed: 3}.FitDistances(ctx, n, ds)
	if err != nil {
		t.Fatal(err)
	}
	mse1, mse := one.Info["mse"].(float64), m.Info["mse"].(float64)
	t.Logf("mean squared error: I/n %.3g, one pass %.3g, ten passes %.3g", base, mse1, mse)
	if !(mse1 < base) || !(mse < base/10) || !(mse < mse1) {
		t.Errorf("mean squared error: I/n %.3g, one pass %.3g, ten passes %.3g", base, mse1, mse)
	}
	nn, err := tgt.NNErrorOf(symOf(m.Kernel))
	if err != nil {
		t.Fatal(err)
	}
	if nn.Mean > tgt.NN.Mean+0.05 {
		t.Errorf("1-NN error %.3f, target's %.3f", nn.Mean, tgt.NN.Mean)
	}
	var tr float64
	for i := 0; i < n; i++ {
		tr += m.Kernel.At(i, i)
	}
	if math.Abs(tr-1) > 1e-9 {
		t.Errorf("trace %v, want 1", tr)
	}
	if c := m.Certificate; c == nil || c.Converged || c.Reason == "" {
		t.Errorf("certificate %+v, want not converged with a reason", c)
	}

	scaled := make([]psdlearn.Distance, len(ds))
	for i, d := range ds {
		scaled[i] = psdlearn.Distance{A: d.A, B: d.B, Y: 50 * d.Y}
	}
	m50, err := psdlearn.MEG{Trace: 50, Passes: 10, Seed: 3}.FitDistances(ctx, n, scaled)
	if err != nil {
		t.Fatal(err)
	}
	if d := m50.Kernel.At(0, 1) - 50*m.Kernel.At(0, 1); math.Abs(d) > 1e-9 {
		t.Errorf("Trace 50 on distances ×50: K_01 %v, want 50 × %v", m50.Kernel.At(0, 1), m.Kernel.At(0, 1))
	}
	again, err := psdlearn.MEG{Passes: 10, Seed: 3}.FitDistances(ctx, n, ds)
	if err != nil {
		t.Fatal(err)
	}
	if again.Kernel.At(2, 7) != m.Kernel.At(2, 7) || again.Info["mse"] != m.Info["mse"] {
		t.Error("the same seed gives a different kernel")
	}

	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := model.Load(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if back.Kind != model.KindKernel || back.Kernel.At(0, 1) != m.Kernel.At(0, 1) {
		t.Error("kernel differs after a file round trip")
	}
}

func TestMEGErrors(t *testing.T) {
	ok := []psdlearn.Distance{{A: 0, B: 1, Y: 0.5}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		est  psdlearn.MEG
		n    int
		ds   []psdlearn.Distance
		want error
	}{
		{"one object", psdlearn.MEG{}, 1, ok, psdlearn.ErrInvalid},
		{"no examples", psdlearn.MEG{}, 3, nil, psdlearn.ErrInvalid},
		{"index out of range", psdlearn.MEG{}, 3, []psdlearn.Distance{{A: 0, B: 3, Y: 0.5}}, psdlearn.ErrInvalid},
		{"negative index", psdlearn.MEG{}, 3, []psdlearn.Distance{{A: -1, B: 2, Y: 0.5}}, psdlearn.ErrInvalid},
		{"self pair", psdlearn.MEG{}, 3, []psdlearn.Distance{{A: 2, B: 2, Y: 0}}, psdlearn.ErrInvalid},
		{"NaN distance", psdlearn.MEG{}, 3, []psdlearn.Distance{{A: 0, B: 1, Y: math.NaN()}}, psdlearn.ErrInvalid},
		{"distance beyond 2·Trace", psdlearn.MEG{}, 3, []psdlearn.Distance{{A: 0, B: 1, Y: 2.5}}, psdlearn.ErrInvalid},
		{"negative trace", psdlearn.MEG{Trace: -1}, 3, ok, psdlearn.ErrInvalid},
		{"infinite eta", psdlearn.MEG{Eta: math.Inf(1)}, 3, ok, psdlearn.ErrInvalid},
		{"negative passes", psdlearn.MEG{Passes: -1}, 3, ok, psdlearn.ErrInvalid},
		{"cancelled", psdlearn.MEG{}, 3, ok, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := context.Background()
			if tc.want == context.Canceled {
				c = ctx
			}
			m, err := tc.est.FitDistances(c, tc.n, tc.ds)
			if !errors.Is(err, tc.want) || m != nil {
				t.Errorf("(%v, %v), want (nil, %v)", m, err, tc.want)
			}
			if tc.want == psdlearn.ErrInvalid && !errors.Is(err, errs.ErrInvalid) {
				t.Errorf("%v does not wrap errs.ErrInvalid", err)
			}
		})
	}
}

// TestDefiniteBoost learns a kernel on 45 iris flowers from 40 must-link
// and 40 cannot-link pairs: converged, every must-linked pair within
// Near·2/n and every cannot-linked pair beyond Far·2/n (up to the relative
// tolerance), trace one, both projections; a low iteration cap is reported
// as such, with a warning.
func TestDefiniteBoost(t *testing.T) {
	iris, err := datasets.Open("iris")
	if err != nil {
		t.Fatal(err)
	}
	idx := meg.StratifiedSample(iris.Y, 45, 2)
	y := make([]int, len(idx))
	for k, i := range idx {
		y[k] = iris.Y[i]
	}
	pairs, err := constraints.BalancedPairs(y, 40, 40, 1)
	if err != nil {
		t.Fatal(err)
	}
	n := float64(pairs.N)
	for _, tc := range []struct {
		name string
		est  psdlearn.DefiniteBoost
	}{
		{"defaults", psdlearn.DefiniteBoost{}},
		{"exact projection", psdlearn.DefiniteBoost{Projection: meg.Exact, Near: 0.1, Far: 1.5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tc.est.FitPairs(context.Background(), pairs)
			if err != nil {
				t.Fatal(err)
			}
			if c := m.Certificate; !c.Converged {
				t.Fatalf("certificate %+v", c)
			}
			near, far, tol := m.Info["near"].(float64), m.Info["far"].(float64), m.Info["tol"].(float64)
			for _, p := range pairs.List {
				d := m.Kernel.SqDistance(p.A, p.B)
				if p.Same && d > near*2/n*(1+tol)+1e-15 {
					t.Errorf("must-link %v at squared distance %.4g > %.4g", p, d, near*2/n)
				}
				if !p.Same && d < far*2/n*(1-tol)-1e-15 {
					t.Errorf("cannot-link %v at squared distance %.4g < %.4g", p, d, far*2/n)
				}
			}
			var tr float64
			for i := 0; i < pairs.N; i++ {
				tr += m.Kernel.At(i, i)
			}
			if math.Abs(tr-1) > 1e-9 {
				t.Errorf("trace %v, want 1", tr)
			}
		})
	}
	m, err := psdlearn.DefiniteBoost{Iters: 3}.FitPairs(context.Background(), pairs)
	if err != nil {
		t.Fatal(err)
	}
	if c := m.Certificate; c.Converged || c.Reason == "" || len(c.Warnings) == 0 || m.Info["iterations"] != 3 {
		t.Errorf("capped at 3 projections: certificate %+v, %v iterations", c, m.Info["iterations"])
	}
}

func TestDefiniteBoostErrors(t *testing.T) {
	ok := &constraints.Pairs{N: 4, List: []constraints.LabelledPair{{A: 0, B: 1, Same: true}, {A: 1, B: 2}}}
	for _, tc := range []struct {
		name  string
		est   psdlearn.DefiniteBoost
		pairs *constraints.Pairs
		want  error
	}{
		{"nil pairs", psdlearn.DefiniteBoost{}, nil, psdlearn.ErrInvalid},
		{"one object", psdlearn.DefiniteBoost{}, &constraints.Pairs{N: 1}, psdlearn.ErrInvalid},
		{"no pairs", psdlearn.DefiniteBoost{}, &constraints.Pairs{N: 4}, psdlearn.ErrInvalid},
		{"pair out of range", psdlearn.DefiniteBoost{}, &constraints.Pairs{N: 4, List: []constraints.LabelledPair{{A: 0, B: 4, Same: true}}}, psdlearn.ErrInvalid},
		{"self pair", psdlearn.DefiniteBoost{}, &constraints.Pairs{N: 4, List: []constraints.LabelledPair{{A: 1, B: 1}}}, psdlearn.ErrInvalid},
		{"Near negative", psdlearn.DefiniteBoost{Near: -0.1}, ok, psdlearn.ErrInvalid},
		{"Far beyond n", psdlearn.DefiniteBoost{Far: 4}, ok, psdlearn.ErrInvalid},
		{"Tol NaN", psdlearn.DefiniteBoost{Tol: math.NaN()}, ok, psdlearn.ErrInvalid},
		{"Iters negative", psdlearn.DefiniteBoost{Iters: -1}, ok, psdlearn.ErrInvalid},
		{"unknown projection", psdlearn.DefiniteBoost{Projection: 7}, ok, psdlearn.ErrInvalid},
		{"cancelled", psdlearn.DefiniteBoost{}, ok, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			if tc.want == context.Canceled {
				cancel()
			}
			defer cancel()
			m, err := tc.est.FitPairs(ctx, tc.pairs)
			if !errors.Is(err, tc.want) || m != nil {
				t.Errorf("(%v, %v), want (nil, %v)", m, err, tc.want)
			}
			if tc.want == psdlearn.ErrInvalid && !errors.Is(err, errs.ErrInvalid) {
				t.Errorf("%v does not wrap errs.ErrInvalid", err)
			}
		})
	}
}
