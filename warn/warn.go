// Package warn words the warnings psdlearn gives about results that are
// degenerate or protocols that cannot mean what they seem to: a metric or
// kernel that is zero, an error rate measured on the rows the reference
// already holds, a split that leaves classes out of training or rows
// unused, a run that says it converged with its gap above its tolerance, a
// learned kernel that clusters worse than k-means on the features, a
// kernel whose positive spectrum the rank cap left uncovered.
//
// Each function takes the numbers that decide it and returns one line of
// text, or "" when there is nothing to say, so that every front end (the
// library's results, the command line's stderr and JSON, a model file's
// certificate) gives the same warning for the same numbers.
package warn

import (
	"fmt"
	"math"
	"strings"
)

// tinyScale is the magnitude below which a metric or kernel is numerically
// zero: its distances are computed in subnormal numbers, which keep fewer
// than the 53 bits of a normal float64 (2⁻¹⁰²² / 2⁻⁵², about 1e-292).
const tinyScale = 0x1p-1022 / 0x1p-52

// DegenerateMetric warns about a metric M of the given trace (the sum of
// its eigenvalues) on dim features: zero (rank 0) or numerically zero.
// Under such an M every distance is zero, k-NN labels are decided by ties
// and a transform maps every point to the origin.
func DegenerateMetric(trace float64, dim int) string {
	switch {
	case math.IsNaN(trace):
		return ""
	case trace <= 0:
		return fmt.Sprintf("the metric M (%d×%d) is zero (rank 0): every distance is 0, so k-NN labels are ties and the transform maps every point to 0", dim, dim)
	case trace < tinyScale:
		return fmt.Sprintf("the metric M is numerically zero (trace %.3g, below %.3g): its distances are subnormal numbers, close to 0 and imprecise", trace, tinyScale)
	}
	return ""
}

// DegenerateKernel warns about a kernel of the given trace on n points:
// zero (every eigenvalue 0) or numerically zero, so that every kernel
// distance is 0.
func DegenerateKernel(trace float64, n int) string {
	switch {
	case math.IsNaN(trace):
		return ""
	case trace <= 0:
		return fmt.Sprintf("the kernel on %d points is zero (every eigenvalue 0): every distance in its feature space is 0, so nearest neighbours and clusters are ties", n)
	case trace < tinyScale:
		return fmt.Sprintf("the kernel is numerically zero (trace %.3g, below %.3g): its distances are subnormal numbers, close to 0 and imprecise", trace, tinyScale)
	}
	return ""
}

// Resubstitution warns when shared of the n evaluated rows are rows of the
// k-NN reference too (exact copies, e.g. --ref given the data itself):
// each is then its own nearest neighbour and the error counts it as right.
// It warns from half of the rows on (a few duplicate points in a data set
// are no reason to).
func Resubstitution(shared, n int) string {
	if n <= 0 || 2*shared < n {
		return ""
	}
	what := "the error reported is a resubstitution (training) error"
	if shared < n {
		what = "for them the error reported is a resubstitution (training) error"
	}
	return fmt.Sprintf("%d of the %d evaluated rows are also rows of the k-NN reference: each is its own nearest neighbour, so %s, not a test error", shared, n, what)
}

// MissingClasses warns when classes of the rows an error is measured on
// (part: "test", "validation") never occur among the training rows: a
// k-NN classifier cannot predict them, so their rows are certain errors. A
// split of rows sorted by class (rows:…) is the usual cause.
func MissingClasses(part string, classes []string, rows int) string {
	if len(classes) == 0 {
		return ""
	}
	shown := classes
	if len(shown) > 5 {
		shown = shown[:5]
	}
	list := strings.Join(shown, ", ")
	if len(classes) > len(shown) {
		list += fmt.Sprintf(", … (%d classes)", len(classes))
	}
	return fmt.Sprintf("%d %s rows have classes the training rows never have (class %s): they cannot be predicted, so the %s error counts them as errors whatever the metric (is the data sorted by class? use a random split)", rows, part, list, part)
}

