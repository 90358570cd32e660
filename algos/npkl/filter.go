package npkl

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/psdlearn/psdlearn/engine"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// chebOp is p(A) = T_d((A − c)/e), the Chebyshev polynomial of degree d
// that stays in [−1, 1] on [c − e, c + e] and grows fast above c + e.
type chebOp struct {
	op   *Operator
	c, e float64
	d    int
	n    int
	prod int // products of A so far
	// b0, b1 and btmp are ApplyBlock's buffers (n×c).
	b0, b1, btmp *mat.Dense
}

// Dim returns the operator's dimension.
func (f *chebOp) Dim() int { return f.n }

// Apply overwrites dst with p(A)·x: ApplyBlock on one column.
func (f *chebOp) Apply(dst, x []float64) {
	f.ApplyBlock(mat.NewDense(f.n, 1, dst), mat.NewDense(f.n, 1, x))
}

// ApplyBlock overwrites dst with p(A)·x for the n×c block x, by the
// three-term recurrence on blocks: one block product of A per degree
// (KrylovSchur's expansion applies the filter this way). It makes chebOp
// an engine.BlockOperator.
func (f *chebOp) ApplyBlock(dst, x *mat.Dense) {
	_, c := x.Dims()
	if f.b0 == nil || f.b0.RawMatrix().Cols != c {
		f.b0, f.b1, f.btmp = mat.NewDense(f.n, c, nil), mat.NewDense(f.n, c, nil), mat.NewDense(f.n, c, nil)
	}
	// T_0 = x, T_1 = B·x, T_j = 2B·T_{j−1} − T_{j−2}: each written over
	// T_{j−2}, the last one into dst.
	rx, rd := x.RawMatrix(), dst.RawMatrix()
	if c == 4 && rx.Stride == 4 && rd.Stride == 4 {
		// Contiguous panels (KrylovSchur's blocks): fused steps that read
		// x and write dst in place.
		inv := 1 / f.e
		prev, cur := rx.Data, f.b0.RawMatrix().Data
		if f.d == 1 {
			cur = rd.Data
		}
		f.op.rows.chebPanel(cur, prev, nil, f.c, inv)
		for j := 2; j <= f.d; j++ {
			out := prev
			switch {
			case j == f.d:
				out = rd.Data
			case j == 2:
				out = f.b1.RawMatrix().Data // T_0 is x: not written
			}
			f.op.rows.chebPanel(out, cur, prev, f.c, 2*inv)
			prev, cur = cur, out
		}
		f.prod += c * f.d
		return
	}
	prev, cur := f.b0, f.b1
	prev.Copy(x) // contiguous, like every buffer below
	f.step(cur, prev, nil)
	for j := 2; j <= f.d; j++ {
		f.step(prev, cur, prev)
		prev, cur = cur, prev
	}
	dst.Copy(cur)
}

// step overwrites out with B·v = (A·v − c·v)/e when prev is nil, and with
// 2B·v − prev otherwise (out may be prev). All three are contiguous n×c.
func (f *chebOp) step(out, v, prev *mat.Dense) {
	_, c := v.Dims()
	if c == 1 {
		f.op.Apply(f.btmp.RawMatrix().Data, v.RawMatrix().Data)
	} else {
		f.op.ApplyBlock(f.btmp, v)
	}
	f.prod += c
	td, vd, od := f.btmp.RawMatrix().Data, v.RawMatrix().Data, out.RawMatrix().Data
	inv := 1 / f.e
	if prev == nil {
		for i := range od {
			od[i] = (td[i] - f.c*vd[i]) * inv
		}
		return
	}
	pd := prev.RawMatrix().Data
	inv2 := 2 * inv
	for i := range od {
		od[i] = (td[i]-f.c*vd[i])*inv2 - pd[i]
	}
}

// lowerBound is a Gershgorin lower bound of the spectrum of A.
func (o *Operator) lowerBound() float64 {
	n := o.lap.Rows
	rad := make([]float64, n)
	diag := make([]float64, n)
	for i := 0; i < n; i++ {
		for p := o.lap.Indptr[i]; p < o.lap.Indptr[i+1]; p++ {
			if j := o.lap.Ind[p]; j == i {
				diag[i] -= o.lap.Data[p]
			} else {
				rad[i] += math.Abs(o.lap.Data[p])
			}
		}
	}
	for c, h := range o.half {
		rad[o.a[c]] += math.Abs(h)
		rad[o.b[c]] += math.Abs(h)
	}
	lo := math.Inf(1)
	for i := range rad {
		lo = min(lo, diag[i]-rad[i])
	}
	return lo
}

