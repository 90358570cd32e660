package f64

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestWeightedSq: WeightedSqDist is within n·ε·Σ|terms| of the plain sum
// and equals its documented order written out term by term; AddScaledSq
// rounds each element as acc + (s·d)·d; and (with AVX2) the assembly gives
// the generic loops' bits. Lengths run around the blocks of 4 and 16, with
// longer b and a (the callers pass rows of a wider matrix) and signed
// weights.
func TestWeightedSq(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, n := range []int{0, 1, 3, 4, 5, 12, 15, 16, 17, 19, 20, 31, 32, 33, 36, 47, 164, 500} {
		w, a, b := make([]float64, n), make([]float64, n+3), make([]float64, n+5)
		for i := range w {
			w[i] = rng.NormFloat64()
		}
		for i := range a {
			a[i] = rng.NormFloat64()
		}
		for i := range b {
			b[i] = 1e3 * rng.NormFloat64()
		}
		var plain, scale float64
		for k := range w {
			d := a[k] - b[k]
			plain += w[k] * d * d
			scale += math.Abs(w[k] * d * d)
		}
		got := WeightedSqDist(w, a, b)
		if math.Abs(got-plain) > float64(n+1)*0x1p-52*scale {
			t.Errorf("n=%d: WeightedSqDist = %v, plain sum %v", n, got, plain)
		}
		if want := wsqDocumented(w, a, b); got != want {
			t.Errorf("n=%d: WeightedSqDist = %v, its documented order %v", n, got, want)
		}

		s := rng.NormFloat64()
		acc := append([]float64(nil), a[:n]...)
		AddScaledSq(acc, s, a, b)
		for k := range acc {
			d := a[k] - b[k]
			t1 := s * d
			t2 := t1 * d
			if want := a[k] + t2; acc[k] != want {
				t.Fatalf("n=%d: AddScaledSq entry %d = %v, want %v", n, k, acc[k], want)
			}
		}

		if n4 := n &^ 3; useAVX2 && n4 > 0 {
			var a1, a2 [16]float64
			for i := range a1 {
				a1[i] = float64(i) // the loops add to what acc holds
				a2[i] = float64(i)
			}
			wsqAccAVX2(n4, &w[0], &a[0], &b[0], &a1)
			wsqAccGeneric(w[:n4], a, b, &a2)
			if a1 != a2 {
				t.Errorf("n=%d: wsqAccAVX2 %v, generic %v", n, a1, a2)
			}
		}
	}
}

// wsqDocumented is WeightedSqDist's order written out: terms k < n16 into
// lane k mod 16, the next multiple of four into lane k mod 4, the fold,
// then the tail in order.
func wsqDocumented(w, a, b []float64) float64 {
	n := len(w)
	n16, n4 := n&^15, n&^3
	term := func(k int) float64 {
		d := a[k] - b[k]
		t := w[k] * d
		return t * d
	}
	var lane [16]float64
	for k := 0; k < n4; k++ {
		l := k % 16
		if k >= n16 {
			l = k % 4
		}
		lane[l] += term(k)
	}
	var v [4]float64
	for i := range v {
		v[i] = (lane[i] + lane[i+4]) + (lane[i+8] + lane[i+12])
	}
	s := (v[0] + v[1]) + (v[2] + v[3])
	for k := n4; k < n; k++ {
		s += term(k)
	}
	return s
}

func BenchmarkWeightedSqDist500(b *testing.B) {
	w, x, y := make([]float64, 500), make([]float64, 500), make([]float64, 500)
	for i := range x {
		w[i], x[i], y[i] = 1/float64(i+1), float64(i), float64(2*i)
	}
	var s float64
	for i := 0; i < b.N; i++ {
		s += WeightedSqDist(w, x, y)
	}
	_ = s
}
