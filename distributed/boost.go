package distributed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/progress"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// BoostMetric runs BoostMetric (boost.BoostMetric, stage-wise or totally
// corrective, exponential or logistic loss) on the triplets of sh,
// sharded across the ranks of comm: rank p passes its rows xLocal and the
// Shard Triplets returned for them. Every rank gets the same Result, the
// one boost.BoostMetric returns on the whole data and all the triplets, to
// rounding: W in the units of the data, V, Scale, Iterations, Stop,
// Objective, Curve and Lambda.
//
// Per iteration each rank assembles its share of Â(u) = Σ_r u_r A_r =
// Xᵀ L_W X, a GEMM over its own rows (the degrees of its halo rows go to
// their owners, one AllreduceSum of N values; see ownGram), and one
// AllreduceSum adds the D×D shares; rank 0 computes
// the leading eigenpair and broadcasts it; every rank computes its
// triplets' margins, and the line search's sums (exponentials shifted by
// their running maximum) are gathered, a handful of scalars per rank and
// per pass, and combined in rank order so that every rank takes the same
// branches. The data's scale s (data.RMSDeviation) is computed from global
// sums, so the problem is the one-process one. In corrective mode every
// rank runs the same L-BFGS-B re-solve of the term weights, each
// evaluation distributed (see corrective.go).
//
// The options are those of boost.Options; every rank passes the same
// (Extend and Monitor, if set, must answer alike on every rank for the same Result).
// The hinge loss (PSDBoost) is not distributed and is refused, and so is
// EigLanczos: the Gram matrix is always assembled, D×D,
// and factored by the backend's dense eigensolver on rank 0 (where boost's
// EigAuto cost model picks Lanczos, the one-process run's eigenvectors
// agree with these only to Lanczos's tolerance). Progress, if set, is called on
// every rank that sets it.
//
// Cancellation is collective: a rank whose ctx is done says so in the next
// iteration's Allreduce (or the next evaluation of a corrective re-solve),
// and every rank returns the iterations completed so
// far with Stop = StopCancelled (an error wrapping ctx.Err() on the
// cancelled ranks, context.Canceled with ErrRemote on the others).
func BoostMetric(ctx context.Context, comm mpi.Comm, xLocal *mat.Dense, sh *Shard, opt boost.Options) (*boost.Result, error) {
	if comm == nil {
		return nil, fmt.Errorf("%w: nil communicator", ErrInvalid)
	}
	if sh == nil {
		return nil, fmt.Errorf("%w: nil shard", ErrInvalid)
	}
	nu, iters, tol, err := checkOptions(opt)
	if err != nil {
		return nil, err
	}
	d := 0
	if xLocal != nil {
		_, d = xLocal.Dims()
	} else if sh.Halo != nil {
		_, d = sh.Halo.Dims()
	}
	lerr := checkLocal(xLocal, sh)
	// s, with the agreement on local errors and on D.
	s, d, err := globalScale(comm, xLocal, sh, d, lerr)
	if err != nil {
		return nil, err
	}
	b := engine.Or(opt.Backend)
	lp, err := newLocal(b, xLocal, sh, s, d)
	if err != nil {
		return nil, err // identical on every rank: the local checks passed
	}
	res, err := lp.run(ctx, comm, nu, tol, iters, opt)
	if res != nil {
		res.Scale = s
		inv := 1 / (s * s)
		for j := range res.W {
			res.W[j] *= inv
		}
	}
	return res, err
}

