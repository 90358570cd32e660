package frob

// The dense linear algebra of a face-Newton step (refine.go): the face
// Hessian of the free triplets, the box-constrained Newton solve by active
// sets, and a blocked Cholesky factorisation on the backend's BLAS.

import (
	"math"
	"runtime"
	"sync"

	"github.com/psdlearn/psdlearn/internal/f64"
	"gonum.org/v1/gonum/blas"
)

// cholesky overwrites the lower triangle of the n×n row-major symmetric
// matrix a (stride n) with its Cholesky factor L (a = L Lᵀ), by blocks of
// columns with impl's TRSM and SYRK for the panels and trailing updates. It
// reports false at a pivot that is not positive.
func cholesky(impl blas.Float64, n int, a []float64) bool {
	const nb = 96
	for k := 0; k < n; k += nb {
		kb := min(nb, n-k)
		// Unblocked factorisation of the diagonal block.
		for j := k; j < k+kb; j++ {
			s := a[j*n+j]
			for p := k; p < j; p++ {
				s -= a[j*n+p] * a[j*n+p]
			}
			if !(s > 0) || math.IsInf(s, 0) {
				return false
			}
			s = math.Sqrt(s)
			a[j*n+j] = s
			for i := j + 1; i < k+kb; i++ {
				t := a[i*n+j]
				for p := k; p < j; p++ {
					t -= a[i*n+p] * a[j*n+p]
				}
				a[i*n+j] = t / s
			}
		}
		rest := n - k - kb
		if rest == 0 {
			break
		}
		// Panel: A21 ← A21 L11⁻ᵀ, its rows in two halves on both cores
		// (each row's solve is independent).
		s0 := k + kb
		split := rest >= 512 && runtime.GOMAXPROCS(0) >= 2
		var wg sync.WaitGroup
		if split {
			h := rest / 2
			wg.Add(1)
			go func() {
				defer wg.Done()
				impl.Dtrsm(blas.Right, blas.Lower, blas.Trans, blas.NonUnit, rest-h, kb, 1, a[k*n+k:], n, a[(s0+h)*n+k:], n)
			}()
			impl.Dtrsm(blas.Right, blas.Lower, blas.Trans, blas.NonUnit, h, kb, 1, a[k*n+k:], n, a[s0*n+k:], n)
			wg.Wait()
		} else {
			impl.Dtrsm(blas.Right, blas.Lower, blas.Trans, blas.NonUnit, rest, kb, 1, a[k*n+k:], n, a[s0*n+k:], n)
		}
		// Trailing update: A22 ← A22 − A21 A21ᵀ (lower triangle), in two
		// parts of equal work on both cores: the triangle of the first t
		// rows, and the remaining rows (a rectangle and a triangle).
		t := int(float64(rest) / math.Sqrt2)
		if !split {
			t = rest
		}
		if t < rest {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s1 := s0 + t
				impl.Dgemm(blas.NoTrans, blas.Trans, n-s1, t, kb, -1, a[s1*n+k:], n, a[s0*n+k:], n, 1, a[s1*n+s0:], n)
				impl.Dsyrk(blas.Lower, blas.NoTrans, n-s1, kb, -1, a[s1*n+k:], n, 1, a[s1*n+s1:], n)
			}()
		}
		impl.Dsyrk(blas.Lower, blas.NoTrans, t, kb, -1, a[s0*n+k:], n, 1, a[s0*n+s0:], n)
		wg.Wait()
	}
	return true
}

// cholSolve solves L Lᵀ y = b in place for the factor of cholesky.
func cholSolve(impl blas.Float64, n int, l, b []float64) {
	impl.Dtrsv(blas.Lower, blas.NoTrans, blas.NonUnit, n, l, n, b, 1)
	impl.Dtrsv(blas.Lower, blas.Trans, blas.NonUnit, n, l, n, b, 1)
}

