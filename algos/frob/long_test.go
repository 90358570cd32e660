package frob

import (
	"context"
	"math"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/engine/enginetest"
	"github.com/psdlearn/psdlearn/progress"
	"gonum.org/v1/gonum/mat"
)

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
	if testing.Short() {
		b.Skip("a measurement of full size; run it without -short")
	}
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
	if testing.Short() {
		b.Skip("a measurement of full size; run it without -short")
	}
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
