package distributed

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/parpack"
	"github.com/psdlearn/psdlearn/progress"
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
	// Objective is the last iteration's npkl.Iteration.Objective: −tr(A K)
	// for the linear loss.
	Objective float64
	// Alpha holds the final dual variables of the squared hinge (C for
	// every constraint with the linear loss); the same on every rank.
	Alpha []float64
	// History has one entry per closed-form solve (npkl.Result.History),
	// and Iterations is its length.
	History    []npkl.Iteration
	Iterations int
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
			return nil, fmt.Errorf("distributed: SimpleNPKL kernel: %w", err)
		}
		v.SetCol(j, full)
	}
	return model.NewKernel(v, append([]float64(nil), r.Values...))
}

// SimpleNPKL computes SimpleNPKL's kernel (npkl.Learn) with the Laplacian
// and the eigenvectors distributed by rows: rank r passes its rows of the
// n×n normalised Laplacian (npkl.Laplacian) as a counts[r]×n CSR matrix
// with global column indices, and gets its rows of V. The constraints (m
// pairs, small) are on every rank. Each closed form needs the top
// eigenpairs of A = Σ_c w_c T_c E_{a_c b_c} − L (w_c = C for the linear
// loss, α_c for the squared hinge), requested as npkl.Learn does (Rank at
// first, doubled until an eigenvalue ≤ 10⁻¹⁰ shows the positive spectrum
// covered or MaxRank is reached; later squared-hinge iterations start from
// the previous positive rank plus a margin), from solver (nil:
// parpack.For(comm), PARPACK on the native world). Each operator product
// gathers x (one Allgatherv of n floats) and applies this rank's rows of L
// and the constraints that touch them.
//
// The squared hinge also needs K_ab for every constraint after every
// iteration, and rows a and b of V may live on two ranks: each rank sends
// the rows of V of the constraint endpoints it owns (one Allgatherv of at
// most min(n, 2m)·rank floats per iteration), and every rank then computes
// all the K_ab, the objective and the step on α identically, so α, the
// next operator and the result are the same on every rank.
//
// opt is npkl's (Loss, B, C, Rank, MaxRank, EigTol, Seed, and for the
// squared hinge Iters, Eta, Alpha0, Tol, EarlyEigTol; Backend and
// Eigensolver are not used: the solver is). Progress, if set, receives one
// event per iteration on every rank; the caller reports rank 0's. With
// parpack.Go the eigenpairs, α and the objectives are bit-for-bit those of
// a one-process npkl.Learn with Eigensolver Lanczos on the go backend (the
// default below npkl.AutoKrylovSchurDim points), for any number of ranks. It
// is collective.
func SimpleNPKL(ctx context.Context, comm mpi.Comm, lapRows *sparse.CSR, counts []int, pairs *constraints.Pairs, opt npkl.Options, solver parpack.Solver) (*NPKLResult, error) {
	n, lo, err := rowLayout(comm, counts, 1)
	if err != nil {
		return nil, err
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
	o, err := opt.WithDefaults(n, pairs.Len())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if solver == nil {
		solver = parpack.For(comm)
	}
	m := pairs.Len()
	tv := pairs.T()
	alpha := make([]float64, m)
	iters := 1
	init := o.C
	if o.Loss == npkl.SquaredHinge {
		iters, init = o.Iters, o.Alpha0
	}
	for c := range alpha {
		alpha[c] = init
	}

	// This rank's rows of A, built by npkl's own code (npkl.Operator holds
	// all of them the same way), so products agree with one process's
	// to the last bit.
	rows, err := npkl.NewRowOperator(lapRows, lo, pairs, alpha)
	if err != nil {
		return nil, fmt.Errorf("distributed: SimpleNPKL: %w", err)
	}
	op := parpack.Gathered(comm, counts, rows.MulVec)

	out := &NPKLResult{Alpha: alpha}
	var ends *endpointRows
	if o.Loss == npkl.SquaredHinge {
		ends = newEndpointRows(pairs, counts, comm.Rank())
	}
	kij := make([]float64, m)
	k := o.Rank
	for t := 1; t <= iters; t++ {
		t0 := time.Now()
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("distributed: SimpleNPKL: %w", err)
		}
		if t > 1 {
			if err := rows.SetWeights(alpha); err != nil {
				return nil, fmt.Errorf("distributed: SimpleNPKL: iteration %d: %w", t, err)
			}
		}
		tol := o.EigTol
		if o.EarlyEigTol > 0 && o.Tol == 0 && t < iters {
			tol = o.EarlyEigTol
		}
		it := npkl.Iteration{T: t}
		var trAK float64
		for {
			r, err := solver.Eigs(ctx, comm, op, counts, k, parpack.LargestAlgebraic, parpack.Options{Tol: tol, Seed: o.Seed})
			out.EigIterations += r.Iterations
			out.OpApplies += r.OpApplies
			it.OpApplies += r.OpApplies
			if err != nil {
				return nil, fmt.Errorf("distributed: SimpleNPKL: iteration %d: eigensolver (%d eigenpairs): %w", t, k, err)
			}
			if len(r.Values) != k {
				return nil, fmt.Errorf("distributed: SimpleNPKL: iteration %d: eigensolver returned %d of %d eigenpairs", t, len(r.Values), k)
			}
			covered := r.Values[0] <= npklPosTol
			if !covered && k < o.MaxRank {
				k = min(2*k, o.MaxRank)
				continue
			}
			if trAK, err = out.fill(r, k, covered, o.B); err != nil {
				return nil, fmt.Errorf("distributed: SimpleNPKL: iteration %d: %w", t, err)
			}
			break
		}
		pos := len(out.Values)
		k = min(max(pos+max(5, pos/4), 1), o.MaxRank)
		it.Rank, it.Eigenpairs, it.Covered = pos, out.Eigenpairs, out.Covered
		out.Objective = -trAK
		if o.Loss == npkl.Linear {
			it.Objective, it.Primal = -trAK, -trAK
			it.Seconds = time.Since(t0).Seconds()
			out.History = append(out.History, it)
			break
		}
		if err := ends.entries(comm, out, kij); err != nil {
			return nil, fmt.Errorf("distributed: SimpleNPKL: iteration %d: %w", t, err)
		}
		// npkl.Learn's bookkeeping and step, in its order of operations.
		var sumAlpha, sumAlpha2, align float64
		for c, a := range alpha {
			sumAlpha += a
			sumAlpha2 += a * a
			align += a * tv[c] * kij[c]
		}
		it.Objective = -trAK + sumAlpha - sumAlpha2/(2*o.C)
		out.Objective = it.Objective
		var hinge float64
		for c := range tv {
			if hv := 1 - tv[c]*kij[c]; hv > 0 {
				hinge += hv * hv
			}
		}
		it.Primal = align - trAK + o.C/2*hinge
		eta := 2 * o.Eta / float64(t+2)
		var change float64
		for c, a := range alpha {
			g := 1 - tv[c]*kij[c] - a/o.C
			na := max(a+eta*g, 0)
			change = max(change, math.Abs(na-a))
			alpha[c] = na
		}
		it.AlphaChange = change
		it.Seconds = time.Since(t0).Seconds()
		out.History = append(out.History, it)
		if o.Progress != nil {
			o.Progress(progress.Event{Algorithm: "simplenpkl", Iteration: t, Objective: it.Objective, Gap: math.NaN(),
				Message: fmt.Sprintf("simplenpkl: iteration %d, rank %d, objective %.10g", t, it.Rank, it.Objective)})
		}
		if o.Tol > 0 && change <= o.Tol*max(1, maxAbs(alpha)) {
			break
		}
	}
	out.Iterations = len(out.History)
	return out, nil
}

