package sdp

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/limits"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// The SDP compiler: Solve turns the problem into a dualEval, the dual
// evaluator with its constraint data in the forms the operator and the
// dual need (sparse entries, small and large rank-one terms).

// contribution says that a multiple coef of a multiplier lands in CSR slot.
type contribution struct {
	slot int
	coef float64
}

// bigRankOne is a rank-one term applied matrix-free: owner is the constraint
// index, or −1 for C.
type bigRankOne struct {
	owner int
	w     float64
	idx   []int
	val   []float64
}

// newtonMaxN is the largest N for the Newton-CG phase (dense eigendecompositions).
const newtonMaxN = 3000

// denseFallbackN is the largest N for which the sparse path falls back to a
// dense eigendecomposition when the negative part has high rank.
const denseFallbackN = 4000

// smallRankOne is the largest support of a rank-one term folded into the sparse matrix.
const smallRankOne = 16

// dualEval evaluates the SDP dual and caches the factor of the primal solution.
type dualEval struct {
	ctx    context.Context
	b      engine.Backend
	p      *Problem
	n      int
	sigma  float64
	method Method

	s       sparse.CSR // pattern and current values of the sparse part of C + Â
	base    []float64  // values of C in s
	cStart  []int      // contributions of constraint i: contrib[cStart[i]:cStart[i+1]]
	contrib []contribution
	big     []bigRankOne
	bigW    []float64 // current weights of big

	// Sparse eigensolver state.
	k                 int
	initRank, maxRank int
	eigTol            float64
	// tol is the eigensolver tolerance in force (EigTol, or looser while
	// the solve is far from the optimum: see accuracy), cacheTol the one
	// the cached evaluation was made with.
	tol, cacheTol float64
	seed          uint64
	start         []float64
	eigs          engine.EigsSolver // Options.Eigs (nil: the backend's)
	solver        Eigensolver
	subspace      *mat.Dense // Block: the previous evaluation's Ritz vectors
	applies       int        // operator products of the sparse eigensolves
	// ldl, when non-nil, is the envelope LDLᵀ factorization of the sparse
	// part for the shift-and-invert Lanczos (see shiftinvert.go);
	// factorizations counts its factorizations.
	ldl            *envLDL
	factorizations int

	// Complement evaluations (sparse method): when the negative part of
	// C + Â has high rank (far-off line-search trial points), the evaluation
	// goes through its low-rank positive part, with ‖M₋‖² = ‖M‖² − ‖M₊‖² and
	// ⟨M₋, A⟩ = ⟨M, A⟩ − ⟨M₊, A⟩. comp marks such a cached evaluation (z is
	// then nil and factor recomputes the negative part).
	comp     bool
	kPos     int
	bigDense [][]float64 // the big rank-one vectors as dense n-vectors (on first use)

	// Bounded evaluations (sparse method): a trial point whose smallest
	// eigenvalues alone put the dual objective above cutoff (the value at the
	// start of the current L-BFGS-B round) cannot be accepted by the line
	// search, so its objective is reported as the lower bound
	// ½σ Σ_{j≤k} θ_j² + bᵀu from the k Ritz values found (θ_j ≥ λ_j < 0 by
	// interlacing) with the gradient of that partial negative part, and
	// bounded marks the cache as such (no certificate, no solution).
	cutoff  float64
	bounded bool
	trialBU float64 // bᵀu at the point being evaluated
	// negScale is −λ_min of the last exact sparse evaluation with a
	// negative part (zero before): the scale of the eigenvalue tolerance.
	negScale float64

	// Cache of the last evaluation.
	z       *mat.Dense // n×r with (C + Â)_− = −Z Zᵀ
	lam     []float64  // the negative eigenvalues
	q       []float64  // ⟨Z Zᵀ, A_i⟩
	qc      float64    // ⟨Z Zᵀ, C⟩
	u       []float64
	half    float64 // ½σ Σ λ²
	bu      float64
	maxViol float64 // of the cache's primal point (X(u), or its repair)

	// Primal repair (repair.go): forms are the hard constraints as rank-one
	// forms (nil: no repair); rep, when non-nil, is the factor of the
	// repaired primal point of the cached evaluation and repPrimal its
	// objective; repairs counts the evaluations whose primal was repaired.
	rset            *repairSet
	rep             *mat.Dense
	repPrimal       float64
	repairs         int
	gapTol, feasTol float64
}

