package npkl

import "fmt"

// BaselineWarning returns a warning when the kernel's pairwise clustering
// accuracy (mean over runs) is below that of k-means on the data, the
// paper's baseline, and "" otherwise (also when either is not a number).
// k is the kNN graph's number of neighbours and n the number of points.
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
func BaselineWarning(accuracy, kmeans float64, k, n int) string {
	if !(accuracy < kmeans) {
		return ""
	}
	hint := "a larger --k, --weight heat, more constraints (a smaller --ratio)"
	if k >= 50 || k >= n/4 {
		hint = "--weight heat, more constraints (a smaller --ratio)"
	}
	return fmt.Sprintf("the learned kernel clusters worse than k-means on the data (pairwise accuracy %.4f < %.4f): it follows the %d-nearest-neighbour graph and the constraints, which here hold less of the class structure than the features; try %s, or --standardize when the features have different scales; if none helps, k-means on the features is the better clustering",
		accuracy, kmeans, k, hint)
}

// SpectrumWarning returns a warning when the eigenpairs computed did not
// cover the positive spectrum of A (covered false), and "" otherwise. The
// eigensolver then stopped at its cap of rank eigenpairs (Options.MaxRank)
// and K is the best rank-rank approximation of the closed form (8), not
// the optimum.
func SpectrumWarning(covered bool, rank int) string {
	if covered {
		return ""
	}
	return fmt.Sprintf("the positive spectrum of A was not covered within the cap of %d eigenpairs: K is the best rank-%d approximation of the closed form, not the optimum; raise the cap (--max-rank) above %d, or lower C, which shrinks A's positive spectrum", rank, rank, rank)
}
