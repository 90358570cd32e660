// Package grid holds the numbers behind candidate values of a
// regularisation parameter (FrobMetric's C, PSDBoost's C, ITML's γ) that
// follow the data instead of a fixed list: the factor by which the
// spread of the feature scales moves a Frobenius-regularised learner's C
// (FrobeniusScale, ScaleIfStandardisingHelps), the list in both units
// (Union), the extension of a list beyond an edge where the validation
// optimum sits (Extend), and the test of a clear improvement on
// validation rows (ClearlyBetter), which also decides whether an
// iteration limit is doubled.
//
// The functions are pure: they take numbers and return numbers. The
// model selection that runs the fits and scores them is the caller's
// (package psdlearn's AdaptiveGrid and its pipeline).
package grid

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Point is one value tried and its validation error (NaN: not evaluated).
type Point struct {
	C   float64
	Err float64
}

// DefaultStep is the factor of each extension beyond an edge.
const DefaultStep = 10

// DefaultMaxExtend is the number of extensions beyond each edge: three
// steps of ten, so a default list spanning four decades can grow by three
// on either side when the validation error keeps improving.
const DefaultMaxExtend = 3

// round12 rounds v to 12 significant digits, so that scaled values print
// as they are (0.1·s, not 0.1·s ± 1 ulp).
func round12(v float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	if err != nil || r == 0 {
		return v
	}
	return r
}

// Extend returns the next value to try after the points tried (in any
// order) from the initial list, and false when there is none. It extends
// beyond the larger (smaller) end of the values tried when the error there
// is below the error of every other value — the optimum sits strictly at
// that edge, so the data ask for a weaker (stronger) regularisation than
// the list offers — by one step (a factor above 1; 0 selects DefaultStep),
// as long as fewer than maxExtend values lie beyond that end of the
// initial list. The larger end is examined first. A point whose error is
// NaN stops the extension (nothing can be compared).
func Extend(initial []float64, tried []Point, step float64, maxExtend int) (float64, bool) {
	if step == 0 {
		step = DefaultStep
	}
	if maxExtend <= 0 || len(tried) < 2 || len(initial) == 0 || !(step > 1) || math.IsInf(step, 0) {
		return 0, false
	}
	pts := slices.Clone(tried)
	slices.SortFunc(pts, func(a, b Point) int { return cmpFloat(a.C, b.C) })
	for _, q := range pts {
		if math.IsNaN(q.Err) {
			return 0, false
		}
	}
	lo, hi := slices.Min(initial), slices.Max(initial)
	top, bottom := pts[len(pts)-1], pts[0]
	strictlyBest := func(q Point) bool {
		for _, o := range pts {
			if o.C != q.C && !(q.Err < o.Err) {
				return false
			}
		}
		return true
	}
	beyond := func(above bool) int {
		n := 0
		for _, q := range pts {
			if above && q.C > hi || !above && q.C < lo {
				n++
			}
		}
		return n
	}
	if strictlyBest(top) && beyond(true) < maxExtend {
		if c := round12(top.C * step); !math.IsInf(c, 0) {
			return c, true
		}
	}
	if strictlyBest(bottom) && beyond(false) < maxExtend {
		if c := round12(bottom.C / step); c > 0 {
			return c, true
		}
	}
	return 0, false
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// FrobeniusScale returns the factor by which a Frobenius-regularised
// learner's C must grow on data whose features have the standard
// deviations dev, against the same data standardised, for the same
// trade-off between the regulariser ½‖M‖²_F and the average loss, when the
// learner normalises the data by their RMS deviation s (dev is in the
// units of the normalised data, so s = 1 there; see data.RMSDeviation):
//
//	FrobeniusScale = (1/D') Σ_j (1/dev_j)⁴
//
// over the D' features with dev_j > 0. Reason: a metric M_z on the
// standardised features z_j = x_j/dev_j measures the same distances as
// M = S M_z S, S = diag(1/dev), on the normalised features x, and for
// M_z = c·I, ‖M‖²_F = c² Σ_j dev_j⁻⁴ against ‖M_z‖²_F = c²·D'. It is 1
// for standardised data (every dev_j = 1) and grows with the spread of the
// feature scales. NaN deviations are an error; a data set with no varying
// feature gives 1.
func FrobeniusScale(dev []float64) (float64, error) {
	var sum float64
	n := 0
	for j, d := range dev {
		if math.IsNaN(d) || d < 0 || math.IsInf(d, 0) {
			return math.NaN(), fmt.Errorf("grid: feature %d has deviation %v", j, d)
		}
		if d == 0 {
			continue
		}
		v := 1 / (d * d)
		sum += v * v
		n++
	}
	if n == 0 || math.IsInf(sum, 0) {
		return 1, nil
	}
	return sum / float64(n), nil
}

// ScaleIfStandardisingHelps returns scale when standardising the features
// lowers the Euclidean k-NN validation error (stdErr < rawErr) and scale is
// at least MinScale, and 1 otherwise (equal errors, NaN errors, a smaller
// scale). A spread of
// feature scales calls for a C scaled by FrobeniusScale only when the data
// are better measured in standardised units, as on the raw wine features;
// when the scales carry information — principal components, whose small
// variances are mostly noise, or pixels — the Euclidean distances of the
// data are the better start and the grid stays in their units.
func ScaleIfStandardisingHelps(scale, rawErr, stdErr float64) float64 {
	if !(stdErr < rawErr) || !(scale >= MinScale) || math.IsInf(scale, 0) {
		return 1
	}
	return scale
}

// MinScale is the smallest factor ScaleIfStandardisingHelps applies: one
// step of a grid of decades. A smaller spread of the feature scales moves
// the list by less than its own spacing (balance's equal scales give
// 1.0001, iris's 12).
const MinScale = 10

// ClearlyBetter reports whether the error after is below the error
// before by more than one binomial standard error of before on n
// validation rows, √(before·(1−before)/n) (errors are fractions): an
// improvement that the validation rows can tell from chance. NaN errors
// or n < 1 are never better.
func ClearlyBetter(before, after float64, n int) bool {
	if n < 1 || math.IsNaN(before) || math.IsNaN(after) {
		return false
	}
	return after < before-math.Sqrt(before*(1-before)/float64(n))
}

// DefaultMaxDoublings bounds how often an iteration limit is doubled
// while the validation error keeps improving clearly (see ClearlyBetter):
// three doublings take BoostMetric's 500 to at most 4,000.
const DefaultMaxDoublings = 3

// Union returns base followed by base multiplied by scale (rounded to
// 12 significant digits), without duplicates: the candidates both in the data's
// own units and in the units the scale stands for. A scale of 1 gives
// base.
func Union(base []float64, scale float64) []float64 {
	out := slices.Clone(base)
	if scale != 1 {
		for _, c := range base {
			out = append(out, round12(c*scale))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Format lists values as "0.1, 1, 10", for messages.
func Format(cs []float64) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = strconv.FormatFloat(c, 'g', 6, 64)
	}
	return strings.Join(parts, ", ")
}