func compileSDP(p *Problem, opt Options) (*dualEval, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: nil SDP", ErrInput)
	}
	n := p.N
	if n < 1 {
		return nil, fmt.Errorf("%w: SDP of size %d", ErrInput, n)
	}
	if !(p.Sigma > 0) || math.IsInf(p.Sigma, 0) {
		return nil, fmt.Errorf("%w: sigma = %v, want a finite σ > 0", ErrInput, p.Sigma)
	}
	if len(p.Constraints) == 0 {
		return nil, fmt.Errorf("%w: no constraints", ErrInput)
	}
	if err := checkSym("C", p.C, n); err != nil {
		return nil, err
	}
	for i, c := range p.Constraints {
		if err := checkSym(fmt.Sprintf("constraint %d", i), c.A, n); err != nil {
			return nil, err
		}
		if math.IsNaN(c.B) || math.IsInf(c.B, 0) {
			return nil, fmt.Errorf("%w: constraint %d has b = %v", ErrInput, i, c.B)
		}
		if c.Penalty < 0 || math.IsNaN(c.Penalty) || math.IsInf(c.Penalty, 0) {
			return nil, fmt.Errorf("%w: constraint %d has penalty %v", ErrInput, i, c.Penalty)
		}
	}
	ev := &dualEval{
		cutoff: math.Inf(1),
		b:      engine.Or(opt.Backend),
		p:      p,
		n:      n,
		sigma:  p.Sigma,
		method: opt.Method,
		eigTol: cmp.Or(opt.EigTol, 1e-12), solver: opt.Eigensolver,
		seed: opt.Seed,
		q:    make([]float64, len(p.Constraints)),
	}
	ev.tol, ev.cacheTol = ev.eigTol, ev.eigTol
	if ev.method == Auto {
		ev.method = Sparse
		if n <= autoDenseMax {
			ev.method = Dense
		}
	}
	if ev.method != Dense && ev.method != Sparse {
		return nil, fmt.Errorf("%w: unknown method %d", ErrInput, int(opt.Method))
	}
	if ev.method == Sparse && n < 3 {
		ev.method = Dense
	}
	ev.initRank = opt.InitRank
	if ev.initRank <= 0 {
		ev.initRank = 16
	}
	ev.maxRank = opt.MaxRank
	if ev.maxRank <= 0 || ev.maxRank > n-1 {
		ev.maxRank = n - 1
	}
	ev.initRank = min(ev.initRank, ev.maxRank)
	ev.k = ev.initRank
	if err := checkMemory(n, len(p.Constraints), ev.initRank, ev.method); err != nil {
		return nil, err
	}

	// Sparsity pattern of C + Σ A_i (entries and small rank-ones).
	cols := make([][]int, n)
	addPattern := func(a SymMatrix) {
		for _, e := range a.Entries {
			cols[e.I] = append(cols[e.I], e.J)
			if e.I != e.J {
				cols[e.J] = append(cols[e.J], e.I)
			}
		}
		for _, r := range a.RankOnes {
			if r.Index != nil && len(r.Index) <= smallRankOne {
				for _, a := range r.Index {
					cols[a] = append(cols[a], r.Index...)
				}
			}
		}
	}
	addPattern(p.C)
	for _, c := range p.Constraints {
		addPattern(c.A)
	}
	s := sparse.CSR{Rows: n, Cols: n, Indptr: make([]int, n+1)}
	for i, c := range cols {
		sort.Ints(c)
		u := c[:0]
		for t, v := range c {
			if t == 0 || v != c[t-1] {
				u = append(u, v)
			}
		}
		cols[i] = u
		s.Indptr[i+1] = s.Indptr[i] + len(u)
	}
	s.Ind = make([]int, 0, s.Indptr[n])
	for _, c := range cols {
		s.Ind = append(s.Ind, c...)
	}
	s.Data = make([]float64, len(s.Ind))
	ev.s = s
	ev.eigs = opt.Eigs
	if ev.method == Sparse && ev.solver == Lanczos && !opt.NoShiftInvert {
		// The envelope is sized before its values are allocated; it is
		// skipped (plain Lanczos) when too costly or above the memory limit.
		if c := newEnvLDL(n, s.Indptr, s.Ind); c.flops <= envelopeMaxFlops &&
			limits.Check("the envelope LDLᵀ factor", limits.Words(c.start[n])) == nil {
			c.data = make([]float64, c.start[n])
			ev.ldl = c
		}
	}
	slot := func(i, j int) int {
		ind := s.Ind[s.Indptr[i]:s.Indptr[i+1]]
		return s.Indptr[i] + sort.SearchInts(ind, j)
	}
	contribs := func(a SymMatrix, owner int, out []contribution) []contribution {
		for _, e := range a.Entries {
			out = append(out, contribution{slot(e.I, e.J), e.V})
			if e.I != e.J {
				out = append(out, contribution{slot(e.J, e.I), e.V})
			}
		}
		for _, r := range a.RankOnes {
			if r.Index != nil && len(r.Index) <= smallRankOne {
				for ta, ia := range r.Index {
					for tb, ib := range r.Index {
						out = append(out, contribution{slot(ia, ib), r.W * r.Value[ta] * r.Value[tb]})
					}
				}
				continue
			}
			ev.big = append(ev.big, bigRankOne{owner: owner, w: r.W, idx: r.Index, val: r.Value})
		}
		return out
	}
	ev.base = make([]float64, len(s.Data))
	for _, c := range contribs(p.C, -1, nil) {
		ev.base[c.slot] += c.coef
	}
	ev.cStart = make([]int, len(p.Constraints)+1)
	for i, c := range p.Constraints {
		ev.contrib = contribs(c.A, i, ev.contrib)
		ev.cStart[i+1] = len(ev.contrib)
	}
	ev.bigW = make([]float64, len(ev.big))
	return ev, nil
}

