package distributed

import (
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/internal/f64"
	"github.com/psdlearn/psdlearn/internal/linesearch"
	"github.com/psdlearn/psdlearn/mpi"
)

// reducer computes BoostMetric's sums over all triplets from every rank's
// sums over its own. The per-rank partial results are gathered with one
// Allgatherv (every rank gets all of them) and combined in rank order, so
// every rank computes bit for bit the same value and takes the same branch
// in the line search and the stopping tests: an Allreduce need not give
// every rank the same bits (MPI only recommends it), and a rank that took
// another branch would desynchronise the collectives.
type reducer struct {
	comm   mpi.Comm
	counts []int
	recv   []float64
	eigErr error // rank 0's eigensolver error, reported after the broadcast
}

// gather returns the vals of every rank (all the same length), rank by rank.
func (rd *reducer) gather(vals []float64) ([][]float64, error) {
	p, k := rd.comm.Size(), len(vals)
	if len(rd.counts) != p || rd.counts[0] != k {
		rd.counts = make([]int, p)
		for i := range rd.counts {
			rd.counts[i] = k
		}
		rd.recv = make([]float64, p*k)
	}
	if err := rd.comm.Allgatherv(vals, rd.recv, rd.counts); err != nil {
		return nil, fmt.Errorf("distributed: reduction: %w", err)
	}
	out := make([][]float64, p)
	for r := range out {
		out[r] = rd.recv[r*k : (r+1)*k]
	}
	return out, nil
}

// expSums returns the linesearch.Sums over all ranks' triplets: this
// rank's in one pass, every rank's gathered and combined in rank order
// (boost's combine of its chunks, across ranks).
func (rd *reducer) expSums(rho, h []float64, w float64) (linesearch.Sums, error) {
	l := linesearch.ExpSums(rho, h, w)
	parts, err := rd.gather([]float64{l.Shift, l.S, l.S1, l.S2, l.S3})
	if err != nil {
		return linesearch.Sums{}, err
	}
	all := make([]linesearch.Sums, len(parts))
	for r, p := range parts {
		all[r] = linesearch.Sums{Shift: p[0], S: p[1], S1: p[2], S2: p[3], S3: p[4]}
	}
	return linesearch.Combine(all), nil
}

// sums returns the elementwise sums of vals over all ranks, in rank order.
func (rd *reducer) sums(vals ...float64) ([]float64, error) {
	parts, err := rd.gather(vals)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(vals))
	for _, p := range parts {
		for i, v := range p {
			out[i] += v
		}
	}
	return out, nil
}

// weights sets this rank's triplet weights u from the margins (softmax(−ρ)
// over all triplets for the exponential loss, σ(−ρ_r) for the logistic) and
// returns log Σ_r exp(−ρ_r) over all triplets (exponential loss; NaN
// otherwise).
func (rd *reducer) weights(loss boost.Loss, rho, u []float64) (float64, error) {
	if loss == boost.Logistic {
		for r, p := range rho {
			u[r] = sigmoidNeg(p)
		}
		return math.NaN(), nil
	}
	t, err := rd.expSums(rho, nil, 0)
	if err != nil {
		return 0, err
	}
	lse := t.LogSum()
	f64.ExpNeg(u, rho, lse) // the single-process learner's exponentials
	return lse, nil
}

// objective returns the primal objective over all triplets; lse is the
// value weights returned for rho.
func (rd *reducer) objective(loss boost.Loss, rho []float64, nu float64, w []float64, lse float64) (float64, error) {
	var tr float64
	for _, v := range w {
		tr += v
	}
	if loss == boost.Exp {
		return lse + nu*tr, nil
	}
	var s float64
	for _, p := range rho {
		s += softplus(-p)
	}
	all, err := rd.sums(s)
	if err != nil {
		return 0, err
	}
	return all[0] + nu*tr, nil
}

// lineSearch is boost's lineSearch (linesearch.Root, the same root finder)
// with every sum over the triplets taken over all ranks: one gather per
// evaluation of f, f′, f″ (five scalars per rank for the exponential loss,
// three for the logistic), and one Allreduce for the range of h.
func (rd *reducer) lineSearch(loss boost.Loss, rho, h []float64, nu float64) (float64, bool, error) {
	hmin, hmax := math.Inf(1), 0.0
	for _, v := range h {
		hmin = math.Min(hmin, v)
		hmax = math.Max(hmax, math.Abs(v))
	}
	rg := []float64{hmax, -hmin}
	if err := rd.comm.AllreduceMax(rg); err != nil {
		return 0, false, fmt.Errorf("distributed: line search: %w", err)
	}
	hmax, hmin = rg[0], -rg[1]
	if hmax == 0 {
		return 0, false, nil
	}
	if loss == boost.Exp && hmin >= nu {
		return linesearch.UnboundedMargin / hmin, true, nil
	}
	deriv := func(w float64) (f, f1, f2 float64, err error) {
		if loss == boost.Exp {
			t, err := rd.expSums(rho, h, w)
			if err != nil {
				return 0, 0, 0, err
			}
			f, f1, f2 := t.Deriv(nu)
			return f, f1, f2, nil
		}
		var a, b, c float64
		for r, hr := range h {
			sg := sigmoidNeg(rho[r] + w*hr)
			v := hr * hr * sg * (1 - sg)
			a += hr * sg
			b += v
			c -= v * hr * (1 - 2*sg)
		}
		g, err := rd.sums(a, b, c)
		if err != nil {
			return 0, 0, 0, err
		}
		return nu - g[0], g[1], g[2], nil
	}
	return linesearch.Root(deriv, hmax, linesearch.MaxSteps)
}

// sigmoidNeg returns σ(−t) = 1/(1 + exp(t)).
func sigmoidNeg(t float64) float64 {
	if t >= 0 {
		e := math.Exp(-t)
		return e / (1 + e)
	}
	return 1 / (1 + math.Exp(t))
}

// softplus returns log(1 + exp(t)).
func softplus(t float64) float64 {
	if t > 0 {
		return t + math.Log1p(math.Exp(-t))
	}
	return math.Log1p(math.Exp(t))
}
