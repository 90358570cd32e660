package f64

// DotWide returns the dot product of a and b (b at least as long as a)
// with sixteen partial sums instead of Dot's four: a vectorised loop then
// keeps four 256-bit additions in flight, about four times Dot's rate on
// data in cache. Its sums are in a different order from Dot's, so the two
// can differ in the last bits; DotWide's vectorised and portable loops
// perform the same operations in the same order and give the same bits.
// The envelope LDLᵀ factorisation and solves of the SDP's shift-and-invert
// eigensolver (package sdp) use it.
func DotWide(a, b []float64) float64 {
	b = b[:len(a)]
	n4 := len(a) &^ 3
	var c [4]float64
	if useAVX2 && n4 > 0 {
		dotWideAVX2(n4, &a[0], &b[0], &c)
	} else {
		dotWideGeneric(a[:n4], b, &c)
	}
	s := c[0]
	for i := n4; i < len(a); i++ {
		s += float64(a[i] * b[i])
	}
	return (s + c[1]) + (c[2] + c[3])
}

// dotWideGeneric is DotWide's portable loop over len(a), a multiple of 4:
// sixteen partial sums over blocks of 16, the rest of the blocks of 4 into
// the first four, combined lane by lane as (p_l + p_{4+l}) + (p_{8+l} + p_{12+l}).
// The explicit conversions keep each product rounded (no fused multiply–add).
func dotWideGeneric(a, b []float64, c *[4]float64) {
	var p [16]float64
	n16 := len(a) &^ 15
	for i := 0; i < n16; i += 16 {
		for l := range 16 {
			p[l] += float64(a[i+l] * b[i+l])
		}
	}
	for i := n16; i < len(a); i += 4 {
		for l := range 4 {
			p[l] += float64(a[i+l] * b[i+l])
		}
	}
	for l := range 4 {
		c[l] = (p[l] + p[4+l]) + (p[8+l] + p[12+l])
	}
}
