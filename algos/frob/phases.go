package frob

import "time"

// Phases is the wall time FrobMetric spent in each phase of its dual
// evaluations, in seconds, with the counts that turn them into flops: a
// profile of the solve without a profiler, summed over the whole set and
// the working sets. Timing costs two clock reads per phase. A solve on an
// Oracle (LearnOracle) times only what runs in this process: zero.
type Phases struct {
	// Gram is the time of the weighted Grams G = Xᵀ L_W X (the sparse
	// product L_W X and the GEMM, plus a working set's fixed part); Grams
	// counts them and GramRows sums the rows of L_W with a nonzero entry
	// (a Gram needs at least 2·GramRows·D² flops in all).
	Gram            float64
	Grams, GramRows int
	// Grams32 counts the Grams computed in single precision (a loose
	// solve's, see single.go); they are among Grams.
	Grams32 int
	// Eig is the time of the eigendecompositions of G: its positive part
	// at every evaluation, and the full decomposition the Newton polish
	// needs for its Hessian products (FullEigs of them). Eigs counts them
	// all and EigPairs sums the eigenpairs they returned.
	Eig                      float64
	Eigs, FullEigs, EigPairs int
	// Embed is the time of the embeddings Z = X·V√Λ (one GEMM each);
	// Embeds counts them and EmbedCols sums their widths r. Primal points
	// tried by the face-Newton refinement are embedded too, and counted.
	Embed             float64
	Embeds, EmbedCols int
	// Pairs is the time of the pair forms ‖Zᵀ(a − b)‖² over the distinct
	// pairs and of the triplet margins from them; PairPasses counts them.
	Pairs      float64
	PairPasses int
	// Hessian is the time of the Newton polish's Hessian products (each a
	// weighted Gram, four D×D×D GEMMs and the pair quadratic forms of the
	// direction) and of their Jacobi diagonals; HessianProducts counts the
	// products and HessianRows sums the rows of their Grams' L_W with a
	// nonzero entry.
	Hessian                      float64
	HessianProducts, HessianRows int
}

// add adds the times and counts of q to p.
func (p *Phases) add(q Phases) {
	p.Gram += q.Gram
	p.Grams += q.Grams
	p.GramRows += q.GramRows
	p.Grams32 += q.Grams32
	p.Eig += q.Eig
	p.Eigs += q.Eigs
	p.EigPairs += q.EigPairs
	p.Embed += q.Embed
	p.Embeds += q.Embeds
	p.EmbedCols += q.EmbedCols
	p.Pairs += q.Pairs
	p.PairPasses += q.PairPasses
	p.Hessian += q.Hessian
	p.HessianProducts += q.HessianProducts
	p.HessianRows += q.HessianRows
	p.FullEigs += q.FullEigs
}

// since returns the seconds elapsed since t.
func since(t time.Time) float64 { return time.Since(t).Seconds() }