func checkSym(what string, a SymMatrix, n int) error {
	for t, e := range a.Entries {
		if e.I < 0 || e.I >= n || e.J < 0 || e.J >= n {
			return fmt.Errorf("%w: %s: entry %d at (%d,%d) outside %d×%d", ErrInput, what, t, e.I, e.J, n, n)
		}
		if math.IsNaN(e.V) || math.IsInf(e.V, 0) {
			return fmt.Errorf("%w: %s: entry %d is %v", ErrInput, what, t, e.V)
		}
	}
	for t, r := range a.RankOnes {
		if math.IsNaN(r.W) || math.IsInf(r.W, 0) {
			return fmt.Errorf("%w: %s: rank-one %d has weight %v", ErrInput, what, t, r.W)
		}
		if r.Index == nil {
			if len(r.Value) != n {
				return fmt.Errorf("%w: %s: dense rank-one %d has length %d, want %d", ErrInput, what, t, len(r.Value), n)
			}
		} else {
			if len(r.Index) != len(r.Value) {
				return fmt.Errorf("%w: %s: rank-one %d has %d indices and %d values", ErrInput, what, t, len(r.Index), len(r.Value))
			}
			seen := make(map[int]bool, len(r.Index))
			for _, i := range r.Index {
				if i < 0 || i >= n {
					return fmt.Errorf("%w: %s: rank-one %d has index %d outside [0,%d)", ErrInput, what, t, i, n)
				}
				if seen[i] {
					return fmt.Errorf("%w: %s: rank-one %d repeats index %d", ErrInput, what, t, i)
				}
				seen[i] = true
			}
		}
		for _, v := range r.Value {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: %s: rank-one %d has a value %v", ErrInput, what, t, v)
			}
		}
	}
	return nil
}

// autoDenseMax is the largest N for which Auto takes the Dense method. On
// MVU's swiss rolls (k = 6, the paper's σ, defaults, native backend) Dense
// wins up to 120 points (1.0 s against 2.5 s) and Sparse from 200 (1.8 s
// against 2.4 s; at 1,000 points 2.4 s against 37 s): Dense costs O(N³)
// per evaluation whatever the rank of the negative part.
const autoDenseMax = 160
