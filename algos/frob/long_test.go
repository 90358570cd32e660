package frob

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/engine/enginetest"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/progress"
	"github.com/psdlearn/psdlearn/train"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	_ "github.com/psdlearn/psdlearn/algos/boost" // the boostmetric trainer, for comparison
	_ "github.com/psdlearn/psdlearn/algos/itml"  // the baselines
	_ "github.com/psdlearn/psdlearn/algos/lmnn"
)

// The experiments of the paper's Table 1 take minutes: they run only with
// PSDLEARN_LONG=1 (go test -run Long -timeout 2h ./algos/frob).
func longOnly(t *testing.T) {
	if os.Getenv("PSDLEARN_LONG") == "" {
		t.Skip("set PSDLEARN_LONG=1 to run")
	}
}

// factorOf returns L with M = L Lᵀ (positive eigenpairs).
func factorOf(t testing.TB, m *mat.SymDense) *mat.Dense {
	var es mat.EigenSym
	if !es.Factorize(m, true) {
		t.Fatal("eigendecomposition failed")
	}
	var v mat.Dense
	es.VectorsTo(&v)
	vals := es.Values(nil)
	n := len(vals)
	l := mat.NewDense(n, n, nil)
	for j, lam := range vals {
		if lam > 0 {
			for i := 0; i < n; i++ {
				l.Set(i, j, v.At(i, j)*math.Sqrt(lam))
			}
		}
	}
	return l
}

// protocol is one train/validation/test split prepared as in DESIGN.md §4.
type protocol struct {
	train, val, test *data.Dataset
	ts               *constraints.TripletSet
}

func prepare(t testing.TB, parts []*data.Dataset) protocol {
	ps := standardize(t, parts[0], parts[1], parts[2])
	return protocol{ps[0], ps[1], ps[2], tripletsOf(t, ps[0].X, ps[0].Y, 3)}
}

// runTrainer trains algo on p and returns the 3-NN test error and the output.
func runTrainer(t testing.TB, algo string, p protocol, b engine.Backend, opts train.Options) (float64, train.Output) {
	tr, err := train.Lookup(algo)
	if err != nil {
		t.Fatal(err)
	}
	out, err := tr(context.Background(), train.Input{Train: p.train, Val: p.val, Triplets: p.ts, K: 3, Backend: b, Options: opts})
	if err != nil {
		t.Fatalf("%s: %v", algo, err)
	}
	e, err := eval.FactorKNNError(b, factorOf(t, out.M), p.train.X, p.train.Y, p.test.X, p.test.Y, 3)
	if err != nil {
		t.Fatal(err)
	}
	return e, out
}

// TestLongLetters is the letters experiment: fixed split (first 10,500 rows
// train, next 4,500 validation, last 5,000 test), standardised, k = 3
// triplets, C chosen on the validation rows among DefaultCs.
func TestLongLetters(t *testing.T) {
	longOnly(t)
	parts, err := data.SplitRows(loadSet(t, "letters"), []int{10500, 4500, 5000})
	if err != nil {
		t.Fatal(err)
	}
	p := prepare(t, parts)
	b := engine.Default()
	eu, err := eval.KNNError(b, p.train.X, p.train.Y, p.test.X, p.test.Y, 3)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	te, out := runTrainer(t, "frobmetric", p, b, train.Options{})
	t.Logf("letters (%s backend, %d triplets): Euclidean 3-NN test error %.2f%%; FrobMetric C=%g (validation %.2f%%): test %.2f%%, rel. duality gap %.3g, %v for %d C values",
		b.Name(), p.ts.Len(), 100*eu, out.ChosenC, 100*out.ValError, 100*te, out.DualityGap, time.Since(start).Round(time.Second), len(DefaultCs))
	if te > 0.0284 {
		t.Errorf("test error %.2f%%, want ≤ 2.84%%", 100*te)
	}
	if !(out.DualityGap <= 1e-6) {
		t.Errorf("relative duality gap %.3g", out.DualityGap)
	}
}

