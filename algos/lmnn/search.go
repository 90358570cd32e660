package lmnn

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/internal/f64"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// The impostor search.
//
// At a refresh every point i needs the differently-labelled points l with
// d(i,l) < R_i + 1 in the current metric M, R_i the largest distance from i
// to its targets: exactly the l that can make a triplet (i, j, l) active.
//
// A full search finds, in Z = X·L, the Candidates nearest points of every
// point (any class; exact sparse.KNN, one BLAS-blocked self-search) and
// remembers them with ρ_i, the distance of the last one, and the metric
// M₀ = L₀L₀ᵀ it was done in. Every point within ρ_i of i in M₀ is in i's list.
//
// Later refreshes reuse it when they can prove it complete. With
// c = λ_min(M₀^{-1/2} M M₀^{-1/2}) (a D×D eigenproblem; 0 when M₀ is
// singular, as always with Options.Rank < D) every vector v has vᵀMv ≥ c·vᵀM₀v, so a point l with
// d_M(i,l) < R_i + 1 has d_M₀(i,l) < (R_i + 1)/c. When that bound is below
// ρ_i, i's stored list holds every candidate and the refresh only computes
// exact current distances to those points. The other points ("stale") are
// searched again, alone, against all points in the current metric. When
// more than a quarter of the points are stale, or M₀ is singular, the
// refresh is a new full search. A full search in a singular metric keeps
// only the Candidates neighbours it needs: the next refresh cannot use it.
//
// A point whose search returned Candidates neighbours all within R_i + 1 is
// counted as truncated: impostors beyond them were not seen. Those points
// are also stale at every cheap refresh, so they are re-searched each time.

// searchState is the last full search.
type searchState struct {
	valid bool
	nbr   []int     // n×k neighbour indices of the full search
	rho   []float64 // per point: distance of its k-th neighbour (+Inf: all points listed)
	k     int
	// whiten = Λ₀^{-1/2} V₀ᵀ for M₀ = V₀ Λ₀ V₀ᵀ of full rank: c is the
	// smallest eigenvalue of whiten·M·whitenᵀ.
	whiten *mat.Dense
}

// storeFactor: a full search stores storeFactor·Candidates neighbours per
// point, so that later refreshes can prove their Candidates nearest
// complete from the stored list.
const storeFactor = 2

// nbr is a neighbour with its squared distance.
type nbr struct {
	d float64
	i int
}

func cmpNbr(a, b nbr) int {
	switch {
	case a.d < b.d:
		return -1
	case a.d > b.d:
		return 1
	}
	return a.i - b.i
}

// maxStaleFraction: above this share of stale points a refresh is a full search.
const maxStaleFraction = 0.25

