package meg

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/engine/enginetest"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

func randSym(rng *rand.Rand, n int) *mat.SymDense {
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			s.SetSym(i, j, rng.NormFloat64())
		}
	}
	return s
}

// csrOf stores the nonzeros of a dense symmetric matrix in CSR form.
func csrOf(m *mat.SymDense) *sparse.CSR {
	n := m.SymmetricDim()
	a := &sparse.CSR{Rows: n, Cols: n, Indptr: make([]int, n+1)}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if v := m.At(i, j); v != 0 {
				a.Ind = append(a.Ind, j)
				a.Data = append(a.Data, v)
			}
		}
		a.Indptr[i+1] = len(a.Data)
	}
	return a
}

func TestSymTypes(t *testing.T) {
	const n = 7
	rng := rand.New(rand.NewPCG(1, 2))

	dense := randSym(rng, n)

	sp := mat.NewSymDense(n, nil) // support on rows 1, 3, 4
	sp.SetSym(1, 1, 2)
	sp.SetSym(1, 3, -1.5)
	sp.SetSym(3, 4, 0.7)
	sp.SetSym(4, 4, -3)
	diag := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		diag.SetSym(i, i, float64(i)-2.5)
	}

	u := mat.NewDense(n, 2, nil)
	for i := 0; i < n; i++ {
		u.Set(i, 0, rng.NormFloat64())
		u.Set(i, 1, rng.NormFloat64())
	}
	s := []float64{2, -0.5}
	lr := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			lr.SetSym(i, j, s[0]*u.At(i, 0)*u.At(j, 0)+s[1]*u.At(i, 1)*u.At(j, 1))
		}
	}
	uWide := mat.NewDense(3, 4, nil)
	sWide := []float64{1, -2, 0.5, 3}
	for i := 0; i < 3; i++ {
		for l := 0; l < 4; l++ {
			uWide.Set(i, l, rng.NormFloat64())
		}
	}
	lrWide := mat.NewSymDense(3, nil)
	for i := 0; i < 3; i++ {
		for j := i; j < 3; j++ {
			var v float64
			for l := 0; l < 4; l++ {
				v += sWide[l] * uWide.At(i, l) * uWide.At(j, l)
			}
			lrWide.SetSym(i, j, v)
		}
	}
	pair := mat.NewSymDense(n, nil)
	pair.SetSym(2, 2, 0.5)
	pair.SetSym(5, 5, 0.5)
	pair.SetSym(2, 5, -0.5)
	shifted := func(m *mat.SymDense, sigma float64) *mat.SymDense {
		c := mat.NewSymDense(m.SymmetricDim(), nil)
		c.CopySym(m)
		for i := 0; i < m.SymmetricDim(); i++ {
			c.SetSym(i, i, c.At(i, i)+sigma)
		}
		return c
	}

	must := func(s Sym, err error) Sym {
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	dS := must(NewDense(dense))
	spS := must(NewSparse(csrOf(sp)))
	diagS := must(NewSparse(csrOf(diag)))
	lrS := must(NewLowRank(u, s))
	lrWideS := must(NewLowRank(uWide, sWide))

	cases := []struct {
		name    string
		s       Sym
		ref     *mat.SymDense
		lo, hi  float64 // expected extremes when bounded is true
		bounded bool
	}{
		{name: "dense", s: dS, ref: dense},
		{name: "sparse partial support", s: spS, ref: sp},
		{name: "sparse diagonal", s: diagS, ref: diag},
		{name: "low rank", s: lrS, ref: lr},
		{name: "low rank k>d", s: lrWideS, ref: lrWide},
		{name: "distance pair", s: DistPair{N: n, A: 5, B: 2}, ref: pair},
		{name: "shifted pair", s: Shift(DistPair{N: n, A: 2, B: 5}, -0.1), ref: shifted(pair, -0.1)},
		{name: "shifted low rank", s: Shift(lrS, 0.3), ref: shifted(lr, 0.3)},
		{name: "bounded dense", s: WithBounds(dS, -10, 10), ref: dense, lo: -10, hi: 10, bounded: true},
	}
	for _, b := range enginetest.Backends(t) {
		for _, c := range cases {
			t.Run(b.Name()+"/"+c.name, func(t *testing.T) {
				d := c.ref.SymmetricDim()
				if c.s.Dim() != d {
					t.Fatalf("Dim = %d, want %d", c.s.Dim(), d)
				}
				scale := mat.Norm(c.ref, 2) + 1
				w := randSym(rng, d)
				var want float64
				for i := 0; i < d; i++ {
					for j := 0; j < d; j++ {
						want += w.At(i, j) * c.ref.At(i, j)
					}
				}
				if got := c.s.Inner(w); math.Abs(got-want) > 1e-12*scale*float64(d) {
					t.Errorf("Inner = %.15g, want %.15g", got, want)
				}

				v := mat.NewDense(d, 3, nil)
				for i := 0; i < d; i++ {
					for k := 0; k < 3; k++ {
						v.Set(i, k, rng.NormFloat64())
					}
				}
				q := make([]float64, 3)
				c.s.DiagQuad(q, v)
				for k := 0; k < 3; k++ {
					col := v.ColView(k)
					want := mat.Inner(col, c.ref, col)
					if math.Abs(q[k]-want) > 1e-12*scale*float64(d) {
						t.Errorf("DiagQuad[%d] = %.15g, want %.15g", k, q[k], want)
					}
				}

				// Rotate with orthonormal columns (from a QR factorisation).
				var qr mat.QR
				qr.Factorize(v)
				var qf mat.Dense
				qr.QTo(&qf)
				m := min(3, d)
				qv := mat.DenseCopyOf(qf.Slice(0, d, 0, m))
				rot := mat.NewSymDense(m, nil)
				c.s.Rotate(rot, qv)
				var wantRot, tmp mat.Dense
				tmp.Mul(c.ref, qv)
				wantRot.Mul(qv.T(), &tmp)
				for a := 0; a < m; a++ {
					for b2 := 0; b2 < m; b2++ {
						if math.Abs(rot.At(a, b2)-wantRot.At(a, b2)) > 1e-12*scale {
							t.Fatalf("Rotate (%d,%d) = %.15g, want %.15g", a, b2, rot.At(a, b2), wantRot.At(a, b2))
						}
					}
				}

				dst := randSym(rng, d)
				var wantSum mat.SymDense
				wantSum.AddSym(dst, scaledSym(c.ref, -0.7))
				c.s.AddTo(dst, -0.7)
				for i := 0; i < d; i++ {
					for j := 0; j < d; j++ {
						if math.Abs(dst.At(i, j)-wantSum.At(i, j)) > 1e-13*scale {
							t.Fatalf("AddTo (%d,%d) = %g, want %g", i, j, dst.At(i, j), wantSum.At(i, j))
						}
					}
				}

				lo, hi, err := c.s.Extremes(b)
				if err != nil {
					t.Fatal(err)
				}
				wlo, whi := c.lo, c.hi
				if !c.bounded {
					e, err := b.SymEig(c.ref, engine.EigRange{}, false)
					if err != nil {
						t.Fatal(err)
					}
					wlo, whi = e.Values[0], e.Values[d-1]
				}
				if math.Abs(lo-wlo) > 1e-12*scale || math.Abs(hi-whi) > 1e-12*scale {
					t.Errorf("Extremes = (%.15g, %.15g), want (%.15g, %.15g)", lo, hi, wlo, whi)
				}
			})
		}
	}
}

