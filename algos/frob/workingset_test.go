package frob

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/engine/enginetest"
	"github.com/psdlearn/psdlearn/progress"
	"gonum.org/v1/gonum/mat"
)

// TestWorkingSetMatchesWhole solves a problem with a sparse dual (random
// triplets on clustered data) with and without the working set, on every
// backend. Both must be certified by an independently recomputed duality
// gap, the working set must actually have run restricted rounds, and the two
// metrics must agree within what their gaps allow: the primal is 1-strongly
// convex, so a primal point with absolute gap g lies within √(2g) of the
// optimum in Frobenius norm.
func TestWorkingSetMatchesWhole(t *testing.T) {
	x, ts := clusterTriplets(t, 1500, 48, 5, 11)
	const c = 100
	for _, b := range enginetest.Backends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			var res [2]*MetricResult
			for k, mode := range []WorkingSetMode{WorkingSetOff, WorkingSetOn} {
				r, err := Learn(context.Background(), x, ts, MetricOptions{C: c, Backend: b, WorkingSet: mode})
				if err != nil {
					t.Fatal(err)
				}
				if !r.Certified {
					t.Fatalf("mode %d: not certified, rel. gap %g (%s)", mode, r.RelGap, r.Reason)
				}
				if g := checkCertificate(t, x, ts, r, c); g > DefaultGapTol {
					t.Errorf("mode %d: explicit rel. gap %g above %g", mode, g, DefaultGapTol)
				}
				res[k] = r
			}
			whole, ws := res[0], res[1]
			if ws.Rounds < 1 || ws.FullEvaluations >= ws.Evaluations {
				t.Errorf("working set: %d rounds, %d of %d evaluations over all triplets: no restricted solve ran", ws.Rounds, ws.FullEvaluations, ws.Evaluations)
			}
			if whole.Rounds != 0 || whole.FullEvaluations != whole.Evaluations {
				t.Errorf("whole solve: %d rounds, %d of %d full evaluations", whole.Rounds, whole.FullEvaluations, whole.Evaluations)
			}
			var diff mat.Dense
			diff.Sub(whole.M, ws.M)
			dist := mat.Norm(&diff, 2) // Frobenius
			if bound := math.Sqrt(2*whole.Gap) + math.Sqrt(2*ws.Gap); dist > bound {
				t.Errorf("‖M_whole − M_ws‖_F = %.3g, above the strong-convexity bound %.3g", dist, bound)
			}
			nz := 0
			for _, v := range ws.U {
				if v > 0 {
					nz++
				}
			}
			t.Logf("%d triplets, %d with u > 0; whole: %d evaluations; working set: %d rounds, %d evaluations (%d full); ‖ΔM‖_F %.2g",
				ts.Len(), nz, whole.Evaluations, ws.Rounds, ws.Evaluations, ws.FullEvaluations, dist)
		})
	}
}

// TestWorkingSetCancel cancels at the first working-set round and checks
// that the point reached comes back, certified by its true gap, with the
// context's error.
func TestWorkingSetCancel(t *testing.T) {
	x, ts := clusterTriplets(t, 1500, 48, 5, 11)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := Learn(ctx, x, ts, MetricOptions{C: 100, WorkingSet: WorkingSetOn, Progress: func(e progress.Event) {
		if strings.Contains(e.Message, "working set round") {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if res == nil || res.Reason != "cancelled" || res.Certified {
		t.Fatalf("result %+v: want the cancelled iterate", res)
	}
	checkCertificate(t, x, ts, res, 100)
}

// TestWorkingSetMode checks the mode's validation and the automatic choice.
func TestWorkingSetMode(t *testing.T) {
	x, ts := clusterTriplets(t, 300, 4, 3, 5)
	if _, err := Learn(context.Background(), x, ts, MetricOptions{C: 1, WorkingSet: WorkingSetMode(9)}); !errors.Is(err, ErrInput) {
		t.Errorf("unknown mode: error %v, want ErrInput", err)
	}
	// 2,700 triplets are below WorkingSetMinTriplets: Auto solves them whole.
	res, err := Learn(context.Background(), x, ts, MetricOptions{C: 10})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rounds != 0 || res.FullEvaluations != res.Evaluations {
		t.Errorf("auto on %d triplets: %d rounds, %d of %d full evaluations", ts.Len(), res.Rounds, res.FullEvaluations, res.Evaluations)
	}
}

func TestParseWorkingSet(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want WorkingSetMode
		ok   bool
	}{{"", WorkingSetAuto, true}, {"auto", WorkingSetAuto, true}, {"on", WorkingSetOn, true}, {"off", WorkingSetOff, true}, {"yes", 0, false}} {
		got, err := ParseWorkingSet(tc.in)
		if tc.ok && (err != nil || got != tc.want) {
			t.Errorf("%q: %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if !tc.ok && !errors.Is(err, ErrInput) {
			t.Errorf("%q: error %v, want ErrInput", tc.in, err)
		}
	}
}
