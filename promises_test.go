package psdlearn_test

import (
	"context"
	"errors"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/errs"
	"gonum.org/v1/gonum/mat"
)

func open(t *testing.T, name string) *data.Dataset {
	t.Helper()
	d, err := datasets.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestZeroValues: the zero value of every estimator fits, with folds or
// with a validation set, and the defaults it applied are the documented
// ones (the C values searched are the learner's default list).
func TestZeroValues(t *testing.T) {
	iris := open(t, "iris")
	parts, err := data.Split(iris, []float64{0.7, 0.3}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		l    psdlearn.Learner
		want []float64
	}{
		{"PSDBoost{}", psdlearn.PSDBoost{}, psdlearn.DefaultPSDBoostC},
		{"PSDBoost{Validation}", psdlearn.PSDBoost{Common: psdlearn.Common{Validation: parts[1]}}, psdlearn.DefaultPSDBoostC},
		{"FrobMetric{}", psdlearn.FrobMetric{}, psdlearn.DefaultFrobMetricC},
		{"ITML{}", psdlearn.ITML{}, psdlearn.DefaultITMLGamma},
		{"LMNN{}", psdlearn.LMNN{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := psdlearn.Run(context.Background(), tc.l, psdlearn.Data{X: parts[0].X, Y: parts[0].Y})
			if err != nil && !errors.Is(err, errs.ErrNotConverged) {
				t.Fatal(err)
			}
			if r == nil || r.Model == nil {
				t.Fatalf("no model: %v", err)
			}
			if !slices.Equal(r.Searched, tc.want) {
				t.Errorf("searched %v, want %v", r.Searched, tc.want)
			}
			if tc.want != nil && (len(r.Scores) != len(tc.want) || !slices.Contains(tc.want, r.ChosenC)) {
				t.Errorf("scores %v, chosen %v", r.Scores, r.ChosenC)
			}
			if err != nil && (r.Certificate.Converged || len(r.Warnings) == 0) {
				t.Errorf("error %v with certificate %+v", err, r.Certificate)
			}
		})
	}
}

// TestFitTripletsHeldOut: several C with given triplets are compared on
// held-out triplets, and the violated fractions differ between C values
// (they were all equal when scored as k-NN against absent labels).
func TestFitTripletsHeldOut(t *testing.T) {
	wine := open(t, "wine")
	st, err := data.FitStandardizer(wine.X)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := st.Apply(wine.X)
	ts, err := constraints.Triplets(x, wine.Y, 3)
	if err != nil {
		t.Fatal(err)
	}
	r, err := psdlearn.Run(context.Background(), psdlearn.FrobMetric{Common: psdlearn.Common{Seed: 2}}, psdlearn.Data{X: wine.X, Triplets: ts})
	if err != nil {
		t.Fatal(err)
	}
	// The default list, extended beyond an edge while the optimum sits there.
	if r.Selection != psdlearn.SelectHeldOut || len(r.Scores) < len(psdlearn.DefaultFrobMetricC) || len(r.Scores) != len(r.Searched) {
		t.Fatalf("selection %v, scores %v", r.Selection, r.Scores)
	}
	distinct := map[float64]bool{}
	for _, s := range r.Scores {
		if !(s.ValError >= 0 && s.ValError <= 1) {
			t.Errorf("C = %g: violated fraction %v", s.C, s.ValError)
		}
		distinct[s.ValError] = true
	}
	if len(distinct) < 2 {
		t.Errorf("every C scores the same: %v", r.Scores)
	}
	wantVal := int(math.Round(psdlearn.DefaultHoldOut * float64(ts.Len())))
	if r.ValTriplets != wantVal || r.Triplets != ts.Len()-wantVal {
		t.Errorf("%d training and %d validation triplets of %d, want %d validation", r.Triplets, r.ValTriplets, ts.Len(), wantVal)
	}
}

// TestDeadlineKeepsBestModel: a 50 ms deadline on a multi-C FrobMetric fit
// of glass returns a model, marked interrupted, with an error matching
// both context.DeadlineExceeded and errs.ErrNotConverged.
func TestDeadlineKeepsBestModel(t *testing.T) {
	glass := open(t, "glass")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	m, err := psdlearn.FrobMetric{Common: psdlearn.Common{Standardize: true}}.Fit(ctx, glass.X, glass.Y)
	if err == nil {
		t.Skip("the whole fit took less than 50 ms: nothing to interrupt")
	}
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, errs.ErrNotConverged) {
		t.Fatalf("error %v: want DeadlineExceeded and ErrNotConverged", err)
	}
	if m == nil || m.Metric == nil || m.Certificate == nil {
		t.Fatalf("no model with the deadline: %v", err)
	}
	if c := m.Certificate; c.Converged || !c.Interrupted || len(c.Warnings) == 0 {
		t.Errorf("certificate %+v: want interrupted, not converged, with a warning", c)
	}
	if _, err := m.Transform(glass.X); err != nil {
		t.Errorf("the interrupted model does not transform: %v", err)
	}
}

