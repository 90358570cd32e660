package f64

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ulps returns the distance between a and b in units in the last place of b.
func ulps(a, b float64) float64 {
	if a == b {
		return 0
	}
	return math.Abs(a-b) / (math.Nextafter(b, math.Inf(1)) - b)
}

// TestExpAccuracy compares Exp with math.Exp over its domain: at most 3 ulp
// on a million arguments in [−708, 709] (math.Exp is itself within 1), exact at 0, and the documented
// edges.
func TestExpAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	worst, at := 0.0, 0.0
	for i := 0; i < 1_000_000; i++ {
		var x float64
		switch i % 3 {
		case 0:
			x = -708 + 1417*rng.Float64()
		case 1:
			x = -40 * rng.Float64() // the weights' usual range
		default:
			x = (rng.Float64() - 0.5) * 1e-3
		}
		if u := ulps(Exp(x), math.Exp(x)); u > worst {
			worst, at = u, x
		}
	}
	if worst > 3 {
		t.Errorf("Exp is %.2f ulp from math.Exp at x = %v", worst, at)
	}
	t.Logf("largest error %.2f ulp (x = %v)", worst, at)
	for _, tc := range []struct{ x, want float64 }{
		{0, 1}, {math.Copysign(0, -1), 1}, {-708.5, 0}, {-1e300, 0}, {math.Inf(-1), 0},
		{709, math.Exp(709)}, {1e300, math.Exp(709)}, {math.Inf(1), math.Exp(709)},
	} {
		if got := Exp(tc.x); math.Abs(got-tc.want) > 2*(math.Nextafter(tc.want, math.Inf(1))-tc.want) {
			t.Errorf("Exp(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
	if !math.IsNaN(Exp(math.NaN())) {
		t.Errorf("Exp(NaN) = %v", Exp(math.NaN()))
	}
}

// TestExpLoopsMatchGeneric checks that the AVX2 loops (where the processor
// has them) give the portable loops' bits, and the sums against a direct
// evaluation.
func TestExpLoopsMatchGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 3, 4, 5, 8, 13, 64, 257, 1000} {
		rho, h := make([]float64, n), make([]float64, n)
		for i := range rho {
			rho[i] = 3 * rng.NormFloat64()
			h[i] = rng.NormFloat64()
		}
		if n > 6 {
			rho[5] = 1e6 // a weight that underflows
		}
		const w = 0.7
		shift := NegMax(rho, h, w)
		// The reference: the same roundings, element by element.
		want := math.Inf(-1)
		for i := range rho {
			want = math.Max(want, -rho[i]-float64(w*h[i]))
		}
		if n > 0 && shift != want {
			t.Errorf("n=%d NegMax = %v, want %v", n, shift, want)
		}
		got := ExpMoments(rho, h, w, shift)
		var acc [16]float64
		n4 := n &^ 3
		expMomentsGeneric(rho[:n4], h[:n4], w, shift, &acc)
		var ref [4]float64
		for q := range ref {
			ref[q] = (acc[4*q] + acc[4*q+1]) + (acc[4*q+2] + acc[4*q+3])
		}
		var direct [4]float64
		for i := range rho {
			e := math.Exp(-rho[i] - w*h[i] - shift)
			if i >= n4 {
				e2 := Exp(-rho[i] - float64(w*h[i]) - shift)
				eh := float64(e2 * h[i])
				q := float64(eh * h[i])
				ref[0] += e2
				ref[1] += eh
				ref[2] += q
				ref[3] += float64(q * h[i])
			}
			direct[0] += e
			direct[1] += e * h[i]
			direct[2] += e * h[i] * h[i]
			direct[3] += e * h[i] * h[i] * h[i]
		}
		if gotA := [4]float64{got.S, got.S1, got.S2, got.S3}; gotA != ref {
			t.Errorf("n=%d ExpMoments = %v, portable loop %v", n, gotA, ref)
		}
		for q, v := range []float64{got.S, got.S1, got.S2, got.S3} {
			if math.Abs(v-direct[q]) > 1e-13*(1+math.Abs(direct[q])+got.S) {
				t.Errorf("n=%d moment %d = %v, direct %v", n, q, v, direct[q])
			}
		}
		dst := make([]float64, n)
		ExpNeg(dst, rho, 1.5)
		for i := range dst {
			if want := Exp(-rho[i] - 1.5); dst[i] != want {
				t.Fatalf("n=%d ExpNeg[%d] = %v, want %v", n, i, dst[i], want)
			}
		}
	}
	// NaNs are ignored by NegMax and propagate through the moments.
	rho := []float64{1, math.NaN(), 2, 0.5, 3}
	h := []float64{0, 0, 0, 0, 0}
	if m := NegMax(rho, h, 1); m != -0.5 {
		t.Errorf("NegMax with NaN = %v, want -0.5", m)
	}
	if s := ExpMoments(rho, h, 1, -0.5).S; !math.IsNaN(s) {
		t.Errorf("ExpMoments with NaN: S = %v, want NaN", s)
	}
}

func BenchmarkExpMoments(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	rho, h := make([]float64, 4096), make([]float64, 4096)
	for i := range rho {
		rho[i], h[i] = rng.NormFloat64(), rng.NormFloat64()
	}
	b.SetBytes(8 * 4096)
	for i := 0; i < b.N; i++ {
		ExpMoments(rho, h, 0.3, 4)
	}
}

func BenchmarkMathExpLoop(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	rho, h := make([]float64, 4096), make([]float64, 4096)
	for i := range rho {
		rho[i], h[i] = rng.NormFloat64(), rng.NormFloat64()
	}
	b.SetBytes(8 * 4096)
	for i := 0; i < b.N; i++ {
		var s, s1, s2, s3 float64
		for r := range rho {
			e := math.Exp(-rho[r] - 0.3*h[r] - 4)
			eh := e * h[r]
			s += e
			s1 += eh
			s2 += eh * h[r]
			s3 += eh * h[r] * h[r]
		}
		_, _, _, _ = s, s1, s2, s3
	}
}