// cholSolveCols overwrites the n×nc row-major matrix b (stride nc) with
// (L Lᵀ)⁻¹ b, L the lower triangle of l (stride n), by two triangular
// solves on blocks of columns, one block per core: the backend's BLAS runs
// single-threaded, and these solves, 2·n²·nc flops, are the larger part
// of a face-Newton step's active-set passes.
func cholSolveCols(impl blas.Float64, n, nc int, l, b []float64) {
	workers := min(runtime.GOMAXPROCS(0), nc/cholColsMin)
	if workers < 2 {
		impl.Dtrsm(blas.Left, blas.Lower, blas.NoTrans, blas.NonUnit, n, nc, 1, l, n, b, nc)
		impl.Dtrsm(blas.Left, blas.Lower, blas.Trans, blas.NonUnit, n, nc, 1, l, n, b, nc)
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		c0, c1 := w*nc/workers, (w+1)*nc/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			impl.Dtrsm(blas.Left, blas.Lower, blas.NoTrans, blas.NonUnit, n, c1-c0, 1, l, n, b[c0:], nc)
			impl.Dtrsm(blas.Left, blas.Lower, blas.Trans, blas.NonUnit, n, c1-c0, 1, l, n, b[c0:], nc)
		}()
	}
	wg.Wait()
}

// cholColsMin is the fewest columns per core for which cholSolveCols
// splits the solves: below it a block is too narrow for TRSM's kernels.
const cholColsMin = 32

// faceHessian returns the f×f matrix H_rs = ⟨A_r, P_T(A_s)⟩ of the free
// triplets, A_r = p_r p_rᵀ − q_r q_rᵀ, where P_T removes the block of the
// eigenvectors Q_N off the face: H_rs = ⟨A_r, A_s⟩ − ⟨Q_NᵀA_rQ_N, Q_NᵀA_sQ_N⟩
// with ⟨a aᵀ − b bᵀ, c cᵀ − e eᵀ⟩ = (a·c)² − (a·e)² − (b·c)² + (b·e)². p, q
// are f×d rows and pn, qn their f×nn coordinates in Q_N. Blocks of rows run
// on both cores, eight GEMMs each over the lower triangle. h, if large
// enough, receives the result.
func faceHessian(impl blas.Float64, f, d, nn int, p, q, pn, qn, h []float64) []float64 {
	h = grow(h, f*f)
	clear(h)
	const block = 256
	nb := (f + block - 1) / block
	// H is symmetric: a block of rows needs the columns up to its end
	// only (the lower triangle), mirrored at the end. The blocks' work
	// grows with their index, so the cores take them in turn.
	workers := min(runtime.GOMAXPROCS(0), nb)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			buf := make([]float64, 4*block*f)
			for b := w; b < nb; b += workers {
				lo, hi := b*block, min((b+1)*block, f)
				n := hi - lo
				aa, ab, ba, bb := buf[:n*hi], buf[block*f:block*f+n*hi], buf[2*block*f:2*block*f+n*hi], buf[3*block*f:3*block*f+n*hi]
				terms := func(x, y []float64, k int, sign float64) {
					impl.Dgemm(blas.NoTrans, blas.Trans, n, hi, k, 1, x[lo*k:], k, x, k, 0, aa, hi)
					impl.Dgemm(blas.NoTrans, blas.Trans, n, hi, k, 1, x[lo*k:], k, y, k, 0, ab, hi)
					impl.Dgemm(blas.NoTrans, blas.Trans, n, hi, k, 1, y[lo*k:], k, x, k, 0, ba, hi)
					impl.Dgemm(blas.NoTrans, blas.Trans, n, hi, k, 1, y[lo*k:], k, y, k, 0, bb, hi)
					for i := 0; i < n; i++ {
						row := h[(lo+i)*f : (lo+i)*f+lo+i+1]
						for j := range row {
							s, t, u, v := aa[i*hi+j], ab[i*hi+j], ba[i*hi+j], bb[i*hi+j]
							row[j] += sign * (s*s - t*t - u*u + v*v)
						}
					}
				}
				terms(p, q, d, 1)
				if nn > 0 {
					terms(pn, qn, nn, -1)
				}
			}
		}(w)
	}
	wg.Wait()
	for i := 0; i < f; i++ {
		for j := 0; j < i; j++ {
			h[j*f+i] = h[i*f+j]
		}
	}
	return h
}