// TestIterationCapKeepsModel: an iteration cap returns the model with an
// error matching errs.ErrNotConverged (and no context error).
func TestIterationCapKeepsModel(t *testing.T) {
	wine := open(t, "wine")
	for _, l := range []psdlearn.Learner{
		psdlearn.FrobMetric{Common: psdlearn.Common{Standardize: true}, C: []float64{10}, Iters: 2},
		psdlearn.BoostMetric{Common: psdlearn.Common{Standardize: true}, Iters: 3},
	} {
		r, err := psdlearn.Run(context.Background(), l, psdlearn.Data{X: wine.X, Y: wine.Y})
		if !errors.Is(err, errs.ErrNotConverged) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: error %v, want ErrNotConverged alone", l.Name(), err)
		}
		if r == nil || r.Model == nil || r.Model.Certificate.Converged || r.Model.Certificate.Interrupted || len(r.Warnings) == 0 {
			t.Errorf("%s: result %+v", l.Name(), r)
		}
	}
}

// TestInputErrors: every bad input matches errs.ErrInvalid, names no
// command-line flag and does not repeat the package prefix.
func TestInputErrors(t *testing.T) {
	x := mat.NewDense(6, 2, []float64{0, 0, 1, 0, 0, 1, 5, 5, 6, 5, 5, 6})
	y := []int{0, 0, 0, 1, 1, 1}
	nan := mat.DenseCopyOf(x)
	nan.Set(2, 1, math.NaN())
	ctx := context.Background()
	std := psdlearn.Common{Standardize: true}
	lit := &constraints.TripletSet{N: 6, Triplets: []constraints.Triplet{{I: 0, J: 1, K: 3}}}
	for _, tc := range []struct {
		name string
		l    psdlearn.Learner
		d    psdlearn.Data
	}{
		{"NaN with Standardize", psdlearn.FrobMetric{Common: std}, psdlearn.Data{X: nan, Y: y}},
		{"zero rows with Standardize", psdlearn.FrobMetric{Common: std}, psdlearn.Data{X: &mat.Dense{}, Y: nil}},
		{"PCA above D", psdlearn.FrobMetric{Common: psdlearn.Common{PCA: 3}}, psdlearn.Data{X: x, Y: y}},
		{"negative iterations", psdlearn.BoostMetric{Iters: -5}, psdlearn.Data{X: x, Y: y}},
		{"negative passes", psdlearn.BoostMetric{Passes: -1}, psdlearn.Data{X: x, Y: y}},
		{"one class", psdlearn.FrobMetric{}, psdlearn.Data{X: x, Y: make([]int, 6)}},
		{"triplet set literal", psdlearn.FrobMetric{C: []float64{1}}, psdlearn.Data{X: x, Triplets: lit}},
		{"pairs literal out of range", psdlearn.ITML{}, psdlearn.Data{X: x, Pairs: &constraints.Pairs{N: 6, List: []constraints.LabelledPair{{A: 0, B: 9}}}}},
		{"LMNN on triplets", psdlearn.LMNN{}, psdlearn.Data{X: x, Triplets: mustTriplets(t, x, y)}},
		{"grid on a learner without C", psdlearn.LMNN{Common: psdlearn.Common{Grid: psdlearn.FixedGrid{}}}, psdlearn.Data{X: x, Y: y}},
		{"PSDBoost C below 1", psdlearn.PSDBoost{C: []float64{0.5}}, psdlearn.Data{X: x, Y: y}},
		{"hold-out without constraints", psdlearn.FrobMetric{}, psdlearn.Data{X: x, Y: y, HoldOut: 0.2}},
	} {
		r, err := psdlearn.Run(ctx, tc.l, tc.d)
		if !errors.Is(err, errs.ErrInvalid) || r != nil {
			t.Errorf("%s: %v, want ErrInvalid and no result", tc.name, err)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "--") || strings.Count(msg, "psdlearn:") > 1 {
			t.Errorf("%s: message %q names a flag or repeats a layer", tc.name, msg)
		}
	}
}