// ritzBounds returns, for a solve of k eigenpairs, the k-th largest and the
// largest Ritz values of A on the span of the last solve's eigenvectors
// (s.sub, at least k columns), and the products spent (one per column).
// By Cauchy's interlacing theorem they are at most λ_k(A) and λ_1(A),
// however much A changed since that solve: a filter cut below thetaK
// damps no wanted eigenvalue.
func (s *solver) ritzBounds(k int) (thetaK, theta1 float64, products int, err error) {
	x := s.sub
	n, c := x.Dims()
	ax := mat.NewDense(n, c, nil)
	s.op.ApplyBlock(ax, x)
	h := mat.NewSymDense(c, nil)
	rx, ra, rh := x.RawMatrix(), ax.RawMatrix(), h.RawSymmetric()
	// The upper triangle of XᵀAX (A symmetric: the product's is enough).
	s.b.BLAS().Dgemm(blas.Trans, blas.NoTrans, c, c, n, 1, rx.Data, rx.Stride, ra.Data, ra.Stride, 0, rh.Data, rh.Stride)
	e, err := s.b.SymEig(h, engine.AllRange(), false)
	if err != nil {
		return 0, 0, c, fmt.Errorf("filter cut: %w", err)
	}
	return e.Values[c-k], e.Values[c-1], c, nil
}

// lowEnd returns the lower end of the filter's damped interval and the
// products spent on it: the smallest eigenvalue of A by Krylov–Schur at
// tolerance 1e-4 (warm-started from the last one's vector), less 2% of
// the interval's width, or Gershgorin's bound if that solve fails. On
// letters the bound was 2.6 times too far (−13.9 against λ_min = −5.3),
// and the narrower interval cut the products of a filtered solve by a
// fifth for ~90 more. The estimate is a Ritz value, so λ_min may lie
// slightly below it; the margin covers that, and an eigenvalue far below
// the end would be amplified and found with its Rayleigh quotient below
// cut, which filtered's check rejects.
func (s *solver) lowEnd(cut float64) (float64, int) {
	ko := engine.KrylovSchurOptions{Tol: 1e-4, Seed: s.opt.Seed, Start: s.low, MaxRestarts: 20}
	r, err := engine.KrylovSchur(s.ctx, s.b, s.op, 1, engine.SmallestAlgebraic, ko)
	if err != nil || len(r.Values) != 1 || !(r.Values[0] < cut) {
		s.low = nil
		return s.op.lowerBound(), r.OpApplies
	}
	s.low = r.Vectors
	return r.Values[0] - 0.02*(cut-r.Values[0]), r.OpApplies
}

// filterStats describes one filtered solve (filterLog).
type filterStats struct {
	K        int
	Cut, Lo  float64   // the damped interval [Lo, Cut]
	Worst    float64   // the largest ‖A·x − θ·x‖/max(|θ|, ε^(2/3)) of the returned pairs
	Theta    []float64 // nil if the filtered solve did not converge
	Accepted bool      // every residual passed the test on A
}