// checkOptions validates the options as boost.BoostMetric does and returns
// ν, the iteration limit and the tolerance with the defaults applied.
func checkOptions(opt boost.Options) (nu float64, iters int, tol float64, err error) {
	if opt.Loss != boost.Exp && opt.Loss != boost.Logistic {
		return 0, 0, 0, fmt.Errorf("%w: distributed BoostMetric needs the exponential or logistic loss, got %v", ErrInvalid, opt.Loss)
	}
	if opt.Mode != boost.Stagewise && opt.Mode != boost.Corrective {
		return 0, 0, 0, fmt.Errorf("%w: unknown mode %v", ErrInvalid, opt.Mode)
	}
	if opt.Eig == boost.EigLanczos {
		return 0, 0, 0, fmt.Errorf("%w: distributed BoostMetric always uses the dense eigensolver", ErrInvalid)
	}
	nu = opt.Nu
	if nu == 0 {
		nu = boost.DefaultNu
	}
	if !(nu > 0) || math.IsInf(nu, 0) {
		return 0, 0, 0, errs.Option(fmt.Errorf("%w: ν = %g must be positive and finite", ErrInvalid, nu))
	}
	iters = opt.Iters
	if iters < 0 {
		return 0, 0, 0, fmt.Errorf("%w: Iters = %d, want ≥ 0 (0 selects the default)", ErrInvalid, iters)
	}
	if iters == 0 {
		iters = boost.DefaultIters
	}
	tol = opt.Tol
	switch {
	case tol == 0:
		tol = boost.DefaultTol
	case tol < 0:
		tol = 0
	}
	return nu, iters, tol, nil
}

// checkLocal checks a rank's rows, halo and triplets.
func checkLocal(x *mat.Dense, sh *Shard) error {
	rows, d := 0, 0
	if x != nil {
		rows, d = x.Dims()
	}
	if rows != sh.Rows {
		return fmt.Errorf("%w: %d rows for a shard of %d", ErrInvalid, rows, sh.Rows)
	}
	if sh.Offset < 0 || sh.Rows < 0 || sh.Offset > sh.N-sh.Rows {
		return fmt.Errorf("%w: rows [%d,%d) outside the %d rows of the data", ErrInvalid, sh.Offset, sh.Offset+sh.Rows, sh.N)
	}
	for _, g := range sh.HaloIndex {
		if g < 0 || g >= sh.N || (g >= sh.Offset && g < sh.Offset+sh.Rows) {
			return fmt.Errorf("%w: halo row %d outside [0,%d) or among this rank's rows [%d,%d)", ErrInvalid, g, sh.N, sh.Offset, sh.Offset+sh.Rows)
		}
	}
	if sh.Halo != nil {
		hr, hd := sh.Halo.Dims()
		if hr != len(sh.HaloIndex) || (rows > 0 && hd != d) {
			return fmt.Errorf("%w: halo of %d×%d for %d indices and %d columns", ErrInvalid, hr, hd, len(sh.HaloIndex), d)
		}
	} else if len(sh.HaloIndex) > 0 {
		return fmt.Errorf("%w: %d halo indices without rows", ErrInvalid, len(sh.HaloIndex))
	}
	if !sort.IntsAreSorted(sh.HaloIndex) {
		return fmt.Errorf("%w: halo indices not ascending", ErrInvalid)
	}
	for _, m := range []*mat.Dense{x, sh.Halo} {
		if m == nil {
			continue
		}
		raw := m.RawMatrix()
		for i := 0; i < raw.Rows; i++ {
			if err := engine.CheckFinite(fmt.Sprintf("row %d", i), raw.Data[i*raw.Stride:i*raw.Stride+raw.Cols]); err != nil {
				return fmt.Errorf("%w: %w", ErrInvalid, err)
			}
		}
	}
	for r, t := range sh.Triplets {
		if t.I < sh.Offset || t.I >= sh.Offset+sh.Rows {
			return fmt.Errorf("%w: triplet %d = %v is not anchored at this rank's rows [%d,%d)", ErrInvalid, r, t, sh.Offset, sh.Offset+sh.Rows)
		}
		for _, g := range []int{t.J, t.K} {
			if g >= sh.Offset && g < sh.Offset+sh.Rows {
				continue
			}
			if _, ok := slicesIndex(sh.HaloIndex, g); !ok {
				return fmt.Errorf("%w: triplet %d = %v uses row %d, neither local nor in the halo", ErrInvalid, r, t, g)
			}
		}
	}
	return nil
}

func slicesIndex(s []int, g int) (int, bool) {
	i := sort.SearchInts(s, g)
	return i, i < len(s) && s[i] == g
}

