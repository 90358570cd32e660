package arpack

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/lapack"
	gonumlapack "gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/mat"
)

// Go is the pure-Go solver: thick-restart Lanczos (Wu and Simon 2000), which
// in exact arithmetic is equivalent to ARPACK's implicit restart with exact
// shifts. It mirrors ARPACK where the two are comparable: the same
// start vector for a seed (arpack-ng multiplies it by A once before its
// first step; Go starts from it directly), the same convergence test on the Ritz
// estimates (|β·s_m| ≤ Tol·max(ε^(2/3), |θ|)), the same number of Ritz
// vectors kept at a restart (k + min(nconv, (NCV−k)/2)), classical
// Gram–Schmidt against the whole basis with up to two refinement passes
// (Daniel–Gragg–Kaufman–Stewart), and a fresh random direction when the
// Krylov space becomes invariant.
//
// Work on long vectors is split into fixed 1024-entry chunks and reduced in
// chunk order, so the result is bit-for-bit the same for a seed whatever
// GOMAXPROCS is (given an operator that is, like sparse.SymCSR); chunks run on parallel goroutines for large problems. All
// state is per call: concurrent solves are safe and run in parallel.
var Go Solver = goSolver{}

type goSolver struct{}

func (goSolver) Eigs(ctx context.Context, op Operator, k int, which Which, opt Options) (Result, error) {
	p, err := setup(op, k, which, opt)
	if err != nil {
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("arpack: %w", err)
	}
	return newLanczos(p).solve(ctx)
}

// chunk is the number of vector entries per unit of parallel work. It is a
// constant so that reductions do not depend on the number of threads.
const chunk = 1024

// parallelWork is the number of flops below which vector work stays on one goroutine.
const parallelWork = 1 << 17

// dgks is the Daniel–Gragg–Kaufman–Stewart threshold: a Gram–Schmidt pass that
// leaves less than this fraction of the norm is repeated (ARPACK uses 0.717).
const dgks = 0.717

type lanczos struct {
	*problem
	m       int        // NCV: basis size
	v       []float64  // m+1 rows of length n: the basis v_0..v_{m−1} and the residual direction v_m
	t       []float64  // m×m projected matrix, row-major, symmetric
	beta    float64    // norm of the residual after the last extension
	h, h2   []float64  // Gram–Schmidt coefficients
	part    []float64  // per-chunk partial projections
	sq      []float64  // per-chunk partial squared norms
	theta   []float64  // Ritz values, ascending
	s       []float64  // m×m eigenvectors of t, column i belongs to theta[i]
	work    []float64  // dsyev workspace
	rng     *rand.Rand // new directions after an invariant subspace
	applies int
	impl    gonum.Implementation
}

func newLanczos(p *problem) *lanczos {
	m := p.ncv
	nch := (p.n + chunk - 1) / chunk
	l := &lanczos{
		problem: p,
		m:       m,
		v:       make([]float64, (m+1)*p.n),
		t:       make([]float64, m*m),
		h:       make([]float64, m+1),
		h2:      make([]float64, m+1),
		part:    make([]float64, nch*(m+1)),
		sq:      make([]float64, nch),
		theta:   make([]float64, m),
		s:       make([]float64, m*m),
		rng:     rand.New(rand.NewPCG(p.seed, startStream+1)),
	}
	var w [1]float64
	gonumlapack.Implementation{}.Dsyev(lapack.EVCompute, blas.Upper, m, l.s, m, l.theta, w[:], -1)
	l.work = make([]float64, int(w[0]))
	return l
}

func (l *lanczos) row(i int) []float64 { return l.v[i*l.n : (i+1)*l.n] }

func (l *lanczos) solve(ctx context.Context) (Result, error) {
	m, k := l.m, l.k
	v0 := l.row(0)
	copy(v0, l.start)
	l.impl.Dscal(l.n, 1/l.impl.Dnrm2(l.n, v0, 1), v0, 1)
	from := 0
	bounds := make([]float64, m)
	for iter := 1; ; iter++ {
		if err := l.extend(ctx, from); err != nil {
			return Result{}, err
		}
		if err := l.ritz(); err != nil {
			return Result{}, err
		}
		for i := range bounds {
			bounds[i] = math.Abs(l.beta * l.s[(m-1)*m+i])
		}
		ord := order(l.theta, l.which)
		var conv []int
		for _, i := range ord[:k] {
			if bounds[i] <= l.tol*math.Max(eps23, math.Abs(l.theta[i])) {
				conv = append(conv, i)
			}
		}
		nconv := len(conv)
		if nconv == k || iter > l.maxIter {
			res := l.result(conv)
			res.Iterations = iter
			if nconv < k {
				return res, &NotConvergedError{Requested: k, Converged: nconv, Iterations: iter}
			}
			return res, nil
		}
		// Thick restart: keep the nkeep most wanted Ritz vectors, append the residual direction.
		nkeep := k + min(nconv, (m-k)/2)
		if nkeep == 1 && m >= 6 {
			nkeep = m / 2
		} else if nkeep == 1 && m > 2 {
			nkeep = 2
		}
		keep := ord[:nkeep]
		l.rotate(keep)
		copy(l.row(nkeep), l.row(m))
		clear(l.t)
		for i, j := range keep {
			l.t[i*m+i] = l.theta[j]
			c := l.beta * l.s[(m-1)*m+j]
			l.t[i*m+nkeep] = c
			l.t[nkeep*m+i] = c
		}
		if l.beta == 0 {
			if err := l.newDirection(nkeep); err != nil {
				return Result{}, err
			}
		}
		from = nkeep
	}
}

