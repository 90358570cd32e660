package boost

import "time"

// Phases is the wall time a BoostMetric run spent in each phase of its
// iterations, in seconds, with the counts that turn them into flops: a
// profile of the run without a profiler. Timing costs two clock reads per
// phase. PSDBoost leaves it zero.
type Phases struct {
	// Gram is the time of the weighted Grams Â(u) = Xᵀ L_W X of the dense
	// eigensolver path: the sparse product L_W X and the GEMM. Grams
	// counts them, Grams32 those computed in single precision (Precision),
	// and GramRows sums the rows of L_W with a nonzero entry (a Gram needs
	// at least 2·GramRows·D² flops in all).
	Gram                     float64
	Grams, Grams32, GramRows int
	// Eig is the time of the leading eigenpairs: the dense partial
	// eigensolver on Â(u), or Lanczos on the operator v ↦ Xᵀ(L_W(X v)),
	// whose products are inside it. Eigs counts the solves and Products
	// the Lanczos operator products.
	Eig            float64
	Eigs, Products int
	// Margins is the time of the new terms' margins: z = X v (one GEMV)
	// and the pair forms (z_a − z_b)²; MarginPasses counts them.
	Margins      float64
	MarginPasses int
	// Weights is the time of the weight updates: the line search
	// (stage-wise) or the corrective re-solve.
	Weights float64
}

// since returns the seconds elapsed since t.
func since(t time.Time) float64 { return time.Since(t).Seconds() }