// globalScale returns s = data.RMSDeviation of the rows of all ranks,
// computed as RMSDeviation does (entries divided by the largest magnitude,
// column means, then the mean square deviation) from global sums, and the
// agreed number of columns. It also agrees on lerr: if any rank has a local
// error, every rank fails (with its own error, or one wrapping ErrRemote).
func globalScale(comm mpi.Comm, x *mat.Dense, sh *Shard, d int, lerr error) (float64, int, error) {
	rows := 0
	if x != nil {
		rows, _ = x.Dims()
	}
	var amax float64
	if lerr == nil && rows > 0 {
		raw := x.RawMatrix()
		for i := 0; i < rows; i++ {
			for _, v := range raw.Data[i*raw.Stride : i*raw.Stride+d] {
				amax = math.Max(amax, math.Abs(v))
			}
		}
	}
	// [failed, D, −D, amax, N] in one Allreduce(max); a rank without rows
	// has no say on D.
	agree := []float64{0, float64(d), -float64(d), amax, float64(sh.N)}
	if rows == 0 {
		agree[1], agree[2] = math.Inf(-1), math.Inf(-1)
	}
	if lerr != nil {
		agree[0] = 1
	}
	if err := comm.AllreduceMax(agree); err != nil {
		return 0, 0, fmt.Errorf("distributed: %w", err)
	}
	if lerr != nil {
		return 0, 0, lerr
	}
	if agree[0] != 0 {
		return 0, 0, fmt.Errorf("%w: another rank refused its input", ErrRemote)
	}
	if agree[1] != -agree[2] || math.IsInf(agree[1], 0) {
		return 0, 0, fmt.Errorf("%w: the ranks' data have %g to %g columns", ErrInvalid, -agree[2], agree[1])
	}
	d = int(agree[1])
	if d == 0 {
		return 0, 0, fmt.Errorf("%w: data has no columns", ErrInvalid)
	}
	amax = agree[3]
	n, err := comm.AllreduceSumScalar(float64(rows))
	if err != nil {
		return 0, 0, fmt.Errorf("distributed: %w", err)
	}
	if n != float64(sh.N) || n != agree[4] {
		return 0, 0, fmt.Errorf("%w: the ranks have %g rows, the shards say %d", ErrInvalid, n, sh.N)
	}
	if amax == 0 {
		return 0, 0, fmt.Errorf("%w: %w (%d×%d zeros)", ErrInvalid, data.ErrNoSpread, sh.N, d)
	}
	inv := 1 / amax
	if math.IsInf(inv, 0) { // amax subnormal
		inv = math.Ldexp(1, -math.Ilogb(amax))
	}
	mean := make([]float64, d)
	var raw blas64.General
	if rows > 0 {
		raw = x.RawMatrix()
		for i := 0; i < rows; i++ {
			for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+d] {
				mean[j] += v * inv
			}
		}
	}
	if err := comm.AllreduceSum(mean); err != nil {
		return 0, 0, fmt.Errorf("distributed: %w", err)
	}
	for j := range mean {
		mean[j] /= n
	}
	var ss float64
	for i := 0; i < rows; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+d] {
			e := v*inv - mean[j]
			ss += e * e
		}
	}
	if ss, err = comm.AllreduceSumScalar(ss); err != nil {
		return 0, 0, fmt.Errorf("distributed: %w", err)
	}
	s := math.Sqrt(ss/(n*float64(d))) / inv
	if !(s > 0) {
		return 0, 0, fmt.Errorf("%w: %w (%d rows)", ErrInvalid, data.ErrNoSpread, sh.N)
	}
	if s2 := s * s; math.IsInf(s2, 0) || s2 < 0x1p-1022 || math.IsInf(1/s2, 0) {
		return 0, 0, fmt.Errorf("%w: %w: RMS deviation %g", ErrInvalid, data.ErrScale, s)
	}
	return s, d, nil
}

// local is one rank's part of the problem: its rows and halo divided by s,
// and its triplets renumbered onto them.
type local struct {
	b     engine.Backend
	x     *mat.Dense // (Rows + halo)×D, nil when the rank has no triplets
	ts    *constraints.TripletSet
	graph *engine.PairGraph
	d, m  int
	own   *ownGram
	z     *mat.Dense
	pairs []float64
}