// boxNewton maximises the dual's local model gᵀΔ − ½ΔᵀHΔ over the box
// lo ≤ Δ ≤ hi by primal–dual active sets (Hintermüller, Ito and Kunisch):
// each pass solves the model with the held variables at their bounds, then
// holds those that left the box and frees the held ones whose reduced
// gradient points into it, until the sets repeat (at most boxPasses).
//
// H (plus a tiny ridge if it is singular) is factored once, in place: h
// holds H on entry, the factor L overwrites its lower triangle and
// diagonal, and H stays readable in the strict upper triangle with its
// diagonal saved (one f×f array where a copy to factor would be a second:
// 184 MB of fresh pages at MNIST-164's 4,802 candidates). A pass with the
// set A held solves the bordered system
//
//	H Δ + E λ = g,   Eᵀ Δ = δ_A   ⇒   (Eᵀ H⁻¹ E) λ = Eᵀ H⁻¹ g − δ_A,
//
// with the columns H⁻¹ e_k kept across passes, so a pass costs O(f²·|A new|)
// instead of a factorisation. It returns Δ (inside the box), the passes and
// false if no factorisation succeeded or cancelled (if non-nil) reported
// true between passes.
func boxNewton(impl blas.Float64, n int, h, g, lo, hi []float64, cancelled func() bool) ([]float64, int, bool) {
	const boxPasses = 6
	diag := make([]float64, n)
	var hmax float64
	for k := range diag {
		diag[k] = h[k*n+k]
		hmax = math.Max(hmax, diag[k])
	}
	if !(hmax > 0) {
		return nil, 0, false
	}
	l := h
	ok := false
	ridge := 1e-12 * hmax
	for ; ridge <= 1e-4*hmax && !ok; ridge *= 100 {
		if ridge > 1e-12*hmax {
			restoreLower(n, h, diag) // a failed attempt overwrote it
		}
		for k := 0; k < n; k++ {
			l[k*n+k] += ridge
		}
		ok = cholesky(impl, n, l)
	}
	if !ok {
		return nil, 0, false
	}
	ridge /= 100 // the one that succeeded
	hv := upperSym{n: n, h: h, diag: diag}
	z := append([]float64(nil), g...) // H⁻¹ g
	cholSolve(impl, n, l, z)
	cols := map[int][]float64{} // H⁻¹ e_k for the variables ever held
	state := make([]int8, n)    // 0 free, −1 held at lo, +1 held at hi
	for k := range state {
		switch {
		case lo[k] == 0 && g[k] < 0:
			state[k] = -1 // at 0, the gradient pushes out of the box
		case hi[k] == 0 && g[k] > 0:
			state[k] = 1
		}
	}
	delta := make([]float64, n)
	hd := make([]float64, n)
	pass := 0
	for ; pass < boxPasses; pass++ {
		if cancelled != nil && cancelled() {
			return nil, pass, false
		}
		var held []int
		for k, st := range state {
			if st != 0 {
				held = append(held, k)
			}
		}
		if len(held) > n/4 {
			// Many held: factor the free block itself.
			if !reducedSolve(impl, hv, g, state, lo, hi, ridge, delta) {
				return nil, pass, false
			}
		} else {
			copy(delta, z)
			if nh := len(held); nh > 0 {
				// New columns H⁻¹ e_k, by blocks of triangular solves.
				var fresh []int
				for _, k := range held {
					if cols[k] == nil {
						fresh = append(fresh, k)
					}
				}
				if len(fresh) > 0 {
					nf := len(fresh)
					e := make([]float64, n*nf)
					for j, k := range fresh {
						e[k*nf+j] = 1
					}
					cholSolveCols(impl, n, nf, l, e)
					for j, k := range fresh {
						c := make([]float64, n)
						for i := range c {
							c[i] = e[i*nf+j]
						}
						cols[k] = c
					}
				}
				// (Eᵀ H⁻¹ E) λ = z_A − δ_A, by Cholesky (SPD as H is).
				s := make([]float64, nh*nh)
				lam := make([]float64, nh)
				for a, i := range held {
					for b, j := range held[:a+1] {
						s[a*nh+b] = cols[j][i]
					}
					bound := lo[i]
					if state[i] > 0 {
						bound = hi[i]
					}
					lam[a] = z[i] - bound
				}
				if !cholesky(impl, nh, s) {
					return nil, pass, false
				}
				cholSolve(impl, nh, s, lam)
				for a, k := range held {
					f64.Axpy(-lam[a], cols[k], delta)
				}
				for _, k := range held {
					delta[k] = lo[k] // exactly, not to rounding
					if state[k] > 0 {
						delta[k] = hi[k]
					}
				}
			}
		}
		// Reduced gradient of the model, g − HΔ, for the held variables.
		hv.mulVec(impl, delta, hd)
		changed := false
		for k, st := range state {
			switch st {
			case 0:
				if delta[k] < lo[k] {
					state[k], changed = -1, true
				} else if delta[k] > hi[k] {
					state[k], changed = 1, true
				}
			default:
				if v := g[k] - hd[k]; (st == -1 && v > 0) || (st == 1 && v < 0) {
					state[k], changed = 0, true
				}
			}
		}
		if !changed {
			break
		}
	}
	for k := range delta {
		delta[k] = min(max(delta[k], lo[k]), hi[k])
	}
	return delta, pass + 1, true
}

