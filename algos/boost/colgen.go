package boost

import (
	"context"
)

// defaultColumns is PSDBoost's default Options.Columns: the number of
// eigenvectors of Â offered to the master per iteration on the dense path.
const defaultColumns = 16

// defaultStabilize is PSDBoost's default Options.Stabilize. On letters at
// C = 20 (94,500 triplets) it certified in 20 iterations against 25 without
// smoothing and 29 with α = 0.8.
const defaultStabilize = 0.5

// column is a rank-one term v vᵀ priced for the master, with its margins
// h_r = ⟨A_r, v vᵀ⟩ over all triplets.
type column struct {
	v, h []float64
}

// colGen is PSDBoost's pricing step: multiple pricing and dual smoothing
// around the restricted master LP.
//
// Bounds. For any triplet weights u with 0 ≤ u ≤ C and 1ᵀu = 1,
// λmax(Â(u)) bounds the SDP optimum from above (u is feasible for its dual
// min_u λmax(Σ u_r A_r)), and π, the value of a restricted master, bounds it
// from below (its X is feasible). colGen keeps the smallest λmax over every
// u it priced (ub, at uBest), so ub − π is a certificate whichever u the
// current master returned.
//
// Multiple pricing. On the dense path one eigendecomposition of the D×D
// matrix Â gives every eigenvector, and all of those (up to cols) whose
// reduced cost Σ_r u_r h_r − π at the LP's duals u exceeds ε enter the
// master together instead of only the leading one: the optimum X⋆ lies in
// the top eigenspace of Â(u⋆), and the master needs a column close to each
// of its eigenvectors.
//
// Smoothing (Wentges). With α > 0 pricing is done at ũ = α·uBest + (1−α)·u,
// a convex combination of feasible weights (so feasible, and λmax(Â(ũ)) is
// a valid bound too), which damps the oscillation of the LP duals from one
// iteration to the next. The leading eigenvector of Â(u) itself is priced
// too (every improving one of Â(u) when no eigenvector of Â(ũ) has a
// positive reduced cost at u, a mis-price), so an iteration that does not
// converge always adds a column unless the LP already holds every improving
// eigenvector, and smoothing never loses the column plain pricing would add.
type colGen struct {
	pr    *pricer
	m     int
	eps   float64
	cols  int     // eigenvectors per pricing (dense path)
	alpha float64 // smoothing weight of the stability centre, 0 = off
	ub    float64 // smallest λmax(Â(u)) over the u priced so far
	uBest []float64
	ut    []float64 // workspace: the smoothed weights
}

// bound records λmax(Â(u)) = lam for feasible weights u.
func (cg *colGen) bound(lam float64, u []float64) {
	if lam < cg.ub || cg.uBest == nil {
		cg.ub = lam
		cg.uBest = append(cg.uBest[:0], u...)
	}
}

// price prices the master with optimal value pi and duals u (columns vs):
// it returns the new columns with a reduced cost above ε, largest first, and
// λmax at every weight vector priced. No column and ub ≤ π + ε means
// convergence; no column otherwise means the improving eigenvectors are
// already in the LP.
func (cg *colGen) price(ctx context.Context, u []float64, pi float64, vs [][]float64) ([]column, []float64, error) {
	var lams []float64
	if cg.alpha > 0 && cg.uBest != nil {
		if cg.ut == nil {
			cg.ut = make([]float64, cg.m)
		}
		for r := range cg.ut {
			cg.ut[r] = cg.alpha*cg.uBest[r] + (1-cg.alpha)*u[r]
		}
		cand, lam, err := cg.priceAt(ctx, cg.ut, u, pi, vs, cg.cols)
		if err != nil {
			return nil, lams, err
		}
		lams = append(lams, lam)
		if cg.ub <= pi+cg.eps {
			return nil, lams, nil
		}
		// The leading eigenvector at the LP's own duals joins them (on a
		// mis-price, with nothing from ũ, every improving one does): the
		// smoothed directions approach the optimum's eigenvectors from the
		// side of the stability centre, the unsmoothed one from the LP's.
		k := 1
		if len(cand) == 0 {
			k = cg.cols
		}
		seen := vs
		for _, c := range cand {
			seen = append(seen[:len(seen):len(seen)], c.v)
		}
		more, lam, err := cg.priceAt(ctx, u, u, pi, seen, k)
		if err != nil {
			return nil, lams, err
		}
		return append(cand, more...), append(lams, lam), nil
	}
	cand, lam, err := cg.priceAt(ctx, u, u, pi, vs, cg.cols)
	if err != nil {
		return nil, lams, err
	}
	return cand, append(lams, lam), nil
}

// priceAt computes k leading eigenpairs of Â(at), records the bound and
// returns the eigenvectors whose reduced cost at the LP duals u exceeds ε
// and that are not columns of the LP yet.
func (cg *colGen) priceAt(ctx context.Context, at, u []float64, pi float64, vs [][]float64, k int) ([]column, float64, error) {
	vals, vecs, err := cg.pr.topK(ctx, at, k)
	if err != nil {
		return nil, 0, err
	}
	cg.bound(vals[0], at)
	var out []column
	for i, v := range vecs {
		if &at[0] == &u[0] && vals[i] <= pi+cg.eps {
			break // at the LP duals the eigenvalue is the reduced cost + π
		}
		if repeats(vs, v) {
			continue
		}
		h := make([]float64, cg.m)
		if err := cg.pr.margins(h, v); err != nil {
			return nil, 0, err
		}
		var rc float64
		for r, ur := range u {
			if ur != 0 {
				rc += ur * h[r]
			}
		}
		if rc-pi > cg.eps {
			out = append(out, column{v: v, h: h})
		}
	}
	return out, vals[0], nil
}