func newLocal(b engine.Backend, x *mat.Dense, sh *Shard, s float64, d int) (*local, error) {
	lp := &local{b: b, d: d, m: len(sh.Triplets)}
	nh := len(sh.HaloIndex)
	if lp.m == 0 {
		nh = 0
	}
	n := sh.Rows + nh
	if n > 0 {
		lp.x = mat.NewDense(n, d, nil)
	}
	defer func() { lp.own = newOwnGram(b, lp.x, sh.Rows, sh.Offset, sh.HaloIndex[:nh], sh.N, d) }()
	if lp.m == 0 {
		if n > 0 {
			lp.x.Copy(x.Slice(0, sh.Rows, 0, d))
			lp.x.Scale(1/s, lp.x)
		}
		return lp, nil
	}
	dst := lp.x.RawMatrix()
	raw := x.RawMatrix()
	for i := 0; i < sh.Rows; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+d] {
			dst.Data[i*dst.Stride+j] = v / s
		}
	}
	for a := 0; a < nh; a++ {
		for j, v := range sh.Halo.RawRowView(a) {
			dst.Data[(sh.Rows+a)*dst.Stride+j] = v / s
		}
	}
	num := func(g int) int {
		if g >= sh.Offset && g < sh.Offset+sh.Rows {
			return g - sh.Offset
		}
		a, _ := slicesIndex(sh.HaloIndex, g)
		return sh.Rows + a
	}
	lt := make([]constraints.Triplet, lp.m)
	for r, t := range sh.Triplets {
		lt[r] = constraints.Triplet{I: num(t.I), J: num(t.J), K: num(t.K)}
	}
	var err error
	if lp.ts, err = constraints.NewTripletSet(n, lt); err != nil {
		return nil, fmt.Errorf("distributed: %w", err)
	}
	if lp.graph, err = lp.ts.Graph(make([]float64, lp.m)); err != nil {
		return nil, fmt.Errorf("distributed: %w", err)
	}
	lp.z = mat.NewDense(n, 1, nil)
	lp.pairs = make([]float64, len(lp.ts.Pairs))
	return lp, nil
}

// gramInto writes the upper triangle of this rank's share of Xᵀ L_W X
// for the weights u of its triplets into buf (D(D+1)/2 values, row by row):
// the share of its own rows (ownGram), so that the shares of all ranks add
// up to the whole Gram. It is collective.
func (lp *local) gramInto(comm mpi.Comm, buf, u []float64) error {
	var g *engine.PairGraph
	if lp.m > 0 {
		var err error
		if g, err = lp.ts.GraphInto(lp.graph, u); err != nil {
			return fmt.Errorf("distributed: triplet weights: %w", err)
		}
		lp.graph = g
	}
	return lp.own.into(comm, buf, g)
}

// margins writes H_r = (z_I − z_K)² − (z_I − z_J)², z = X v, into h.
func (lp *local) margins(h, v []float64) error {
	if lp.m == 0 {
		return nil
	}
	raw, zr := lp.x.RawMatrix(), lp.z.RawMatrix()
	lp.b.BLAS().Dgemv(blas.NoTrans, raw.Rows, raw.Cols, 1, raw.Data, raw.Stride, v, 1, 0, zr.Data, zr.Stride)
	if err := lp.b.PairSqDists(lp.pairs, lp.z, lp.ts.Pairs); err != nil {
		return fmt.Errorf("distributed: margins: %w", err)
	}
	lp.ts.Margins(h, lp.pairs)
	return nil
}