// extend runs Lanczos steps from..m−1: on return rows 0..m−1 of v are an
// orthonormal basis, t is the projection of the operator on it and
// beta·v_m is the residual.
func (l *lanczos) extend(ctx context.Context, from int) error {
	m, n := l.m, l.n
	for j := from; j < m; j++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("arpack: %w", err)
		}
		w := l.row(j + 1)
		l.op.Apply(w, l.row(j))
		l.applies++
		if err := checkFinite(w); err != nil {
			return err
		}
		// Classical Gram–Schmidt against the whole basis, refined (DGKS) while
		// a pass removes more than 1 − 0.717 of the norm, at most twice; the
		// projection for the next refinement is computed in the same sweep as
		// the update, while each chunk of the basis is in cache.
		h, h2 := l.h[:j+1], l.h2[:j+1]
		wnorm := math.Sqrt(l.project(w, j+1, h))
		if math.IsInf(wnorm, 0) {
			return fmt.Errorf("%w (‖A·x‖² overflows)", ErrNotFinite)
		}
		alpha := h[j]
		beta := math.Sqrt(l.update(w, j+1, h, h2))
		prev := wnorm
		for refined := 0; beta <= dgks*prev; refined++ {
			if refined == 2 {
				// w lies in the span of the basis: the Krylov space is invariant.
				beta = 0
				clear(w)
				break
			}
			alpha += h2[j]
			copy(h, h2)
			prev = beta
			beta = math.Sqrt(l.update(w, j+1, h, h2))
		}
		l.t[j*m+j] = alpha
		if j+1 < m {
			l.t[j*m+j+1] = beta
			l.t[(j+1)*m+j] = beta
		}
		l.beta = beta
		switch {
		case beta > 0:
			l.impl.Dscal(n, 1/beta, w, 1)
		case j+1 < m:
			if err := l.newDirection(j + 1); err != nil {
				return err
			}
		}
	}
	return nil
}

// newDirection puts into row r a random unit vector orthogonal to rows 0..r−1.
func (l *lanczos) newDirection(r int) error {
	w := l.row(r)
	for try := 0; try < 5; try++ {
		for i := range w {
			w[i] = 2*l.rng.Float64() - 1
		}
		nrm0 := l.impl.Dnrm2(l.n, w, 1)
		l.orth(w, r, l.h[:r])
		l.orth(w, r, l.h[:r])
		if nrm := l.impl.Dnrm2(l.n, w, 1); nrm > dgks*dgks*nrm0 {
			l.impl.Dscal(l.n, 1/nrm, w, 1)
			return nil
		}
	}
	return &Error{Routine: "lanczos", Info: -9999}
}

// orth sets h = V_r·w and w ← w − V_rᵀ·h for the first r basis rows V_r.
func (l *lanczos) orth(w []float64, r int, h []float64) {
	l.project(w, r, h)
	l.update(w, r, h, nil)
}

// project sets h = V_r·w and returns ‖w‖².
func (l *lanczos) project(w []float64, r int, h []float64) float64 {
	n := l.n
	nch := (n + chunk - 1) / chunk
	part, sq := l.part[:nch*r], l.sq[:nch]
	forChunks(n, 2*r*n, func(c, c0, c1 int) {
		l.impl.Dgemv(blas.NoTrans, r, c1-c0, 1, l.v[c0:], n, w[c0:c1], 1, 0, part[c*r:(c+1)*r], 1)
		sq[c] = l.impl.Ddot(c1-c0, w[c0:c1], 1, w[c0:c1], 1)
	})
	return l.reduce(h, r, nch)
}

// update sets w ← w − V_rᵀ·h and returns ‖w‖²; if next is not nil it also
// sets next = V_r·w for the updated w, in the same sweep over the basis.
func (l *lanczos) update(w []float64, r int, h, next []float64) float64 {
	n := l.n
	nch := (n + chunk - 1) / chunk
	part, sq := l.part[:nch*r], l.sq[:nch]
	work := 2 * r * n
	if next != nil {
		work *= 2
	}
	forChunks(n, work, func(c, c0, c1 int) {
		wc := w[c0:c1]
		l.impl.Dgemv(blas.Trans, r, c1-c0, -1, l.v[c0:], n, h, 1, 1, wc, 1)
		if next != nil {
			l.impl.Dgemv(blas.NoTrans, r, c1-c0, 1, l.v[c0:], n, wc, 1, 0, part[c*r:(c+1)*r], 1)
		}
		sq[c] = l.impl.Ddot(c1-c0, wc, 1, wc, 1)
	})
	if next == nil {
		var s float64
		for _, v := range sq {
			s += v
		}
		return s
	}
	return l.reduce(next, r, nch)
}

