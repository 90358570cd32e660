package psdlearn_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/eval"
	"gonum.org/v1/gonum/mat"
)

// TestClusterPairs learns from pairs sampled from iris's labels with a
// fifth held out: the learned kernel's clustering respects more held-out
// pairs than plain k-means, the model's kernel clustered with the run's
// seed gives the reported clustering, and bad input is ErrInvalid.
func TestClusterPairs(t *testing.T) {
	iris, err := datasets.Open("iris")
	if err != nil {
		t.Fatal(err)
	}
	pairs, err := constraints.XingPairs(iris.Y, 0.7, 4)
	if err != nil {
		t.Fatal(err)
	}
	o := psdlearn.ClusterPairsOptions{HoldOut: 0.2, Baseline: true, Seed: 4, Learn: npkl.Options{C: 0.5}, Source: &psdlearn.Source{Name: "builtin:iris", Data: iris}}
	rep, err := psdlearn.ClusterPairs(context.Background(), iris.X, iris.Y, pairs, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("held-out pairs respected %.4f (k-means %.4f), learned from %.4f", rep.Satisfaction, rep.KMeansSatisfaction, rep.TrainSatisfaction)
	if rep.Clusters != 3 || rep.Pairs != pairs.Len() || rep.Used+rep.HeldOut != rep.Pairs || rep.HeldOut != int(math.Round(0.2*float64(pairs.Len()))) {
		t.Errorf("clusters %d, pairs %d = %d used + %d held out", rep.Clusters, rep.Pairs, rep.Used, rep.HeldOut)
	}
	if !(rep.Satisfaction > rep.KMeansSatisfaction) || !(rep.Satisfaction >= 0.9) {
		t.Errorf("held-out satisfaction %v, k-means %v", rep.Satisfaction, rep.KMeansSatisfaction)
	}
	m := rep.Model
	km, err := eval.KernelKMeans(context.Background(), m.Kernel, 3, eval.KMeansOptions{Seed: m.Provenance.Seed})
	if err != nil {
		t.Fatal(err)
	}
	if eval.PairwiseAccuracy(km.Assign, rep.Assign) != 1 || m.Provenance.Data == nil || m.Provenance.Data.Name != "builtin:iris" || len(m.Classes) != 3 {
		t.Errorf("the model's kernel clusters otherwise, or its provenance %+v / classes %v", m.Provenance.Data, m.Classes)
	}
	for name, c := range map[string]struct {
		y []int
		p *constraints.Pairs
		o psdlearn.ClusterPairsOptions
	}{
		"no labels, no clusters": {nil, pairs, psdlearn.ClusterPairsOptions{}},
		"hold out all":           {iris.Y, pairs, psdlearn.ClusterPairsOptions{HoldOut: 0.9999}},
		"pairs elsewhere":        {iris.Y, &constraints.Pairs{N: 10}, psdlearn.ClusterPairsOptions{}},
		"nil pairs":              {iris.Y, nil, psdlearn.ClusterPairsOptions{}},
	} {
		if _, err := psdlearn.ClusterPairs(context.Background(), iris.X, c.y, c.p, c.o); !errors.Is(err, errs.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

// TestMVUModel: the kernel model of an MVU embedding is its Gram matrix
// F·Fᵀ, to rounding relative to its largest entry, with the solve's
// certificate.
func TestMVUModel(t *testing.T) {
	x, _, _ := datasets.SwissRoll(80, 3)
	e := psdlearn.MVU{}
	emb, err := e.Embed(context.Background(), x)
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.Model(emb)
	if err != nil {
		t.Fatal(err)
	}
	var gram mat.SymDense
	gram.SymOuterK(1, emb.Solution.Factor)
	n, _ := x.Dims()
	scale := mat.Norm(&gram, math.Inf(1))
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			if d := math.Abs(m.Kernel.At(i, j) - gram.At(i, j)); d > 1e-10*scale {
				t.Fatalf("K[%d,%d] = %v, F·Fᵀ %v", i, j, m.Kernel.At(i, j), gram.At(i, j))
			}
		}
	}
	if c := m.Certificate; c == nil || c.Converged != emb.Solution.Certified || m.Kind != "kernel" || m.Algo != "mvu" {
		t.Errorf("model %s/%s certificate %+v", m.Kind, m.Algo, c)
	}
	if _, err := e.Model(nil); !errors.Is(err, errs.ErrInvalid) {
		t.Errorf("nil embedding: %v", err)
	}
}

// TestKernelOfMatrix: a random PSD matrix comes back as V diag(λ) Vᵀ with
// λ descending, to rounding.
func TestKernelOfMatrix(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 12
	g := mat.NewDense(n, 5, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < 5; j++ {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	var w mat.SymDense
	w.SymOuterK(1, g)
	k, err := psdlearn.KernelOfMatrix(&w)
	if err != nil {
		t.Fatal(err)
	}
	for c := 1; c < len(k.Lambda); c++ {
		if k.Lambda[c] > k.Lambda[c-1] {
			t.Fatalf("eigenvalues not descending: %v", k.Lambda)
		}
	}
	scale := mat.Norm(&w, math.Inf(1))
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if d := math.Abs(k.At(i, j) - w.At(i, j)); d > 1e-12*scale*n {
				t.Fatalf("K[%d,%d] = %v, want %v", i, j, k.At(i, j), w.At(i, j))
			}
		}
	}
	if _, err := psdlearn.KernelOfMatrix(nil); !errors.Is(err, errs.ErrInvalid) {
		t.Errorf("nil matrix: %v", err)
	}
}
