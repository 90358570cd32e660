package distributed

import (
	"context"
	"fmt"

	"github.com/psdlearn/psdlearn/algos/frob"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/mpi"
	"gonum.org/v1/gonum/mat"
)

// FrobMetric solves FrobMetric (frob.Learn) on the triplets of sh, sharded
// across the ranks of comm: rank p passes its rows xLocal and the Shard
// Triplets returned for them. Every rank gets the same MetricResult, the
// one frob.Learn returns with the same options on the whole data and all
// the triplets, to rounding: M and L in the units of the data, DataScale,
// U (all m multipliers, in the order of constraints.Triplets), the
// certificate, the iteration and evaluation counts.
//
// The dual variables u_r belong to the triplets, which live on the rank of
// their anchor. Every rank runs the same L-BFGS-B and Newton polish over
// all m multipliers (frob.LearnOracle); a dual evaluation
//
//   - forms this rank's share of G(u) = Σ_r u_r A_r, a GEMM over its own
//     rows (the degrees of its halo rows go to their owners, one
//     AllreduceSum of N values; see ownGram), and adds the D×D shares with
//     one AllreduceSum (which also carries a cancellation flag);
//   - eigendecomposes G on rank 0, which broadcasts the positive
//     eigenpairs, so every rank has the same bits of (G)_+;
//   - computes its triplets' margins ⟨A_r, (G)_+⟩ and gathers all m of them
//     on every rank with one Allgatherv.
//
// Everything else (Σ u_r, ½‖(G)_+‖², the primal scale and hinge sums of the
// certificate, the L-BFGS-B steps) is computed by every rank from these
// identical vectors, in the one-process order, so every rank takes the same
// branches. A Hessian product of the polish is one more AllreduceSum of a
// D×D Gram and one Allgatherv of m values; its full eigendecomposition is
// computed on rank 0 and broadcast once per Newton step; docs/mpi.md
// describes how its results agree with one process.
//
// The options are those of frob.MetricOptions, the same on every rank (U0,
// if set, has all m entries). With the working set (WorkingSetOn, or
// WorkingSetAuto from frob.WorkingSetMinTriplets triplets, as in Learn) the
// evaluations over all the triplets are distributed as above, the fixed
// part of a round is one more Gram reduction, and each round's restricted
// dual is gathered on every rank (its triplets and the rows they touch)
// and solved by rank 0, which broadcasts the solution (frobws.go). A
// cancellation on another rank is seen at the next reduction, after rank
// 0's restricted solve.
//
// Cancellation is collective: a rank whose ctx is done says so in the next
// Gram reduction, and every rank returns the best point so far with its
// certificate (Certified false), with an error wrapping ctx.Err() on the
// cancelled ranks and context.Canceled with ErrRemote on the others.
func FrobMetric(ctx context.Context, comm mpi.Comm, xLocal *mat.Dense, sh *Shard, opt frob.MetricOptions) (*frob.MetricResult, error) {
	if comm == nil {
		return nil, fmt.Errorf("%w: nil communicator", ErrInvalid)
	}
	if sh == nil {
		return nil, fmt.Errorf("%w: nil shard", ErrInvalid)
	}
	switch opt.WorkingSet {
	case frob.WorkingSetOff, frob.WorkingSetAuto, frob.WorkingSetOn:
	default:
		return nil, fmt.Errorf("%w: unknown working-set mode %d", ErrInvalid, int(opt.WorkingSet))
	}
	d := 0
	if xLocal != nil {
		_, d = xLocal.Dims()
	} else if sh.Halo != nil {
		_, d = sh.Halo.Dims()
	}
	lerr := checkLocal(xLocal, sh)
	s, d, err := globalScale(comm, xLocal, sh, d, lerr)
	if err != nil {
		return nil, err
	}
	b := engine.Or(opt.Backend)
	lp, err := newLocal(b, xLocal, sh, s, d)
	if err != nil {
		return nil, err
	}
	counts, offsets, err := layout(comm, lp.m)
	if err != nil {
		return nil, err
	}
	m := offsets[len(offsets)-1]
	if m == 0 {
		return nil, fmt.Errorf("%w: no triplets on any rank", ErrInvalid)
	}
	o := &frobOracle{comm: comm, b: b, lp: lp, user: ctx, n: sh.N, d: d, m: m, counts: counts, off: offsets[comm.Rank()], mloc: lp.m, lts: lp.ts}
	if opt.WorkingSet == frob.WorkingSetOn || (opt.WorkingSet == frob.WorkingSetAuto && m >= frob.WorkingSetMinTriplets) {
		if err := o.newWSData(xLocal, sh, s, counts); err != nil {
			return nil, err
		}
	}
	o.nt = d * (d + 1) / 2
	o.buf = make([]float64, o.nt+1)
	o.g = mat.NewSymDense(d, nil)
	o.local = make([]float64, lp.m)
	pairs := 0
	if lp.m > 0 {
		o.part = frob.NewPart(b, lp.x, lp.ts)
		pairs = o.part.Pairs()
	}
	// The pair count only decides the polish's preconditioner; pairs shared
	// by two ranks' triplets count twice.
	np, err := comm.AllreduceSumScalar(float64(pairs))
	if err != nil {
		return nil, fmt.Errorf("distributed: %w", err)
	}
	o.pairs = int(np)
	cctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o.cancel = cancel
	res, err := frob.LearnOracle(cctx, o, opt)
	if res != nil {
		res.DataScale = s
		if res.M != nil {
			res.M.ScaleSym(1/(s*s), res.M)
		}
		if res.L != nil {
			res.L.Scale(1/s, res.L)
		}
	}
	if err != nil && cctx.Err() != nil {
		if ctx.Err() != nil {
			return res, fmt.Errorf("distributed: %w", ctx.Err())
		}
		return res, fmt.Errorf("%w: %w", ErrRemote, context.Canceled)
	}
	return res, err
}

