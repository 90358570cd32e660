package engine

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"
)

// TestOrthSketch checks the sketch's two properties: appending blocks
// (add) gives the S that rebuilding from the whole basis (reset) gives,
// and ‖Sᵀw‖ estimates ‖Vᵀw‖ (w with known coefficients c against an
// orthonormal basis V plus a part orthogonal to it): over 400 draws the
// estimate stays within a factor 10 of ‖c‖ (a χ² with 8 degrees of
// freedom leaves it with probability below 10⁻³ per draw), its mean square
// is within 20% of ‖c‖², and check passes or fails the blocks accordingly and returns the
// column norms.
func TestOrthSketch(t *testing.T) {
	const n, m, b = 3000, 40, 4
	rng := rand.New(rand.NewPCG(5, 6))
	var q mat.QR
	q.Factorize(benchBlock(n, m+b, rng))
	var full mat.Dense
	q.QTo(&full)
	basis := mat.DenseCopyOf(full.Slice(0, n, 0, m+b))
	o := newOrthSketch(n, m+b, rng)
	o.reset(gonum.Implementation{}, basis.Slice(0, n, 0, m).(*mat.Dense))
	o.add(mat.DenseCopyOf(basis.Slice(0, n, m, m+b)), m)
	want := newOrthSketch(n, m+b, rand.New(rand.NewPCG(5, 6)))
	want.g = o.g
	want.reset(gonum.Implementation{}, basis)
	if !mat.EqualApprox(o.s, want.s, 1e-12) {
		t.Fatal("S after add differs from S rebuilt from the whole basis")
	}
	v := basis.Slice(0, n, 0, m+b).(*mat.Dense)
	var sumRatio2 float64
	const draws = 400
	for d := 0; d < draws; d++ {
		w := mat.NewDense(n, 1, nil)
		c := mat.NewDense(m+b, 1, nil)
		size := math.Pow(10, -12+4*rng.Float64())
		for i := 0; i < m+b; i++ {
			c.Set(i, 0, size*rng.NormFloat64())
		}
		w.Mul(v, c)
		// A unit component orthogonal to the basis.
		orth := mat.NewDense(n, 1, nil)
		orth.Copy(full.Slice(0, n, m+b+d%b, m+b+d%b+1))
		w.Add(w, orth)
		cn := mat.Norm(c, 2)
		ct := projectRows(o.s, w)
		var ss float64
		for _, x := range ct {
			ss += x * x
		}
		est := math.Sqrt(ss)
		if est < cn/10 || est > 10*cn {
			t.Errorf("draw %d: estimate %.3g for ‖Vᵀw‖ = %.3g", d, est, cn)
		}
		sumRatio2 += (est / cn) * (est / cn)
		nw := mat.Norm(w, 2)
		norms, ok := o.check(w, cn/20/nw)
		if ok {
			t.Errorf("draw %d: passed at a twentieth of ‖Vᵀw‖", d)
		}
		if math.Abs(norms[0]-nw) > 1e-14*nw {
			t.Errorf("draw %d: norm %v, want %v", d, norms[0], nw)
		}
		if _, ok := o.check(w, 20*cn/nw); !ok {
			t.Errorf("draw %d: failed at 20 ‖Vᵀw‖", d)
		}
	}
	if mean := sumRatio2 / draws; math.Abs(mean-1) > 0.2 {
		t.Errorf("mean of ‖Sᵀw‖²/‖Vᵀw‖² = %.3f, want 1", mean)
	}
}
