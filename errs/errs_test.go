package errs_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/algos/frob"
	"github.com/psdlearn/psdlearn/algos/meg"
	"github.com/psdlearn/psdlearn/algos/mvu"
	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/algos/sdp"
	"github.com/psdlearn/psdlearn/arpack"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/lapack"
	"github.com/psdlearn/psdlearn/lbfgsb"
	"github.com/psdlearn/psdlearn/limits"
	"github.com/psdlearn/psdlearn/lp"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// TestSentinelsMatchTheirCondition checks that every package's sentinel
// matches the one condition it belongs to, and no other.
func TestSentinelsMatchTheirCondition(t *testing.T) {
	conditions := []error{errs.ErrInvalid, errs.ErrDimension, errs.ErrNotConverged, errs.ErrResource}
	for _, tc := range []struct {
		name string
		err  error
		want []error
	}{
		{"psdlearn.ErrInvalid", psdlearn.ErrInvalid, []error{errs.ErrInvalid}},
		{"boost.ErrInvalid", boost.ErrInvalid, []error{errs.ErrInvalid}},
		{"frob.ErrInput", frob.ErrInput, []error{errs.ErrInvalid}},
		{"sdp.ErrInput", sdp.ErrInput, []error{errs.ErrInvalid}},
		{"mvu.ErrInput", mvu.ErrInput, []error{errs.ErrInvalid}},
		{"meg.ErrInvalid", meg.ErrInvalid, []error{errs.ErrInvalid}},
		{"meg.ErrInfeasible", meg.ErrInfeasible, []error{errs.ErrInvalid}},
		{"npkl.ErrInvalidConstraint", npkl.ErrInvalidConstraint, []error{errs.ErrInvalid}},
		{"npkl.ErrNoPositiveSpectrum", npkl.ErrNoPositiveSpectrum, []error{errs.ErrInvalid}},
		{"constraints.ErrInvalid", constraints.ErrInvalid, []error{errs.ErrInvalid}},
		{"data.ErrFormat", data.ErrFormat, []error{errs.ErrInvalid}},
		{"data.ErrNoSpread", data.ErrNoSpread, []error{errs.ErrInvalid}},
		{"data.ErrScale", data.ErrScale, []error{errs.ErrInvalid}},
		{"data.ErrLimit", data.ErrLimit, []error{errs.ErrResource}},
		{"eval.ErrInvalid", eval.ErrInvalid, []error{errs.ErrInvalid}},
		{"model.ErrInvalid", model.ErrInvalid, []error{errs.ErrInvalid}},
		{"model.ErrDimension", model.ErrDimension, []error{errs.ErrDimension, errs.ErrInvalid}},
		{"engine.ErrDimension", engine.ErrDimension, []error{errs.ErrDimension, errs.ErrInvalid}},
		{"engine.ErrNotFinite", engine.ErrNotFinite, []error{errs.ErrInvalid}},
		{"engine.ErrDistanceOverflow", engine.ErrDistanceOverflow, []error{errs.ErrInvalid}},
		{"sparse.ErrInvalidGraph", sparse.ErrInvalidGraph, []error{errs.ErrInvalid}},
		{"sparse.ErrInvalidMatrix", sparse.ErrInvalidMatrix, []error{errs.ErrInvalid}},
		{"sparse.ErrNotSymmetric", sparse.ErrNotSymmetric, []error{errs.ErrInvalid}},
		{"limits.ErrMemory", limits.ErrMemory, []error{errs.ErrResource}},
		{"lapack.ErrInvalidArgument", lapack.ErrInvalidArgument, []error{errs.ErrInvalid}},
		{"lapack.ErrNotFinite", lapack.ErrNotFinite, []error{errs.ErrInvalid}},
		{"arpack.ErrInvalidArgument", arpack.ErrInvalidArgument, []error{errs.ErrInvalid}},
		{"arpack.ErrNotFinite", arpack.ErrNotFinite, []error{errs.ErrInvalid}},
		{"arpack.NotConvergedError", &arpack.NotConvergedError{Requested: 2}, []error{errs.ErrNotConverged}},
		{"lbfgsb.ErrInvalidArgument", lbfgsb.ErrInvalidArgument, []error{errs.ErrInvalid}},
		{"lbfgsb.NotConvergedError", &lbfgsb.NotConvergedError{}, []error{errs.ErrNotConverged}},
		{"lp.ErrInvalidArgument", lp.ErrInvalidArgument, []error{errs.ErrInvalid}},
		{"lp.ErrTooLarge", lp.ErrTooLarge, []error{errs.ErrResource}},
		{"lp.ErrNotSolved", lp.ErrNotSolved, []error{errs.ErrNotConverged}},
		{"mpi.ErrInvalidArgument", mpi.ErrInvalidArgument, []error{errs.ErrInvalid}},
		{"mpi.ErrClosed", mpi.ErrClosed, nil},
		{"mpi.ErrNoMPISupport", mpi.ErrNoMPISupport, nil},
	} {
		for _, c := range conditions {
			want := false
			for _, w := range tc.want {
				want = want || w == c
			}
			if got := errors.Is(tc.err, c); got != want {
				t.Errorf("errors.Is(%s, %v) = %v, want %v", tc.name, c, got, want)
			}
		}
	}
}

