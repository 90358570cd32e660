//go:build !amd64 || noasm

package f64

func negMaxAVX2(rho, h []float64, w float64, lanes *[4]float64) { negMaxGeneric(rho, h, w, lanes) }

func expMomentsAVX2(rho, h []float64, w, shift float64, acc *[16]float64) {
	expMomentsGeneric(rho, h, w, shift, acc)
}

func expNegAVX2(dst, rho []float64, shift float64) {
	for r := range rho {
		dst[r] = Exp(-rho[r] - shift)
	}
}
