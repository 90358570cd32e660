//go:build amd64 && !noasm

package f64

// negMaxAVX2 folds −ρ_r − w·h_r into lanes[r mod 4] by max (NaN ignored);
// len(rho) is a multiple of 4 and len(h) ≥ len(rho).
//
//go:noescape
func negMaxAVX2(rho, h []float64, w float64, lanes *[4]float64)

// expMomentsAVX2 adds e, e·h, e·h² and e·h³, e = Exp(−ρ_r − w·h_r − shift),
// into lane r mod 4 of acc's four groups; len(rho) is a multiple of 4.
//
//go:noescape
func expMomentsAVX2(rho, h []float64, w, shift float64, acc *[16]float64)

// expNegAVX2 sets dst[r] = Exp(−ρ_r − shift); len(rho) is a multiple of 4.
//
//go:noescape
func expNegAVX2(dst, rho []float64, shift float64)