// run is the loop of boost's boostMetric (stage-wise or totally
// corrective), with the global quantities reduced across the ranks.
func (lp *local) run(ctx context.Context, comm mpi.Comm, nu, tol float64, iters int, opt boost.Options) (*boost.Result, error) {
	d, m := lp.d, lp.m
	loss := opt.Loss
	red := &reducer{comm: comm}
	rho := make([]float64, m)
	u := make([]float64, m)
	h := make([]float64, m)
	lse, err := red.weights(loss, rho, u)
	if err != nil {
		return nil, err
	}
	res := &boost.Result{Pi: math.NaN(), DualityGap: math.NaN(), SDPGap: math.NaN(), Stop: boost.StopIterations}
	var (
		vs     [][]float64
		ws     []float64
		stopAt float64
		tm     *corrector // corrective mode
		rough  bool       // the weights come from a bounded corrective re-solve
	)
	if opt.Mode == boost.Corrective {
		tm = newCorrector(lp, red, loss, nu)
	}
	finish := func() error {
		var keepV [][]float64
		var keepW []float64
		for j, w := range ws {
			if w > 0 {
				keepV = append(keepV, vs[j])
				keepW = append(keepW, w)
			}
		}
		if len(keepV) > 0 {
			res.V = mat.NewDense(d, len(keepV), nil)
			for j, v := range keepV {
				res.V.SetCol(j, v)
			}
		}
		res.W = keepW
		obj, err := red.objective(loss, rho, nu, ws, lse)
		res.Objective = obj
		return err
	}
	// stopped ends a run cancelled on some rank: the last completed
	// iteration, with ctx's error on the cancelled ranks.
	stopped := func() (*boost.Result, error) {
		res.Stop = boost.StopCancelled
		if ferr := finish(); ferr != nil {
			return nil, ferr
		}
		if ctx.Err() != nil {
			return res, fmt.Errorf("distributed: %w", ctx.Err())
		}
		return res, fmt.Errorf("%w: %w", ErrRemote, context.Canceled)
	}
	pr := &pricing{lp: lp, comm: comm, red: red, buf: make([]float64, d*(d+1)/2+1), top: make([]float64, d+2)}
	for it := 1; it <= iters; it++ {
		lambda, v, cancelled, err := pr.price(ctx, u)
		if err != nil {
			return nil, err
		}
		if cancelled {
			return stopped()
		}
		res.Lambda = append(res.Lambda, lambda)
		if it == 1 {
			stopAt = nu + tol*math.Abs(lambda)
		}
		if lambda < stopAt && rough {
			// The stopping test holds at weights of a bounded re-solve:
			// finish it to full accuracy, then price its duals again.
			var unbounded bool
			rough = false
			if ws, unbounded, err = tm.correct(ctx, ws, rho, correctiveFinalIter); err != nil {
				if errors.Is(err, errCancelledEval) {
					return stopped() // rho and lse still hold the last iteration's
				}
				return nil, err
			}
			if lse, err = red.weights(loss, rho, u); err != nil {
				return nil, err
			}
			obj, err := red.objective(loss, rho, nu, ws, lse)
			if err != nil {
				return nil, err
			}
			res.Curve[len(res.Curve)-1] = obj
			if unbounded {
				res.Stop = boost.StopUnbounded
				break
			}
			if lambda, v, cancelled, err = pr.price(ctx, u); err != nil {
				return nil, err
			}
			if cancelled {
				return stopped()
			}
			res.Lambda[len(res.Lambda)-1] = lambda
		}
		if lambda < stopAt {
			res.Stop = boost.StopConverged
			break
		}
		if err := lp.margins(h, v); err != nil {
			return nil, err
		}
		vs = append(vs, v)
		weight, unbounded, err := red.lineSearch(loss, rho, h, nu)
		if err != nil {
			return nil, err
		}
		ws = append(ws, weight)
		if tm == nil || unbounded {
			for r := range rho {
				rho[r] += weight * h[r]
			}
		}
		if tm != nil {
			tm.vs = append(tm.vs, v)
		}
		if tm != nil && !unbounded {
			maxIter := correctiveMaxIter
			if it == iters {
				maxIter = correctiveFinalIter
			}
			nw, unb, err := tm.correct(ctx, ws, rho, maxIter)
			rough = maxIter < correctiveFinalIter
			if err != nil {
				// Back to the last completed iteration: drop the new term
				// and restore the margins of the weights before.
				j := len(ws) - 1
				vs, ws, tm.vs = vs[:j], ws[:j], tm.vs[:j]
				if _, merr := tm.marginsOf(rho, ws); merr != nil {
					return nil, merr
				}
				if errors.Is(err, errCancelledEval) {
					return stopped()
				}
				return nil, err
			}
			ws, unbounded = nw, unb
			weight = ws[len(ws)-1]
		}
		if lse, err = red.weights(loss, rho, u); err != nil {
			return nil, err
		}
		obj, err := red.objective(loss, rho, nu, ws, lse)
		if err != nil {
			return nil, err
		}
		res.Curve = append(res.Curve, obj)
		res.Iterations = it
		if opt.Progress != nil {
			opt.Progress(progress.Event{Algorithm: "boostmetric", Iteration: it, Objective: obj, Gap: math.NaN(),
				Message: fmt.Sprintf("iter %d  λmax %.6g  w %.6g  objective %.10g", it, lambda, weight, obj)})
		}
		if unbounded {
			res.Stop = boost.StopUnbounded
			break
		}
		if opt.Monitor != nil && opt.Monitor.Due(it) {
			// Every rank asks with the same Result, as for Extend.
			if err := finish(); err != nil {
				return nil, err
			}
			if opt.Monitor.Check(it, res) {
				res.Stop = boost.StopMonitor
				break
			}
		}
		if it == iters && opt.Extend != nil {
			// The limit is reached: ask whether to go on (every rank asks
			// with the same Result, so every rank gets the same answer).
			if err := finish(); err != nil {
				return nil, err
			}
			if more := opt.Extend(it, res); more > 0 {
				iters += more
			}
		}
	}
	if err := finish(); err != nil {
		return nil, err
	}
	if opt.Monitor != nil {
		return opt.Monitor.Keep(res), nil
	}
	return res, nil
}