// TestLongSmallSets is the UCI part of Table 1: 10 seeded 70/15/15 splits
// of each set, standardised, 3-NN test error mean (sd) of Euclidean,
// BoostMetric (its trainer's defaults) and FrobMetric (C chosen on the
// validation rows). It reports; it asserts only the duality gaps.
func TestLongSmallSets(t *testing.T) {
	longOnly(t)
	smallSets(t, prepare)
}

// TestLongSmallSetsRaw is TestLongSmallSets on the raw features (the
// papers' protocol: no standardisation), C chosen by the default policy.
func TestLongSmallSetsRaw(t *testing.T) {
	longOnly(t)
	smallSets(t, func(t testing.TB, parts []*data.Dataset) protocol {
		return protocol{parts[0], parts[1], parts[2], tripletsOf(t, parts[0].X, parts[0].Y, 3)}
	})
}

// TestLongRawWine is the acceptance figure of FrobMetric's default C
// policy on the papers' protocol: the raw wine features, 10 seeded 70/15/15
// splits (as psdlearn train --algo frobmetric --data builtin:wine --split
// 0.7,0.15,0.15 --seed S), mean 3-NN test error at most 5.3% — the paper's
// 3.85% plus one standard error of its 10 runs (4.44/√10). The fixed list
// {0.1, 1, 10, 100} gave 26.7% here.
func TestLongRawWine(t *testing.T) {
	longOnly(t)
	d := loadSet(t, "wine")
	var errs []float64
	for seed := uint64(1); seed <= 10; seed++ {
		parts, err := data.Split(d, []float64{0.7, 0.15, 0.15}, seed)
		if err != nil {
			t.Fatal(err)
		}
		r, err := train.RunExperiment(context.Background(), train.Experiment{Algo: "frobmetric", Train: parts[0], Val: parts[1], Test: parts[2], Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if !r.Converged || len(r.Warnings) > 0 {
			t.Errorf("seed %d: converged %v, warnings %q", seed, r.Converged, r.Warnings)
		}
		errs = append(errs, 100*r.TestError)
	}
	m, s := stat.MeanStdDev(errs, nil)
	t.Logf("raw wine, FrobMetric with the default C policy: %.2f (%.2f) over 10 splits: %v", m, s, errs)
	if m > 5.3 {
		t.Errorf("mean test error %.2f%%, want ≤ 5.3%%", m)
	}
}

// smallSets runs the UCI part of the papers' Table 1 with the split
// prepared by prep and logs the table.
func smallSets(t *testing.T, prep func(testing.TB, []*data.Dataset) protocol) {
	b := engine.Default()
	var table strings.Builder
	fmt.Fprintf(&table, "\n%-11s %-16s %-16s %-16s %-16s %-16s %s\n", "set", "Euclidean", "BoostMetric", "FrobMetric", "LMNN", "ITML", "FrobMetric C chosen")
	for _, name := range []string{"iris", "wine", "glass", "vowel", "vehicle", "sonar", "ionosphere"} {
		d := loadSet(t, name)
		var eu, bm, fm, lm, it []float64
		var chosen []string
		for seed := uint64(1); seed <= 10; seed++ {
			parts, err := data.Split(d, []float64{0.7, 0.15, 0.15}, seed)
			if err != nil {
				t.Fatal(err)
			}
			p := prep(t, parts)
			e, err := eval.KNNError(b, p.train.X, p.train.Y, p.test.X, p.test.Y, 3)
			if err != nil {
				t.Fatal(err)
			}
			eu = append(eu, 100*e)
			e, _ = runTrainer(t, "boostmetric", p, b, train.Options{})
			bm = append(bm, 100*e)
			e, out := runTrainer(t, "frobmetric", p, b, train.Options{})
			fm = append(fm, 100*e)
			chosen = append(chosen, fmt.Sprint(out.ChosenC))
			e, _ = runTrainer(t, "lmnn", p, b, train.Options{})
			lm = append(lm, 100*e)
			e, _ = runTrainer(t, "itml", p, b, train.Options{})
			it = append(it, 100*e)
			if !(out.DualityGap <= 1e-6) {
				t.Errorf("%s seed %d: relative duality gap %.3g", name, seed, out.DualityGap)
			}
		}
		ms := func(v []float64) string {
			m, s := stat.MeanStdDev(v, nil)
			return fmt.Sprintf("%5.2f (%5.2f)", m, s)
		}
		fmt.Fprintf(&table, "%-11s %-16s %-16s %-16s %-16s %-16s %s\n", name, ms(eu), ms(bm), ms(fm), ms(lm), ms(it), strings.Join(chosen, ","))
	}
	t.Log(table.String())
}

// peakRSSMB is the peak resident set size of the process in MiB.
func peakRSSMB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	if runtime.GOOS == "darwin" {
		return float64(ru.Maxrss) / (1 << 20)
	}
	return float64(ru.Maxrss) / (1 << 10)
}

// BenchmarkLettersOneC times FrobMetric end to end (triplets and solve) on
// the standardised letters training rows for one C, per backend.
func BenchmarkLettersOneC(b *testing.B) {
	parts, err := data.SplitRows(loadSet(b, "letters"), []int{10500, 4500, 5000})
	if err != nil {
		b.Fatal(err)
	}
	trn := standardize(b, parts[0])[0]
	for _, be := range enginetest.Backends(b) {
		b.Run(be.Name(), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				ts, err := constraints.TripletsBLAS(be.BLAS(), trn.X, trn.Y, 3)
				if err != nil {
					b.Fatal(err)
				}
				res, err := Learn(context.Background(), trn.X, ts, MetricOptions{C: 100, Backend: be})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(res.Iterations), "iters")
				b.ReportMetric(res.RelGap, "relgap")
			}
		})
	}
}

