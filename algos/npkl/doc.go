// Package npkl implements SimpleNPKL (Zhuang, Tsang and Hoi, ICML 2009):
// non-parametric kernel learning from pairwise must-link / cannot-link
// constraints, regularised by a k-nearest-neighbour graph Laplacian.
//
// The learned kernel solves
//
//	min_K tr(LK) + C Σ_{(i,j)} ℓ(T_ij K_ij)   s.t. K ⪰ 0, tr(K²) ≤ B,
//
// where L = I − D^{-1/2} S D^{-1/2} is the normalised Laplacian of the
// symmetrised kNN similarity S and T_ij = +1 (must-link) or −1 (cannot-link).
//
// With the linear loss ℓ(f) = −f the problem is max tr(AK) with
// A = C Σ T_ij E_ij − L, E_ij = (e_i e_jᵀ + e_j e_iᵀ)/2, summed once per
// unordered constraint pair. (The paper's one-sided matrix with T_ij at (i, j)
// has the same inner product with a symmetric K; its symmetric part is this
// E_ij, and keeping A symmetric is what the eigensolver needs.) The solution is the
// closed form K* = A_+ √(B / tr(A_+²)) (the paper's Proposition 1). Only the
// positive eigenpairs of the sparse A are needed: they come from the engine's
// sparse Lanczos eigensolver (largest algebraic), starting from the Pataki
// rank bound r(r+1)/2 ≤ m and growing the number of eigenpairs until the
// positive spectrum is covered or a cap is reached.
//
// With the squared hinge loss ℓ(f) = max(0, 1 − f)²/2 the saddle-point
// problem is solved by the paper's Algorithm 1: K_t is the closed form for
// A_t = Σ α_ij T_ij E_ij − L, then α_ij ← (α_ij + η_t (1 − T_ij K_ij − α_ij/C))_+
// with the O(1/t) step η_t = 2C/(t+2), starting from α⁰ = 1 (so K_1 is the
// linear-loss solution for C = 1). Every iteration records the saddle-point
// objective J(K_t, α_{t−1}) and the primal objective at K_t, which bracket the
// optimum. Later iterations request the previous positive rank plus a margin
// of eigenpairs and grow it again if needed.
//
// K is always kept as a low-rank factorisation V diag(λ) Vᵀ: no N×N matrix is
// formed, memory is O(N·(k + r)) for a kNN graph with k neighbours and rank r.
// Active constraint selection (the margin criterion of the paper's §3.2.4)
// and random selection complete the package. The paper's clustering
// protocol (kernel k-means on the learned kernel, pairwise accuracy over
// repetitions) and the kernel's model file live above the algorithms, in
// the root package (psdlearn.Cluster).
package npkl
