package data

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/psdlearn/psdlearn/engine"
	"gonum.org/v1/gonum/mat"
)

func randData(seed uint64, n, d int) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, float64(j+1)*rng.NormFloat64()+float64(3*j))
		}
	}
	return x
}

func TestStandardizer(t *testing.T) {
	x := randData(1, 50, 4)
	for i := 0; i < 50; i++ {
		x.Set(i, 2, 7.5) // constant feature
	}
	s, err := FitStandardizer(x)
	if err != nil {
		t.Fatal(err)
	}
	z, err := s.Apply(x)
	if err != nil {
		t.Fatal(err)
	}
	for j := 0; j < 4; j++ {
		var m, v float64
		for i := 0; i < 50; i++ {
			m += z.At(i, j)
		}
		m /= 50
		for i := 0; i < 50; i++ {
			v += (z.At(i, j) - m) * (z.At(i, j) - m)
		}
		v /= 50
		wantV := 1.0
		if j == 2 {
			wantV = 0
			if s.Scale[2] != 1 {
				t.Errorf("constant feature scale %v, want 1", s.Scale[2])
			}
		}
		if math.Abs(m) > 1e-12 || math.Abs(v-wantV) > 1e-12 {
			t.Errorf("feature %d: mean %g variance %g", j, m, v)
		}
	}
	// Fitted on training rows only: applying to other data uses the training statistics.
	other := mat.NewDense(1, 4, []float64{s.Mean[0] + s.Scale[0], 0, 7.5, 0})
	zo, _ := s.Apply(other)
	if math.Abs(zo.At(0, 0)-1) > 1e-14 || zo.At(0, 2) != 0 {
		t.Errorf("apply to new data: %v", zo.RawRowView(0))
	}
	if _, err := s.Apply(mat.NewDense(1, 3, nil)); err == nil {
		t.Error("dimension mismatch accepted")
	}
	bad := mat.NewDense(2, 1, []float64{1, math.NaN()})
	if _, err := FitStandardizer(bad); err == nil {
		t.Error("NaN accepted")
	}
}

func TestPCA(t *testing.T) {
	x := randData(2, 80, 6)
	n, dim := x.Dims()
	ref := covSpectrum(t, x)
	for _, name := range engine.Names() {
		b, _ := engine.Get(name)
		t.Run(name, func(t *testing.T) {
			const d = 3
			p, err := FitPCA(b, x, d)
			if err != nil {
				t.Fatal(err)
			}
			for c := 0; c < d; c++ {
				if want := ref[dim-1-c]; math.Abs(p.Variances[c]-want) > 1e-10*want {
					t.Errorf("variance %d = %v, want %v", c, p.Variances[c], want)
				}
			}
			// Orthonormal axes.
			var g mat.Dense
			g.Mul(p.Components.T(), p.Components)
			if !mat.EqualApprox(&g, eye(d), 1e-12) {
				t.Errorf("components not orthonormal: %v", mat.Formatted(&g))
			}
			// Projected data: zero mean, diagonal covariance = variances.
			z, err := p.Apply(x)
			if err != nil {
				t.Fatal(err)
			}
			var zc mat.Dense
			zc.Mul(z.T(), z)
			zc.Scale(1/float64(n), &zc)
			for a := 0; a < d; a++ {
				for c := 0; c < d; c++ {
					want := 0.0
					if a == c {
						want = p.Variances[a]
					}
					if math.Abs(zc.At(a, c)-want) > 1e-9*ref[dim-1] {
						t.Errorf("projected covariance (%d,%d) = %v, want %v", a, c, zc.At(a, c), want)
					}
				}
			}
			// JSON round trip.
			buf, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			var q PCA
			if err := json.Unmarshal(buf, &q); err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(q.Components, p.Components) {
				t.Error("JSON round trip changed the components")
			}
		})
	}
	if _, err := FitPCA(nil, x, 7); err == nil {
		t.Error("7 components of 6 features accepted")
	}
}

func TestPCABackendsAgree(t *testing.T) {
	names := engine.Names()
	if len(names) < 2 {
		t.Skip("one backend only")
	}
	x := randData(3, 60, 5)
	var first *PCA
	for _, name := range names {
		b, _ := engine.Get(name)
		p, err := FitPCA(b, x, 2)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = p
			continue
		}
		if !mat.EqualApprox(p.Components, first.Components, 1e-9) {
			t.Errorf("backends disagree on the sign-normalised components")
		}
	}
}

