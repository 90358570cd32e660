package psdlearn

import (
	"math"
	"testing"

	"github.com/psdlearn/psdlearn/algos/meg"
	"github.com/psdlearn/psdlearn/engine"
	"gonum.org/v1/gonum/mat"
)

// TestPairCon checks DefiniteBoost's constraint matrix s·X_ab + σI against
// the same matrix held densely (meg.Dense).
func TestPairCon(t *testing.T) {
	const n = 5
	w := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			w.SetSym(i, j, math.Sin(float64(1+i+3*j)))
		}
	}
	var q mat.QR // orthonormal columns for DiagQuad and Rotate
	q.Factorize(mat.NewDense(n, 3, []float64{1, 2, 0, 0, 1, 3, 2, 0, 1, 1, 1, 1, 0, 3, 2}))
	var v mat.Dense
	q.QTo(&v)
	v3 := v.Slice(0, n, 0, 3).(*mat.Dense)
	b := engine.Default()
	for _, c := range []pairCon{{n: n, a: 1, b: 3, s: 5, sigma: -1}, {n: n, a: 4, b: 0, s: -2.5, sigma: 1}} {
		full := mat.NewSymDense(n, nil)
		for i := 0; i < n; i++ {
			full.SetSym(i, i, c.sigma)
		}
		full.SetSym(c.a, c.a, full.At(c.a, c.a)+c.s/2)
		full.SetSym(c.b, c.b, full.At(c.b, c.b)+c.s/2)
		full.SetSym(c.a, c.b, -c.s/2)
		d, err := meg.NewDense(full)
		if err != nil {
			t.Fatal(err)
		}
		close := func(what string, got, want float64) {
			if math.Abs(got-want) > 1e-12 {
				t.Errorf("%+v: %s %v, want %v", c, what, got, want)
			}
		}
		close("Inner", c.Inner(w), d.Inner(w))
		g, h := make([]float64, 3), make([]float64, 3)
		c.DiagQuad(g, v3)
		d.DiagQuad(h, v3)
		for k := range g {
			close("DiagQuad", g[k], h[k])
		}
		rg, rh := mat.NewSymDense(3, nil), mat.NewSymDense(3, nil)
		c.Rotate(rg, v3)
		d.Rotate(rh, v3)
		for i := 0; i < 3; i++ {
			for j := 0; j < 3; j++ {
				close("Rotate", rg.At(i, j), rh.At(i, j))
			}
		}
		ag, ah := mat.NewSymDense(n, nil), mat.NewSymDense(n, nil)
		ag.CopySym(w)
		ah.CopySym(w)
		c.AddTo(ag, 0.7)
		d.AddTo(ah, 0.7)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				close("AddTo", ag.At(i, j), ah.At(i, j))
			}
		}
		lo, hi, _ := c.Extremes(b)
		dlo, dhi, err := d.Extremes(b)
		if err != nil {
			t.Fatal(err)
		}
		close("λmin", lo, dlo)
		close("λmax", hi, dhi)
	}
}
