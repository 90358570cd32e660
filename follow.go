package psdlearn

import (
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/grid"
	"gonum.org/v1/gonum/mat"
)

// dataFollower is a learner whose default values of C follow the data
// (FrobMetric without C): the run scales its list to the spread of the
// feature scales of the first split and, without Common.Grid, extends it
// with AdaptiveGrid.
type dataFollower interface {
	followsData() bool
}

// followsData reports whether C is left to the default.
func (e FrobMetric) followsData() bool { return len(e.C) == 0 }

// pilotMaxRows bounds the validation rows on which followData compares
// the Euclidean errors of the data as they are and standardised: it
// decides between scales that differ by orders of magnitude, which a
// sample of rows tells apart as well as all of them (MNIST's principal
// components: 2.5% against 9.6% on 10,000 rows), at a fraction of the k-NN
// search.
const pilotMaxRows = 2000

// followData sets the values of C of a learner whose default follows the
// data, from the first prepared split sp. The learner's list (r.start) is
// joined with its multiple by grid.FrobeniusScale of the training rows'
// feature scales when that factor is at least one grid step
// (grid.MinScale: about 1.5e10 for the raw wine features, whose deviations
// span 0.13 to 303; 1 for standardised data) and standardising the
// features lowers the Euclidean k-NN error on (at most pilotMaxRows of)
// the validation rows (grid.ScaleIfStandardisingHelps: on raw wine from
// about 30% to 5%; on MNIST's principal components it would raise it from
// 2.5% to 9.6%, and the list stays in the data's units). The validation
// rows then choose between C in the data's own units and C in the units
// of the standardised features. Without Common.Grid the list is extended
// beyond an edge (AdaptiveGrid). It returns the first values to try.
func (r *run) followData(sp *split) ([]float64, error) {
	f, ok := r.l.(dataFollower)
	if !ok || !f.followsData() {
		return r.first, nil
	}
	note := ""
	scale := 1.0
	dev, err := data.RelativeDeviations(sp.prob.X)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	fs, err := grid.FrobeniusScale(dev)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	switch {
	case !(fs >= grid.MinScale):
		note = fmt.Sprintf("the feature scales spread by a factor %.3g, under one grid step", fs)
	case sp.valX == nil:
		note = "no labelled validation rows to compare the data's units with standardised ones"
	default:
		raw, std, err := r.standardisingErrors(sp, dev)
		if err != nil {
			return nil, err
		}
		scale = grid.ScaleIfStandardisingHelps(fs, raw, std)
		verb := "lowers"
		if scale == 1 {
			verb = "does not lower"
		}
		note = fmt.Sprintf("standardising the features %s the Euclidean validation error (%.2f%% → %.2f%%)", verb, 100*raw, 100*std)
	}
	base := r.start
	r.start = grid.Union(base, scale)
	if scale != 1 {
		r.res.CPolicy = fmt.Sprintf("%s and the same × %.3g (the spread of the feature scales; %s)", grid.Format(base), scale, note)
	} else {
		r.res.CPolicy = fmt.Sprintf("%s (%s)", grid.Format(base), note)
	}
	if r.c.Grid == nil {
		r.grid = AdaptiveGrid{}
		r.res.CPolicy += fmt.Sprintf(", extended ×%d beyond an edge where the validation optimum sits, up to %d times", grid.DefaultStep, grid.DefaultMaxExtend)
	}
	return r.next(nil), nil
}

// standardisingErrors returns the Euclidean k-NN errors on sp's
// validation rows (at most pilotMaxRows of them, evenly spaced) of the
// training rows as they are and standardised (the factor diag(1/dev) in
// the units of the rows, dev relative to their RMS deviation).
func (r *run) standardisingErrors(sp *split, dev []float64) (raw, std float64, err error) {
	s, err := data.RMSDeviation(sp.prob.X)
	if err != nil {
		return math.NaN(), math.NaN(), fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	d := len(dev)
	l := mat.NewDense(d, d, nil)
	for j, v := range dev {
		if v > 0 {
			l.Set(j, j, 1/(v*s))
		}
	}
	q := pilotRows(sp.valX, sp.valY)
	e, err := r.exec.KNNErrors(r.b, nil, sp.prob.X, sp.prob.Y, r.k, q)
	if err != nil {
		return math.NaN(), math.NaN(), fmt.Errorf("psdlearn: %s: C policy: %w", r.name, err)
	}
	es, err := r.exec.KNNErrors(r.b, l, sp.prob.X, sp.prob.Y, r.k, q)
	if err != nil {
		return math.NaN(), math.NaN(), fmt.Errorf("psdlearn: %s: C policy: %w", r.name, err)
	}
	return e[0], es[0], nil
}

// pilotRows returns the validation rows followData compares on: all of
// them up to pilotMaxRows, else every ⌈n/pilotMaxRows⌉-th row.
func pilotRows(x *mat.Dense, y []int) eval.Queries {
	n := len(y)
	if n <= pilotMaxRows {
		return queries(x, y)
	}
	step := (n + pilotMaxRows - 1) / pilotMaxRows
	var rows []int
	for i := 0; i < n; i += step {
		rows = append(rows, i)
	}
	sub := (&data.Dataset{X: x, Y: y}).Subset(rows)
	return queries(sub.X, sub.Y)
}
