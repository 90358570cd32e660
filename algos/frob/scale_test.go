package frob

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// bruteScale minimises P(t) = t²·half + cm Σ max(0, 1 − t·m_r) over t ≥ 0 by
// evaluating P at every breakpoint and at the stationary point of every
// segment between them.
func bruteScale(margin []float64, half, cm float64) (t, p float64) {
	value := func(t float64) float64 {
		var h float64
		for _, v := range margin {
			h += math.Max(0, 1-t*v)
		}
		return t*t*half + cm*h
	}
	pts := []float64{0}
	for _, v := range margin {
		if v > 0 {
			pts = append(pts, 1/v)
		}
	}
	sort.Float64s(pts)
	cands := append([]float64(nil), pts...)
	for i := range pts {
		// On the segment after pts[i] the active set is {r: t·m_r < 1}.
		var s float64
		at := pts[i] * (1 + 1e-12)
		for _, v := range margin {
			if at*v < 1 {
				s += v
			}
		}
		cands = append(cands, math.Max(0, cm*s/(2*half)))
	}
	t, p = 0, math.Inf(1)
	for _, c := range cands {
		if v := value(c); v < p {
			t, p = c, v
		}
	}
	return t, p
}

func TestPrimalScale(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, tc := range []struct {
		name      string
		m         int
		mean, sd  float64
		half, cm  float64
		wantScale float64 // NaN: compare with the brute force only
	}{
		{"satisfied margins", 200, 2, 0.5, 0.5, 1e-3, math.NaN()},
		{"around one", 300, 1, 0.3, 2, 1e-2, math.NaN()},
		{"mostly violated", 250, 0.2, 0.5, 0.01, 0.1, math.NaN()},
		{"all negative", 50, -1, 0.2, 1, 0.1, 0},
		{"single margin", 1, 3, 0, 1, 1, math.NaN()},
		{"zero metric", 10, 0, 0, 0, 1, 1},
		{"tied margins", 400, 1, 0.4, 1, 5e-3, math.NaN()},
		{"large", 5000, 1.2, 0.6, 3, 1e-4, math.NaN()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			margin := make([]float64, tc.m)
			for i := range margin {
				margin[i] = tc.mean + tc.sd*rng.NormFloat64()
				if tc.name == "tied margins" {
					margin[i] = math.Round(margin[i]*8) / 8 // many equal breakpoints
				}
			}
			var buf []float64
			got, p := primalScale(margin, tc.half, tc.cm, 0, &buf)
			// A hint (the previous call's minimiser in a dual solve) only
			// narrows the search: from any hint, the same minimum.
			for _, hint := range []float64{got, got * 0.9, got * 1.1, got * (1 + 1e-9), 1e-3, 1e3, math.Inf(1), math.NaN()} {
				ht, hp := primalScale(margin, tc.half, tc.cm, hint, &buf)
				if math.Abs(hp-p) > 1e-13*math.Max(1, math.Abs(p)) || math.Abs(ht-got) > 1e-12*math.Max(1, got) {
					t.Fatalf("hint %v: t = %v, P = %.17g; without a hint t = %v, P = %.17g", hint, ht, hp, got, p)
				}
			}
			if !math.IsNaN(tc.wantScale) {
				if got != tc.wantScale {
					t.Fatalf("t = %v, want %v", got, tc.wantScale)
				}
				return
			}
			_, want := bruteScale(margin, tc.half, tc.cm)
			if p > want*(1+1e-12)+1e-15 {
				t.Fatalf("P(t=%v) = %.17g, brute-force minimum %.17g", got, p, want)
			}
			// P at the returned t must also be what its formula says.
			var h float64
			for _, v := range margin {
				h += math.Max(0, 1-got*v)
			}
			if q := got*got*tc.half + tc.cm*h; math.Abs(q-p) > 1e-12*math.Abs(p) {
				t.Fatalf("returned P %.17g, P(t) = %.17g", p, q)
			}
		})
	}
}

// TestTripletNorms compares ‖A_r‖_F from tripletNorms with the Frobenius
// norm of the explicitly formed A_r = p pᵀ − q qᵀ.
func TestTripletNorms(t *testing.T) {
	d, ts := smallSet(t, "wine")
	got := tripletNorms(d.X, ts)
	dim := d.Dim()
	p, q := make([]float64, dim), make([]float64, dim)
	for r, tr := range ts.Triplets {
		for c := 0; c < dim; c++ {
			p[c] = d.X.At(tr.I, c) - d.X.At(tr.K, c)
			q[c] = d.X.At(tr.I, c) - d.X.At(tr.J, c)
		}
		var f2 float64
		for a := 0; a < dim; a++ {
			for b := 0; b < dim; b++ {
				v := p[a]*p[b] - q[a]*q[b]
				f2 += v * v
			}
		}
		if want := math.Sqrt(f2); math.Abs(got[r]-want) > 1e-10*want {
			t.Fatalf("triplet %d: ‖A_r‖_F = %v, explicit %v", r, got[r], want)
		}
	}
}

// TestPrimalScaleFixed checks the linear terms of a held set: P(t) gains
// cm(n − t·lin), and the minimiser over t ≥ 0 must match a dense scan
// refined by golden section, for lin of either sign.
func TestPrimalScaleFixed(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for _, lin := range []float64{-40, -1, 0, 2, 35} {
		margin := make([]float64, 300)
		for i := range margin {
			margin[i] = 0.8 + 0.4*rng.NormFloat64()
		}
		half, cm, n := 0.7, 0.01, 50.0
		value := func(t float64) float64 {
			var h float64
			for _, v := range margin {
				h += math.Max(0, 1-t*v)
			}
			return t*t*half + cm*h + cm*(n-t*lin)
		}
		var buf []float64
		got, p := primalScaleFixed(margin, half, cm, lin, n, 0, &buf)
		for _, hint := range []float64{got, got * 0.7, got * 1.3, 1e-4, 50} {
			ht, hp := primalScaleFixed(margin, half, cm, lin, n, hint, &buf)
			if math.Abs(hp-p) > 1e-13*math.Max(1, math.Abs(p)) || math.Abs(ht-got) > 1e-12*math.Max(1, got) {
				t.Fatalf("lin %g hint %v: t = %v, P = %.17g; without a hint t = %v, P = %.17g", lin, hint, ht, hp, got, p)
			}
		}
		if math.Abs(p-value(got)) > 1e-12*math.Max(1, math.Abs(p)) {
			t.Fatalf("lin %g: reported P = %v, P(t) = %v", lin, p, value(got))
		}
		// The convex P has no point below the reported minimum.
		for k := 0; k <= 20000; k++ {
			tt := 3 * float64(k) / 20000
			if v := value(tt); v < p-1e-12*math.Max(1, math.Abs(p)) {
				t.Fatalf("lin %g: P(%g) = %.15g below the reported minimum P(%g) = %.15g", lin, tt, v, got, p)
			}
		}
	}
}
