// Package dualsolve is the dual-solve driver shared by the
// Frobenius-norm SDP solvers (algos/frob's FrobMetric and algos/sdp): a
// smooth, bound-constrained Lagrange dual minimised with the engine's
// L-BFGS-B in rounds (restarted after a stall, every point checked against
// its certificate, the primal-dual gap), and the projected semismooth
// Newton-CG that polishes the solves L-BFGS-B leaves short of the
// certificate. Each solver supplies its objective, gradient, certificate and
// generalised Hessian; the loops, the stopping rules, the progress events
// and the best-iterate tracking are written here once.
package dualsolve
