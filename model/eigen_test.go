package model

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/engine/enginetest"
	"gonum.org/v1/gonum/mat"
)

// TestNewMetricFrom: on every backend's eigendecomposition, full and low
// rank and the zero matrix, NewMetricFrom gives NewMetric's factor up to
// the eigensolvers' rounding (same rank, ‖L − L_gonum‖ within
// 1e-10·‖M‖: the sign convention makes the columns comparable), and
// M = L Lᵀ to within the clipping tolerance.
func TestNewMetricFrom(t *testing.T) {
	for _, b := range enginetest.Backends(t) {
		for _, tc := range []struct{ d, r int }{{1, 1}, {5, 5}, {6, 2}, {40, 40}, {60, 7}, {7, 0}} {
			m := mat.NewSymDense(tc.d, nil)
			if tc.r > 0 {
				m = lowRankPSD(uint64(tc.d*100+tc.r), tc.d, tc.r)
			}
			got, err := NewMetricFrom(m, func(a *mat.SymDense) ([]float64, *mat.Dense, error) {
				e, err := b.SymEig(a, engine.EigRange{}, true)
				return e.Values, e.Vectors, err
			})
			if err != nil {
				t.Fatalf("%s d=%d r=%d: %v", b.Name(), tc.d, tc.r, err)
			}
			want, err := NewMetric(m)
			if err != nil {
				t.Fatal(err)
			}
			if got.Rank() != want.Rank() {
				t.Fatalf("%s d=%d r=%d: rank %d, NewMetric's %d", b.Name(), tc.d, tc.r, got.Rank(), want.Rank())
			}
			scale := math.Max(mat.Norm(m, 2), 1e-300)
			var diff mat.Dense
			diff.Sub(got.L, want.L)
			// Equal eigenvalues (the zero ones are clipped) leave the
			// columns undetermined only within their eigenspace: compare
			// L Lᵀ there, the columns where the spectrum is simple.
			var llt, wlt mat.Dense
			llt.Mul(got.L, got.L.T())
			wlt.Mul(want.L, want.L.T())
			var dm mat.Dense
			dm.Sub(&llt, m)
			if e := mat.Norm(&dm, 2); e > 1e-10*scale {
				t.Errorf("%s d=%d r=%d: ‖L Lᵀ − M‖ = %.3g, ‖M‖ = %.3g", b.Name(), tc.d, tc.r, e, scale)
			}
			if tc.r == tc.d && mat.Norm(&diff, 2) > 1e-8*math.Sqrt(scale) {
				t.Errorf("%s d=%d r=%d: ‖L − L_gonum‖ = %.3g", b.Name(), tc.d, tc.r, mat.Norm(&diff, 2))
			}
			if got.M == m || !mat.Equal(got.M, m) {
				t.Errorf("%s: M is the caller's matrix or differs from it, want an equal copy", b.Name())
			}
		}
	}
}