// fill sets λ, this rank's rows of V and the spectrum from a solve of k
// eigenpairs (ascending, as the solvers return them) and returns tr(A K) =
// √(B Σσ₊²).
func (out *NPKLResult) fill(r parpack.Result, k int, covered bool, b float64) (float64, error) {
	out.Covered, out.Eigenpairs = covered, k
	var trAK float64
	out.Spectrum, out.Values, trAK = npkl.ClosedForm(r.Values, b)
	if len(out.Values) == 0 {
		return 0, npkl.ErrNoPositiveSpectrum
	}
	out.Vectors = npkl.TopVectors(r.Vectors, len(out.Values))
	return trAK, nil
}

// endpointRows gathers the rows of V at the constraints' endpoints: the
// distinct endpoints in ascending order are split by owner, so rank q's
// share is the contiguous run own[q] of that list.
type endpointRows struct {
	pos    []int // pos[e]: index of endpoint e in the list (−1 if none)
	own    []int // own[q]: number of endpoints rank q owns
	mine   []int // this rank's endpoints, as local rows
	pairs  *constraints.Pairs
	send   []float64
	recv   []float64
	counts []int
}

func newEndpointRows(pairs *constraints.Pairs, counts []int, rank int) *endpointRows {
	n := pairs.N
	e := &endpointRows{pos: make([]int, n), own: make([]int, len(counts)), pairs: pairs, counts: make([]int, len(counts))}
	for i := range e.pos {
		e.pos[i] = -1
	}
	for _, q := range pairs.List {
		e.pos[q.A], e.pos[q.B] = 0, 0
	}
	idx, owner, end := 0, 0, counts[0]
	lo := 0
	for q := 0; q < rank; q++ {
		lo += counts[q]
	}
	for i := 0; i < n; i++ {
		for i >= end {
			owner++
			end += counts[owner]
		}
		if e.pos[i] < 0 {
			continue
		}
		e.pos[i] = idx
		idx++
		e.own[owner]++
		if owner == rank {
			e.mine = append(e.mine, i-lo)
		}
	}
	return e
}

// entries writes K_ab = Σ_l λ_l V_al V_bl for every constraint into kij,
// in model.Kernel.At's order of summation. It is collective.
func (e *endpointRows) entries(comm mpi.Comm, out *NPKLResult, kij []float64) error {
	p := len(out.Values)
	total := 0
	for q, c := range e.own {
		e.counts[q] = c * p
		total += c * p
	}
	e.send = slices.Grow(e.send[:0], len(e.mine)*p)[:len(e.mine)*p]
	e.recv = slices.Grow(e.recv[:0], total)[:total]
	raw := out.Vectors.RawMatrix()
	for t, i := range e.mine {
		copy(e.send[t*p:(t+1)*p], raw.Data[i*raw.Stride:i*raw.Stride+p])
	}
	if err := comm.Allgatherv(e.send, e.recv, e.counts); err != nil {
		return fmt.Errorf("gathering the rows of V at the constraints: %w", err)
	}
	for c, q := range e.pairs.List {
		va := e.recv[e.pos[q.A]*p : (e.pos[q.A]+1)*p]
		vb := e.recv[e.pos[q.B]*p : (e.pos[q.B]+1)*p]
		var s float64
		for l, lam := range out.Values {
			s += lam * va[l] * vb[l]
		}
		kij[c] = s
	}
	return nil
}

// maxAbs returns ‖x‖∞ (npkl's stopping test on α).
func maxAbs(x []float64) float64 {
	var m float64
	for _, v := range x {
		m = max(m, math.Abs(v))
	}
	return m
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