// UnusedRows warns when a split uses only used of the total rows.
func UnusedRows(used, total int) string {
	if used >= total || total <= 0 {
		return ""
	}
	return fmt.Sprintf("the split uses %d of the %d rows: the last %d are in no part", used, total, total-used)
}

// GapAboveTolerance warns about a run that reports converged while its
// duality gap (absolute or relative, as its tolerance) is above the
// tolerance: what stopped it is not the certificate the gap would give.
// what names the run; why (may be empty) says what "converged" meant.
func GapAboveTolerance(what string, converged bool, gap, tol float64, why string) string {
	if !converged || math.IsNaN(gap) || math.IsNaN(tol) || gap <= tol {
		return ""
	}
	if why != "" {
		why = " (" + why + ")"
	}
	return fmt.Sprintf("%s reports converged%s, but its duality gap %.3g is above the tolerance %.3g: the result is not certified optimal", what, why, gap, tol)
}

// WorseThanEuclidean warns when a learned metric's validation error
// valErr is above the Euclidean metric's euclidErr on the same n
// validation items (unit: "rows", "triplets"); errors are fractions in
// [0, 1]. It says nothing when either error is NaN (nothing was
// validated) or the learned error is not above.
func WorseThanEuclidean(what string, valErr, euclidErr float64, n int, unit string) string {
	if math.IsNaN(valErr) || math.IsNaN(euclidErr) || !(valErr > euclidErr) {
		return ""
	}
	return fmt.Sprintf("%s: the chosen model's validation error %.2f%% is above the Euclidean metric's %.2f%% on the same %d validation %s: the learned metric is worse than no metric learning here",
		what, 100*valErr, 100*euclidErr, n, unit)
}

// BelowKMeans warns when a learned kernel's pairwise clustering accuracy
// (the mean over runs) is below that of plain k-means on the features, the
// baseline of the SimpleNPKL paper's protocol; k is the kNN graph's number
// of neighbours and n the number of points. Either accuracy NaN: no
// warning.
//
// The kernel follows the kNN graph and the sampled constraints; where
// they hold less of the class structure than the features, k-means wins.
// With the command line's defaults (k = 5, C = 0.5, linear loss) that
// happened on vowel (990 points, 11 classes: 0.695 against 0.831; k = 50
// gave 0.787, heat weights with k = 20 0.816) and letters (20,000 points,
// 26 classes: 0.897 linear and 0.893 squared hinge against 0.930; k = 50
// gave 0.874 and 0.886), and on none of the other bundled sets. The
// message names the levers and says that k-means may simply be the better
// clustering.
func BelowKMeans(accuracy, kmeans float64, k, n int) string {
	if !(accuracy < kmeans) {
		return ""
	}
	hint := "more neighbours in the graph (a larger k), heat weights, more constraints (a smaller component ratio)"
	if k >= 50 || k >= n/4 {
		hint = "heat weights, more constraints (a smaller component ratio)"
	}
	return fmt.Sprintf("the learned kernel clusters worse than k-means on the data (pairwise accuracy %.4f < %.4f): it follows the %d-nearest-neighbour graph and the constraints, which here hold less of the class structure than the features; try %s, or standardised features when they have different scales; if none helps, k-means on the features is the better clustering",
		accuracy, kmeans, k, hint)
}

// UncoveredSpectrum warns when the eigenpairs SimpleNPKL computed did not
// cover the positive spectrum of A (covered false): the eigensolver
// stopped at its cap of rank eigenpairs and K is the best rank-rank
// approximation of the closed form, not the optimum.
func UncoveredSpectrum(covered bool, rank int) string {
	if covered {
		return ""
	}
	return fmt.Sprintf("the positive spectrum of A was not covered within the cap of %d eigenpairs: K is the best rank-%d approximation of the closed form, not the optimum; raise the rank cap above %d, or lower C, which shrinks A's positive spectrum", rank, rank, rank)
}