// mnistSized returns synthetic data of MNIST's size after PCA (N = 50,000,
// D = 164, 10 classes: Gaussian clusters around random centres with an
// anisotropic spectrum) and 450,000 triplets: for every point 3 random
// same-class targets × 3 random other-class impostors. (Exact kNN triplets
// on 50,000 points would cost far more than the solve itself.)
func mnistSized(tb testing.TB) (*mat.Dense, *constraints.TripletSet) {
	return clusterTriplets(tb, 50000, 164, 10, 2024)
}

// BenchmarkMNISTSized solves FrobMetric on the synthetic MNIST-sized problem
// (one C) and reports iterations, the relative duality gap and the peak RSS.
func BenchmarkMNISTSized(b *testing.B) {
	x, ts := mnistSized(b)
	be := engine.Default()
	if name := os.Getenv("PSDLEARN_BACKEND"); name != "" {
		be, _ = engine.Get(name)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// PSDLEARN_MNIST_ITERS=N stops after N L-BFGS-B iterations (for
		// profiles); unset, the solve runs to the duality gap.
		maxIter, _ := strconv.Atoi(os.Getenv("PSDLEARN_MNIST_ITERS"))
		steps := 0
		if maxIter > 0 {
			steps = -1
		}
		// PSDLEARN_WORKINGSET=off solves over all triplets at once.
		ws := WorkingSetAuto
		if os.Getenv("PSDLEARN_WORKINGSET") == "off" {
			ws = WorkingSetOff
		}
		// PSDLEARN_MNIST_GAPTOL overrides the gap tolerance.
		gapTol, _ := strconv.ParseFloat(os.Getenv("PSDLEARN_MNIST_GAPTOL"), 64)
		res, err := Learn(context.Background(), x, ts, MetricOptions{C: 100, Backend: be, MaxIter: maxIter, NewtonSteps: steps, WorkingSet: ws, GapTol: gapTol, Progress: func(e progress.Event) {
			if os.Getenv("V") != "" {
				b.Log(e.Message)
			}
		}})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Iterations), "iters")
		b.ReportMetric(float64(res.Evaluations), "evals")
		b.ReportMetric(float64(res.FullEvaluations), "fullevals")
		b.ReportMetric(float64(res.Rounds), "rounds")
		b.ReportMetric(res.RelGap, "relgap")
		b.ReportMetric(res.Gap/math.Abs(res.Primal), "gap/primal") // RelGap divides by max(1, |primal|)
	}
	b.ReportMetric(peakRSSMB(), "peakRSS-MB")
}
