package distributed_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/psdlearn/psdlearn/algos/mvu"
	"github.com/psdlearn/psdlearn/algos/sdp"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/distributed"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/parpack"
)

// TestEigsMVUFake runs MVU (a 120-point Swiss roll, inequality form,
// certified to a relative gap of 1e-3 and a violation of 1e-2) with its
// negative parts computed by distributed.Eigs over 1, 2 and 3 fake ranks with
// parpack.Go, against one process on the go backend with shift-and-invert
// off (the same Lanczos): each rank computes only its rows of every
// product, each row with the one-process arithmetic in the same order, so
// the embedding and the certificate come out the same to the last bit (a
// design property of parpack.Go, which replicates the Lanczos recurrence
// and distributes only the product). The same holds with shift-and-invert
// on 2 ranks (each rank solves the whole system and keeps its rows).
func TestEigsMVUFake(t *testing.T) {
	x, _, _ := datasets.SwissRoll(120, 5)
	b, err := engine.Get("go")
	if err != nil {
		t.Fatal(err)
	}
	base := mvu.Options{K: 6, SDP: sdp.Options{Method: sdp.Sparse, GapTol: 1e-3, FeasTol: 1e-2, MaxIter: 3000, Backend: b, Seed: 7, NoShiftInvert: true}}
	want, err := mvu.Embed(context.Background(), x, base)
	if err != nil {
		t.Fatal(err)
	}
	if !want.Solution.Certified {
		t.Fatalf("one process: not certified (%s)", want.Solution.Reason)
	}
	// Shift-and-invert: every rank solves the whole system and keeps its
	// rows; the one-process run for it.
	siOpt := base
	siOpt.SDP.NoShiftInvert = false
	wantSI, err := mvu.Embed(context.Background(), x, siOpt)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p  int
		si bool
	}{{1, false}, {2, false}, {3, false}, {2, true}} {
		p := tc.p
		want, base := want, base
		if tc.si {
			want, base = wantSI, siOpt
		}
		t.Run(fmt.Sprintf("P=%d/shift-invert=%v", p, tc.si), func(t *testing.T) {
			errs := runRanks(p, func(c mpi.Comm) error {
				eigs, err := distributed.Eigs(c, rowCounts(120, p), parpack.Go)
				if err != nil {
					return err
				}
				opt := base
				opt.SDP.Eigs = eigs
				got, err := mvu.Embed(context.Background(), x, opt)
				if err != nil {
					return err
				}
				gs, ws := got.Solution, want.Solution
				if gs.Dual != ws.Dual || gs.Primal != ws.Primal || gs.MaxViolation != ws.MaxViolation || gs.Certified != ws.Certified {
					return fmt.Errorf("rank %d: dual %.17g primal %.17g violation %.3g certified %v, %d iterations %d evaluations %d products; one process %.17g %.17g %.3g %v, %d %d %d",
						c.Rank(), gs.Dual, gs.Primal, gs.MaxViolation, gs.Certified, got.Iterations, got.Evaluations, got.OperatorProducts,
						ws.Dual, ws.Primal, ws.MaxViolation, ws.Certified, want.Iterations, want.Evaluations, want.OperatorProducts)
				}
				var worst float64
				for i := 0; i < 120; i++ {
					for j := 0; j < 2; j++ {
						worst = math.Max(worst, math.Abs(got.Coords.At(i, j)-want.Coords.At(i, j)))
					}
				}
				if worst != 0 {
					return fmt.Errorf("rank %d: embedding differs by %.3g", c.Rank(), worst)
				}
				return nil
			})
			for r, err := range errs {
				if err != nil {
					t.Errorf("rank %d: %v", r, err)
				}
			}
		})
	}
}

// TestEigsErrors checks distributed.Eigs's argument errors.
func TestEigsErrors(t *testing.T) {
	errs := runRanks(2, func(c mpi.Comm) error {
		if _, err := distributed.Eigs(nil, []int{1, 1}, nil); err == nil {
			return fmt.Errorf("nil communicator: no error")
		}
		if _, err := distributed.Eigs(c, []int{2}, nil); err == nil {
			return fmt.Errorf("one count for two ranks: no error")
		}
		eigs, err := distributed.Eigs(c, []int{5, 5}, parpack.Go)
		if err != nil {
			return err
		}
		if _, err := eigs.Eigs(context.Background(), nil, 2, engine.LargestAlgebraic, engine.EigsOptions{}); err == nil {
			return fmt.Errorf("nil operator: no error")
		}
		return nil
	})
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}
