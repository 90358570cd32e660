package boost

import (
	"github.com/psdlearn/psdlearn/internal/chunked"
	"github.com/psdlearn/psdlearn/internal/linesearch"
)

// The per-triplet passes of BoostMetric (weights, objective, the line
// search's derivatives) are sums over all m triplets: 450,000 exponentials
// per pass on Fashion-MNIST, a third of an iteration when run on one core.
// They run on fixed chunks whose number depends only on m, so the partial
// sums, and the order in which they are combined, are the same for any
// GOMAXPROCS: results are reproducible bit for bit on any machine.

// reduceChunkMin is the number of triplets from which a pass is split.
const reduceChunkMin = 1 << 15

// chunks returns the chunk bounds of m items.
func chunks(m int) []int { return chunked.Bounds(m, reduceChunkMin) }

// forChunks runs f on every chunk of m items, on up to GOMAXPROCS
// goroutines, and returns the chunk bounds.
func forChunks(m int, f func(c, lo, hi int)) []int { return chunked.For(m, reduceChunkMin, f) }

// expSums returns the linesearch.Sums of e_r = exp(−ρ_r − w·h_r) over all
// triplets (h may be nil for w = 0), chunk by chunk in parallel and
// combined in chunk order.
func expSums(rho, h []float64, w float64) linesearch.Sums {
	parts := make([]linesearch.Sums, len(chunks(len(rho)))-1)
	forChunks(len(rho), func(c, lo, hi int) {
		var hc []float64
		if h != nil {
			hc = h[lo:hi]
		}
		parts[c] = linesearch.ExpSums(rho[lo:hi], hc, w)
	})
	return linesearch.Combine(parts)
}

// logisticSums returns Σ h_r σ(−t_r), Σ h_r² σ(−t_r)(1 − σ(−t_r)) and its
// derivative in w, −Σ h_r³ σ(1 − σ)(1 − 2σ), for t_r = ρ_r + w·h_r.
func logisticSums(rho, h []float64, w float64) (g1, g2, g3 float64) {
	parts := make([][3]float64, len(chunks(len(rho)))-1)
	forChunks(len(rho), func(c, lo, hi int) {
		var a, b, d float64
		for r := lo; r < hi; r++ {
			hr := h[r]
			sg := sigmoidNeg(rho[r] + w*hr)
			v := hr * hr * sg * (1 - sg)
			a += hr * sg
			b += v
			d -= v * hr * (1 - 2*sg)
		}
		parts[c] = [3]float64{a, b, d}
	})
	for _, p := range parts {
		g1 += p[0]
		g2 += p[1]
		g3 += p[2]
	}
	return g1, g2, g3
}

// softplusSum returns Σ_r log(1 + exp(−ρ_r)).
func softplusSum(rho []float64) float64 {
	parts := make([]float64, len(chunks(len(rho)))-1)
	forChunks(len(rho), func(c, lo, hi int) {
		var s float64
		for _, p := range rho[lo:hi] {
			s += softplus(-p)
		}
		parts[c] = s
	})
	var s float64
	for _, p := range parts {
		s += p
	}
	return s
}
