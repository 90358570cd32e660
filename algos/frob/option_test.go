package frob

import (
	"context"
	"errors"
	"testing"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/errs"
	"gonum.org/v1/gonum/mat"
)

// TestCAtTolerance checks that a C at or below the gap tolerance — the
// zero metric's objective is about C, so it would be certified before a
// step — is refused as an invalid option, and that one above it runs.
func TestCAtTolerance(t *testing.T) {
	x := mat.NewDense(4, 2, []float64{0, 0, 1, 0, 0, 1, 1, 1})
	ts, err := constraints.NewTripletSet(4, []constraints.Triplet{{I: 0, J: 1, K: 2}, {I: 3, J: 1, K: 0}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []float64{1e-320, 1e-10, DefaultGapTol} {
		if _, err := Learn(context.Background(), x, ts, MetricOptions{C: c}); !errors.Is(err, errs.ErrOption) {
			t.Errorf("C = %g: %v, want an invalid option", c, err)
		}
	}
	if _, err := Learn(context.Background(), x, ts, MetricOptions{C: 1e-5}); err != nil {
		t.Errorf("C = 1e-5: %v", err)
	}
}
