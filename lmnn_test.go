package psdlearn_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/eval"
	"gonum.org/v1/gonum/mat"
)

// TestLMNN fits the estimator on wine's training rows: a converged model
// with μ recorded, a file round trip that reproduces Transform bit for bit,
// and a 3-NN test error (raw rows through the model) no worse than
// Euclidean's on the standardised rows.
func TestLMNN(t *testing.T) {
	wine, err := datasets.Open("wine")
	if err != nil {
		t.Fatal(err)
	}
	parts, err := data.Split(wine, []float64{0.7, 0.3}, 3)
	if err != nil {
		t.Fatal(err)
	}
	tr, te := parts[0], parts[1]
	for _, tc := range []struct {
		name   string
		est    psdlearn.LMNN
		wantMu float64
	}{
		{"defaults", psdlearn.LMNN{Common: psdlearn.Common{Standardize: true}}, 0.5},
		{"mu 0.3", psdlearn.LMNN{Common: psdlearn.Common{Standardize: true}, Mu: 0.3}, 0.3},
		{"K 2, 200 iterations", psdlearn.LMNN{Common: psdlearn.Common{Standardize: true, K: 2}, Iters: 200}, 0.5},
		{"rank 3", psdlearn.LMNN{Common: psdlearn.Common{Standardize: true}, Rank: 3}, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tc.est.Fit(context.Background(), tr.X, tr.Y)
			if err != nil && !(errors.Is(err, errs.ErrNotConverged) && m != nil && !m.Certificate.Converged) {
				t.Fatal(err)
			}
			if m.Algo != "lmnn" || m.Certificate == nil || m.Certificate.Reason == "" {
				t.Fatalf("model %q, certificate %+v", m.Algo, m.Certificate)
			}
			if !m.Certificate.Converged {
				t.Logf("not converged: %s", m.Certificate.Reason)
			}
			if mu, _ := m.Info["mu"].(float64); mu != tc.wantMu {
				t.Errorf("mu %v, want %v", m.Info["mu"], tc.wantMu)
			}
			if r, _ := m.Info["rank"].(int); r != tc.est.Rank {
				t.Errorf("rank %v, want %v", m.Info["rank"], tc.est.Rank)
			}
			if tc.est.Rank > 0 {
				// M = L Lᵀ with L D×Rank: at most Rank positive eigenvalues.
				var es mat.EigenSym
				if !es.Factorize(m.Metric.M, false) {
					t.Fatal("eigendecomposition failed")
				}
				vals := es.Values(nil)
				top := vals[len(vals)-1]
				for _, v := range vals[:len(vals)-tc.est.Rank] {
					if math.Abs(v) > 1e-12*top {
						t.Errorf("eigenvalues %v: more than %d above rounding", vals, tc.est.Rank)
						break
					}
				}
			}
			got := roundTripKNNError(t, m, tr, te)
			st, err := data.Standardize(tr, te)
			if err != nil {
				t.Fatal(err)
			}
			euc, err := eval.KNNError(nil, st[0].X, tr.Y, st[1].X, te.Y, 3)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("3-NN test error %.4f (Euclidean %.4f)", got, euc)
			if got > euc+1e-12 {
				t.Errorf("LMNN 3-NN error %.4f above Euclidean %.4f", got, euc)
			}
		})
	}
}

// TestLMNNInvalid: bad settings and data are rejected before any work,
// with errors wrapping errs.ErrInvalid; a cancelled context is reported.
func TestLMNNInvalid(t *testing.T) {
	iris, err := datasets.Open("iris")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		est  psdlearn.LMNN
		x    *mat.Dense
		y    []int
	}{
		{"mu above 1", psdlearn.LMNN{Mu: 2}, iris.X, iris.Y},
		{"mu NaN", psdlearn.LMNN{Mu: math.NaN()}, iris.X, iris.Y},
		{"negative iters", psdlearn.LMNN{Iters: -5}, iris.X, iris.Y},
		{"negative rank", psdlearn.LMNN{Rank: -1}, iris.X, iris.Y},
		{"rank above D", psdlearn.LMNN{Rank: 5}, iris.X, iris.Y},
		{"rank above the PCA dimension", psdlearn.LMNN{Common: psdlearn.Common{PCA: 2}, Rank: 3}, iris.X, iris.Y},
		{"negative K", psdlearn.LMNN{Common: psdlearn.Common{K: -1}}, iris.X, iris.Y},
		{"nil data", psdlearn.LMNN{}, nil, iris.Y},
		{"label count", psdlearn.LMNN{}, iris.X, iris.Y[:10]},
		{"single class", psdlearn.LMNN{}, iris.X, make([]int, len(iris.Y))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.est.Fit(context.Background(), tc.x, tc.y); !errors.Is(err, errs.ErrInvalid) {
				t.Errorf("err = %v, want errs.ErrInvalid", err)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (psdlearn.LMNN{}).Fit(ctx, iris.X, iris.Y); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v, want context.Canceled", err)
	}
}

// LMNN on iris: pull every point's three nearest classmates close, push the
// other classes out of a unit margin.
func ExampleLMNN() {
	iris, err := datasets.Open("iris")
	if err != nil {
		panic(err)
	}
	m, err := psdlearn.LMNN{Common: psdlearn.Common{Standardize: true}}.Fit(context.Background(), iris.X, iris.Y)
	if err != nil {
		panic(err)
	}
	z, err := m.Transform(iris.X)
	if err != nil {
		panic(err)
	}
	loo, err := eval.LOOKNNError(nil, z, iris.Y, 3)
	if err != nil {
		panic(err)
	}
	fmt.Println("algorithm:", m.Algo, "converged:", m.Certificate.Converged)
	fmt.Printf("leave-one-out 3-NN error below 5%%: %v\n", loo < 0.05)
	// Output:
	// algorithm: lmnn converged: true
	// leave-one-out 3-NN error below 5%: true
}
