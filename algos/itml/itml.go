// Package itml implements Information-Theoretic Metric Learning (Davis,
// Kulis, Jain, Sra and Dhillon, ICML 2007): the Mahalanobis matrix A
// closest to a prior A0 in the LogDet divergence
//
//	D_ld(A, A0) = tr(A A0⁻¹) − log det(A A0⁻¹) − D
//
// subject to pair constraints d_A(x_i, x_j) ≤ u (similar pairs) and
// d_A(x_i, x_j) ≥ l (dissimilar pairs), softened by slack variables ξ whose
// divergence from the bounds is weighted by γ (here Gamma, the weight of
// their average: γ = Gamma/m for m constraints). Learn solves it by the
// paper's Algorithm 1: cyclic Bregman projections onto one constraint at a
// time, each a rank-one update A ← A + β A v vᵀ A (v = x_i − x_j) done with
// two BLAS calls (Dsymv, Dsyr) in O(D²) and no allocation.
//
// The projection is the one of the authors' reference code (itml.m), which
// corrects the typesetting of Algorithm 1: with p = vᵀAv and γ' = γ/(γ+1),
//
//	similar:     α = min(λ, γ'(1/p − 1/ξ)),  β = α/(1 − αp),   ξ ← 1/(1/ξ + α/γ)
//	dissimilar:  α = min(λ, γ'(1/ξ − 1/p)),  β = −α/(1 + αp),  ξ ← 1/(1/ξ − α/γ)
//	λ ← λ − α,   A ← A + β (Av)(Av)ᵀ
//
// so that after a projection d_A = ξ exactly (for γ = ∞, γ' = 1 and ξ stays
// at its bound). The iteration stops when the dual variables stop moving
// over a full cycle: Σ|λ − λ_prev| / (‖λ‖₂ + ‖λ_prev‖₂) < Tol, as in the
// reference code and metric-learn.
//
// Scale: the default prior is A0 = I/τ, τ the data's mean per-feature
// variance (τ = 1 on standardised data, so A0 = I there). Multiplying the
// data by s multiplies τ by s², leaves every distance under A0, the bounds
// and the iteration unchanged, and divides the learned A by s².
package itml

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/progress"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// ErrInvalid is wrapped by errors about invalid data, constraints or options.
var ErrInvalid = errs.New("itml: invalid input", errs.ErrInvalid)

// Defaults of Options and LabelPairs.
const (
	// DefaultGamma is the slack trade-off Gamma when none is given: the
	// weight of the average slack divergence, i.e. the paper's γ = 10/m for
	// m constraints. (The reference code's γ = 1 is Gamma = m here; on
	// letters, m = 27,040, it pulls the metric so far onto the constraints
	// that the validation 3-NN error rises from 7% to 27%.)
	DefaultGamma = 10.0
	// DefaultMaxIter bounds the cycles over all constraints (metric-learn's
	// max_iter).
	DefaultMaxIter = 1000
	// DefaultTol is the relative change of the dual variables over a cycle
	// below which the iteration stops (metric-learn's convergence_threshold).
	DefaultTol = 1e-3
	// LowerPercentile and UpperPercentile give the default bounds u and l:
	// the percentiles of the constraint pairs' squared distances under A0.
	LowerPercentile = 5
	UpperPercentile = 95
	// PairsPerClass2 is the default number of similar (and of dissimilar)
	// pairs per squared number of classes: 20·c² of each, as metric-learn.
	PairsPerClass2 = 20
)

// Options are the settings of Learn. Zero values mean the defaults.
type Options struct {
	// Gamma is the slack trade-off > 0 (0: DefaultGamma), the weight of the
	// average slack divergence: the paper's γ is Gamma/m for m constraints
	// (pairs of identical points not counted), so one value means the same
	// trade-off whatever the number of constraints. +Inf enforces the
	// constraints exactly (γ' = 1). It is dimensionless.
	Gamma float64
	// U and L are the bounds on the squared distance of similar and
	// dissimilar pairs. Zero (both) derives them from the percentiles of the
	// constraint pairs' squared distances under the prior; given, they must
	// satisfy 0 < U and 0 < L.
	U, L float64
	// Prior is A0 (D×D, positive definite). nil means I/τ, τ the data's mean
	// per-feature variance.
	Prior mat.Symmetric
	// MaxIter bounds the cycles over the constraints (0: DefaultMaxIter).
	MaxIter int
	// Tol is the convergence tolerance on the relative change of λ over a
	// cycle (0: DefaultTol).
	Tol float64
	// Backend supplies the BLAS (nil: engine.Default()).
	Backend engine.Backend
	// Progress, if set, receives one event per cycle.
	Progress progress.Func
}

