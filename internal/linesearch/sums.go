package linesearch

import (
	"math"

	"github.com/psdlearn/psdlearn/internal/f64"
)

// Sums holds, for a set of triplets, Σ e_r, Σ e_r·h_r, Σ e_r·h_r² and
// Σ e_r·h_r³ with e_r = exp(t_r − Shift), t_r = −ρ_r − w·h_r: the
// exponential loss's weights along a new term h at weight w, shifted so
// that nothing overflows. Sums over disjoint sets of triplets merge with
// Combine.
type Sums struct{ Shift, S, S1, S2, S3 float64 }

// expBlock is the number of triplets per block of ExpSums: the block's
// largest exponent is found first, then its weights are summed with the
// shift at or above it, while the block is still in the L1 cache.
const expBlock = 512

// ExpSums returns the Sums of rho and h at w; h may be nil for w = 0 (then
// S1 = S2 = S3 = 0). Blocks of triplets are summed with the shift raised to
// the block's largest exponent first when that is above the running shift
// (the partial sums are rescaled), so no weight exceeds 1 and nothing
// overflows. The exponentials are f64.Exp's, four per instruction on AVX2
// processors and bit-identical on the others.
func ExpSums(rho, h []float64, w float64) Sums {
	hh := h
	if h == nil {
		hh, w = rho, 0 // −ρ − 0·ρ = −ρ exactly
	}
	hh = hh[:len(rho)]
	mx := math.Inf(-1)
	var s, s1, s2, s3 float64
	for lo := 0; lo < len(rho); lo += expBlock {
		hi := min(lo+expBlock, len(rho))
		if bm := f64.NegMax(rho[lo:hi], hh[lo:hi], w); bm > mx {
			f := math.Exp(mx - bm)
			s, s1, s2, s3 = s*f, s1*f, s2*f, s3*f
			mx = bm
		}
		b := f64.ExpMoments(rho[lo:hi], hh[lo:hi], w, mx)
		s, s1, s2, s3 = s+b.S, s1+b.S1, s2+b.S2, s3+b.S3
	}
	if h == nil {
		return Sums{Shift: mx, S: s}
	}
	return Sums{mx, s, s1, s2, s3}
}

// Combine merges the Sums of disjoint sets, in the order given, onto the
// largest shift. The same parts in the same order give the same bits.
func Combine(parts []Sums) Sums {
	mx := math.Inf(-1)
	for _, p := range parts {
		mx = math.Max(mx, p.Shift)
	}
	out := Sums{Shift: mx}
	for _, p := range parts {
		if p.S == 0 {
			continue
		}
		f := math.Exp(p.Shift - mx)
		out.S += f * p.S
		out.S1 += f * p.S1
		out.S2 += f * p.S2
		out.S3 += f * p.S3
	}
	return out
}

// LogSum returns log Σ_r exp(t_r).
func (t Sums) LogSum() float64 { return t.Shift + math.Log(t.S) }

// Deriv returns the derivative f = ν − E[h] of the exponential loss's
// objective along the term and its derivatives f′ = Var(h) and
// f″ = −E[(h − E[h])³], the moments taken under the weights e_r.
func (t Sums) Deriv(nu float64) (f, f1, f2 float64) {
	m1 := t.S1 / t.S
	m2 := t.S2/t.S - m1*m1
	m3 := t.S3/t.S - 3*m1*(t.S2/t.S) + 2*m1*m1*m1
	return nu - m1, math.Max(m2, 0), -m3
}
