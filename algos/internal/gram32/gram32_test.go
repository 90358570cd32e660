package gram32

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psdlearn/psdlearn/internal/f32"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"
)

// TestWeightedGramAndEmbed compares the single-precision products with
// their double-precision definitions, Xᵀ L_W X = Σ_p w_p (x_a − x_b)(x_a − x_b)ᵀ
// and X·l up to an offset common to the rows, within the rounding of
// float32: a relative 2⁻²³ per value, growing with the d- and n-term sums.
// An offset of 1e4 on every row (which an uncentred float32 copy would
// keep at the expense of the differences) must not change the bound.
func TestWeightedGramAndEmbed(t *testing.T) {
	for _, tc := range []struct {
		name      string
		n, d, r   int
		offset    float64
		pairsEach int
	}{
		{"small", 30, 4, 2, 0, 3},
		{"chunked", 9000, 7, 3, 0, 2},
		{"offset", 500, 6, 3, 1e4, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.n), uint64(tc.d)))
			x := mat.NewDense(tc.n, tc.d, nil)
			for i := 0; i < tc.n; i++ {
				for j := 0; j < tc.d; j++ {
					x.Set(i, j, tc.offset+rng.NormFloat64())
				}
			}
			var pairs []sparse.Pair
			for a := 0; a < tc.n; a++ {
				for k := 0; k < tc.pairsEach; k++ {
					if b := rng.IntN(tc.n); b != a {
						pairs = append(pairs, sparse.Pair{A: min(a, b), B: max(a, b)})
					}
				}
			}
			pairs = dedupe(pairs)
			g, err := sparse.NewPairGraph(tc.n, pairs)
			if err != nil {
				t.Fatal(err)
			}
			w := make([]float64, len(pairs))
			for p := range w {
				w[p] = rng.Float64()
			}
			if err := g.SetWeights(w); err != nil {
				t.Fatal(err)
			}
			s := New(gonum.Implementation{}, x)
			if s == nil {
				t.Fatal("New returned nil for finite data")
			}
			got := mat.NewSymDense(tc.d, nil)
			s.WeightedGram(got, g)
			// Exact in double: Σ w_p (x_a − x_b)(x_a − x_b)ᵀ, and its scale
			// Σ w_p ‖x_a − x_b‖² for the bound.
			want := mat.NewSymDense(tc.d, nil)
			var scale float64
			diff := make([]float64, tc.d)
			for p, pr := range pairs {
				for j := range diff {
					diff[j] = x.At(pr.A, j) - x.At(pr.B, j)
					scale += w[p] * diff[j] * diff[j]
				}
				for i := range diff {
					for j := i; j < tc.d; j++ {
						want.SetSym(i, j, want.At(i, j)+w[p]*diff[i]*diff[j])
					}
				}
			}
			tol := 64 * float64(tc.d+8) * 0x1p-23 * scale
			for i := 0; i < tc.d; i++ {
				for j := i; j < tc.d; j++ {
					if e := math.Abs(got.At(i, j) - want.At(i, j)); !(e <= tol) {
						t.Fatalf("Gram[%d,%d] = %g, want %g (error %g above %g)", i, j, got.At(i, j), want.At(i, j), e, tol)
					}
				}
			}
			// Embed: pair differences of X·l equal those of the exact product.
			l := make([]float32, tc.d*tc.r)
			for k := range l {
				l[k] = float32(rng.NormFloat64())
			}
			z := make([]float32, tc.n*tc.r)
			s.Embed(z, l, tc.r)
			mean := make([]float64, tc.d)
			for i := 0; i < tc.n; i++ {
				for j := range mean {
					mean[j] += x.At(i, j) / float64(tc.n)
				}
			}
			for _, pr := range pairs[:min(len(pairs), 200)] {
				for c := 0; c < tc.r; c++ {
					// Each embedded value rounds the centred row to float32
					// and sums d products: within 2·(d+2)·2⁻²⁴·Σ_j |x̃_j||l_j|.
					var exact, mag float64
					for j := 0; j < tc.d; j++ {
						lj := float64(l[j*tc.r+c])
						exact += (x.At(pr.A, j) - x.At(pr.B, j)) * lj
						mag += (math.Abs(x.At(pr.A, j)-mean[j]) + math.Abs(x.At(pr.B, j)-mean[j])) * math.Abs(lj)
					}
					approx := float64(z[pr.A*tc.r+c]) - float64(z[pr.B*tc.r+c])
					if e, tol := math.Abs(approx-exact), 4*float64(tc.d+2)*0x1p-24*mag; !(e <= tol) {
						t.Fatalf("pair (%d,%d) column %d: embedded difference %g, exact %g (error %g above %g)", pr.A, pr.B, c, approx, exact, e, tol)
					}
				}
			}
		})
	}
}

// TestNewRefuses checks that New declines what it cannot represent: data
// whose centred copy overflows float32, and a BLAS without SGEMM.
func TestNewRefuses(t *testing.T) {
	x := mat.NewDense(2, 1, []float64{-1e39, 1e39})
	if New(gonum.Implementation{}, x) != nil {
		t.Error("New accepted a copy beyond float32's range")
	}
	if New(doubleOnly{gonum.Implementation{}}, mat.NewDense(2, 1, []float64{1, 2})) != nil {
		t.Error("New accepted a BLAS without SGEMM")
	}
}

// doubleOnly is a BLAS with the double-precision methods only.
type doubleOnly struct{ blas.Float64 }

func dedupe(p []sparse.Pair) []sparse.Pair {
	seen := map[sparse.Pair]bool{}
	var out []sparse.Pair
	for _, q := range p {
		if !seen[q] {
			seen[q] = true
			out = append(out, q)
		}
	}
	return out
}

// TestNewFlushesSubnormals checks that the centred copy holds no float32
// subnormal (they slow SGEMM several times over, see f32.Round): a column
// whose deviations are about 1e-40 becomes zeros, the others are kept.
func TestNewFlushesSubnormals(t *testing.T) {
	x := mat.NewDense(4, 2, []float64{3e-40, 1, -1e-40, 2, 1e-40, 3, -3e-40, 4})
	s := New(gonum.Implementation{}, x)
	if s == nil {
		t.Fatal("New declined finite data")
	}
	for i, v := range s.X {
		if v != 0 && math.Abs(float64(v)) < f32.MinNormal {
			t.Fatalf("X[%d] = %g, a subnormal", i, v)
		}
	}
	for i := 0; i < 4; i++ {
		if got, want := s.X[2*i], float32(0); got != want {
			t.Errorf("row %d: tiny column %g, want 0", i, got)
		}
		if got, want := s.X[2*i+1], float32(i+1)-2.5; got != want {
			t.Errorf("row %d: centred column %g, want %g", i, got, want)
		}
	}
}
