package sdp

import (
	"errors"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/engine"
	"gonum.org/v1/gonum/mat"
)

// The spectral strategy of the SDP dual: the negative part (C + Â)_− from
// the dense eigensolver, or from Lanczos on the operator (directly, or on
// the shifted operator for its positive part), with rank caps.

// errHighRank says that the negative part of C + Â has more than the capped
// number of eigenpairs the sparse path asks for.
var errHighRank = errors.New("sdp: negative part of high rank")

// errAboveCutoff reports that a capped spectral search found enough negative
// eigenvalues to bound the dual objective above cutoff; negativePart then
// returns those eigenpairs with it.
var errAboveCutoff = errors.New("sdp: dual objective above the cutoff")

// rankCap is the number of eigenpairs beyond which a capped spectral search
// gives up (errHighRank): max(64, 4·the current request).
func (e *dualEval) rankCap() int { return min(e.maxRank, max(64, 4*e.k)) }

// negativePart returns the negative eigenpairs of the current C + Â. With
// capped set, the sparse path returns errHighRank instead of asking for more
// than rankCap eigenpairs.
func (e *dualEval) negativePart(capped bool) ([]float64, *mat.Dense, error) {
	if e.method == Dense {
		return e.negativeDense()
	}
	k := e.k
	kCap := e.rankCap()
	for {
		if capped && k > kCap {
			return nil, nil, errHighRank
		}
		if k > e.maxRank {
			if e.n <= denseFallbackN {
				return e.negativeDense()
			}
			return nil, nil, fmt.Errorf("sdp: the negative part of C + Â has rank above %d (MaxRank)", e.maxRank)
		}
		// ARPACK's test is relative to each Ritz value, which makes pairs
		// near zero (the MVU dual has a cluster there) converge to an
		// absolute accuracy far below what the dual needs, at the cost of
		// thousands of Lanczos steps. Shifting by twice the previous scale
		// of the negative part makes the test uniform: |λ − θ| ≲ EigTol·scale.
		// A wider Krylov space (30 vectors beyond k) cuts the restarts.
		opt := engine.EigsOptions{Tol: e.tol, Seed: e.seed, NCV: min(e.n, max(2*k+1, k+30))}
		if e.start != nil {
			opt.Start = e.start
		}
		op := shiftedOp{e, 2 * e.negScale}
		var res engine.EigsResult
		var err error
		inverted := false
		if e.solver == Block {
			res, err = e.blockEigs(op, k)
		} else if e.ldl != nil && e.negScale > 0 {
			res, inverted, err = e.invertedEigs(op.shift, k, opt)
		}
		if e.solver == Lanczos && !inverted {
			res, err = e.eigsSolver().Eigs(e.ctx, op, k, engine.SmallestAlgebraic, opt)
			e.applies += res.OpApplies
		}
		if err != nil {
			if e.ctx != nil && e.ctx.Err() != nil {
				return nil, nil, fmt.Errorf("sdp: %w", e.ctx.Err())
			}
			// Not converged: retry with more eigenpairs (a wider Krylov space).
			if k == e.maxRank {
				return nil, nil, fmt.Errorf("sdp: sparse eigensolver: %w", err)
			}
			k = min(2*k, e.maxRank)
			continue
		}
		vals := res.Values
		for i := range vals {
			vals[i] -= op.shift
		}
		covered := len(vals) == k && vals[k-1] >= -1e-10*math.Max(1, math.Abs(vals[0]))
		if k == e.n-1 && len(vals) == k && !covered {
			// Only the largest eigenvalue is unknown; the dense path decides.
			return e.negativeDense()
		}
		if !covered && capped && len(vals) == k && vals[k-1] < 0 {
			lb := e.trialBU
			for _, l := range vals {
				lb += 0.5 * e.sigma * l * l
			}
			if lb > e.cutoff {
				return vals, res.Vectors, errAboveCutoff
			}
		}
		if !covered {
			if k == e.maxRank {
				k++ // falls back or fails above
				continue
			}
			k = min(2*k, e.maxRank)
			continue
		}
		neg := 0
		for neg < len(vals) && vals[neg] < 0 {
			neg++
		}
		if neg > 0 {
			e.negScale = -vals[0]
		}
		// Next time ask for a little more than the negative part.
		e.k = min(max(e.initRank, neg+max(4, neg/4)+1), e.maxRank)
		if neg > 0 {
			// Warm start: the sum of the negative eigenvectors.
			if e.start == nil {
				e.start = make([]float64, e.n)
			}
			for i := range e.start {
				var s float64
				for j := 0; j < neg; j++ {
					s += res.Vectors.At(i, j)
				}
				e.start[i] = s
			}
		}
		vec := res.Vectors
		if neg == 0 {
			return nil, nil, nil
		}
		return vals[:neg], vec.Slice(0, e.n, 0, neg).(*mat.Dense), nil
	}
}