// frobOracle is frob.Oracle across the ranks of comm (see FrobMetric).
type frobOracle struct {
	comm      mpi.Comm
	b         engine.Backend
	part      *frob.Part // nil when this rank has no triplets
	lp        *local     // its rows, halo and triplets (the Gram's share)
	user      context.Context
	cancel    func()
	n, d, m   int
	pairs     int
	counts    []int // triplets per rank
	off, mloc int   // this rank's first triplet and count
	nt        int   // D(D+1)/2
	buf       []float64
	g         *mat.SymDense // the summed Gram (rank 0: the last G evaluated)
	local     []float64     // this rank's per-triplet values
	// lts holds this rank's triplets on its rows and halo (nil when it has
	// none), ws the working set's data (nil when it is off).
	lts *constraints.TripletSet
	ws  *wsData
}

// localTriplet returns this rank's triplet r on its local rows.
func (o *frobOracle) localTriplet(r int) constraints.Triplet { return o.lts.Triplets[r] }

func (o *frobOracle) Sizes() (n, d, m, pairs int) { return o.n, o.d, o.m, o.pairs }

// gather collects every rank's o.local into out (m values, rank order).
func (o *frobOracle) gather(out []float64, what string) error {
	if err := o.comm.Allgatherv(o.local, out, o.counts); err != nil {
		return fmt.Errorf("distributed: %s: %w", what, err)
	}
	return nil
}

func (o *frobOracle) Norms() ([]float64, error) {
	if o.part != nil {
		copy(o.local, o.part.Norms())
	}
	out := make([]float64, o.m)
	return out, o.gather(out, "triplet norms")
}

