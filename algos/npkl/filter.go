package npkl

import (
	"errors"
	"math"
	"sort"

	"github.com/psdlearn/psdlearn/engine"
	"gonum.org/v1/gonum/mat"
)

// chebOp is p(A) = T_d((A − c)/e), the Chebyshev polynomial of degree d
// that stays in [−1, 1] on [c − e, c + e] and grows fast above c + e.
type chebOp struct {
	op   *Operator
	c, e float64
	d    int
	t0   []float64
	t1   []float64
	tmp  []float64
	n    int
	prod int
}

func (f *chebOp) Dim() int { return f.n }

// Apply overwrites dst with p(A)·x by the three-term recurrence.
func (f *chebOp) Apply(dst, x []float64) {
	// b(v) = (A v − c v)/e
	b := func(out, v []float64) {
		f.op.Apply(out, v)
		f.prod++
		for i := range out {
			out[i] = (out[i] - f.c*v[i]) / f.e
		}
	}
	if f.d == 1 {
		b(dst, x)
		return
	}
	prev, cur := f.t0, f.t1
	copy(prev, x)
	b(cur, x)
	for j := 2; j <= f.d; j++ {
		b(f.tmp, cur)
		out := prev // T_{j} = 2B T_{j−1} − T_{j−2}, written over T_{j−2}
		if j == f.d {
			out = dst
		}
		for i := range out {
			out[i] = 2*f.tmp[i] - prev[i]
		}
		prev, cur = cur, out
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

// lowEnd returns a lower end for the filter's damped interval and the
// operator products spent on it: the Gershgorin bound, or (filterLanczosLow)
// the smallest Ritz value of a short Lanczos run less 2% (Ritz values lie
// inside the spectrum, so this can be slightly above λ_min; an eigenvalue
// below the end is then amplified a little, and a reordering is caught by
// filtered's check), falling back to the bound. On letters a first version
// of the Lanczos estimate (tolerance 1e-3, no restart cap) kept a 3-iteration
// run busy for minutes; the bound is the default.
func (s *solver) lowEnd() (float64, int) {
	if !filterLanczosLow {
		return s.op.lowerBound(), 0
	}
	r, err := s.b.Eigs(s.ctx, s.op, 1, engine.SmallestAlgebraic, engine.EigsOptions{Tol: 1e-2, NCV: 40, MaxIter: 10, Seed: s.opt.Seed})
	if err != nil || len(r.Values) != 1 {
		return s.op.lowerBound(), r.OpApplies
	}
	lo := r.Values[0]
	return lo - 0.02*max(math.Abs(lo), s.cut), r.OpApplies
}

// filtered computes the k largest eigenpairs of A by Lanczos on the
// Chebyshev filter that damps [λ_lo, cut]. The Ritz values are Rayleigh
// quotients on A, and their residuals on A are recomputed (one block
// product). ok is false when a Ritz value lies at or below cut (the filter
// may then have reordered the spectrum) or a residual fails ARPACK's test
// at the solver's tolerance on A itself: the caller then solves plain.
func (s *solver) filtered(k int, cut float64) (r engine.EigsResult, ok bool, err error) {
	lo, lop := s.lowEnd()
	n := s.n
	f := &chebOp{op: s.op, c: (cut + lo) / 2, e: (cut - lo) / 2, d: filterDegree,
		t0: make([]float64, n), t1: make([]float64, n), tmp: make([]float64, n), n: n}
	eo := engine.EigsOptions{Tol: s.tol, Seed: s.opt.Seed, MaxIter: 30}
	pr, err := s.b.Eigs(s.ctx, f, k, engine.LargestAlgebraic, eo)
	r.Iterations = pr.Iterations
	r.OpApplies = f.prod + lop
	var nc *engine.EigsNotConvergedError
	if errors.As(err, &nc) {
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
	// ARPACK's acceptance test, on A itself: ‖A·x − θ·x‖ ≤ tol·max(ε^(2/3), |θ|),
	// with tol at least 64ε (the rounding of the recomputed residuals).
	tol := max(s.tol, 64*0x1p-53)
	var worst float64
	for l := range res {
		worst = max(worst, math.Sqrt(res[l])/max(math.Abs(theta[l]), math.Cbrt(0x1p-106)))
	}
	filterLog(k, cut, lo, worst, theta)
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
	return r, r.Values[0] > cut && worst <= tol, nil
}

// filterLanczosLow selects lowEnd's Lanczos estimate over Gershgorin's bound.
var filterLanczosLow = false

// filterLog, when set (tests), receives each filtered solve's figures.
var filterLog = func(k int, cut, lo, worstRel float64, theta []float64) {}
