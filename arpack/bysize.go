package arpack

import "context"

// BySize is a Solver that runs Small when a solve's Lanczos basis, n × NCV
// values of 8 bytes (NCV from Options or DefaultNCV), fits in
// MaxBasisBytes, and Large when it does not. Arguments Small would refuse
// are passed to Small, which reports them.
//
// The native backend composes its sparse eigensolver this way:
// BySize{Small: Native, Large: Go, MaxBasisBytes: NativeMaxBasisBytes}.
type BySize struct {
	Small, Large  Solver
	MaxBasisBytes int64
}

// NativeMaxBasisBytes is the largest Lanczos basis, in bytes, on which
// arpack-ng is the faster solver: about a third of this machine's 32 MiB
// L3 cache. arpack-ng applies each implicit restart one basis vector at a
// time and reorthogonalises with single-threaded matrix–vector passes
// over the basis; the pure-Go solver restarts with one matrix product and
// reorthogonalises in cache-sized blocks on every core, which pays once
// the basis no longer stays in cache. Measured on grid Laplacians
// (n1 × (n1+37) points, 10 largest, NCV 40, Tol 1e-10, 2-core AMD EPYC,
// medians of 3 to 5):
//
//	points    basis     arpack-ng   pure Go
//	 13,700    4.4 MB     0.48 s     0.62 s
//	 28,050    9.0 MB     1.51 s     1.72 s
//	 35,190   11.3 MB     2.36 s     2.58 s
//	 41,070   13.1 MB     3.5–4.8 s  2.9–3.6 s
//	 47,400   15.2 MB     5.85 s     4.10 s
//	 71,750   23.0 MB     9.23 s     8.57 s
//	111,548   35.7 MB    28.0 s     17.7 s
const NativeMaxBasisBytes = 12 << 20

// Eigs implements Solver.
func (s BySize) Eigs(ctx context.Context, op Operator, k int, which Which, opt Options) (Result, error) {
	if op == nil || k <= 0 || op.Dim() <= k {
		return s.Small.Eigs(ctx, op, k, which, opt)
	}
	n := op.Dim()
	ncv := opt.NCV
	if ncv <= k || ncv > n {
		ncv = DefaultNCV(n, k)
	}
	if 8*int64(n)*int64(ncv) > s.MaxBasisBytes {
		return s.Large.Eigs(ctx, op, k, which, opt)
	}
	return s.Small.Eigs(ctx, op, k, which, opt)
}