// filtered computes the k largest eigenpairs of A by Lanczos (Filtered) or
// Krylov–Schur (KrylovSchur) on the Chebyshev filter p(A) that damps
// [λ_lo, cut], λ_lo from lowEnd and cut filterCut × the bound of
// ritzBounds, so that p is increasing and above 1 on the wanted
// eigenvalues. The solve on p(A) runs at the tolerance EigTol·θ_k/(θ_1 −
// λ_lo): a pair whose residual on p(A) passes it passes EigTol on A
// (components along damped eigenvectors are scaled by up to that ratio
// going back to A). The Ritz values are Rayleigh quotients on A, and the
// pairs must pass the eigensolver's test on A itself, residuals recomputed
// (one block product). ok is false when no cut is known (no previous
// eigenvectors, or θ_k not positive), when the filtered solve does not
// converge within 30 restarts, or when a pair fails the test on A: the
// caller then solves plain.
func (s *solver) filtered(k int) (r engine.EigsResult, ok bool, err error) {
	if s.sub == nil || s.sub.RawMatrix().Cols < k {
		return r, false, nil
	}
	thetaK, theta1, bp, err := s.ritzBounds(k)
	r.OpApplies = bp
	if err != nil || !(thetaK > posTol) {
		return r, false, err
	}
	cut := filterCut * thetaK
	lo, lp := s.lowEnd(cut)
	r.OpApplies += lp
	n := s.n
	d := filterDegree
	if s.opt.Eigensolver == KrylovSchur {
		d = ksFilterDegree
	}
	f := &chebOp{op: s.op, c: (cut + lo) / 2, e: (cut - lo) / 2, d: d, n: n}
	tol := s.tol * thetaK / (theta1 - lo)
	var pr engine.EigsResult
	if s.opt.Eigensolver == KrylovSchur {
		ko := engine.KrylovSchurOptions{Tol: tol, Seed: s.opt.Seed, Block: ksBlock, Start: s.sub, MaxRestarts: 30}
		pr, err = engine.KrylovSchur(s.ctx, s.b, f, k, engine.LargestAlgebraic, ko)
	} else {
		eo := engine.EigsOptions{Tol: tol, Seed: s.opt.Seed, MaxIter: 30}
		pr, err = s.b.Eigs(s.ctx, f, k, engine.LargestAlgebraic, eo)
	}
	r.Iterations = pr.Iterations
	r.OpApplies += f.prod
	var nc *engine.EigsNotConvergedError
	if errors.As(err, &nc) {
		filterLog(filterStats{K: k, Cut: cut, Lo: lo, Worst: math.Inf(1)})
		return r, false, nil // solved plain by the caller
	}
	if err != nil {
		return r, false, err
	}
	x := pr.Vectors
	kk := len(pr.Values)
	ax := mat.NewDense(n, kk, nil)
	s.op.ApplyBlock(ax, x)
	r.OpApplies += kk
	theta := make([]float64, kk)
	rx, ra := x.RawMatrix(), ax.RawMatrix()
	for i := 0; i < n; i++ {
		xr, ar := rx.Data[i*rx.Stride:i*rx.Stride+kk], ra.Data[i*ra.Stride:i*ra.Stride+kk]
		for l := range xr {
			theta[l] += xr[l] * ar[l]
		}
	}
	res := make([]float64, kk)
	for i := 0; i < n; i++ {
		xr, ar := rx.Data[i*rx.Stride:i*rx.Stride+kk], ra.Data[i*ra.Stride:i*ra.Stride+kk]
		for l := range xr {
			d := ar[l] - theta[l]*xr[l]
			res[l] += d * d
		}
	}
	// The eigensolvers' test, on A itself: ‖A·x − θ·x‖ ≤ EigTol·max(|θ|,
	// ε^(2/3)), or within the rounding of the recomputed residual,
	// 256·ε·‖A‖ (‖A‖ ≤ max(θ_1, −λ_lo) up to the interlacing gap).
	const eps = 0x1p-53
	eps23 := math.Cbrt(eps * eps)
	floor := 256 * eps * max(theta1, -lo)
	st := filterStats{K: k, Cut: cut, Lo: lo, Theta: theta, Accepted: true}
	for l := range res {
		rl := math.Sqrt(res[l])
		st.Worst = max(st.Worst, rl/max(math.Abs(theta[l]), eps23))
		if rl > max(s.tol*max(math.Abs(theta[l]), eps23), floor) || !(theta[l] > cut) {
			st.Accepted = false
		}
	}
	filterLog(st)
	order := make([]int, kk)
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return theta[order[a]] < theta[order[b]] })
	r.Values = make([]float64, kk)
	r.Vectors = mat.NewDense(n, kk, nil)
	for t, l := range order {
		r.Values[t] = theta[l]
		for i := 0; i < n; i++ {
			r.Vectors.Set(i, t, x.At(i, l))
		}
	}
	return r, st.Accepted, nil
}

// ksFilterDegree is the filter's degree for KrylovSchur.
var ksFilterDegree = 6

// filterLog, when set (tests), receives each filtered solve's figures.
var filterLog = func(filterStats) {}

// String formats the figures for a log line.
func (f filterStats) String() string {
	if len(f.Theta) == 0 {
		return fmt.Sprintf("k=%d cut %.4g lo %.4g: not converged", f.K, f.Cut, f.Lo)
	}
	return fmt.Sprintf("k=%d cut %.4g lo %.4g: worst residual/|θ| %.2g, θ %.4g … %.4g, accepted %v",
		f.K, f.Cut, f.Lo, f.Worst, slices.Min(f.Theta), slices.Max(f.Theta), f.Accepted)
}
