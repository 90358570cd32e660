// Package grid chooses the candidate values of a regularisation parameter
// (FrobMetric's C, PSDBoost's C, ITML's γ) among which a learner's model
// selection picks the one with the lowest validation error, so that the
// candidates follow the data instead of a fixed list.
//
// A Policy starts from a base list, optionally multiplied by a factor that
// the data's feature scales determine (FrobeniusScale), and extends it one
// step at a time beyond an edge of the values tried while the validation
// optimum sits strictly at that edge (Next). Choose applies the selection
// rule every learner shares: the lowest error, ties to the smaller value.
//
// The functions are pure: they take numbers and return numbers, and the
// callers (the trainers and the estimators' cross-validation) run the fits.
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

// Policy describes the candidate values of a model selection.
//
// The zero value is not useful; Fixed and Scaled build policies.
type Policy struct {
	// Base is the list to start from (any order; duplicates are dropped).
	Base []float64
	// Scale multiplies every value of Base (0 or 1: unscaled).
	Scale float64
	// Step is the factor of each extension beyond an edge (0: 10).
	Step float64
	// MaxExtend bounds the extensions beyond each edge (0: none, the
	// list is fixed).
	MaxExtend int
	// Lo and Hi bound the extensions (0: 0 and +Inf): a value outside
	// [Lo, Hi] is never proposed.
	Lo, Hi float64
}

// Fixed is the policy of a given list: exactly its values, no extension.
func Fixed(cs []float64) Policy { return Policy{Base: cs} }

// DefaultMaxExtend is the number of extensions beyond each edge of an
// adaptive policy: three steps of ten, so a default list spanning four
// decades can grow to seven on either side when the validation error keeps
// improving.
const DefaultMaxExtend = 3

// Adaptive is the policy that starts from base multiplied by scale and
// extends beyond an edge, by factors of ten and at most DefaultMaxExtend
// times per edge, while the validation optimum sits strictly at that edge.
func Adaptive(base []float64, scale float64) Policy {
	return Policy{Base: base, Scale: scale, Step: 10, MaxExtend: DefaultMaxExtend}
}

// Validate reports whether p can propose values: a non-empty base of
// positive finite values, a positive finite scale, a step above 1.
func (p Policy) Validate() error {
	if len(p.Base) == 0 {
		return fmt.Errorf("grid: empty list of candidates")
	}
	for _, c := range p.Base {
		if !(c > 0) || math.IsInf(c, 0) {
			return fmt.Errorf("grid: candidate %v, want a positive finite value", c)
		}
	}
	if s := p.scale(); !(s > 0) || math.IsInf(s, 0) {
		return fmt.Errorf("grid: scale %v, want a positive finite factor", p.Scale)
	}
	if p.MaxExtend < 0 || (p.Step != 0 && !(p.Step > 1)) || math.IsInf(p.Step, 0) {
		return fmt.Errorf("grid: step %v and %d extensions, want a step above 1 and extensions ≥ 0", p.Step, p.MaxExtend)
	}
	return nil
}

func (p Policy) scale() float64 {
	if p.Scale == 0 {
		return 1
	}
	return p.Scale
}

func (p Policy) step() float64 {
	if p.Step == 0 {
		return 10
	}
	return p.Step
}

// Initial returns the first values to try: Base times Scale, ascending,
// without duplicates, each rounded to 12 significant digits so that the
// values print as they are (0.1·s, not 0.1·s ± 1 ulp).
func (p Policy) Initial() []float64 {
	s := p.scale()
	out := make([]float64, 0, len(p.Base))
	for _, c := range p.Base {
		out = append(out, round12(c*s))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// round12 rounds v to 12 significant digits.
func round12(v float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	if err != nil || r == 0 {
		return v
	}
	return r
}

// Next returns the next value to try after the points tried (in any
// order), and false when the selection is complete. It extends beyond the
// larger (smaller) end of the values tried when the error there is below
// the error of every other value — the optimum sits strictly at that edge,
// so the data ask for a weaker (stronger) regularisation than the list
// offers — by one Step, as long as fewer than MaxExtend values lie beyond
// that end of the initial list and the new value is within [Lo, Hi]. The
// larger end is examined first. A point whose error is NaN stops the
// extension (nothing can be compared).
func (p Policy) Next(tried []Point) (float64, bool) {
	if p.MaxExtend == 0 || len(tried) < 2 {
		return 0, false
	}
	pts := slices.Clone(tried)
	slices.SortFunc(pts, func(a, b Point) int { return cmpFloat(a.C, b.C) })
	for _, q := range pts {
		if math.IsNaN(q.Err) {
			return 0, false
		}
	}
	init := p.Initial()
	lo, hi := init[0], init[len(init)-1]
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
	if strictlyBest(top) && beyond(true) < p.MaxExtend {
		if c := round12(top.C * p.step()); p.Hi == 0 || c <= p.Hi {
			return c, true
		}
	}
	if strictlyBest(bottom) && beyond(false) < p.MaxExtend {
		if c := round12(bottom.C / p.step()); c >= p.Lo {
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

// Choose returns the point with the lowest error; equal errors choose the
// smaller value (the stronger regularisation). Points whose error is NaN
// are chosen only when no point has an error, and then the first one is.
// It returns false for no points.
func Choose(points []Point) (Point, bool) {
	if len(points) == 0 {
		return Point{}, false
	}
	best, found := points[0], false
	for _, q := range points {
		if math.IsNaN(q.Err) {
			continue
		}
		if !found || q.Err < best.Err || q.Err == best.Err && q.C < best.C {
			best, found = q, true
		}
	}
	return best, true
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

// Union returns base followed by base multiplied by scale (rounded like
// Initial's values), without duplicates: the candidates both in the data's
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

// String describes p for reports and model files, e.g. "0.1, 1, 10, 100
// × 1.5e+10 (feature scales), extended ×10 beyond an edge up to 3 times".
func (p Policy) String() string {
	s := Format(p.Base)
	if f := p.scale(); f != 1 {
		s += " × " + strconv.FormatFloat(f, 'g', 3, 64) + " (feature scales)"
	}
	if p.MaxExtend > 0 {
		s += " extended ×" + strconv.FormatFloat(p.step(), 'g', 6, 64) + " beyond an edge up to " + strconv.Itoa(p.MaxExtend) + " times"
	}
	return s
}