func TestPipelineJSON(t *testing.T) {
	x := randData(4, 40, 4)
	p, err := FitPipeline(nil, x, true, 2)
	if err != nil {
		t.Fatal(err)
	}
	z, err := p.Apply(x)
	if err != nil {
		t.Fatal(err)
	}
	if r, c := z.Dims(); r != 40 || c != 2 || p.InDim() != 4 {
		t.Fatalf("output %d×%d, in dim %d", r, c, p.InDim())
	}
	buf, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var q Pipeline
	if err := json.Unmarshal(buf, &q); err != nil {
		t.Fatal(err)
	}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	z2, _ := q.Apply(x)
	if !mat.Equal(z, z2) {
		t.Error("pipeline changed by a JSON round trip")
	}
	var empty *Pipeline
	if y, _ := empty.Apply(x); y != x {
		t.Error("empty pipeline is not the identity")
	}
}

func eye(n int) *mat.Dense {
	m := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		m.Set(i, i, 1)
	}
	return m
}

// TestStandardizeSplits checks that Standardize fits on the training part
// only: the training part comes out with zero means and unit population
// deviations, the other parts with the training part's shift and scale,
// and labels are shared. Nil sets and dimension mismatches are errors.
func TestStandardizeSplits(t *testing.T) {
	tr := &Dataset{X: randData(2, 40, 3), Y: make([]int, 40)}
	te := &Dataset{X: randData(3, 10, 3), Y: make([]int, 10)}
	out, err := Standardize(tr, te)
	if err != nil {
		t.Fatal(err)
	}
	for j := 0; j < 3; j++ {
		col := mat.Col(nil, j, out[0].X)
		var mean, sq float64
		for _, v := range col {
			mean += v / 40
		}
		for _, v := range col {
			sq += (v - mean) * (v - mean) / 40
		}
		if math.Abs(mean) > 1e-12 || math.Abs(sq-1) > 1e-12 {
			t.Errorf("training feature %d: mean %g, variance %g", j, mean, sq)
		}
	}
	s, _ := FitStandardizer(tr.X)
	want, _ := s.Apply(te.X)
	if !mat.Equal(want, out[1].X) {
		t.Error("test part not standardised with the training part's statistics")
	}
	if &out[1].Y[0] != &te.Y[0] {
		t.Error("labels were copied, want shared")
	}
	if _, err := Standardize(tr, nil); err == nil {
		t.Error("nil set: no error")
	}
	if _, err := Standardize(tr, &Dataset{X: randData(4, 5, 2)}); err == nil {
		t.Error("dimension mismatch: no error")
	}
}

// TestPCAChunked checks the covariance reduced over row chunks (from 4,096
// rows) against gonum's one-pass covariance: the same leading variances to
// 1e-10 relative, on every backend, and the same bits for any GOMAXPROCS.
func TestPCAChunked(t *testing.T) {
	x := randData(3, 9000, 5)
	_, dim := x.Dims()
	ref := covSpectrum(t, x)
	for _, name := range engine.Names() {
		b, _ := engine.Get(name)
		p, err := FitPCA(b, x, 3)
		if err != nil {
			t.Fatal(err)
		}
		for c := 0; c < 3; c++ {
			if want := ref[dim-1-c]; math.Abs(p.Variances[c]-want) > 1e-10*want {
				t.Errorf("%s: variance %d = %v, want %v", name, c, p.Variances[c], want)
			}
		}
		prev := runtime.GOMAXPROCS(1)
		q, err := FitPCA(b, x, 3)
		runtime.GOMAXPROCS(prev)
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(p.Components, q.Components) {
			t.Errorf("%s: the components depend on GOMAXPROCS", name)
		}
	}
}

// covSpectrum is the reference: the ascending eigenvalues of x's covariance
// from gonum, in one pass.
func covSpectrum(t *testing.T, x *mat.Dense) []float64 {
	t.Helper()
	n, dim := x.Dims()
	mean := make([]float64, dim)
	for j := range mean {
		mean[j] = mat.Sum(x.ColView(j)) / float64(n)
	}
	xc := mat.NewDense(n, dim, nil)
	xc.Apply(func(i, j int, v float64) float64 { return v - mean[j] }, x)
	cov := mat.NewSymDense(dim, nil)
	cov.SymOuterK(1/float64(n), xc.T())
	var es mat.EigenSym
	if !es.Factorize(cov, false) {
		t.Fatal("reference eigen failed")
	}
	return es.Values(nil)
}
