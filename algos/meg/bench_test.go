package meg

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/psdlearn/psdlearn/engine/enginetest"
)

// BenchmarkLearnerUpdate measures one MEG update (one d×d eigendecomposition)
// in the online kernel experiment, for the paper's d = 52 and for d = 178
// (all of wine).
func BenchmarkLearnerUpdate(b *testing.B) {
	for _, d := range []int{52, 178} {
		u, _ := targetKernel(b, d, 1)
		seq, err := SampleDistances(u, 4096, 0, 1)
		if err != nil {
			b.Fatal(err)
		}
		for _, be := range enginetest.Backends(b) {
			b.Run(fmt.Sprintf("%s/d=%d", be.Name(), d), func(b *testing.B) {
				l, err := NewLearner(d, LearnerOptions{R: 1, C: math.Inf(1), Backend: be})
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					x, y := seq.At(i % seq.Len())
					if _, err := l.Update(x, y); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkDefiniteBoostWine runs the batch kernel experiment on 60 wine
// objects to convergence with each projection and reports the iterations
// and eigendecompositions.
func BenchmarkDefiniteBoostWine(b *testing.B) {
	cons, _, eps, _ := kernelConstraints(b, 60)
	for _, be := range enginetest.Backends(b) {
		for _, p := range []Projection{Approximate, Exact} {
			b.Run(fmt.Sprintf("%s/%v", be.Name(), p), func(b *testing.B) {
				var res *BoostResult
				for i := 0; i < b.N; i++ {
					var err error
					res, err = DefiniteBoost(context.Background(), cons, BoostOptions{Projection: p, Tol: 1e-6 * eps, Backend: be})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(res.Iterations), "iterations")
				b.ReportMetric(float64(res.Eigs), "eigs")
			})
		}
	}
}