// Result is a learned metric and the record of its solve.
type Result struct {
	M *mat.SymDense // the learned A (D×D)
	// Lambda are the dual variables, one per constraint in the order of
	// the pairs (≥ 0; positive for an active constraint).
	Lambda []float64
	// Xi are the final slack bounds ξ: similar pairs must have d_A ≤ ξ,
	// dissimilar ones d_A ≥ ξ (within the tolerance of the solve).
	Xi []float64
	// U, L are the bounds used; Scale is τ (1 when a prior was given).
	U, L, Scale float64
	// Gamma is the trade-off used (Options.Gamma or its default) and
	// PaperGamma the paper's γ = Gamma/m for the m constraints used.
	Gamma, PaperGamma float64
	// Iterations counts full cycles; Projections the rank-one updates made.
	Iterations, Projections int
	// Skipped counts pairs of identical points (v = 0), which no metric can
	// move and which are left out.
	Skipped int
	// Change is the relative change of λ over the last cycle.
	Change    float64
	Converged bool
	Reason    string
	// Curve is Change per cycle, for convergence plots.
	Curve []float64
}

// LabelPairs samples the constraints of labelled data as metric-learn does:
// num similar pairs (uniform among same-class pairs) and num dissimilar
// pairs (uniform among different-class pairs), num = 20·c² for c classes
// when num is 0, each capped at the number of such pairs. The seed fixes
// the sample.
func LabelPairs(y []int, num int, seed uint64) (*constraints.Pairs, error) {
	if num < 0 {
		return nil, fmt.Errorf("%w: %d pairs requested", ErrInvalid, num)
	}
	if len(y) < 2 {
		return nil, fmt.Errorf("%w: %d labelled points, want at least 2", ErrInvalid, len(y))
	}
	sizes := map[int]int{}
	for i, c := range y {
		if c < 0 {
			return nil, fmt.Errorf("%w: label %d of point %d is negative", ErrInvalid, c, i)
		}
		sizes[c]++
	}
	if len(sizes) < 2 {
		return nil, fmt.Errorf("%w: ITML from labels needs at least two classes, have %d", ErrInvalid, len(sizes))
	}
	if num == 0 {
		num = PairsPerClass2 * len(sizes) * len(sizes)
	}
	n := len(y)
	same := 0
	for _, s := range sizes {
		same += s * (s - 1) / 2
	}
	diff := n*(n-1)/2 - same
	ps, err := constraints.BalancedPairs(y, min(num, same), min(num, diff), seed)
	if err != nil {
		return nil, fmt.Errorf("itml: %w", err)
	}
	return ps, nil
}

