package frob

import (
	"math"

	"github.com/psdlearn/psdlearn/internal/chunked"
)

// primalScale minimises the convex piecewise quadratic
//
//	P(t) = t²·half + cm Σ_r max(0, 1 − t·margin_r),  t ≥ 0,
//
// the FrobMetric primal at t·X for a fixed PSD X with ½‖X‖²_F = half and
// margins ⟨A_r, X⟩. It returns the minimiser and P there. The derivative
// P′(t) = 2t·half − cm Σ_{r: t·margin_r < 1} margin_r is nondecreasing, with
// breakpoints 1/margin_r. A quickselect-style search evaluates P′ at the
// median breakpoint still inside the bracket and discards the half that
// cannot hold the minimiser, so the expected cost is a few passes over the
// margins. buf is scratch space reused across calls.
//
// hint > 0 is a guess of the minimiser, such as the previous call's (0: none).
// It only narrows the first bracket: with S the sum of the margins active at
// the hint (hint·margin_r < 1, the negative ones and the fixed set's
// included), P′ ≥ 2t·half − cm·S above the hint and P′ ≤ 2t·half − cm·S below
// it, so the minimiser lies between the hint and cm·S/(2·half). Between
// consecutive evaluations of a dual solve that bracket holds a few
// breakpoints instead of all of them, and the search skips the partitions.
func primalScale(margin []float64, half, cm, hint float64, buf *[]float64) (t, primal float64) {
	return primalScaleFixed(margin, half, cm, 0, 0, hint, buf)
}

// primalScaleFixed is primalScale with the linear terms of a fixed set F of
// nFixed triplets whose margins sum to lin (see fixedPart):
//
//	P(t) = t²·half + cm Σ_r max(0, 1 − t·margin_r) + cm(nFixed − t·lin).
func primalScaleFixed(margin []float64, half, cm, lin, nFixed, hint float64, buf *[]float64) (t, primal float64) {
	// Every pass runs on fixed chunks in parallel (a certificate is taken
	// at every evaluation of a dual solve, over up to all m triplets).
	value := func(t float64) float64 {
		parts := make([]float64, chunked.Chunks)
		chunked.For(len(margin), scaleChunkMin, func(c, lo, hi int) {
			var hinge float64
			for _, v := range margin[lo:hi] {
				if tv := t * v; tv < 1 {
					hinge += 1 - tv
				}
			}
			parts[c] = hinge
		})
		var hinge float64
		for _, h := range parts {
			hinge += h
		}
		return t*t*half + cm*hinge + cm*(nFixed-t*lin)
	}
	if !(half > 0) {
		return 1, value(1)
	}
	// Margins ≤ 0 stay in the hinge for every t ≥ 0; positive margins leave
	// it at their breakpoints 1/margin_r.
	// neg gathers the slope terms active for every t ≥ 0: the margins ≤ 0
	// and the fixed set's sum.
	if !(hint > 0) || math.IsInf(hint, 0) {
		hint = 0
	}
	sums := make([][3]float64, chunked.Chunks) // per chunk: neg, pos, positive margins active at the hint
	chunked.For(len(margin), scaleChunkMin, func(c, lo, hi int) {
		var neg, pos, atHint float64
		for _, v := range margin[lo:hi] {
			if v <= 0 {
				neg += v
			} else {
				pos += v
				if hint*v < 1 {
					atHint += v
				}
			}
		}
		sums[c] = [3]float64{neg, pos, atHint}
	})
	neg, pos, atHint := lin, 0.0, 0.0
	for _, p := range sums {
		neg, pos, atHint = neg+p[0], pos+p[1], atHint+p[2]
	}
	// P′(hi) ≥ 0: at most every positive margin is active.
	lo, hi := 0.0, cm*(pos+math.Max(neg, 0))/(2*half)
	if !(hi > 0) {
		return 0, value(0)
	}
	if hint > 0 && hint < hi {
		bound := cm * (neg + atHint) / (2 * half)
		if 2*hint*half-cm*(neg+atHint) < 0 {
			lo, hi = hint, math.Min(hi, bound) // P′ right of the hint is negative
		} else {
			lo, hi = math.Max(lo, math.Min(bound, hint)), hint
		}
	}
	// cand holds the margins whose breakpoints lie inside (lo, hi); above is
	// the sum of the margins active on the whole bracket (breakpoints ≥ hi).
	// Breakpoints at or below lo are inactive on the whole bracket. Each
	// chunk gathers its candidates in its own part of buf; they are then
	// packed in chunk order.
	if cap(*buf) < len(margin) {
		*buf = make([]float64, len(margin))
	}
	all := (*buf)[:len(margin)]
	counts := make([]int, chunked.Chunks)
	aboves := make([]float64, chunked.Chunks)
	bounds := chunked.For(len(margin), scaleChunkMin, func(c, l, h int) {
		n, above := 0, 0.0
		part := all[l:h]
		for _, v := range margin[l:h] {
			// Breakpoint 1/v ≥ hi, or in (lo, hi), tested by products:
			// a division per margin was a third of the pass.
			if v > 0 {
				switch {
				case v*hi <= 1:
					above += v
				case v*lo < 1:
					part[n] = v
					n++
				}
			}
		}
		counts[c], aboves[c] = n, above
	})
	cand := all[:0]
	var above float64
	for c := 0; c+1 < len(bounds); c++ {
		cand = append(cand, all[bounds[c]:bounds[c]+counts[c]]...) // never overtakes: bounds[c] ≥ len(cand)
		above += aboves[c]
	}
	for len(cand) > 0 {
		// Partition around a median-of-three pivot p: [less | equal | greater].
		p := median3(cand[0], cand[len(cand)/2], cand[len(cand)-1])
		less, greater := 0, len(cand)
		var sLess, sEqual float64
		for i := 0; i < greater; {
			switch v := cand[i]; {
			case v < p:
				sLess += v
				cand[i], cand[less] = cand[less], v
				less++
				i++
			case v > p:
				greater--
				cand[i], cand[greater] = cand[greater], v
			default:
				sEqual += v
				i++
			}
		}
		// At t = 1/p the active margins are those below p.
		tp := 1 / p
		if 2*tp*half-cm*(neg+above+sLess) < 0 {
			lo = tp // the minimiser lies beyond 1/p: margins ≥ p are inactive there
			cand = cand[:less]
		} else {
			hi = tp // margins ≤ p are active on all of (lo, 1/p)
			above += sLess + sEqual
			cand = cand[greater:]
		}
	}
	// P′ is linear on the bracket, which holds no breakpoint.
	t = math.Min(math.Max(cm*(neg+above)/(2*half), lo), hi)
	return t, value(t)
}

// scaleChunkMin is the number of margins from which primalScale's passes
// are split over the cores.
const scaleChunkMin = 1 << 13

// median3 returns the median of three values.
func median3(a, b, c float64) float64 {
	if a > b {
		a, b = b, a
	}
	if b > c {
		b = c
	}
	return math.Max(a, b)
}