// reduce sums the per-chunk partial projections into h and the partial
// squared norms into the result, in chunk order.
func (l *lanczos) reduce(h []float64, r, nch int) float64 {
	clear(h)
	var s float64
	for c := 0; c < nch; c++ {
		for i, p := range l.part[c*r : (c+1)*r] {
			h[i] += p
		}
		s += l.sq[c]
	}
	return s
}

// forChunks calls f(c, c0, c1) for the fixed chunks [c0, c1) of [0, n), on
// parallel goroutines when work (flops) is large enough.
func forChunks(n, work int, f func(c, c0, c1 int)) {
	nch := (n + chunk - 1) / chunk
	p := min(runtime.GOMAXPROCS(0), nch)
	if p <= 1 || work < parallelWork {
		for c := 0; c < nch; c++ {
			f(c, c*chunk, min((c+1)*chunk, n))
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < p; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c := int(next.Add(1) - 1)
				if c >= nch {
					return
				}
				f(c, c*chunk, min((c+1)*chunk, n))
			}
		}()
	}
	wg.Wait()
}

// ritz computes the eigendecomposition of the projected matrix.
func (l *lanczos) ritz() error {
	copy(l.s, l.t)
	if ok := (gonumlapack.Implementation{}).Dsyev(lapack.EVCompute, blas.Upper, l.m, l.s, l.m, l.theta, l.work, len(l.work)); !ok {
		return &Error{Routine: "dsyev", Info: -8}
	}
	return nil
}

// rotate overwrites rows 0..len(cols)−1 of the basis with the Ritz vectors
// V_mᵀ·s_j for j in cols, block of columns by block of columns.
func (l *lanczos) rotate(cols []int) {
	m, n, c := l.m, l.n, len(cols)
	y := make([]float64, m*c)
	for j := 0; j < m; j++ {
		for i, col := range cols {
			y[j*c+i] = l.s[j*m+col]
		}
	}
	bufs := sync.Pool{New: func() any { b := make([]float64, c*chunk); return &b }}
	forChunks(n, 2*m*c*n, func(_, c0, c1 int) {
		bp := bufs.Get().(*[]float64)
		buf := *bp
		cb := c1 - c0
		l.impl.Dgemm(blas.Trans, blas.NoTrans, c, cb, m, 1, y, c, l.v[c0:], n, 0, buf, cb)
		for i := 0; i < c; i++ {
			copy(l.v[i*n+c0:i*n+c1], buf[i*cb:(i+1)*cb])
		}
		bufs.Put(bp)
	})
}

// result forms the Ritz pairs of the converged wanted indices, ascending.
func (l *lanczos) result(conv []int) Result {
	res := Result{OpApplies: l.applies}
	if len(conv) == 0 {
		return res
	}
	sel := append([]int(nil), conv...)
	sort.Slice(sel, func(a, b int) bool {
		ta, tb := l.theta[sel[a]], l.theta[sel[b]]
		return ta < tb || (ta == tb && sel[a] < sel[b])
	})
	c := len(sel)
	res.Values = make([]float64, c)
	for i, j := range sel {
		res.Values[i] = l.theta[j]
	}
	// The Ritz vectors land in rows 0..c−1 of the basis (no longer needed).
	l.rotate(sel)
	vec := mat.NewDense(l.n, c, nil)
	raw := vec.RawMatrix()
	for j := 0; j < c; j++ {
		r := l.row(j)
		nrm := l.impl.Dnrm2(l.n, r, 1)
		for i, x := range r {
			raw.Data[i*raw.Stride+j] = x / nrm
		}
	}
	res.Vectors = vec
	return res
}

// order returns the indices of the ascending Ritz values theta from the most
// to the least wanted for which; the first k are the wanted ones. Ties go to
// the lower index, so the order is deterministic.
func order(theta []float64, which Which) []int {
	m := len(theta)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	var key func(i int) float64 // smaller key = more wanted
	switch which {
	case LargestAlgebraic:
		key = func(i int) float64 { return -theta[i] }
	case SmallestAlgebraic:
		key = func(i int) float64 { return theta[i] }
	case LargestMagnitude:
		key = func(i int) float64 { return -math.Abs(theta[i]) }
	case SmallestMagnitude:
		key = func(i int) float64 { return math.Abs(theta[i]) }
	case BothEnds:
		// Alternate from the top and the bottom, starting at the top, so that
		// k wanted values are ⌈k/2⌉ largest and ⌊k/2⌋ smallest, as in ARPACK.
		out := make([]int, 0, m)
		lo, hi := 0, m-1
		for lo <= hi {
			out = append(out, hi)
			hi--
			if lo <= hi {
				out = append(out, lo)
				lo++
			}
		}
		return out
	}
	sort.SliceStable(idx, func(a, b int) bool { return key(idx[a]) < key(idx[b]) })
	return idx
}
