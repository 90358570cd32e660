package corrective

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	"gonum.org/v1/gonum/mat"
)

// TestSumAndQuadForms checks Sum against Σ w_j v_j v_jᵀ and QuadForms
// against vᵀ G v computed by gonum, for several dimensions and term counts.
func TestSumAndQuadForms(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ d, j int }{{1, 1}, {3, 2}, {16, 5}, {40, 0}} {
		vs := make([][]float64, tc.j)
		w := make([]float64, tc.j)
		want := mat.NewSymDense(tc.d, nil)
		var wantTr float64
		for j := range vs {
			vs[j] = make([]float64, tc.d)
			for a := range vs[j] {
				vs[j][a] = rng.NormFloat64()
			}
			if j != 1 { // one zero weight
				w[j] = rng.Float64()
			}
			wantTr += w[j]
			want.SymRankOne(want, w[j], mat.NewVecDense(tc.d, vs[j]))
		}
		got := mat.NewSymDense(tc.d, nil)
		for a := range tc.d { // stale contents must be overwritten
			got.SetSym(a, a, 7)
		}
		if tr := Sum(got, vs, w); tr != wantTr {
			t.Errorf("d=%d: trace %v, want %v", tc.d, tr, wantTr)
		}
		if !mat.EqualApprox(got, want, 1e-13) {
			t.Errorf("d=%d, %d terms: Sum differs from the rank-one updates", tc.d, tc.j)
		}
		// QuadForms of the sum itself, read from its upper triangle.
		raw := got.RawSymmetric()
		out := make([]float64, tc.j)
		QuadForms(out, vs, tc.d, func(a int) []float64 { return raw.Data[a*raw.Stride+a : a*raw.Stride+tc.d] })
		for j, v := range vs {
			x := mat.NewVecDense(tc.d, v)
			want := mat.Inner(x, got, x)
			if math.Abs(out[j]-want) > 1e-12*math.Max(1, math.Abs(want)) {
				t.Errorf("d=%d: vᵀGv[%d] = %v, want %v", tc.d, j, out[j], want)
			}
		}
	}
}

// TestSettings: capped re-solves stop on a relative decrease, the final one
// only on the projected gradient.
func TestSettings(t *testing.T) {
	for _, tc := range []struct {
		maxIter int
		factr   float64
	}{{MaxIter, 1e4}, {FinalIter - 1, 1e4}, {FinalIter, -1}} {
		s := Settings(tc.maxIter)
		if s.MaxIter != tc.maxIter || s.Factr != tc.factr || s.Pgtol != 1e-10 {
			t.Errorf("Settings(%d) = %+v, want Factr %g", tc.maxIter, s, tc.factr)
		}
	}
}

// TestAccept: a converged solve and a capped one that did not increase the
// objective are accepted (weights clamped to ≥ 0); a capped one that did,
// and any other error, are not.
func TestAccept(t *testing.T) {
	capped := &engine.MinimizeNotConvergedError{}
	other := errors.New("boom")
	for _, tc := range []struct {
		name string
		f    float64
		err  error
		ok   bool
	}{{"converged", 2, nil, true}, {"capped, decreased", 0.5, capped, true}, {"capped, equal", 1, capped, true},
		{"capped, increased", 1.5, capped, false}, {"failed", 0.5, other, false}} {
		w, err := Accept(engine.MinimizeResult{X: []float64{0.3, -1e-17, 2}, F: tc.f}, tc.err, 1)
		if (err == nil) != tc.ok {
			t.Errorf("%s: error %v", tc.name, err)
			continue
		}
		if tc.ok && (w[0] != 0.3 || w[1] != 0 || w[2] != 2) {
			t.Errorf("%s: weights %v, want [0.3 0 2]", tc.name, w)
		}
		if !tc.ok && !errors.Is(err, tc.err) {
			t.Errorf("%s: error %v does not wrap %v", tc.name, err, tc.err)
		}
	}
}
