package frob

import (
	"context"
	"math"
	"testing"

	"github.com/psdlearn/psdlearn/engine/enginetest"
	"gonum.org/v1/gonum/mat"
)

// TestSingleLooseSolve checks the single-precision evaluations of a loose
// solve: they run (Phases.Grams32), the certificate is that of an exact
// double evaluation (checkCertificate recomputes it), as is a tight
// solve's whose working-set rounds evaluated in single precision, and the
// metric is
// where a tight double solve puts it, within the distance both gaps allow
// (the primal is 1-strongly convex: ‖X − X*‖_F ≤ √(2·gap)).
func TestSingleLooseSolve(t *testing.T) {
	defer func(v float64) { singleMinFlops = v }(singleMinFlops)
	singleMinFlops = 0
	x, ts := clusterTriplets(t, 400, 12, 4, 3)
	for _, b := range enginetest.Backends(t) {
		for _, ws := range []struct {
			name string
			mode WorkingSetMode
		}{{"whole", WorkingSetOff}, {"working-set", WorkingSetOn}} {
			t.Run(b.Name()+"/"+ws.name, func(t *testing.T) {
				const c = 10
				loose, err := Learn(context.Background(), x, ts, MetricOptions{C: c, GapTol: 1e-3, Backend: b, WorkingSet: ws.mode})
				if err != nil {
					t.Fatal(err)
				}
				if loose.Phases.Grams32 == 0 {
					t.Fatalf("no single-precision Gram in a loose solve (%d Grams)", loose.Phases.Grams)
				}
				if !loose.Certified || loose.RelGap > 1e-3 {
					t.Fatalf("loose solve not certified: rel. gap %g (%s)", loose.RelGap, loose.Reason)
				}
				checkCertificate(t, x, ts, loose, c)
				tight, err := Learn(context.Background(), x, ts, MetricOptions{C: c, GapTol: 1e-9, Backend: b, WorkingSet: ws.mode})
				if err != nil {
					t.Fatal(err)
				}
				// A tight solve may take single-precision Grams in the loose
				// early rounds of a working set; its certificate is exact.
				if !tight.Certified {
					t.Fatalf("tight solve not certified: rel. gap %g (%s)", tight.RelGap, tight.Reason)
				}
				checkCertificate(t, x, ts, tight, c)
				// Distances in the units Learn solves in (x/s): M·s².
				s2 := loose.DataScale * loose.DataScale
				var diff mat.Dense
				diff.Sub(loose.M, tight.M)
				dist := mat.Norm(&diff, 2) * s2
				abs := func(r *MetricResult) float64 { return r.RelGap * math.Max(1, math.Abs(r.Primal)) }
				if bound := math.Sqrt(2*abs(loose)) + math.Sqrt(2*abs(tight)) + 1e-9; dist > bound {
					t.Errorf("‖M_loose − M_tight‖_F = %g above the certificates' bound %g", dist, bound)
				}
			})
		}
	}
}

// TestSinglePhase checks that a working-set phase (a bounded run over all
// the triplets that only seeds the next working set) evaluates in single
// precision whatever its target, that its certificate is nevertheless
// an exact double evaluation's, and that the same run outside a phase
// stays in double.
func TestSinglePhase(t *testing.T) {
	defer func(v float64) { singleMinFlops = v }(singleMinFlops)
	singleMinFlops = 0
	x, ts := clusterTriplets(t, 400, 12, 4, 3)
	for _, b := range enginetest.Backends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			const c = 10
			for _, phase := range []bool{true, false} {
				opt := MetricOptions{C: c, GapTol: 1e-9, MaxIter: 25, Restarts: -1, NewtonSteps: -1,
					WorkingSet: WorkingSetOff, Backend: b, phase: phase}
				res, err := Learn(context.Background(), x, ts, opt)
				if err != nil {
					t.Fatal(err)
				}
				if single := res.Phases.Grams32 > 0; single != phase {
					t.Fatalf("phase %v: %d of %d Grams in single precision", phase, res.Phases.Grams32, res.Phases.Grams)
				}
				checkCertificate(t, x, ts, res, c)
			}
		})
	}
}