// TestErrorsFromRealCalls checks the conditions on errors the packages
// actually return, wrapped as they are.
func TestErrorsFromRealCalls(t *testing.T) {
	x := mat.NewDense(4, 2, []float64{0, 0, 1, 0, 5, 5, 6, 5})
	y := []int{0, 0, 1, 1}
	ts, err := constraints.Triplets(x, y, 1)
	if err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"BoostMetric on nil data", func() error { _, err := boost.BoostMetric(context.Background(), nil, ts, boost.Options{}); return err }(), errs.ErrInvalid},
		{"Learn with C < 0", func() error { _, err := frob.Learn(context.Background(), x, ts, frob.MetricOptions{C: -1}); return err }(), errs.ErrInvalid},
		{"triplets with one class", func() error { _, err := constraints.Triplets(x, []int{0, 0, 0, 0}, 1); return err }(), errs.ErrInvalid},
		{"a non-PSD metric", func() error { _, err := model.NewMetric(mat.NewSymDense(2, []float64{-1, 0, 0, 1})); return err }(), errs.ErrInvalid},
		{"k-NN with mismatched labels", func() error { _, err := eval.KNNError(nil, x, y[:2], x, y, 1); return err }(), errs.ErrInvalid},
		{"Fit with bad C", func() error {
			_, err := psdlearn.FrobMetric{C: []float64{-1}}.Fit(context.Background(), x, y)
			return err
		}(), errs.ErrInvalid},
		{"Learn cancelled", func() error { _, err := frob.Learn(cancelled, x, ts, frob.MetricOptions{C: 1}); return err }(), context.Canceled},
	} {
		if tc.err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v does not match %v", tc.name, tc.err, tc.want)
		}
	}
}

// TestOption checks that Option keeps the message and the conditions of
// the error it marks and adds errs.ErrOption, which is an errs.ErrInvalid.
func TestOption(t *testing.T) {
	own := errs.New("frob: invalid input", errs.ErrInvalid)
	base := fmt.Errorf("%w: C = -1", own)
	err := errs.Option(base)
	if err.Error() != base.Error() || !errors.Is(err, own) || !errors.Is(err, errs.ErrOption) || !errors.Is(err, errs.ErrInvalid) || errors.Is(err, errs.ErrResource) {
		t.Errorf("errs.Option(%v): message %q, conditions wrong", base, err)
	}
	if errors.Is(base, errs.ErrOption) {
		t.Error("the unmarked error matches errs.ErrOption")
	}
	if errs.Option(nil) != nil {
		t.Error("errs.Option(nil) is not nil")
	}
}
