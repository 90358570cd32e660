package linesearch

import "math"

// Sums holds, for a set of triplets, Σ e_r, Σ e_r·h_r, Σ e_r·h_r² and
// Σ e_r·h_r³ with e_r = exp(t_r − Shift), t_r = −ρ_r − w·h_r: the
// exponential loss's weights along a new term h at weight w, shifted so
// that nothing overflows. Sums over disjoint sets of triplets merge with
// Combine.
type Sums struct{ Shift, S, S1, S2, S3 float64 }

// ExpSums returns the Sums of rho and h at w in one pass; h may be nil for
// w = 0 (then S1 = S2 = S3 = 0). The shift follows the running maximum of
// the exponents, rescaling the partial sums when it grows (a handful of
// times on data in no particular order).
func ExpSums(rho, h []float64, w float64) Sums {
	mx := math.Inf(-1)
	var s, s1, s2, s3 float64
	if h == nil {
		for _, p := range rho {
			t := -p
			if t > mx {
				s *= math.Exp(mx - t)
				mx = t
			}
			s += math.Exp(t - mx)
		}
		return Sums{Shift: mx, S: s}
	}
	h = h[:len(rho)]
	for r, p := range rho {
		hr := h[r]
		t := -p - w*hr
		if t > mx {
			f := math.Exp(mx - t)
			s, s1, s2, s3 = s*f, s1*f, s2*f, s3*f
			mx = t
		}
		e := math.Exp(t - mx)
		eh := e * hr
		s += e
		s1 += eh
		s2 += eh * hr
		s3 += eh * hr * hr
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
