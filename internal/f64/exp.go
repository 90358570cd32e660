package f64

import "math"

// The exponential of this package and the loops built on it. Exp evaluates
// exp(x) = 2ᵏ·p(r), k = round(x·log₂e), r = x − k·ln2 (two-part ln 2, so r
// is exact to about 2⁻⁶⁰), p the degree-13 Taylor polynomial of exp at 0 by
// Horner's rule (truncation below 10⁻¹⁷ relative on |r| ≤ ln2/2). Every
// operation is one IEEE multiply or add, never fused, so the AVX2 kernels
// (four elements per instruction) and the portable loops give the same
// bits; the tests check both against math.Exp (a few ulp).
//
// Domain: the loops here compute weights exp(t − shift) with the shift at
// or above the largest t, so arguments are at most 0 in use. Arguments
// below −708 give 0 (the result would be below 2⁻¹⁰²¹, far below the
// rounding of a sum that holds a term of 1); arguments above 709 are taken
// as 709. NaN gives NaN.
const (
	expLog2e = 0x1.71547652b82fep+0
	expLn2Hi = 0x1.62e42fee00000p-1 // 32 significant bits: k·expLn2Hi is exact
	expLn2Lo = 0x1.a39ef35793c76p-33
	expLo    = -708.0
	expHi    = 709.0
	expC2    = 0x1.0000000000000p-1
	expC3    = 0x1.5555555555555p-3
	expC4    = 0x1.5555555555555p-5
	expC5    = 0x1.1111111111111p-7
	expC6    = 0x1.6c16c16c16c17p-10
	expC7    = 0x1.a01a01a01a01ap-13
	expC8    = 0x1.a01a01a01a01ap-16
	expC9    = 0x1.71de3a556c734p-19
	expC10   = 0x1.27e4fb7789f5cp-22
	expC11   = 0x1.ae64567f544e4p-26
	expC12   = 0x1.1eed8eff8d898p-29
	expC13   = 0x1.6124613a86d09p-33
)

// Exp returns exp(x) as every loop of this package computes it (see the
// domain above).
func Exp(x float64) float64 {
	xc := x
	if expLo > xc {
		xc = expLo
	}
	if expHi < xc {
		xc = expHi
	}
	k := math.RoundToEven(xc * expLog2e)
	r := xc - float64(k*expLn2Hi)
	r -= float64(k * expLn2Lo)
	p := float64(expC13*r) + expC12
	p = float64(p*r) + expC11
	p = float64(p*r) + expC10
	p = float64(p*r) + expC9
	p = float64(p*r) + expC8
	p = float64(p*r) + expC7
	p = float64(p*r) + expC6
	p = float64(p*r) + expC5
	p = float64(p*r) + expC4
	p = float64(p*r) + expC3
	p = float64(p*r) + expC2
	p = float64(p*r) + 1
	p = float64(p*r) + 1
	e := p * math.Float64frombits(uint64(int64(k)+1023)<<52)
	if x < expLo {
		return 0
	}
	return e
}

// Moments are Σ e_r, Σ e_r·h_r, Σ e_r·h_r² and Σ e_r·h_r³ for weights
// e_r = Exp(−ρ_r − w·h_r − shift) (ExpMoments).
type Moments struct{ S, S1, S2, S3 float64 }

// NegMax returns max_r (−ρ_r − w·h_r), ignoring NaNs; −Inf for no
// elements. h must be at least as long as rho.
func NegMax(rho, h []float64, w float64) float64 {
	h = h[:len(rho)]
	var lanes [4]float64
	for l := range lanes {
		lanes[l] = math.Inf(-1)
	}
	n4 := len(rho) &^ 3
	if useAVX2 && n4 > 0 {
		negMaxAVX2(rho[:n4], h[:n4], w, &lanes)
	} else {
		negMaxGeneric(rho[:n4], h[:n4], w, &lanes)
	}
	m := lanes[0]
	for _, v := range lanes[1:] {
		if v > m {
			m = v
		}
	}
	for r := n4; r < len(rho); r++ {
		if t := -rho[r] - float64(w*h[r]); t > m {
			m = t
		}
	}
	return m
}

// ExpMoments returns the Moments of e_r = Exp(t_r − shift), t_r = −ρ_r −
// w·h_r. The first len(rho) &^ 3 elements are summed in four lanes (r mod
// 4) combined as (l₀ + l₁) + (l₂ + l₃), the rest in order after them. h
// must be at least as long as rho.
func ExpMoments(rho, h []float64, w, shift float64) Moments {
	h = h[:len(rho)]
	var acc [16]float64 // S lanes, then S1, S2, S3 lanes
	n4 := len(rho) &^ 3
	if useAVX2 && n4 > 0 {
		expMomentsAVX2(rho[:n4], h[:n4], w, shift, &acc)
	} else {
		expMomentsGeneric(rho[:n4], h[:n4], w, shift, &acc)
	}
	var out [4]float64
	for q := range out {
		a := acc[4*q : 4*q+4]
		out[q] = (a[0] + a[1]) + (a[2] + a[3])
	}
	for r := n4; r < len(rho); r++ {
		hr := h[r]
		e := Exp(-rho[r] - float64(w*hr) - shift)
		eh := float64(e * hr) // explicit roundings: never fused
		q := float64(eh * hr)
		out[0] += e
		out[1] += eh
		out[2] += q
		out[3] += float64(q * hr)
	}
	return Moments{out[0], out[1], out[2], out[3]}
}

// ExpNeg sets dst[r] = Exp(−ρ_r − shift). dst must be at least as long as
// rho.
func ExpNeg(dst, rho []float64, shift float64) {
	dst = dst[:len(rho)]
	n4 := len(rho) &^ 3
	if useAVX2 && n4 > 0 {
		expNegAVX2(dst[:n4], rho[:n4], shift)
	} else {
		for r := range n4 {
			dst[r] = Exp(-rho[r] - shift)
		}
	}
	for r := n4; r < len(rho); r++ {
		dst[r] = Exp(-rho[r] - shift)
	}
}

func negMaxGeneric(rho, h []float64, w float64, lanes *[4]float64) {
	for r := range rho {
		if t := -rho[r] - float64(w*h[r]); t > lanes[r&3] {
			lanes[r&3] = t
		}
	}
}

func expMomentsGeneric(rho, h []float64, w, shift float64, acc *[16]float64) {
	for r := range rho {
		hr := h[r]
		e := Exp(-rho[r] - float64(w*hr) - shift)
		eh := float64(e * hr) // explicit roundings: never fused
		q := float64(eh * hr)
		l := r & 3
		acc[l] += e
		acc[4+l] += eh
		acc[8+l] += q
		acc[12+l] += float64(q * hr)
	}
}