func mustTriplets(t *testing.T, x *mat.Dense, y []int) *constraints.TripletSet {
	ts, err := constraints.Triplets(x, y, 1)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// TestLabelsRemapped: labels are values, not indices: a label of
// 100,000,000 fits like label 1 (the same model) without allocating by
// label value.
func TestLabelsRemapped(t *testing.T) {
	iris := open(t, "iris")
	big := make([]int, len(iris.Y))
	for i, c := range iris.Y {
		big[i] = []int{-7, 100_000_000, 42}[c]
	}
	est := psdlearn.FrobMetric{Common: psdlearn.Common{Standardize: true}, C: []float64{1}}
	want, err := est.Fit(context.Background(), iris.X, iris.Y)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := est.Fit(context.Background(), iris.X, big)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
		t.Errorf("a fit of 150 rows allocated %d MiB", alloc>>20)
	}
	// -7 < 42 < 1e8 maps to 0, 2, 1: the classes are renamed, so the
	// triplets and the metric are the same.
	if !mat.EqualApprox(got.Metric.M, want.Metric.M, 1e-9) {
		t.Error("remapped labels learn another metric")
	}
}

// TestRegister refuses a duplicate name and finds the built-ins.
func TestRegister(t *testing.T) {
	if err := psdlearn.Register(psdlearn.Algorithm{Name: "FrobMetric", New: func() psdlearn.Learner { return &psdlearn.FrobMetric{} }}); !errors.Is(err, errs.ErrInvalid) {
		t.Errorf("duplicate registration: %v", err)
	}
	for _, name := range []string{"boostmetric", "psdboost", "frobmetric", "itml", "lmnn"} {
		l, err := psdlearn.Lookup(name)
		if err != nil || l.Name() != name {
			t.Errorf("Lookup(%q) = %v, %v", name, l, err)
		}
	}
	if _, err := psdlearn.Lookup("nope"); !errors.Is(err, errs.ErrInvalid) {
		t.Errorf("unknown algorithm: %v", err)
	}
}

// cancelExecutor cancels its context when asked for the first solver, so
// the run is cancelled before any solve has an iterate.
type cancelExecutor struct {
	psdlearn.Local
	cancel context.CancelFunc
}

func (e cancelExecutor) NewSolver(l psdlearn.Learner, p *psdlearn.Problem) (psdlearn.Solver, error) {
	e.cancel()
	return e.Local.NewSolver(l, p)
}

// TestCancelBeforeFirstIterate: a run cancelled before any solve had an
// iterate still returns a model, the Euclidean metric on the input
// features, marked interrupted, with an error matching both the context's
// error and errs.ErrNotConverged.
func TestCancelBeforeFirstIterate(t *testing.T) {
	wine := open(t, "wine")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m, err := psdlearn.FrobMetric{Common: psdlearn.Common{Standardize: true, Executor: cancelExecutor{cancel: cancel}}}.Fit(ctx, wine.X, wine.Y)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, errs.ErrNotConverged) {
		t.Fatalf("error %v: want Canceled and ErrNotConverged", err)
	}
	if m == nil || m.Metric == nil || m.Certificate == nil {
		t.Fatalf("no model: %v", err)
	}
	if c := m.Certificate; c.Converged || !c.Interrupted || len(c.Warnings) == 0 || !strings.Contains(c.Warnings[len(c.Warnings)-1], "Euclidean") {
		t.Errorf("certificate %+v: want interrupted, not converged, warning of the Euclidean metric", c)
	}
	// The Euclidean metric: distances are the input's.
	a, b := wine.X.RawRowView(0), wine.X.RawRowView(1)
	var want float64
	for i := range a {
		want += (a[i] - b[i]) * (a[i] - b[i])
	}
	want = math.Sqrt(want)
	if got := m.Metric.Distance(a, b); math.Abs(got-want) > 1e-12*want {
		t.Errorf("distance %v, want the Euclidean %v", got, want)
	}
}
