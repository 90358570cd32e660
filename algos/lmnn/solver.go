package lmnn

import (
	"context"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/progress"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// Step-size rule (the paper's and metric-learn's): grow by stepGrow after
// an accepted step, halve after a rejected one.
const (
	stepGrow   = 1.01
	stepShrink = 0.5
	// initialStep is the first step's length relative to ‖M₀‖_F/‖G₀‖_F.
	initialStep = 0.05
	// minStep: a step below this fraction of ‖M‖_F/‖G‖_F changes no
	// digit that matters; the descent stops (not converged).
	minStep = 1e-14
	// eigRelTol: eigenvalues at or below eigRelTol·λmax are clipped to
	// zero with the negative ones (rounding noise of a zero eigenvalue).
	eigRelTol = 1e-13
	// refreshRelTol: a final refresh that raises the objective by more
	// than this (relative) found new active triplets.
	refreshRelTol = 1e-12
)

// run is the projected subgradient descent on M, or with Options.Rank > 0
// the subgradient descent on the factor L: the same step-size and stopping
// rules, only the trial point differs (iterNorm and stepNorm are those of M
// and G, or of L and 2·G·L).
func (s *solver) run(ctx context.Context) (*Result, error) {
	res := &Result{Scale: s.scale}
	if err := s.collectiveErr(ctx, nil); err != nil {
		return s.result(res), err
	}
	if err := s.refresh(); err != nil {
		return nil, err
	}
	res.Curve = append(res.Curve, s.obj)
	gn := s.stepNorm()
	if gn == 0 {
		res.Converged, res.Reason = true, "zero subgradient at the start"
		return s.result(res), nil
	}
	alpha := initialStep * s.iterNorm() / gn
	var mTry, a *mat.SymDense
	var lNext *mat.Dense // low rank: the trial factor's buffer
	if s.rank > 0 {
		lNext = mat.NewDense(s.d, s.rank, nil)
	} else {
		mTry = mat.NewSymDense(s.d, nil)
		a = mat.NewSymDense(s.d, nil)
	}
	sinceRefresh, lastRefreshObj := 0, s.obj
	for it := 1; it <= s.opt.MaxIter; it++ {
		refreshed := false
		if err := s.collectiveErr(ctx, nil); err != nil {
			res.Iterations, res.Reason = it-1, "cancelled"
			return s.result(res), err
		}
		if sinceRefresh == s.opt.RefreshEvery {
			if err := s.refresh(); err != nil {
				return s.result(res), err
			}
			sinceRefresh = 0
			// No net progress since the last refresh: the steps went past
			// the region where the old candidate set was complete (the
			// new active triplets undo the window's decrease), so the step
			// is too long; halve it as after a rejected step. Without this
			// the descent can cycle from refresh to refresh.
			if s.obj >= lastRefreshObj {
				alpha *= stepShrink
			}
			lastRefreshObj = s.obj
			refreshed = true
		}
		sinceRefresh++
		res.Iterations = it
		var lTry *mat.Dense
		if s.rank > 0 {
			// Trial point: L − α·2GL.
			lTry = s.factorStep(lNext, alpha)
			var err error
			if lTry, err = s.agree(lTry, nil); err != nil {
				return s.result(res), err
			}
		} else {
			// Trial point: Π(M − αG).
			for i := 0; i < s.d; i++ {
				for j := i; j < s.d; j++ {
					a.SetSym(i, j, s.m.At(i, j)-alpha*s.grad.At(i, j))
				}
			}
			var err error
			if lTry, err = s.project(mTry, a); err != nil {
				return s.result(res), err
			}
			if lTry, err = s.agree(lTry, mTry); err != nil {
				return s.result(res), err
			}
		}
		objTry, actTry, err := s.evaluate(lTry, s.wTry)
		if err != nil {
			return s.result(res), err
		}
		if objTry > s.obj {
			alpha *= stepShrink
			s.report(it, stepWhat("step rejected", refreshed))
			if alpha*s.stepNorm() <= minStep*math.Max(s.iterNorm(), 1) {
				res.Reason = "step size vanished without a decrease (objective flat to rounding)"
				break
			}
			continue
		}
		// Accept.
		rel := (s.obj - objTry) / math.Max(math.Abs(s.obj), math.SmallestNonzeroFloat64)
		if s.rank > 0 {
			s.l, lNext = lTry, s.l
			s.m.SymOuterK(1, s.l)
		} else {
			s.m, mTry = mTry, s.m
			s.l = lTry
		}
		s.obj, s.active = objTry, actTry
		s.w, s.wTry = s.wTry, s.w
		if err := s.gradient(); err != nil {
			return s.result(res), err
		}
		res.Curve = append(res.Curve, s.obj)
		alpha *= stepGrow
		if rel < s.opt.Tol || s.obj == 0 {
			// Check the active set with an exact search in the current
			// metric: converged only when it finds no new active triplet.
			before := s.obj
			if err := s.refresh(); err != nil {
				return s.result(res), err
			}
			sinceRefresh, lastRefreshObj = 0, s.obj
			if s.obj <= before+refreshRelTol*math.Abs(before) {
				res.Converged = true
				res.Reason = fmt.Sprintf("relative objective change %.3g below the tolerance %.3g; a refresh of the impostors found no new active triplet", rel, s.opt.Tol)
				s.report(it, "converged")
				return s.result(res), nil
			}
		}
		s.report(it, stepWhat("step accepted", refreshed))
	}
	if res.Reason == "" {
		res.Reason = fmt.Sprintf("iteration limit %d reached", s.opt.MaxIter)
	}
	// A last refresh makes the reported objective and active count those
	// of the true active set at the returned M.
	if err := s.refresh(); err != nil {
		return s.result(res), err
	}
	return s.result(res), nil
}

// stepWhat describes an iteration for its progress event.
func stepWhat(what string, refreshed bool) string {
	if refreshed {
		return what + " after an impostor refresh"
	}
	return what
}

// result fills res from the current iterate, in the units of the input.
func (s *solver) result(res *Result) *Result {
	res.Objective = s.obj
	res.Active = s.active
	res.Candidates = s.candTotal
	res.Truncated = s.truncTotal
	res.Refreshes = s.refreshes
	res.M = mat.NewSymDense(s.d, nil)
	res.M.ScaleSym(1/s.scale, s.m)
	res.L = mat.DenseCopyOf(s.l)
	res.L.Scale(1/math.Sqrt(s.scale), res.L)
	return res
}

// report sends one progress event per iteration (accepted or rejected
// step, or convergence): the CLI throttles them.
func (s *solver) report(it int, what string) {
	if s.opt.Progress == nil {
		return
	}
	s.opt.Progress(progress.Event{Algorithm: "lmnn", Iteration: it, Objective: s.obj, Gap: math.NaN(),
		Message: fmt.Sprintf("lmnn: %s at iteration %d: objective %.8g, %d active triplets, %d impostor candidates (%d points truncated)",
			what, it, s.obj, s.active, s.candTotal, s.truncTotal)})
}

// project overwrites dst with the projection of the symmetric a onto the PSD
// cone (negative eigenvalues clipped) and returns its factor L (dst = L Lᵀ).
func (s *solver) project(dst, a *mat.SymDense) (*mat.Dense, error) {
	e, err := s.b.SymEig(a, engine.AllRange(), true)
	if err != nil {
		return nil, fmt.Errorf("lmnn: projection: %w", err)
	}
	top := 0.0
	if k := len(e.Values); k > 0 {
		top = e.Values[k-1]
	}
	var keep []int
	for k, v := range e.Values {
		if v > 0 && v > eigRelTol*top {
			keep = append(keep, k)
		}
	}
	l := mat.NewDense(s.d, max(len(keep), 1), nil)
	for c, k := range keep {
		sq := math.Sqrt(e.Values[k])
		for i := 0; i < s.d; i++ {
			l.Set(i, c, e.Vectors.At(i, k)*sq)
		}
	}
	dst.SymOuterK(1, l)
	return l, nil
}

// transform writes Z = X·L (n×r) into the solver's scratch and returns it.
func (s *solver) transform(l *mat.Dense) *mat.Dense {
	_, r := l.Dims()
	if cap(s.z) < s.n*r {
		s.z = make([]float64, s.n*r)
	}
	z := s.z[:s.n*r]
	xr, lr := s.x.RawMatrix(), l.RawMatrix()
	engine.MulRows(s.impl, s.n, r, s.d, xr.Data, xr.Stride, lr.Data, lr.Stride, z, r)
	return mat.NewDense(s.n, r, z)
}

// evaluate returns the objective at M = L Lᵀ on the current candidate set
// and the number of active triplets, and writes the subgradient's pair
// weights into w: (1−μ) + μ·#active on a target pair, −μ·#active on an
// impostor pair. With Options.Split each process evaluates its anchors
// (the other anchors' target pairs get weight 0) and the sums are over all.
func (s *solver) evaluate(l *mat.Dense, w []float64) (float64, int, error) {
	z := s.transform(l)
	if err := s.b.PairSqDists(s.dist, z, s.pairs); err != nil {
		return 0, 0, fmt.Errorf("lmnn: PairSqDists: %w", err)
	}
	nT, mu := len(s.tIdx), s.mu
	dist := s.dist
	if s.opt.Split != nil {
		clear(w[:s.tPtr[s.lo]])
		clear(w[s.tPtr[s.hi]:nT])
	}
	sparse.ParallelRows(s.hi-s.lo, 8*len(s.pairs)*(nT/s.n+1), func(lo, hi int) {
		for i := s.lo + lo; i < s.lo+hi; i++ {
			t0, t1 := s.tPtr[i], s.tPtr[i+1]
			c0, c1 := nT+s.cPtr[i], nT+s.cPtr[i+1]
			var obj float64
			act := 0
			for p := t0; p < t1; p++ {
				w[p] = 1 - mu
				obj += (1 - mu) * dist[p]
			}
			for q := c0; q < c1; q++ {
				w[q] = 0
			}
			for p := t0; p < t1; p++ {
				dp := 1 + dist[p]
				for q := c0; q < c1; q++ {
					if h := dp - dist[q]; h > 0 {
						obj += mu * h
						act++
						w[p] += mu
						w[q] -= mu
					}
				}
			}
			s.rowObj[i], s.rowAct[i] = obj, act
		}
	})
	var obj float64
	act := 0
	for i := s.lo; i < s.hi; i++ {
		obj += s.rowObj[i]
		act += s.rowAct[i]
	}
	if s.opt.Split != nil {
		v := []float64{obj, float64(act)}
		if err := s.sum(v); err != nil {
			return 0, 0, err
		}
		obj, act = v[0], int(v[1])
	}
	return obj, act, nil
}

// gradient sets s.grad = Xᵀ L_W X for the weights s.w: the subgradient
// (1−μ) Σ C_ij + μ Σ_active (C_ij − C_il) at the iterate, and with
// Options.Rank > 0 the factor's gradient s.gl = 2·G·L.
func (s *solver) gradient() error {
	if err := s.graph.SetWeights(s.w); err != nil {
		return fmt.Errorf("lmnn: %w", err)
	}
	if err := s.b.WeightedGram(s.grad, s.x, s.graph); err != nil {
		return fmt.Errorf("lmnn: gradient: %w", err)
	}
	if err := s.sumSym(s.grad); err != nil {
		return err
	}
	if s.rank > 0 {
		s.factorGradient()
	}
	return nil
}

func grow(v []float64, n int) []float64 {
	if cap(v) < n {
		return make([]float64, n)
	}
	return v[:n]
}

// normF is the Frobenius norm of a symmetric matrix.
func normF(a *mat.SymDense) float64 { return mat.Norm(a, 2) }
