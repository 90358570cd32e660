package npkl

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/progress"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// The scale runs are long: they run only with PSDLEARN_LONG=1 (tests) or
// -bench (benchmarks). PSDLEARN_BACKEND picks the backend. Defaults: letters
// C = 0.5 and at most 100 eigenpairs; synthetic C = 0.1 and at most 64;
// eigenvalue tolerance 1e-8. NPKL_C, NPKL_MAXRANK, NPKL_EIGTOL and NPKL_ITERS
// override them.

func longOnly(t testing.TB) {
	if os.Getenv("PSDLEARN_LONG") != "1" {
		t.Skip("scale run: set PSDLEARN_LONG=1")
	}
}

// peakRSSMiB is the peak resident set size of the process (Linux: KiB units).
func peakRSSMiB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return float64(ru.Maxrss) / 1024
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func envFloat(name string, def float64) float64 {
	if v, err := strconv.ParseFloat(os.Getenv(name), 64); err == nil {
		return v
	}
	return def
}

// scaleRun builds the graph, samples constraints by the paper's protocol,
// learns with both losses, clusters, and logs time, rank and peak memory.
func scaleRun(t *testing.T, name string, x *mat.Dense, y []int, k, iters, maxRank int, c float64) {
	b := engine.Default()
	ctx := context.Background()
	n, d := x.Dims()
	t.Logf("%s: n = %d, d = %d, classes %d, backend %s, k = %d", name, n, d, numClasses(y), b.Name(), k)
	t0 := time.Now()
	lap, err := Laplacian(x, k, sparse.GraphOptions{}, b)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("graph: %.1fs, %d nonzeros, peak RSS %.0f MiB", time.Since(t0).Seconds(), lap.NNZ(), peakRSSMiB())
	cons, err := constraints.XingPairs(y, 0.7, 1)
	if err != nil {
		t.Fatal(err)
	}
	ml, cl := cons.Counts()
	t.Logf("constraints: %d (%d must-link, %d cannot-link), Pataki rank %d", cons.Len(), ml, cl, PatakiRank(cons.Len()))
	for _, loss := range []Loss{Linear, SquaredHinge} {
		opt := Options{Loss: loss, C: envFloat("NPKL_C", c), MaxRank: envInt("NPKL_MAXRANK", maxRank), EigTol: envFloat("NPKL_EIGTOL", 1e-8), Iters: iters, Backend: b, Seed: 1,
			Progress: func(e progress.Event) {
				t.Logf("  %v %s", loss, e.Message)
			}}
		res, err := Learn(ctx, lap, cons, opt)
		if err != nil {
			t.Fatal(err)
		}
		t1 := time.Now()
		km, err := eval.KMeans(ctx, res.Factor(), numClasses(y), eval.KMeansOptions{Restarts: 3, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		acc := eval.PairwiseAccuracy(y, km.Assign)
		t.Logf("%s %v: learn %.1fs (%d iterations, %d eigensolver restarts, %d products), rank %d, covered %v, smallest computed eigenvalue of A %.4g; k-means %.1fs, pairwise accuracy %.4f; peak RSS %.0f MiB",
			name, loss, res.Seconds, res.Iterations, res.EigIterations, res.OpApplies, res.Rank(), res.Covered, res.Spectrum[len(res.Spectrum)-1], time.Since(t1).Seconds(), acc, peakRSSMiB())
	}
	base, err := eval.KMeans(ctx, x, numClasses(y), eval.KMeansOptions{Restarts: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s plain k-means: pairwise accuracy %.4f", name, eval.PairwiseAccuracy(y, base.Assign))
	// No n×n matrix: 8n² bytes would be far above the peak.
	if nn := 8 * float64(n) * float64(n) / (1 << 20); peakRSSMiB() > nn/4 {
		t.Errorf("peak RSS %.0f MiB is not far below an n×n matrix (%.0f MiB)", peakRSSMiB(), nn)
	}
}

// TestScaleLetters: letters (N = 20,000), k = 50 graph, both losses.
func TestScaleLetters(t *testing.T) {
	longOnly(t)
	ds, err := datasets.Open("letters")
	if err != nil {
		t.Fatal(err)
	}
	scaleRun(t, "letters", ds.X, ds.Y, 50, envInt("NPKL_ITERS", 10), 100, 0.5)
}

// synthetic returns n points in d dimensions from c unit-variance Gaussian
// classes with means drawn from N(0, 4I): well separated.
func synthetic(n, d, c int, seed uint64) (*mat.Dense, []int) {
	rng := rand.New(rand.NewPCG(seed, 3))
	mu := make([]float64, c*d)
	for i := range mu {
		mu[i] = 2 * rng.NormFloat64()
	}
	x := mat.NewDense(n, d, nil)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		y[i] = rng.IntN(c)
		row := x.RawRowView(i)
		for j := range row {
			row[j] = mu[y[i]*d+j] + rng.NormFloat64()
		}
	}
	return x, y
}

// TestScaleSynthetic: N = 100,000 synthetic points (5 Gaussian classes in 10
// dimensions), k = 10 graph, both losses.
func TestScaleSynthetic(t *testing.T) {
	longOnly(t)
	x, y := synthetic(envInt("NPKL_N", 100000), 10, 5, 1)
	scaleRun(t, "synthetic", x, y, envInt("NPKL_K", 10), envInt("NPKL_ITERS", 10), 64, 0.1)
}

// BenchmarkLearnLetters times one linear-loss solve on letters (graph and
// constraints built once, outside the timing).
func BenchmarkLearnLetters(b *testing.B) {
	if testing.Short() {
		b.Skip("a measurement of full size; run it without -short")
	}
	ds, err := datasets.Open("letters")
	if err != nil {
		b.Fatal(err)
	}
	lap, err := Laplacian(ds.X, 50, sparse.GraphOptions{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	cons, err := constraints.XingPairs(ds.Y, 0.7, 1)
	if err != nil {
		b.Fatal(err)
	}
	opt := Options{C: 0.5, MaxRank: envInt("NPKL_MAXRANK", 100), EigTol: 1e-8, Seed: 1}
	b.ResetTimer()
	var res *Result
	for i := 0; i < b.N; i++ {
		if res, err = Learn(context.Background(), lap, cons, opt); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(res.Rank()), "rank")
	b.ReportMetric(peakRSSMiB(), "peakRSS_MiB")
}

// BenchmarkLearnIris times one linear-loss and one squared-hinge solve on iris.
func BenchmarkLearnIris(b *testing.B) {
	ds, err := datasets.Open("iris")
	if err != nil {
		b.Fatal(err)
	}
	lap, err := Laplacian(ds.X, 5, sparse.GraphOptions{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	cons, err := constraints.XingPairs(ds.Y, 0.7, 1)
	if err != nil {
		b.Fatal(err)
	}
	for _, loss := range []Loss{Linear, SquaredHinge} {
		b.Run(loss.String(), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := Learn(context.Background(), lap, cons, Options{Loss: loss, C: 0.5, Seed: 1}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