// pricing computes the leading eigenpair of Â(u) over all ranks: the
// ranks' Gram matrices are added by one AllreduceSum (with every rank's
// cancellation flag), rank 0 factors the sum and broadcasts the pair.
type pricing struct {
	lp   *local
	comm mpi.Comm
	red  *reducer
	buf  []float64 // the Gram's upper triangle, then the cancel flag
	top  []float64 // [ok, λ, v]
}

// price returns λmax(Â(u)) and its eigenvector, identical on every rank,
// or cancelled = true on every rank when some rank's ctx is done.
func (pr *pricing) price(ctx context.Context, u []float64) (lambda float64, v []float64, cancelled bool, err error) {
	nt := len(pr.buf) - 1
	buf, top := pr.buf, pr.top
	if err := pr.lp.gramInto(pr.comm, buf[:nt], u); err != nil {
		return 0, nil, false, err // only on inconsistent input, which checkLocal excludes
	}
	buf[nt] = 0
	if ctx.Err() != nil {
		buf[nt] = 1
	}
	if err := pr.comm.AllreduceSum(buf); err != nil {
		return 0, nil, false, fmt.Errorf("distributed: Gram matrix: %w", err)
	}
	if buf[nt] != 0 {
		return 0, nil, true, nil
	}
	if pr.comm.Rank() == 0 {
		if lambda, v, err := pr.lp.leading(buf[:nt]); err != nil {
			clear(top)
			pr.red.eigErr = err
		} else {
			top[0], top[1] = 1, lambda
			copy(top[2:], v)
		}
	}
	if err := pr.comm.Bcast(top, 0); err != nil {
		return 0, nil, false, fmt.Errorf("distributed: eigenpair: %w", err)
	}
	if top[0] == 0 {
		if pr.red.eigErr != nil {
			return 0, nil, false, pr.red.eigErr
		}
		return 0, nil, false, fmt.Errorf("%w: the leading eigenpair failed on rank 0", ErrRemote)
	}
	return top[1], append([]float64(nil), top[2:]...), false, nil
}

// leading returns the leading eigenpair of the symmetric matrix whose upper
// triangle is packed in tri.
func (lp *local) leading(tri []float64) (float64, []float64, error) {
	d := lp.d
	g := mat.NewSymDense(d, nil)
	raw := g.RawSymmetric()
	k := 0
	for i := 0; i < d; i++ {
		k += copy(raw.Data[i*raw.Stride+i:i*raw.Stride+d], tri[k:k+d-i])
	}
	e, err := lp.b.SymEig(g, engine.TopK(d, 1), true)
	if err != nil {
		return 0, nil, fmt.Errorf("distributed: leading eigenpair: %w", err)
	}
	return e.Values[0], mat.Col(nil, 0, e.Vectors), nil
}