// TestNewMetricFromRefuses: every way a given decomposition can be wrong
// is refused with ErrInvalid or ErrDimension, naming the fault.
func TestNewMetricFromRefuses(t *testing.T) {
	const d = 8
	m := lowRankPSD(3, d, 5)
	var es mat.EigenSym
	if !es.Factorize(m, true) {
		t.Fatal("eigendecomposition failed")
	}
	vals := es.Values(nil)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	other := lowRankPSD(4, d, 5)
	scaled := mat.DenseCopyOf(&vecs)
	scaled.Scale(1.01, scaled)
	swapped := mat.DenseCopyOf(&vecs)
	c6, c7 := mat.Col(nil, 6, swapped), mat.Col(nil, 7, swapped)
	swapped.SetCol(6, c7)
	swapped.SetCol(7, c6)
	var negM mat.SymDense
	negM.ScaleSym(-1, m)
	negVals := make([]float64, d)
	for i, v := range vals {
		negVals[d-1-i] = -v
	}
	for _, c := range []struct {
		name string
		m    mat.Symmetric
		vals []float64
		vecs *mat.Dense
		want string
	}{
		{"short values", m, vals[1:], &vecs, "eigenvalues for"},
		{"no vectors", m, vals, nil, "eigenvalues for"},
		{"vectors of the wrong shape", m, vals, mat.NewDense(d, d-1, nil), "eigenvectors"},
		{"descending values", m, append([]float64{vals[d-1]}, vals[:d-1]...), &vecs, "ascending"},
		{"NaN value", m, append(append([]float64(nil), vals[:d-1]...), math.NaN()), &vecs, "ascending"},
		{"another matrix's decomposition", other, vals, &vecs, "does not reproduce M"},
		{"vectors not normalised", m, vals, scaled, "does not reproduce M"},
		{"vectors of other values", m, vals, swapped, "does not reproduce M"},
		{"not PSD", &negM, negVals, &vecs, "not positive semidefinite"},
		{"NaN entry", mat.NewSymDense(d, append(make([]float64, d*d-1), math.NaN())), vals, &vecs, "metric entry"},
		{"the solver fails", m, nil, nil, "eigenvalues for"},
	} {
		_, err := NewMetricFrom(c.m, func(*mat.SymDense) ([]float64, *mat.Dense, error) { return c.vals, c.vecs, nil })
		if err == nil || !(errors.Is(err, ErrInvalid) || errors.Is(err, ErrDimension)) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// TestCheckFactorOrthogonal: a factor that reproduces M but whose columns
// are not orthogonal (L Q for a rotation Q) fails checkFactor, and the
// factor itself passes.
func TestCheckFactorOrthogonal(t *testing.T) {
	m := lowRankPSD(9, 6, 3)
	met, err := NewMetric(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := met.checkFactor(); err != nil {
		t.Fatalf("NewMetric's factor: %v", err)
	}
	c, s := math.Cos(0.3), math.Sin(0.3)
	q := mat.NewDense(3, 3, []float64{c, -s, 0, s, c, 0, 0, 0, 1})
	var lq mat.Dense
	lq.Mul(met.L, q)
	if err := (&Metric{M: met.M, L: &lq}).checkFactor(); err == nil || !strings.Contains(err.Error(), "not orthogonal") {
		t.Errorf("L Q: %v, want columns not orthogonal", err)
	}
}

// TestLoadFactor: a version 3 file's factor is used as written (checked,
// not recomputed), and a version 3 metric without one is factored on
// loading.
func TestLoadFactor(t *testing.T) {
	const v3 = `{"format":"psdlearn-model","version":3,"kind":"metric","metric":{"dim":2,"m":[[4,0],[0,1]]`
	m, err := Load(strings.NewReader(v3 + `,"l":[[2,1e-17],[0,1]]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(m.Metric.L, mat.NewDense(2, 2, []float64{2, 1e-17, 0, 1})) {
		t.Errorf("factor %v, want the file's", mat.Formatted(m.Metric.L))
	}
	m, err = Load(strings.NewReader(v3 + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !mat.EqualApprox(m.Metric.L, mat.NewDense(2, 2, []float64{2, 0, 0, 1}), 1e-15) {
		t.Errorf("factor %v, want diag(2, 1)", mat.Formatted(m.Metric.L))
	}
}

// TestSaveRefusesInconsistentFactor: a Metric whose M was changed after it
// was built (so L is no longer its factor) is not saved.
func TestSaveRefusesInconsistentFactor(t *testing.T) {
	m := &Model{Kind: KindMetric, Metric: Identity(3)}
	m.Metric.M.Zero()
	var buf strings.Builder
	if err := m.Save(&buf); err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "does not reproduce M") {
		t.Errorf("saved a metric with another matrix's factor: %v", err)
	}
}

// TestFactorExtremeMagnitudes: the factor check neither overflows nor
// underflows at entries from 1e-300 to 1e300 (FuzzModelFields found a
// 1.7e308 entry that made it NaN): a metric's own factor passes and
// survives a file round trip, and another matrix's factor is refused.
func TestFactorExtremeMagnitudes(t *testing.T) {
	for _, scale := range []float64{1e-300, 1e-200, 1, 1e200, 1e300, 1.6e308} {
		// The largest entry of M at scale: 1.6e308 is near MaxFloat64.
		var m, other mat.SymDense
		a, b := lowRankPSD(5, 6, 4), lowRankPSD(6, 6, 4)
		m.ScaleSym(scale/mat.Norm(a, math.Inf(1)), a)
		other.ScaleSym(scale/mat.Norm(b, math.Inf(1)), b)
		met, err := NewMetric(&m)
		if err != nil {
			t.Fatalf("scale %g: %v", scale, err)
		}
		if err := met.checkFactor(); err != nil {
			t.Errorf("scale %g: own factor: %v", scale, err)
		}
		var buf strings.Builder
		if err := (&Model{Kind: KindMetric, Metric: met}).Save(&buf); err != nil {
			t.Fatalf("scale %g: %v", scale, err)
		}
		back, err := Load(strings.NewReader(buf.String()))
		if err != nil || !mat.Equal(back.Metric.L, met.L) {
			t.Errorf("scale %g: round trip: %v", scale, err)
		}
		if err := (&Metric{M: &other, L: met.L}).checkFactor(); err == nil {
			t.Errorf("scale %g: another matrix's factor passed", scale)
		}
	}
}
