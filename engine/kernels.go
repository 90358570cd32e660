package engine

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/psdlearn/psdlearn/internal/f64"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"
)

// weightedGram computes dst = Xᵀ (L_W X): a parallel sparse product L_W·X
// (O(nnz·D)) followed by one level-3 GEMM (O(N·D²)). The two stages run one
// after the other, so goroutines and BLAS threads never overlap.
func weightedGram(impl blas.Float64, dst *mat.SymDense, x *mat.Dense, g *PairGraph) error {
	if x == nil || g == nil || dst == nil {
		return fmt.Errorf("%w: nil argument to WeightedGram", ErrDimension)
	}
	n, d := x.Dims()
	if n != g.N() {
		return fmt.Errorf("%w: WeightedGram: x has %d rows, graph has %d points", ErrDimension, n, g.N())
	}
	if dst.SymmetricDim() != d {
		return fmt.Errorf("%w: WeightedGram: dst is %d×%d, want %d×%d", ErrDimension, dst.SymmetricDim(), dst.SymmetricDim(), d, d)
	}
	// Rows of L_W without a nonzero entry contribute nothing. When most
	// weights are zero (FrobMetric's dual is sparse: on the MNIST-sized
	// benchmark about 1,000 of 450,000 triplets stay active) the product
	// and the GEMM run over the active rows only, gathered into contiguous
	// scratch: Xᵀ L_W X = X_Sᵀ (L_W X)_S.
	xr := x.RawMatrix()
	var lx *mat.Dense
	if act := g.ActiveRows(); len(act) <= n/2 {
		if len(act) == 0 {
			raw := dst.RawSymmetric()
			for i := 0; i < d; i++ {
				clear(raw.Data[i*raw.Stride+i : i*raw.Stride+d])
			}
			return nil
		}
		n = len(act)
		buf := getScratch(2 * n * d)
		defer putScratch(buf)
		xs := (*buf)[:n*d]
		for k, i := range act {
			copy(xs[k*d:k*d+d], xr.Data[i*xr.Stride:i*xr.Stride+d])
		}
		lx = mat.NewDense(n, d, (*buf)[n*d:])
		g.LaplacianMulRows(lx, act, x)
		xr = blas64.General{Rows: n, Cols: d, Stride: d, Data: xs}
	} else {
		buf := getScratch(n * d)
		defer putScratch(buf)
		lx = mat.NewDense(n, d, *buf) // LaplacianMulDense overwrites every row
		g.LaplacianMulDense(lx, x)
	}
	lr := lx.RawMatrix()
	out := make([]float64, d*d)
	// Xᵀ(LX) = Σ_b X_bᵀ(LX)_b over row blocks: one GEMM per goroutine, the
	// partial products summed in block order (deterministic for a given
	// GOMAXPROCS). Only the upper triangle is used. (Computing just that
	// triangle by column panels saves 40% of the flops but ran 5–10% slower
	// with OpenBLAS at N = 50,000, D = 164: the full GEMM is kept.)
	blocks := rowBlocks(impl, n, n*d*d)
	if len(blocks) == 1 {
		impl.Dgemm(blas.Trans, blas.NoTrans, d, d, n, 1, xr.Data, xr.Stride, lr.Data, lr.Stride, 0, out, d)
	} else {
		partial := make([][]float64, len(blocks))
		parallelBlocks(blocks, func(k, lo, hi int) {
			p := make([]float64, d*d)
			impl.Dgemm(blas.Trans, blas.NoTrans, d, d, hi-lo, 1, xr.Data[lo*xr.Stride:], xr.Stride, lr.Data[lo*lr.Stride:], lr.Stride, 0, p, d)
			partial[k] = p
		})
		for _, p := range partial {
			for i := 0; i < d; i++ {
				row, prow := out[i*d+i:i*d+d], p[i*d+i:i*d+d]
				for j, v := range prow {
					row[j] += v
				}
			}
		}
	}
	raw := dst.RawSymmetric()
	for i := 0; i < d; i++ {
		copy(raw.Data[i*raw.Stride+i:i*raw.Stride+d], out[i*d+i:i*d+d])
	}
	return nil
}

// scratch holds reusable N×D buffers for the sparse product L_W·X, so
// repeated Gram evaluations (one per dual evaluation in FrobMetric) do not
// allocate and clear tens of megabytes each time.
var scratch sync.Pool

func getScratch(n int) *[]float64 {
	if v, ok := scratch.Get().(*[]float64); ok && cap(*v) >= n {
		*v = (*v)[:n]
		return v
	}
	b := make([]float64, n)
	return &b
}

func putScratch(b *[]float64) { scratch.Put(b) }