// refresh recomputes the impostor candidates in the current metric, rebuilds
// the pair graph and re-evaluates the objective, the weights and the
// subgradient at the iterate.
func (s *solver) refresh() error {
	s.refreshes++
	t0 := time.Now()
	defer func() { s.refreshTime += time.Since(t0) }()
	z := s.transform(s.l)
	if _, r := z.Dims(); r == 0 {
		z = mat.NewDense(s.n, 1, nil)
	}
	zr := z.RawMatrix()
	r := zr.Cols
	row := func(i int) []float64 { return zr.Data[i*zr.Stride : i*zr.Stride+r] }
	thr := make([]float64, s.n) // R_i + 1
	for i := 0; i < s.n; i++ {
		rad := 0.0
		for p := s.tPtr[i]; p < s.tPtr[i+1]; p++ {
			rad = math.Max(rad, f64.SqDist(row(i), row(s.tIdx[p])))
		}
		thr[i] = rad + 1
	}
	k := min(s.opt.Candidates, s.n-1)
	storeK := min(storeFactor*k, s.n-1)
	c, err := s.boundFactor()
	if err != nil {
		return err
	}
	// Per point: its candidates (at most k) in cand[i*k:], their count,
	// whether the stored list proves them exact, whether truncated.
	cand := make([]int, s.n*k)
	count := make([]int, s.n)
	covered := make([]bool, s.n)
	trunc := make([]bool, s.n)
	// pass takes the candidates from the stored lists, with their exact
	// distances in the current metric: known (those of the search just
	// done, in its order) or computed here.
	pass := func(c float64, known []float64) {
		sk := s.search.k
		sparse.ParallelRows(s.n, s.n*sk*(2*r+8), func(lo, hi int) {
			buf := make([]nbr, sk)
			for i := lo; i < hi; i++ {
				list := s.search.nbr[i*sk : (i+1)*sk]
				inside := 0 // stored points within R_i + 1
				for t, l := range list {
					var d float64
					if known != nil {
						d = known[i*sk+t]
					} else {
						d = f64.SqDist(row(i), row(l))
					}
					buf[t] = nbr{d, l}
					if d < thr[i] {
						inside++
					}
				}
				// Fewer than k points inside: the k-th distance is at
				// least R_i + 1 and no ordering is needed.
				dK, sel := math.Inf(1), buf
				if inside >= k {
					slices.SortFunc(buf, cmpNbr)
					dK, sel = buf[k-1].d, buf[:k]
				}
				// Every point nearer than min(R_i+1, d_K) in M is within
				// ρ_i in M₀, so it is in the stored list.
				if !(math.Min(thr[i], dK) < c*s.search.rho[i]) {
					covered[i] = false
					continue
				}
				covered[i] = true
				n := 0
				for _, e := range sel {
					if e.d < thr[i] && s.y[e.i] != s.y[i] {
						cand[i*k+n] = e.i
						n++
					}
				}
				count[i] = n
				trunc[i] = k < s.n-1 && dK < thr[i]
			}
		})
	}
	var stale []int
	if s.opt.Split != nil && s.hi-s.lo < s.n {
		// Each process searches its anchors alone, against all points.
		own := make([]int, s.hi-s.lo)
		for a := range own {
			own[a] = s.lo + a
		}
		err := s.searchAlone(z, own, thr, k, cand, count, trunc)
		if err := s.collectiveErr(context.Background(), err); err != nil {
			return err
		}
		return s.rebuild(cand, count, trunc, k, 0)
	}
	if s.search.valid && c > 0 && s.search.k == storeK {
		pass(c, nil)
		for i, ok := range covered {
			if !ok {
				stale = append(stale, i)
			}
		}
	}
	full := !s.search.valid || !(c > 0) || s.search.k != storeK || float64(len(stale)) > maxStaleFraction*float64(s.n)
	if full {
		if err := s.setWhiten(); err != nil {
			return err
		}
		// A singular M gives the next refresh no bound (c = 0): it will
		// search in full again, so the neighbours beyond the k it needs
		// now would never be read. On MNIST's 164 components LMNN's
		// metric is singular from its third refresh on, and the search
		// for k instead of 2k neighbours takes a third less time.
		searchK := storeK
		if s.search.whiten == nil {
			searchK = k
		}
		tk := time.Now()
		nb, err := sparse.KNNBLAS(s.impl, z, z, searchK, true)
		s.knnTime += time.Since(tk)
		if err != nil {
			return fmt.Errorf("lmnn: impostor search: %w", err)
		}
		s.fullSearches++
		s.search.valid, s.search.k, s.search.nbr = true, searchK, nb.Index
		s.search.rho = grow(s.search.rho, s.n)
		for i := 0; i < s.n; i++ {
			_, dist := nb.Row(i)
			s.search.rho[i] = math.Inf(1)
			if searchK < s.n-1 {
				s.search.rho[i] = dist[searchK-1]
			}
		}
		// The stored lists are this metric's: every point is covered
		// (ties at ρ_i included, the search being exact).
		pass(math.Inf(1), nb.Dist)
		stale = stale[:0]
	} else if len(stale) > 0 {
		if err := s.searchAlone(z, stale, thr, k, cand, count, trunc); err != nil {
			return err
		}
	}
	return s.rebuild(cand, count, trunc, k, len(stale))
}

// rebuild makes the candidates of the search (count[i] of them for point i
// in cand[i*k:]) the solver's, rebuilds the pair graph when they changed,
// and re-evaluates the objective, the weights and the subgradient.
func (s *solver) rebuild(cand, count []int, trunc []bool, k, stale int) error {
	s.cPtr = grow2(s.cPtr, s.n+1)
	s.cIdx = s.cIdx[:0]
	s.truncated = 0
	for i := 0; i < s.n; i++ {
		s.cIdx = append(s.cIdx, cand[i*k:i*k+count[i]]...)
		s.cPtr[i+1] = len(s.cIdx)
		if trunc[i] {
			s.truncated++
		}
	}
	s.lastStale = stale
	s.candTotal, s.truncTotal = len(s.cIdx), s.truncated
	if s.opt.Split != nil {
		v := []float64{float64(s.candTotal), float64(s.truncTotal)}
		if err := s.sum(v); err != nil {
			return err
		}
		s.candTotal, s.truncTotal = int(v[0]), int(v[1])
	}
	// The same candidates as the last refresh (common near the end): the
	// pair graph's pattern is unchanged, keep it.
	nT := len(s.tIdx)
	same := s.graph != nil && len(s.pairs) == nT+len(s.cIdx)
	for q := 0; same && q < len(s.cIdx); q++ {
		same = s.pairs[nT+q].B == s.cIdx[q]
	}
	for i := 0; same && i < s.n; i++ {
		for q := s.cPtr[i]; same && q < s.cPtr[i+1]; q++ {
			same = s.pairs[nT+q].A == i
		}
	}
	if same {
		var err error
		if s.obj, s.active, err = s.evaluate(s.l, s.w); err != nil {
			return err
		}
		return s.gradient()
	}
	s.pairs = s.pairs[:0]
	for i := 0; i < s.n; i++ {
		for p := s.tPtr[i]; p < s.tPtr[i+1]; p++ {
			s.pairs = append(s.pairs, sparse.Pair{A: i, B: s.tIdx[p]})
		}
	}
	for i := 0; i < s.n; i++ {
		for q := s.cPtr[i]; q < s.cPtr[i+1]; q++ {
			s.pairs = append(s.pairs, sparse.Pair{A: i, B: s.cIdx[q]})
		}
	}
	var err error
	if s.graph, err = sparse.NewPairGraph(s.n, s.pairs); err != nil {
		return fmt.Errorf("lmnn: %w", err)
	}
	m := len(s.pairs)
	s.dist = grow(s.dist, m)
	s.w = grow(s.w, m)
	s.wTry = grow(s.wTry, m)
	if s.obj, s.active, err = s.evaluate(s.l, s.w); err != nil {
		return err
	}
	return s.gradient()
}

