// Package frob implements the Frobenius-norm regularised semidefinite
// programs of Shen, Kim, Liu, Wang and van den Hengel, "An Efficient Dual
// Approach to Distance Metric Learning": FrobMetric, a general solver for
// Frobenius-regularised SDPs, and approximate maximum variance unfolding.
//
// All three solve a Lagrange dual whose only matrix operation is the
// negative (or positive) part of a symmetric matrix — an eigendecomposition
// — with the engine's L-BFGS-B, and recover the primal solution in closed
// form, PSD by construction. Every solution carries its duality gap.
//
// FrobMetric (Learn) learns a Mahalanobis metric X from triplets (a_i is
// closer to a_j than to a_k), A_r = (a_i − a_k)(a_i − a_k)ᵀ − (a_i − a_j)(a_i − a_j)ᵀ:
//
//	min_{X ⪰ 0, ξ ≥ 0} ½‖X‖²_F + (C/m) Σ_r ξ_r  s.t.  ⟨A_r, X⟩ ≥ 1 − ξ_r,
//	dual: max_{0 ≤ u ≤ C/m} Σ_r u_r − ½‖(Â)_−‖²_F,  Â = −Σ_r u_r A_r,
//	X* = −(Â*)_−.
//
// No A_r is ever formed: Σ_r u_r A_r = Xᵀ L_W X is a weighted Gram over the
// distinct triplet pairs, and the gradient 1 + ⟨(Â)_−, A_r⟩ comes from
// per-pair squared distances in a low-rank embedding. L-BFGS-B cannot reach a
// tiny duality gap on its own (the gap needs projected gradients far below the
// rounding level of the objective); a semismooth Newton-CG polish finishes
// the solves it leaves short. On large triplet sets Learn uses a working set
// (the shrinking of SVM solvers): the dual is sparse at the optimum, so most
// iterations run on the triplets that can still be active, and only the
// certificate needs all of them.
//
// SolveSDP solves min ⟨C,X⟩ + (1/2σ)‖X‖²_F s.t. X ⪰ 0 and linear
// (in)equalities ⟨A_i, X⟩ ≤ b_i or = b_i, with the A_i given as sparse
// entries and signed rank-one terms, through the dual
// min_u ½σ‖(C + Σ u_i A_i)_−‖²_F + bᵀu; its negative part comes from a dense
// eigensolver or, for large sparse problems with a low-rank solution, from
// the sparse Lanczos solver.
//
// MVU embeds data by approximate maximum variance unfolding on SolveSDP:
// C = −I, the squared distances of k-nearest-neighbour pairs kept, the
// embedding centred. Hard distance equalities on a rigid neighbourhood
// graph leave no strictly feasible point and their dual converges slowly
// from a cold start, so MVU starts it from the solution of the inequality
// relaxation (distances may shrink), which X = 0 satisfies strictly.
//
// The package registers the "frobmetric" trainer of train (psdlearn
// train --algo frobmetric), which chooses C on the validation rows.
package frob
