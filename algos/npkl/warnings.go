package npkl

import "fmt"

// BaselineWarning returns a warning when the kernel's pairwise clustering
// accuracy (mean over runs) is below that of k-means on the data, the
// paper's baseline, and "" otherwise (also when either is not a number).
// k is the kNN graph's number of neighbours and n the number of points:
// the message says what to change. The kernel follows the kNN graph, and
// with k = 5 and thousands of points, or many classes, the graph's small
// neighbourhoods hold less of the class structure than the features do
// (on letters, 20,000 points in 26 classes, k = 50 raised the squared-hinge
// accuracy from 0.89 to 0.92–0.93; the paper itself uses k = 50 for its
// large sets); heat weights, more constraints and standardised features
// are the other levers.
func BaselineWarning(accuracy, kmeans float64, k, n int) string {
	if !(accuracy < kmeans) {
		return ""
	}
	hint := "a larger --k (the paper uses 50 for its large sets), --weight heat, more constraints (a smaller --ratio)"
	if k >= 50 || k >= n/4 {
		hint = "--weight heat, more constraints (a smaller --ratio)"
	}
	return fmt.Sprintf("the learned kernel clusters worse than k-means on the data (pairwise accuracy %.4f < %.4f): the kernel follows the %d-nearest-neighbour graph and the constraints; try %s, or --standardize when the features have different scales",
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