// searchAlone finds the candidates of the points rows, each searched
// alone against all points in the current metric (z = X·L).
func (s *solver) searchAlone(z *mat.Dense, rows []int, thr []float64, k int, cand, count []int, trunc []bool) error {
	if len(rows) == 0 {
		return nil
	}
	zr := z.RawMatrix()
	r := zr.Cols
	q := mat.NewDense(len(rows), r, nil)
	for a, i := range rows {
		copy(q.RawRowView(a), zr.Data[i*zr.Stride:i*zr.Stride+r])
	}
	kk := min(k+1, s.n)
	tk := time.Now()
	nb, err := sparse.KNNBLAS(s.impl, q, z, kk, false)
	s.knnTime += time.Since(tk)
	if err != nil {
		return fmt.Errorf("lmnn: impostor search: %w", err)
	}
	for a, i := range rows {
		idx, dist := nb.Row(a)
		seen, last, n := 0, 0.0, 0
		for t, l := range idx {
			if l == i || seen == k {
				continue
			}
			seen++
			last = dist[t]
			if dist[t] < thr[i] && s.y[l] != s.y[i] {
				cand[i*k+n] = l
				n++
			}
		}
		count[i] = n
		trunc[i] = k < s.n-1 && last < thr[i]
	}
	return nil
}

// setWhiten stores Λ^{-1/2}Vᵀ of the current M as the reference of the
// search bound, or nil when M is singular (no bound).
func (s *solver) setWhiten() error {
	s.search.whiten = nil
	if s.rank > 0 && s.rank < s.d {
		return nil // M = L Lᵀ of rank ≤ r < D: singular, no bound
	}
	e, err := s.b.SymEig(s.m, engine.AllRange(), true)
	if err != nil {
		return fmt.Errorf("lmnn: search bound: %w", err)
	}
	top := e.Values[len(e.Values)-1]
	if !(e.Values[0] > 1e-10*top) {
		return nil
	}
	w := mat.NewDense(s.d, s.d, nil)
	for k, v := range e.Values {
		f := 1 / math.Sqrt(v)
		for i := 0; i < s.d; i++ {
			w.Set(k, i, e.Vectors.At(i, k)*f)
		}
	}
	s.search.whiten = w
	return nil
}

// boundFactor returns c = λ_min(W M Wᵀ) for the whitening W of the last
// full search's metric (M ⪰ c·M₀), slightly lowered for rounding, or 0 when
// there is no usable reference.
func (s *solver) boundFactor() (float64, error) {
	if !s.search.valid || s.search.whiten == nil {
		return 0, nil
	}
	var t mat.Dense
	t.Mul(s.search.whiten, s.m)
	var bm mat.Dense
	bm.Mul(&t, s.search.whiten.T())
	sym := mat.NewSymDense(s.d, nil)
	for i := 0; i < s.d; i++ {
		for j := i; j < s.d; j++ {
			sym.SetSym(i, j, (bm.At(i, j)+bm.At(j, i))/2)
		}
	}
	e, err := s.b.SymEig(sym, engine.BottomK(1), false)
	if err != nil {
		return 0, fmt.Errorf("lmnn: search bound: %w", err)
	}
	c := e.Values[0] * (1 - 1e-9)
	if !(c > 0) {
		return 0, nil
	}
	return c, nil
}

func grow2(v []int, n int) []int {
	if cap(v) < n {
		return make([]int, n)
	}
	return v[:n]
}
