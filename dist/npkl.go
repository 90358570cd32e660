package dist

import (
	"context"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/parpack"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// NPKLResult is the kernel K = V diag(λ) Vᵀ SimpleNPKL learns, with V
// distributed by rows like the Laplacian.
type NPKLResult struct {
	// Values holds λ, positive and descending; the same on every rank.
	Values []float64
	// Vectors holds this rank's rows of V: counts[rank]×len(Values).
	Vectors *mat.Dense
	// Spectrum holds the computed eigenvalues of A, descending; when
	// Covered it ends with the first non-positive one.
	Spectrum []float64
	// Covered reports whether the positive spectrum of A was covered.
	Covered bool
	// Objective is −tr(A K), the objective of npkl.Iteration.Objective.
	Objective float64
	// Eigenpairs is the number of eigenpairs computed by the last solve.
	Eigenpairs int
	// EigIterations and OpApplies total the eigensolves' restarts and
	// operator products.
	EigIterations, OpApplies int
}

// Kernel gathers V on every rank (len(Values) Allgathervs of n floats)
// and returns the whole kernel, which eval.KernelKMeans and the model
// files take. It is collective.
func (r *NPKLResult) Kernel(comm mpi.Comm, counts []int) (*model.Kernel, error) {
	n := 0
	for _, c := range counts {
		n += c
	}
	k := len(r.Values)
	v := mat.NewDense(n, k, nil)
	loc := r.Vectors.RawMatrix().Rows
	col := make([]float64, loc)
	full := make([]float64, n)
	for j := 0; j < k; j++ {
		mat.Col(col, j, r.Vectors)
		if err := comm.Allgatherv(col, full, counts); err != nil {
			return nil, fmt.Errorf("dist: SimpleNPKL kernel: %w", err)
		}
		v.SetCol(j, full)
	}
	return model.NewKernel(v, append([]float64(nil), r.Values...))
}

// SimpleNPKL computes SimpleNPKL's linear-loss kernel (npkl.Learn with
// Loss Linear) with the Laplacian and the eigenvectors distributed by rows:
// rank r passes its rows of the n×n normalised Laplacian (npkl.Laplacian)
// as a counts[r]×n CSR matrix with global column indices, and gets its rows
// of V. The constraints (m pairs, small) are on every rank. The closed form
// needs the top eigenpairs of A = C Σ_c T_c E_{a_c b_c} − L, requested as
// npkl.Learn does (Rank at first, doubled until an eigenvalue ≤ 10⁻¹⁰ shows
// the positive spectrum covered or MaxRank is reached), from solver (nil:
// parpack.For(comm), PARPACK on the native world). Each operator product
// gathers x (one Allgatherv of n floats) and applies this rank's rows of L
// and the constraints that touch them.
//
// opt is npkl's (B, C, Rank, MaxRank, EigTol, Seed; Backend, Progress and
// the squared-hinge fields are not used); Loss must be Linear. With
// parpack.Go the eigenpairs are bit-for-bit those of a one-process
// npkl.Learn on the go backend, for any number of ranks. It is collective.
func SimpleNPKL(ctx context.Context, comm mpi.Comm, lapRows *sparse.CSR, counts []int, pairs *constraints.Pairs, opt npkl.Options, solver parpack.Solver) (*NPKLResult, error) {
	if comm == nil {
		return nil, fmt.Errorf("%w: nil communicator", ErrInvalid)
	}
	if len(counts) != comm.Size() {
		return nil, fmt.Errorf("%w: %d counts for %d ranks", ErrInvalid, len(counts), comm.Size())
	}
	n, lo := 0, 0
	for r, c := range counts {
		if c <= 0 {
			return nil, fmt.Errorf("%w: rank %d owns %d rows", ErrInvalid, r, c)
		}
		if r == comm.Rank() {
			lo = n
		}
		n += c
	}
	loc := counts[comm.Rank()]
	if lapRows == nil || lapRows.Rows != loc || lapRows.Cols != n {
		return nil, fmt.Errorf("%w: this rank's Laplacian rows must be a %d×%d CSR matrix", ErrInvalid, loc, n)
	}
	if n < 3 {
		return nil, fmt.Errorf("%w: need at least 3 points", ErrInvalid)
	}
	if pairs == nil || pairs.Len() == 0 || pairs.N != n {
		return nil, fmt.Errorf("%w: need constraints on the %d points", ErrInvalid, n)
	}
	for c, q := range pairs.List {
		if q.A < 0 || q.A >= n || q.B < 0 || q.B >= n || q.A == q.B {
			return nil, fmt.Errorf("%w: constraint %d = (%d,%d) on %d points", ErrInvalid, c, q.A, q.B, n)
		}
	}
	if opt.Loss != npkl.Linear {
		return nil, fmt.Errorf("%w: SimpleNPKL supports the linear loss only", ErrInvalid)
	}
	b, cw := opt.B, opt.C
	if b == 0 {
		b = 1
	}
	if cw == 0 {
		cw = 1
	}
	if !(b > 0) || math.IsInf(b, 0) || !(cw > 0) || math.IsInf(cw, 0) || opt.EigTol < 0 || opt.Rank < 0 || opt.MaxRank < 0 {
		return nil, fmt.Errorf("%w: B = %v, C = %v, EigTol = %v, Rank = %d, MaxRank = %d", ErrInvalid, b, cw, opt.EigTol, opt.Rank, opt.MaxRank)
	}
	// npkl's defaults (Options.withDefaults).
	rank, maxRank := opt.Rank, opt.MaxRank
	if rank == 0 {
		rank = npkl.PatakiRank(pairs.Len())
	}
	if maxRank == 0 {
		maxRank = min(max(2*rank, 64), 256)
	}
	maxRank = min(maxRank, n-1)
	rank = min(rank, maxRank)
	if solver == nil {
		solver = parpack.For(comm)
	}

	// The constraints touching this rank's rows: y[a−lo] += C·T/2·x[b].
	type term struct {
		row, col int
		h        float64
	}
	var terms []term
	for _, q := range pairs.List {
		h := 0.5 * cw * q.T()
		if q.A >= lo && q.A < lo+loc {
			terms = append(terms, term{q.A - lo, q.B, h})
		}
		if q.B >= lo && q.B < lo+loc {
			terms = append(terms, term{q.B - lo, q.A, h})
		}
	}
	op := parpack.Gathered(comm, counts, func(y, x []float64) {
		lapRows.MulVec(y, x)
		for i, v := range y {
			y[i] = -v
		}
		for _, t := range terms {
			y[t.row] += t.h * x[t.col]
		}
	})

	out := &NPKLResult{}
	k := rank
	for {
		r, err := solver.Eigs(ctx, comm, op, counts, k, parpack.LargestAlgebraic, parpack.Options{Tol: opt.EigTol, Seed: opt.Seed})
		out.EigIterations += r.Iterations
		out.OpApplies += r.OpApplies
		if err != nil {
			return nil, fmt.Errorf("dist: SimpleNPKL: eigensolver (%d eigenpairs): %w", k, err)
		}
		if len(r.Values) != k {
			return nil, fmt.Errorf("dist: SimpleNPKL: eigensolver returned %d of %d eigenpairs", len(r.Values), k)
		}
		covered := r.Values[0] <= npklPosTol
		if !covered && k < maxRank {
			k = min(2*k, maxRank)
			continue
		}
		out.Covered, out.Eigenpairs = covered, k
		out.Spectrum = make([]float64, k)
		for i, v := range r.Values {
			out.Spectrum[k-1-i] = v
		}
		var p int
		var ss float64
		for _, v := range out.Spectrum {
			if v <= npklPosTol {
				break
			}
			p++
			ss += v * v
		}
		if p == 0 {
			return nil, fmt.Errorf("dist: SimpleNPKL: %w", npkl.ErrNoPositiveSpectrum)
		}
		scale := math.Sqrt(b / ss)
		out.Objective = -math.Sqrt(b * ss)
		out.Values = make([]float64, p)
		out.Vectors = mat.NewDense(loc, p, nil)
		for l := 0; l < p; l++ {
			out.Values[l] = scale * out.Spectrum[l]
			for i := 0; i < loc; i++ {
				out.Vectors.Set(i, l, r.Vectors.At(i, k-1-l))
			}
		}
		return out, nil
	}
}

// npklPosTol is npkl's threshold above which an eigenvalue of A counts as
// positive (npkl.posTol).
const npklPosTol = 1e-10

// RowBlock returns rows [lo, hi) of a as a (hi−lo)×Cols CSR matrix with
// the same (global) column indices: a rank's share of a matrix built
// whole, such as the Laplacian SimpleNPKL takes.
func RowBlock(a *sparse.CSR, lo, hi int) *sparse.CSR {
	p0, p1 := a.Indptr[lo], a.Indptr[hi]
	ip := make([]int, hi-lo+1)
	for i := range ip {
		ip[i] = a.Indptr[lo+i] - p0
	}
	return &sparse.CSR{Rows: hi - lo, Cols: a.Cols, Indptr: ip,
		Ind: append([]int(nil), a.Ind[p0:p1]...), Data: append([]float64(nil), a.Data[p0:p1]...)}
}
