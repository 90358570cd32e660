package bench

import (
	"runtime"
	"sync"
	"time"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/engine"
	"gonum.org/v1/gonum/blas"
)

// Flop bounds of the phases of a train experiment: each
// phase's dominant dense arithmetic divided by the rate the machine's BLAS
// reaches on that shape on every core, so a phase's seconds over its bound
// say how far it is from what its flops alone would cost.
//
//	preprocess  2·N·D_in² (PCA covariance) + 2·(N + N_val + N_test)·D_in·D (projection), DGEMM
//	triplets    2·N²·D: one blocked N×N distance pass, SGEMM (the screen is single precision)
//	train       2·N·D² per iteration: BoostMetric's weighted Gram; FrobMetric needs a second
//	            GEMM of that size per dual evaluation and at least one evaluation per
//	            iteration, so its bound is 4·N·D² per iteration
//	evaluation  2 metrics × 2·(N_val + N_test)·N·D distances, SGEMM
//
// Sparse work (L_W·X, pair sums, exponentials) has no flop bound here and
// shows up in the ratio.

// gemmRates returns the DGEMM and SGEMM rates (flop/s) of impl on all of
// GOMAXPROCS: one goroutine per core, each multiplying its own operands of
// the phases' shapes (a 164-wide tall-skinny product XᵀY for DGEMM, the
// k-NN screen's 128×512×D panels for SGEMM); the best of three trials.
// The SGEMM rate is 0 when impl has none.
func gemmRates(impl blas.Float64, d int) (dgemm, sgemm float64) {
	p := runtime.GOMAXPROCS(0)
	const rows = 20000
	best := func(flops float64, run func()) float64 {
		var rate float64
		for t := 0; t < 3; t++ {
			t0 := time.Now()
			var wg sync.WaitGroup
			for g := 0; g < p; g++ {
				wg.Add(1)
				go func() { defer wg.Done(); run() }()
			}
			wg.Wait()
			rate = max(rate, float64(p)*flops/time.Since(t0).Seconds())
		}
		return rate
	}
	dgemm = best(2*rows*float64(d*d), func() {
		x := make([]float64, rows*d)
		for i := range x {
			x[i] = float64(i%7) - 3
		}
		out := make([]float64, d*d)
		impl.Dgemm(blas.Trans, blas.NoTrans, d, d, rows, 1, x, d, x, d, 0, out, d)
	})
	s32, ok := impl.(blas.Float32)
	if !ok {
		return dgemm, 0
	}
	const m, n, panels = 128, 512, 40
	sgemm = best(panels*2*m*n*float64(d), func() {
		a := make([]float32, m*d)
		b := make([]float32, n*d)
		for i := range b {
			b[i] = float32(i%5) - 2
		}
		c := make([]float32, m*n)
		for k := 0; k < panels; k++ {
			s32.Sgemm(blas.NoTrans, blas.Trans, m, n, d, 1, a, d, b, d, 0, c, n)
		}
	})
	return dgemm, sgemm
}

// addFlopBounds adds to m, for every phase of rep, "bound_<phase>" (seconds
// at the measured rates) and "ratio_<phase>" (measured seconds over the
// bound), with the rates as "dgemm_gflops" and "sgemm_gflops".
func addFlopBounds(m map[string]float64, rep *psdlearn.Result, b engine.Backend) {
	dgemm, sgemm := gemmRates(b.BLAS(), rep.Dim)
	addFlopBoundsAt(m, rep, dgemm, sgemm)
}

// addFlopBoundsAt is addFlopBounds at the given rates (flop/s; sgemm 0:
// the DGEMM rate), measured beforehand at rep.Dim.
func addFlopBoundsAt(m map[string]float64, rep *psdlearn.Result, dgemm, sgemm float64) {
	if sgemm == 0 {
		sgemm = dgemm
	}
	m["dgemm_gflops"], m["sgemm_gflops"] = dgemm/1e9, sgemm/1e9
	n, nv, nt := float64(rep.NTrain), float64(rep.NVal), float64(rep.NTest)
	din, d := float64(rep.InputDim), float64(rep.Dim)
	perIter := 2.0
	if rep.Algorithm == "frobmetric" {
		perIter = 4
	}
	iters := 0 // every solve's iterations (one per C tried)
	for _, s := range rep.Phases.Solves {
		iters += s.Iterations
	}
	if iters == 0 {
		iters = rep.Iterations
	}
	bounds := map[string]float64{
		"preprocess": (2*n*din*din + 2*(n+nv+nt)*din*d) / dgemm,
		"triplets":   2 * n * n * d / sgemm,
		"train":      float64(iters) * perIter * n * d * d / dgemm,
		"evaluation": 2 * 2 * (nv + nt) * n * d / sgemm,
	}
	seconds := map[string]float64{
		"preprocess": rep.Phases.Preprocess, "triplets": rep.Phases.Triplets,
		"train": rep.Phases.Train, "evaluation": rep.Phases.Evaluation,
	}
	for k, bound := range bounds {
		m["bound_"+k] = bound
		if bound > 0 {
			m["ratio_"+k] = seconds[k] / bound
		}
	}
}