// Learn runs ITML on the rows of x with the pair constraints ps (indices
// into x). On cancellation it returns the current iterate (a valid PSD
// matrix, not converged) with an error wrapping ctx.Err().
func Learn(ctx context.Context, x *mat.Dense, ps *constraints.Pairs, opt Options) (*Result, error) {
	if x == nil {
		return nil, fmt.Errorf("%w: nil data", ErrInvalid)
	}
	n, d := x.Dims()
	if n < 2 || d < 1 {
		return nil, fmt.Errorf("%w: %d×%d data, want at least 2 rows and 1 column", ErrInvalid, n, d)
	}
	if ps == nil || ps.Len() == 0 {
		return nil, fmt.Errorf("%w: no pair constraints", ErrInvalid)
	}
	if ps.N != n {
		return nil, fmt.Errorf("%w: pairs on %d points for %d rows", ErrInvalid, ps.N, n)
	}
	for r, p := range ps.List {
		if p.A < 0 || p.B < 0 || p.A >= n || p.B >= n || p.A == p.B {
			return nil, fmt.Errorf("%w: pair %d = (%d,%d) on %d points", ErrInvalid, r, p.A, p.B, n)
		}
	}
	gamma := opt.Gamma
	if gamma == 0 {
		gamma = DefaultGamma
	}
	if !(gamma > 0) {
		return nil, fmt.Errorf("%w: γ = %v, want > 0 (or +Inf)", ErrInvalid, opt.Gamma)
	}
	maxIter := opt.MaxIter
	if maxIter == 0 {
		maxIter = DefaultMaxIter
	}
	if maxIter < 0 {
		return nil, fmt.Errorf("%w: MaxIter = %d, want > 0 (or 0 for %d)", ErrInvalid, opt.MaxIter, DefaultMaxIter)
	}
	tol := opt.Tol
	if tol == 0 {
		tol = DefaultTol
	}
	if !(tol > 0) || math.IsInf(tol, 0) {
		return nil, fmt.Errorf("%w: Tol = %v, want a positive finite value", ErrInvalid, opt.Tol)
	}
	if (opt.U == 0) != (opt.L == 0) || opt.U < 0 || opt.L < 0 || math.IsNaN(opt.U) || math.IsNaN(opt.L) || math.IsInf(opt.U, 0) || math.IsInf(opt.L, 0) {
		return nil, fmt.Errorf("%w: bounds U = %v, L = %v: give both (positive, finite) or neither", ErrInvalid, opt.U, opt.L)
	}
	if opt.Prior != nil && opt.Prior.SymmetricDim() != d {
		return nil, fmt.Errorf("%w: prior is %d×%d for %d features", ErrInvalid, opt.Prior.SymmetricDim(), opt.Prior.SymmetricDim(), d)
	}
	xr := x.RawMatrix()
	for i := 0; i < n; i++ {
		for _, v := range xr.Data[i*xr.Stride : i*xr.Stride+d] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: row %d has a non-finite value", ErrInvalid, i)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	b := engine.Or(opt.Backend)
	bl := b.BLAS()
	// A is kept full (both triangles valid on entry, upper triangle
	// maintained by Dsyr and mirrored at the end).
	a := make([]float64, d*d)
	tau := 1.0
	if opt.Prior != nil {
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				v := opt.Prior.At(i, j)
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, fmt.Errorf("%w: prior entry (%d,%d) = %v", ErrInvalid, i, j, v)
				}
				a[i*d+j] = v
			}
		}
		var ch mat.Cholesky
		if !ch.Factorize(mat.NewSymDense(d, append([]float64(nil), a...))) {
			return nil, fmt.Errorf("%w: prior is not positive definite", ErrInvalid)
		}
	} else {
		tau = meanVariance(xr, n, d)
		if !(tau > 0) || math.IsInf(tau, 0) {
			return nil, fmt.Errorf("%w: the data have no spread (mean feature variance %v); give a prior", ErrInvalid, tau)
		}
		for i := 0; i < d; i++ {
			a[i*d+i] = 1 / tau
		}
	}

	m := ps.Len()
	res := &Result{Gamma: gamma, Scale: tau, Lambda: make([]float64, m), Xi: make([]float64, m)}
	v := make([]float64, d)
	av := make([]float64, d)
	diffInto := func(p constraints.LabelledPair) {
		ra := xr.Data[p.A*xr.Stride : p.A*xr.Stride+d]
		rb := xr.Data[p.B*xr.Stride : p.B*xr.Stride+d]
		for k := range v {
			v[k] = ra[k] - rb[k]
		}
	}
	dist := func() float64 { // vᵀAv, leaving Av in av
		bl.Dsymv(blas.Upper, d, 1, a, d, v, 1, 0, av, 1)
		return bl.Ddot(d, v, 1, av, 1)
	}

	// Distances under the prior: the bounds, and the pairs no metric moves.
	active := make([]bool, m)
	d0 := make([]float64, 0, m)
	for r, p := range ps.List {
		diffInto(p)
		if q := dist(); q > 0 && !math.IsInf(q, 0) {
			active[r] = true
			d0 = append(d0, q)
		} else if math.IsInf(q, 0) {
			return nil, fmt.Errorf("%w: pair %d: squared distance overflows", ErrInvalid, r)
		} else {
			res.Skipped++
		}
	}
	if len(d0) == 0 {
		return nil, fmt.Errorf("%w: every constraint pair joins identical points", ErrInvalid)
	}
	u, l := opt.U, opt.L
	if u == 0 {
		sort.Float64s(d0)
		u, l = percentile(d0, LowerPercentile), percentile(d0, UpperPercentile)
	}
	res.U, res.L = u, l
	for r, p := range ps.List {
		if p.Same {
			res.Xi[r] = u
		} else {
			res.Xi[r] = l
		}
	}

	// The paper's γ weighs the sum of the slack divergences; Gamma weighs
	// their average, so the paper's value is Gamma/m.
	res.PaperGamma = gamma / float64(len(d0))
	gamma = res.PaperGamma
	gp := 1.0
	if !math.IsInf(gamma, 1) {
		gp = gamma / (gamma + 1)
	}
	lambda, xi := res.Lambda, res.Xi
	old := make([]float64, m)
	finish := func() {
		for i := 0; i < d; i++ {
			for j := i + 1; j < d; j++ {
				a[j*d+i] = a[i*d+j]
			}
		}
		res.M = mat.NewSymDense(d, a)
	}
	for it := 1; it <= maxIter; it++ {
		if err := ctx.Err(); err != nil {
			finish()
			res.Reason = "cancelled"
			return res, fmt.Errorf("itml: cycle %d: %w", it, err)
		}
		for r, p := range ps.List {
			if !active[r] {
				continue
			}
			diffInto(p)
			q := dist()
			if !(q > 0) {
				continue // rounding made A singular along v; nothing to project
			}
			var alpha, beta float64
			if p.Same {
				alpha = min(lambda[r], gp*(1/q-1/xi[r]))
				beta = alpha / (1 - alpha*q)
				if !math.IsInf(gamma, 1) {
					xi[r] = 1 / (1/xi[r] + alpha/gamma)
				}
			} else {
				alpha = min(lambda[r], gp*(1/xi[r]-1/q))
				beta = -alpha / (1 + alpha*q)
				if !math.IsInf(gamma, 1) {
					xi[r] = 1 / (1/xi[r] - alpha/gamma)
				}
			}
			lambda[r] -= alpha
			if beta != 0 {
				bl.Dsyr(blas.Upper, d, beta, av, 1, a, d)
				res.Projections++
			}
		}
		var dl, nl, no float64
		for r := range lambda {
			dl += math.Abs(lambda[r] - old[r])
			nl += lambda[r] * lambda[r]
			no += old[r] * old[r]
		}
		res.Iterations = it
		sum := math.Sqrt(nl) + math.Sqrt(no)
		if sum == 0 {
			res.Change = 0
			res.Curve = append(res.Curve, 0)
			res.Converged = true
			res.Reason = "every constraint is satisfied by the prior"
			break
		}
		res.Change = dl / sum
		res.Curve = append(res.Curve, res.Change)
		if math.IsNaN(res.Change) || math.IsInf(res.Change, 0) {
			finish()
			res.Reason = "numerical breakdown"
			return res, fmt.Errorf("itml: cycle %d: the dual variables are not finite", it)
		}
		if opt.Progress != nil {
			opt.Progress(progress.Event{Algorithm: "itml", Iteration: it, Objective: math.NaN(), Gap: res.Change,
				Message: fmt.Sprintf("itml: cycle %d, relative change of λ %.3g (tolerance %.3g)", it, res.Change, tol)})
		}
		if res.Change < tol {
			res.Converged = true
			res.Reason = fmt.Sprintf("relative change of the dual variables %.3g below %.3g", res.Change, tol)
			break
		}
		copy(old, lambda)
	}
	if !res.Converged {
		res.Reason = fmt.Sprintf("cycle limit %d reached: relative change of the dual variables %.3g above %.3g", maxIter, res.Change, tol)
	}
	finish()
	return res, nil
}

// meanVariance is (1/D)·Σ_f var(x_f), the variances with divisor n (as
// data's standardisation), computed by columns with a shifted two-pass sum.
func meanVariance(xr blas64.General, n, d int) float64 {
	var total float64
	for f := 0; f < d; f++ {
		var mean float64
		for i := 0; i < n; i++ {
			mean += xr.Data[i*xr.Stride+f]
		}
		mean /= float64(n)
		var ss, c float64
		for i := 0; i < n; i++ {
			e := xr.Data[i*xr.Stride+f] - mean
			ss += e * e
			c += e
		}
		total += (ss - c*c/float64(n)) / float64(n)
	}
	return total / float64(d)
}

// percentile is numpy's default (linear) percentile of sorted values.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 1 {
		return sorted[0]
	}
	h := p / 100 * float64(len(sorted)-1)
	i := int(math.Floor(h))
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-float64(i))*(sorted[i+1]-sorted[i])
}
