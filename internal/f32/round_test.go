package f32

import (
	"math"
	"math/rand/v2"
	"testing"
)

// isSubnormal reports whether f is a nonzero float32 below MinNormal.
func isSubnormal(f float32) bool { return f != 0 && math.Abs(float64(f)) < MinNormal }

// TestRound checks, on fixed edge values and on values drawn over every
// binary exponent from far below the subnormal range to far above one,
// that Round never returns a subnormal and otherwise returns float32(v).
func TestRound(t *testing.T) {
	vals := []float64{0, math.Copysign(0, -1), 1, -1, MinNormal, -MinNormal, MinNormal / 2, -MinNormal / 2,
		math.Nextafter(MinNormal, 0), 0x1p-149, -0x1p-149, 0x1p-150, 1e-300, math.MaxFloat32, 1e-38, 1.2e-38}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		v := math.Ldexp(rng.Float64()+0.5, rng.IntN(240)-200)
		if rng.IntN(2) == 0 {
			v = -v
		}
		vals = append(vals, v)
	}
	for _, v := range vals {
		got := Round(v)
		if isSubnormal(got) {
			t.Fatalf("Round(%g) = %g, a subnormal", v, got)
		}
		if want := float32(v); !isSubnormal(want) && got != want {
			t.Fatalf("Round(%g) = %g, want float32's %g", v, got, want)
		}
		if isSubnormal(float32(v)) && got != 0 {
			t.Fatalf("Round(%g) = %g, want 0 for float32's subnormal %g", v, got, float32(v))
		}
	}
	dst := make([]float32, len(vals)+1)
	dst[len(vals)] = 7
	FromFloat64(dst, vals)
	for i, v := range vals {
		if dst[i] != Round(v) {
			t.Fatalf("FromFloat64: dst[%d] = %g, Round gives %g", i, dst[i], Round(v))
		}
	}
	if dst[len(vals)] != 7 {
		t.Fatal("FromFloat64 wrote past len(src)")
	}
}
