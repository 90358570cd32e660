package serve

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/psdlearn/psdlearn/data"
	_ "github.com/psdlearn/psdlearn/engine/backends" // FitPipeline's PCA
	"github.com/psdlearn/psdlearn/model"
	"gonum.org/v1/gonum/mat"
)

// clusters returns n rows of d features around `classes` random centres
// (spread 4, noise 1), labelled "0", "1", …, with a per-feature offset
// and scale so that standardisation matters.
func clusters(seed uint64, n, d, classes int) (*mat.Dense, []string) {
	rng := rand.New(rand.NewPCG(seed, 99))
	centres := make([][]float64, classes)
	for c := range centres {
		centres[c] = make([]float64, d)
		for j := range centres[c] {
			centres[c][j] = 4 * rng.NormFloat64()
		}
	}
	x := mat.NewDense(n, d, nil)
	labels := make([]string, n)
	for i := 0; i < n; i++ {
		c := rng.IntN(classes)
		labels[i] = strconv.Itoa(c)
		row := x.RawRowView(i)
		for j := range row {
			row[j] = (centres[c][j]+rng.NormFloat64())*float64(1+j%3) + float64(10*j)
		}
	}
	return x, labels
}

// testModel returns a metric model on d raw features: standardisation,
// PCA to pca dimensions (0: none), fitted on x, and a random PSD metric of
// rank r there.
func testModel(t testing.TB, x *mat.Dense, pca, r int, seed uint64) *model.Model {
	t.Helper()
	p, err := data.FitPipeline(nil, x, true, pca)
	if err != nil {
		t.Fatal(err)
	}
	_, d := x.Dims()
	if pca > 0 {
		d = pca
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	a := mat.NewDense(d, r, nil)
	for i := 0; i < d; i++ {
		for j := 0; j < r; j++ {
			a.Set(i, j, rng.NormFloat64())
		}
	}
	m := mat.NewSymDense(d, nil)
	m.SymOuterK(1/float64(r), a)
	met, err := model.NewMetric(m)
	if err != nil {
		t.Fatal(err)
	}
	return &model.Model{Kind: model.KindMetric, Algo: "test", Metric: met, Preprocess: p}
}

// testIndex builds a model and an index of n reference rows of d features
// in `classes` classes, and returns them with the reference set and q query
// rows.
func testIndex(t testing.TB, n, d, pca, r, classes, q int) (*Index, *Reference, *mat.Dense) {
	t.Helper()
	x, labels := clusters(1, n+q, d, classes)
	ref := &Reference{X: mat.DenseCopyOf(x.Slice(0, n, 0, d)), Labels: labels[:n]}
	m := testModel(t, ref.X, pca, r, 2)
	ix, err := NewIndex(context.Background(), m, ref)
	if err != nil {
		t.Fatal(err)
	}
	return ix, ref, mat.DenseCopyOf(x.Slice(n, n+q, 0, d))
}
