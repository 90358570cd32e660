// Package meg learns a trace-one symmetric positive definite matrix W with
// the two algorithms of Tsuda, Rätsch and Warmuth, "Matrix Exponentiated
// Gradient Updates for On-line Learning and Bregman Projection" (NIPS 2004).
//
// Matrix Exponentiated Gradient (MEG) is an online learner for the quadratic
// loss (tr(W X_t) − y_t)²:
//
//	W_{t+1} = exp(log W_t − 2η(ŷ_t − y_t) X_t) / Z_t,   ŷ_t = tr(W_t X_t).
//
// Learner implements the numerically stable form of the paper's Section 3.2:
// it keeps the exponent E_t = c_t I + log W_1 − 2η Σ_{s≤t}(ŷ_s − y_s) X_s and
// its eigendecomposition V Λ Vᵀ, with c_t chosen so that the largest
// eigenvalue of E_t is 0, and W_{t+1} = V exp(Λ) Vᵀ / tr exp(Λ). It has a
// streaming interface (Predict, Update: one example at a time) and a batch
// driver (Run) over a Sequence. LossBound, EtaFromC and OptimalC give the
// relative loss bound of Lemma 3.2 and its learning rate.
//
// DefiniteBoost solves the Bregman projection
//
//	min Δ(W, W_1)  s.t.  tr W = 1,  tr(W C_j) ≤ 0,  j = 1..n,
//
// by repeatedly choosing the most violated constraint and projecting onto it,
// either approximately (the closed-form step of the paper's eq. (13)) or
// exactly (a one-dimensional root search). The dual objective
// log tr exp(log W_1 − Σ_j α_j C_j) decreases at every step (Theorem 4.1).
// With diagonal C_j and W_1 = I/d it is AdaBoost.
//
// Instance matrices X_t and constraint matrices C_j implement Sym: Dense,
// Sparse (a symmetric sparse.CSR), LowRank (U diag(s) Uᵀ), DistPair (the
// matrix X_ab with tr(W X_ab) = ½(W_aa + W_bb − 2W_ab), the half squared
// distance of the paper's kernel experiments), and the wrappers Shift
// (S + σI) and WithBounds (a user-supplied interval enclosing the spectrum).
//
// The file kernel.go holds the helpers of the paper's kernel-learning
// experiments: RBF target kernels, sampled distance examples, close-pair
// inequality constraints and the 1-nearest-neighbour error of a kernel.
//
// Every eigendecomposition goes through engine.Backend.SymEig; the matrix
// exponentials and logarithms of symmetric matrices are computed from them.
// A nil Backend means engine.Default().
package meg