// pairQuadForms computes (x_a−x_b)ᵀ M (x_a−x_b) = (x_a−x_b)·(y_a−y_b) with
// Y = X M from one GEMM: O(N·D² + pairs·D), and no cancellation from
// expanding the quadratic form.
func pairQuadForms(impl blas.Float64, dst []float64, x *mat.Dense, m mat.Symmetric, pairs []Pair) error {
	if x == nil || m == nil {
		return fmt.Errorf("%w: nil argument to PairQuadForms", ErrDimension)
	}
	n, d := x.Dims()
	if m.SymmetricDim() != d {
		return fmt.Errorf("%w: PairQuadForms: x has %d columns, M is %d×%d", ErrDimension, d, m.SymmetricDim(), m.SymmetricDim())
	}
	if len(dst) != len(pairs) {
		return fmt.Errorf("%w: PairQuadForms: %d outputs for %d pairs", ErrDimension, len(dst), len(pairs))
	}
	if err := checkPairs(pairs, n); err != nil {
		return err
	}
	full := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v := m.At(i, j)
			full[i*d+j], full[j*d+i] = v, v
		}
	}
	xr := x.RawMatrix()
	y := make([]float64, n*d)
	parallelBlocks(rowBlocks(impl, n, n*d*d), func(_, lo, hi int) {
		impl.Dgemm(blas.NoTrans, blas.NoTrans, hi-lo, d, d, 1, xr.Data[lo*xr.Stride:], xr.Stride, full, d, 0, y[lo*d:], d)
	})
	sparse.ParallelRows(len(pairs), len(pairs)*d*3, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			p := pairs[k]
			xa, xb := xr.Data[p.A*xr.Stride:p.A*xr.Stride+d], xr.Data[p.B*xr.Stride:p.B*xr.Stride+d]
			ya, yb := y[p.A*d:p.A*d+d], y[p.B*d:p.B*d+d]
			dst[k] = f64.DiffDot(xa, xb, ya, yb)
		}
	})
	return nil
}

// pairSqDists computes ‖z_a − z_b‖² for every pair.
func pairSqDists(dst []float64, z *mat.Dense, pairs []Pair) error {
	if z == nil {
		return fmt.Errorf("%w: nil argument to PairSqDists", ErrDimension)
	}
	n, r := z.Dims()
	if len(dst) != len(pairs) {
		return fmt.Errorf("%w: PairSqDists: %d outputs for %d pairs", ErrDimension, len(dst), len(pairs))
	}
	if err := checkPairs(pairs, n); err != nil {
		return err
	}
	zr := z.RawMatrix()
	sparse.ParallelRows(len(pairs), len(pairs)*r*2, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			p := pairs[k]
			dst[k] = f64.SqDist(zr.Data[p.A*zr.Stride:p.A*zr.Stride+r], zr.Data[p.B*zr.Stride:p.B*zr.Stride+r])
		}
	})
	return nil
}

// MulRows computes C = A·B for row-major A (m×k, stride lda), B (k×n,
// stride ldb) and C (m×n, stride ldc) with impl's GEMM. When impl is a serial
// native BLAS and the product is large, the rows of A are split into one
// block per core, each a single level-3 call on its own goroutine (gonum's
// BLAS parallelises internally and gets one call). The result is
// deterministic for a given GOMAXPROCS.
func MulRows(impl blas.Float64, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	parallelBlocks(rowBlocks(impl, m, 2*m*n*k), func(_, lo, hi int) {
		impl.Dgemm(blas.NoTrans, blas.NoTrans, hi-lo, n, k, 1, a[lo*lda:], lda, b, ldb, 0, c[lo*ldc:], ldc)
	})
}

// rowBlocks splits n rows into one block per core for a BLAS call of the
// given flop count, or into a single block when impl is gonum's BLAS (which
// parallelises internally) or the call is too small to pay for goroutines.
func rowBlocks(impl blas.Float64, n, flops int) [][2]int {
	p := runtime.GOMAXPROCS(0)
	if isGonum(impl) || p <= 1 || flops < 1<<20 || n < 2*p {
		return [][2]int{{0, n}}
	}
	blocks := make([][2]int, 0, p)
	chunk := (n + p - 1) / p
	for lo := 0; lo < n; lo += chunk {
		blocks = append(blocks, [2]int{lo, min(lo+chunk, n)})
	}
	return blocks
}

// parallelBlocks runs f on every block, each on its own goroutine.
func parallelBlocks(blocks [][2]int, f func(k, lo, hi int)) {
	if len(blocks) == 1 {
		f(0, blocks[0][0], blocks[0][1])
		return
	}
	var wg sync.WaitGroup
	for k, b := range blocks {
		wg.Add(1)
		go func(k, lo, hi int) {
			defer wg.Done()
			f(k, lo, hi)
		}(k, b[0], b[1])
	}
	wg.Wait()
}

func checkPairs(pairs []Pair, n int) error {
	for k, p := range pairs {
		if p.A < 0 || p.A >= n || p.B < 0 || p.B >= n {
			return fmt.Errorf("%w: pair %d = (%d,%d) outside [0,%d)", ErrDimension, k, p.A, p.B, n)
		}
	}
	return nil
}

// CheckFinite returns an error wrapping ErrNotFinite if x holds NaN or Inf.
func CheckFinite(what string, x []float64) error {
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: %s[%d] = %v", ErrNotFinite, what, i, v)
		}
	}
	return nil
}

// isGonum reports whether impl is gonum's BLAS, which runs its own
// goroutines (the native BLAS is single-threaded: the caller parallelises).
func isGonum(impl blas.Float64) bool {
	_, ok := impl.(gonum.Implementation)
	return ok
}
