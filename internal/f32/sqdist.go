package f32

// SqDist returns Σ (a_i − b_i)², each difference rounded to float32 (as
// float32 arithmetic rounds it) and squared and summed in float64: eight
// partial sums over the blocks of eight, added pairwise, then the tail in
// order. The vectorised loop and the portable one give the same bits. b
// must be at least as long as a.
func SqDist(a, b []float32) float64 {
	b = b[:len(a)]
	if useAVX2 && len(a) >= 8 {
		return sqDistAVX2(a, b)
	}
	return sqDistGeneric(a, b)
}

// sqDistGeneric is SqDist's portable loop.
func sqDistGeneric(a, b []float32) float64 {
	b = b[:len(a)]
	var s [8]float64
	i := 0
	for ; i+8 <= len(a); i += 8 {
		for j := range s {
			t := float64(a[i+j] - b[i+j])
			s[j] += t * t
		}
	}
	sum := ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]))
	for ; i < len(a); i++ {
		t := float64(a[i] - b[i])
		sum += t * t
	}
	return sum
}
