package f64

// WeightedSqDist returns Σ_k w_k·(a_k − b_k)² over k < len(w); a and b must
// be at least as long as w. Each term is rounded as ((w_k·d)·d), d =
// a_k − b_k, never fused, and the terms are summed in a fixed order: the
// first n − n mod 16 into sixteen accumulators by k mod 16, the next
// multiple of four into the first four, then the sixteen folded as
// v_i = (acc_i + acc_{i+4}) + (acc_{i+8} + acc_{i+12}) and
// (v_0 + v_1) + (v_2 + v_3), then the last n mod 4 terms in order. AVX2 on
// amd64 processors that have it and the portable loop give the same bits.
func WeightedSqDist(w, a, b []float64) float64 {
	n := len(w)
	a, b = a[:n], b[:n]
	n4 := n &^ 3
	var acc [16]float64
	if useAVX2 && n4 > 0 {
		wsqAccAVX2(n4, &w[0], &a[0], &b[0], &acc)
	} else {
		wsqAccGeneric(w[:n4], a, b, &acc)
	}
	var v [4]float64
	for i := range v {
		v[i] = (acc[i] + acc[i+4]) + (acc[i+8] + acc[i+12])
	}
	s := (v[0] + v[1]) + (v[2] + v[3])
	for k := n4; k < n; k++ {
		d := a[k] - b[k]
		s += float64(float64(w[k]*d) * d)
	}
	return s
}

// wsqAccGeneric is wsqAccAVX2's loop: the terms of the first n16 = len(w)
// − len(w) mod 16 entries into acc[k mod 16], the rest (len(w) a multiple
// of 4) into acc[k mod 4].
func wsqAccGeneric(w, a, b []float64, acc *[16]float64) {
	n := len(w)
	k := 0
	for ; k+16 <= n; k += 16 {
		for l := 0; l < 16; l++ {
			d := a[k+l] - b[k+l]
			acc[l] += float64(float64(w[k+l]*d) * d)
		}
	}
	for ; k+4 <= n; k += 4 {
		for l := 0; l < 4; l++ {
			d := a[k+l] - b[k+l]
			acc[l] += float64(float64(w[k+l]*d) * d)
		}
	}
}

// AddScaledSq sets acc_k += s·(a_k − b_k)² for k < len(acc); a and b must
// be at least as long as acc. Each element is rounded as acc_k + ((s·d)·d),
// d = a_k − b_k, never fused, so AVX2 and the portable loop give the same
// bits.
func AddScaledSq(acc []float64, s float64, a, b []float64) {
	n := len(acc)
	a, b = a[:n], b[:n]
	n4 := n &^ 3
	k := 0
	if useAVX2 && n4 > 0 {
		addScaledSqAVX2(n4, s, &acc[0], &a[0], &b[0])
		k = n4
	}
	for ; k < n; k++ {
		d := a[k] - b[k]
		acc[k] += float64(float64(s*d) * d)
	}
}