// upperSym is a symmetric n×n matrix H kept in the strict upper triangle
// of h (row-major, stride n) and in diag, h's lower triangle and diagonal
// being free for its factor.
type upperSym struct {
	n    int
	h    []float64
	diag []float64
}

// at returns H_ij.
func (m upperSym) at(i, j int) float64 {
	switch {
	case i < j:
		return m.h[i*m.n+j]
	case i > j:
		return m.h[j*m.n+i]
	}
	return m.diag[i]
}

// mulVec sets y = H x.
func (m upperSym) mulVec(impl blas.Float64, x, y []float64) {
	n := m.n
	impl.Dsymv(blas.Upper, n, 1, m.h, n, x, 1, 0, y, 1)
	for k := 0; k < n; k++ {
		y[k] += (m.diag[k] - m.h[k*n+k]) * x[k] // the factor's diagonal, replaced
	}
}

// restoreLower copies H back into the lower triangle and diagonal of h
// from its strict upper triangle and diag, by blocks (a transpose).
func restoreLower(n int, h, diag []float64) {
	const bs = 64
	for i0 := 0; i0 < n; i0 += bs {
		for j0 := 0; j0 <= i0; j0 += bs {
			for i := i0; i < min(i0+bs, n); i++ {
				for j := j0; j < min(j0+bs, i); j++ {
					h[i*n+j] = h[j*n+i]
				}
			}
		}
	}
	for k := 0; k < n; k++ {
		h[k*n+k] = diag[k]
	}
}

// reducedSolve sets delta to the solution of the model with the variables
// of nonzero state held at their bounds, factoring the free block
// H_II + ridge·I directly: H_II Δ_I = g_I − H_IA Δ_A. It reports false if the
// factorisation fails.
func reducedSolve(impl blas.Float64, hv upperSym, g []float64, state []int8, lo, hi []float64, ridge float64, delta []float64) bool {
	n := hv.n
	var free []int
	for k, st := range state {
		switch st {
		case -1:
			delta[k] = lo[k]
		case 1:
			delta[k] = hi[k]
		default:
			delta[k] = 0
			free = append(free, k)
		}
	}
	nf := len(free)
	if nf == 0 {
		return true
	}
	// g_I − H_IA Δ_A, with Δ zero on I so far.
	hd := make([]float64, n)
	hv.mulVec(impl, delta, hd)
	l := make([]float64, nf*nf)
	rhs := make([]float64, nf)
	for a, i := range free {
		rhs[a] = g[i] - hd[i]
		for b, j := range free[:a+1] {
			l[a*nf+b] = hv.at(i, j)
		}
		l[a*nf+a] += ridge
	}
	if !cholesky(impl, nf, l) {
		return false
	}
	cholSolve(impl, nf, l, rhs)
	for a, i := range free {
		delta[i] = rhs[a]
	}
	return true
}

// grow returns buf resized to n, reallocated only when too small.
func grow(buf []float64, n int) []float64 {
	if cap(buf) < n {
		return make([]float64, n)
	}
	return buf[:n]
}