// gram sets o.g to Σ_r w_r A_r over all ranks' triplets (w: all m): each
// rank's share over its own rows (ownGram), added by one AllreduceSum,
// which also carries the cancellation flag: when any rank's context is
// done, every rank cancels the solve's.
func (o *frobOracle) gram(w []float64) error {
	buf := o.buf
	if err := o.lp.gramInto(o.comm, buf[:o.nt], w[o.off:o.off+o.mloc]); err != nil {
		return err
	}
	buf[o.nt] = 0
	if o.user.Err() != nil {
		buf[o.nt] = 1
	}
	if err := o.comm.AllreduceSum(buf); err != nil {
		return fmt.Errorf("distributed: Gram matrix: %w", err)
	}
	if buf[o.nt] != 0 {
		o.cancel() // seen by every rank at this same reduction
	}
	raw := o.g.RawSymmetric()
	k := 0
	for i := 0; i < o.d; i++ {
		k += copy(raw.Data[i*raw.Stride+i:i*raw.Stride+o.d], buf[k:k+o.d-i])
	}
	return nil
}

// bcastEig computes on rank 0 the eigenpairs of o.g in rg (positive part
// or all) and broadcasts them: [ok, r, λ_1…λ_r, V (D×r, row-major)].
func (o *frobOracle) bcastEig(rg engine.EigRange) ([]float64, *mat.Dense, error) {
	d := o.d
	top := make([]float64, 2+d+d*d)
	var eigErr error
	if o.comm.Rank() == 0 {
		e, err := o.b.SymEig(o.g, rg, true)
		if err != nil {
			eigErr = fmt.Errorf("distributed: eigendecomposition: %w", err)
		} else {
			r := len(e.Values)
			top[0], top[1] = 1, float64(r)
			copy(top[2:], e.Values)
			v := top[2+r:]
			for i := 0; i < d; i++ {
				for j := 0; j < r; j++ {
					v[i*r+j] = e.Vectors.At(i, j)
				}
			}
		}
	}
	if err := o.comm.Bcast(top, 0); err != nil {
		return nil, nil, fmt.Errorf("distributed: eigenpairs: %w", err)
	}
	if top[0] == 0 {
		if eigErr != nil {
			return nil, nil, eigErr
		}
		return nil, nil, fmt.Errorf("%w: the eigendecomposition failed on rank 0", ErrRemote)
	}
	r := int(top[1])
	lam := append([]float64(nil), top[2:2+r]...)
	if r == 0 {
		return lam, nil, nil
	}
	return lam, mat.NewDense(d, r, append([]float64(nil), top[2+r:2+r+d*r]...)), nil
}

func (o *frobOracle) Eval(u, margin []float64) ([]float64, *mat.Dense, error) {
	if err := o.gram(u); err != nil {
		return nil, nil, err
	}
	lam, vec, err := o.bcastEig(engine.PositivePart(0))
	if err != nil {
		return nil, nil, err
	}
	return lam, vec, o.margins(margin, lam, vec)
}

// margins computes this rank's triplets' margins ⟨A_r, V diag(λ) Vᵀ⟩ and
// gathers all m of them into margin.
func (o *frobOracle) margins(margin, lam []float64, vec *mat.Dense) error {
	if o.part != nil {
		if err := o.part.Margins(o.local, lam, vec); err != nil {
			return fmt.Errorf("distributed: %w", err)
		}
	}
	return o.gather(margin, "margins")
}

func (o *frobOracle) Eig() ([]float64, *mat.Dense, error) {
	// o.g still holds G of the last Eval: HessVec reduces into o.h.
	return o.bcastEig(engine.AllRange())
}

func (o *frobOracle) HessVec(out, v, mu []float64, q *mat.Dense) error {
	// Keep G (needed by a later Eig) and reduce H into a second matrix.
	g := o.g
	h := mat.NewSymDense(o.d, nil)
	o.g = h
	err := o.gram(v)
	o.g = g
	if err != nil {
		return err
	}
	if o.part != nil {
		dx := frob.HessianDirection(o.b, h, mu, q)
		if err := o.part.QuadMargins(o.local, dx); err != nil {
			return fmt.Errorf("distributed: %w", err)
		}
	}
	return o.gather(out, "Hessian product")
}

func (o *frobOracle) JacobiDiag(diag, mu []float64, q *mat.Dense) error {
	if o.part != nil {
		o.part.JacobiDiag(o.local, mu, q)
	}
	return o.gather(diag, "Jacobi diagonal")
}
