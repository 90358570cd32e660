// Package frob implements FrobMetric, the Frobenius-norm regularised metric
// learner of Shen, Kim, Liu, Wang and van den Hengel, "An Efficient Dual
// Approach to Distance Metric Learning". The paper's general
// Frobenius-norm SDP solver is package sdp, and approximate maximum variance
// unfolding on it is package mvu.
//
// Like them, it solves a Lagrange dual whose only matrix operation is the
// negative (or positive) part of a symmetric matrix — an eigendecomposition
// — with the engine's L-BFGS-B, and recovers the primal solution in closed
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
// rounding level of the objective). Late in a solve, face-Newton steps
// (refine.go) solve the optimality conditions of the free multipliers on
// the current face of the PSD cone — a dense system of the size of the free
// set, a few thousand on real kNN triplets — and hand L-BFGS-B better dual
// and primal points, each evaluated exactly; a semismooth Newton-CG polish
// finishes the solves L-BFGS-B leaves short. On large triplet sets Learn
// uses a working set (the shrinking of SVM solvers): the dual is sparse at
// the optimum, so most iterations run on the triplets that can still be
// active, and only the certificate needs all of them.
//
// The package registers the "frobmetric" trainer of train (psdlearn
// train --algo frobmetric), which chooses C on the validation rows.
package frob