func scaledSym(m *mat.SymDense, a float64) *mat.SymDense {
	var s mat.SymDense
	s.ScaleSym(a, m)
	return &s
}

func TestSymValidation(t *testing.T) {
	asym := &sparse.CSR{Rows: 2, Cols: 2, Indptr: []int{0, 1, 1}, Ind: []int{1}, Data: []float64{1}}
	rect := &sparse.CSR{Rows: 2, Cols: 3, Indptr: []int{0, 0, 0}}
	unsorted := &sparse.CSR{Rows: 2, Cols: 2, Indptr: []int{0, 2, 2}, Ind: []int{1, 0}, Data: []float64{1, 1}}
	nanD := mat.NewSymDense(2, []float64{1, math.NaN(), math.NaN(), 1})
	for _, c := range []struct {
		name string
		err  func() error
	}{
		{"sparse asymmetric", func() error { _, err := NewSparse(asym); return err }},
		{"sparse rectangular", func() error { _, err := NewSparse(rect); return err }},
		{"sparse unsorted", func() error { _, err := NewSparse(unsorted); return err }},
		{"dense NaN", func() error { _, err := NewDense(nanD); return err }},
		{"low rank weights", func() error { _, err := NewLowRank(mat.NewDense(3, 2, nil), []float64{1}); return err }},
		{"pair same object", func() error { return checkSym(DistPair{N: 3, A: 1, B: 1}, 3) }},
		{"pair out of range", func() error { return checkSym(DistPair{N: 3, A: 0, B: 3}, 3) }},
		{"wrong dimension", func() error { return checkSym(DistPair{N: 3, A: 0, B: 1}, 4) }},
		{"shift NaN", func() error { return checkSym(Shift(DistPair{N: 3, A: 0, B: 1}, math.NaN()), 3) }},
		{"bounds reversed", func() error { return checkSym(WithBounds(DistPair{N: 3, A: 0, B: 1}, 1, -1), 3) }},
	} {
		if err := c.err(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: error %v, want ErrInvalid", c.name, err)
		}
	}
}