// blockEigs runs LOBPCG for the k smallest eigenpairs of op, started from
// the previous evaluation's block, and keeps the new block for the next.
// The tolerance is EigTol relative to the scale of the negative part, as
// on the Lanczos path (whose shift makes ARPACK's relative test uniform).
func (e *dualEval) blockEigs(op shiftedOp, k int) (engine.EigsResult, error) {
	scale := math.Max(op.shift/2, 1e-300)
	if e.negScale == 0 {
		scale = 0 // no scale yet: the estimate of ‖C + Â‖
	}
	br, err := engine.BlockEigs(e.ctx, e.b, op, k, engine.SmallestAlgebraic,
		engine.BlockEigsOptions{Start: e.subspace, Tol: math.Max(e.tol, 1e-14), Scale: scale, Seed: e.seed})
	e.applies += br.OpApplies
	if br.Subspace != nil {
		e.subspace = br.Subspace
	}
	return br.EigsResult, err
}

// shiftedOp is C + Â + shift·I.
type shiftedOp struct {
	e     *dualEval
	shift float64
}

func (o shiftedOp) Dim() int { return o.e.n }

func (o shiftedOp) Apply(dst, x []float64) {
	o.e.Apply(dst, x)
	if o.shift != 0 {
		for i, v := range x {
			dst[i] += o.shift * v
		}
	}
}

// ApplyRows implements engine.RowApplier.
func (o shiftedOp) ApplyRows(dst, x []float64, lo int) {
	o.e.ApplyRows(dst, x, lo)
	if o.shift != 0 {
		for i := range dst {
			dst[i] += o.shift * x[lo+i]
		}
	}
}

// eigsSolver returns the sparse eigensolver: Options.Eigs, or the backend's.
func (e *dualEval) eigsSolver() engine.EigsSolver {
	if e.eigs != nil {
		return e.eigs
	}
	return e.b
}

// positivePart returns the positive eigenpairs of the current C + Â from
// the sparse eigensolver, or errHighRank if there are more than rankCap.
func (e *dualEval) positivePart() ([]float64, *mat.Dense, error) {
	k := max(e.kPos, min(e.initRank, e.n-1))
	kCap := e.rankCap()
	for {
		if k > kCap {
			return nil, nil, errHighRank
		}
		res, err := e.eigsSolver().Eigs(e.ctx, e, k, engine.LargestAlgebraic, engine.EigsOptions{Tol: e.tol, Seed: e.seed})
		e.applies += res.OpApplies
		if err != nil {
			if e.ctx != nil && e.ctx.Err() != nil {
				return nil, nil, fmt.Errorf("sdp: %w", e.ctx.Err())
			}
			k *= 2
			continue
		}
		vals := res.Values // ascending: vals[0] is the smallest of the k largest
		if len(vals) < k || vals[0] > 1e-10*math.Max(1, math.Abs(vals[len(vals)-1])) {
			k *= 2 // positive eigenvalues beyond the k found
			continue
		}
		first := 0
		for first < len(vals) && vals[first] <= 0 {
			first++
		}
		if first == len(vals) {
			return nil, nil, nil // C + Â ⪯ 0
		}
		e.kPos = len(vals) - first + max(4, (len(vals)-first)/4) + 1
		return vals[first:], res.Vectors.Slice(0, e.n, first, len(vals)).(*mat.Dense), nil
	}
}

func (e *dualEval) negativeDense() ([]float64, *mat.Dense, error) {
	eig, err := e.b.SymEig(e.dense(), engine.NegativePart(0), true)
	if err != nil {
		return nil, nil, fmt.Errorf("sdp: eigendecomposition: %w", err)
	}
	neg := 0
	for neg < len(eig.Values) && eig.Values[neg] < 0 {
		neg++
	}
	if neg == 0 {
		return nil, nil, nil
	}
	return eig.Values[:neg], eig.Vectors.Slice(0, e.n, 0, neg).(*mat.Dense), nil
}
