package lapack_test

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/psdlearn/psdlearn/lapack"
	"github.com/psdlearn/psdlearn/lapack/lapacktest"
	"gonum.org/v1/gonum/mat"
)

// TestPartialSymEig checks the pure-Go solver's partial path on its own
// (a fallback to the whole decomposition would hide its failure): it must
// converge, and its eigenpairs must have residuals and orthogonality
// within 10·n·ε·‖A‖ and 10·n·ε, and eigenvalues within 10·n·ε·‖A‖ of the
// whole decomposition's — on random matrices and on matrices whose wanted
// end holds a repeated eigenvalue or a tight cluster.
func TestPartialSymEig(t *testing.T) {
	const eps = 0x1p-52
	rng := rand.New(rand.NewPCG(45, 1))
	// spectrum returns n eigenvalues spread over [−1, 1] with the given
	// values at the top (and their negatives at the bottom).
	spectrum := func(n int, ends ...float64) []float64 {
		l := make([]float64, n)
		for i := range l {
			l[i] = -0.9 + 1.8*float64(i)/float64(n-1)
		}
		for i, v := range ends {
			l[n-1-i] = v
			l[i] = -v
		}
		return l
	}
	for _, tc := range []struct {
		name string
		a    *mat.SymDense
		ks   []int
	}{
		{"random-100", lapacktest.RandSym(rng, 100), []int{1, 3}},
		{"random-257", lapacktest.RandSym(rng, 257), []int{1, 2, 8}},
		{"random-600", lapacktest.RandSym(rng, 600), []int{1, 5}},
		// A triple eigenvalue at each end: k = 4 needs all three copies.
		{"triple-end", lapacktest.SymWithSpectrum(rng, spectrum(300, 2, 2, 2, 1.5)), []int{1, 2, 3, 4}},
		// A cluster 1e-10 wide at each end.
		{"cluster", lapacktest.SymWithSpectrum(rng, spectrum(300, 1, 1-1e-10, 1-2e-10, 0.95)), []int{1, 3, 4}},
	} {
		n := tc.a.SymmetricDim()
		full, err := lapack.Go.SymEig(tc.a, lapack.AllRange(), false)
		if err != nil {
			t.Fatal(err)
		}
		anorm := math.Max(mat.Norm(tc.a, 2), 1)
		for _, k := range tc.ks {
			for _, r := range []lapack.Range{lapack.TopK(n, k), lapack.BottomK(k)} {
				e, taken, ok := lapack.PartialSymEig(tc.a, r)
				if !taken {
					t.Fatalf("%s: range %+v does not take the partial path", tc.name, r)
				}
				if !ok {
					t.Errorf("%s k=%d range [%d, %d]: did not converge", tc.name, k, r.IL, r.IU)
					continue
				}
				if len(e.Values) != k {
					t.Fatalf("%s k=%d: %d eigenvalues", tc.name, k, len(e.Values))
				}
				for i, v := range e.Values {
					want := full.Values[r.IL+i]
					if d := math.Abs(v-want) / (anorm * float64(n) * eps); d > 10 {
						t.Errorf("%s k=%d range [%d, %d]: λ[%d] = %v, whole decomposition %v (%.1f nε‖A‖)", tc.name, k, r.IL, r.IU, i, v, want, d)
					}
				}
				if res, orth := lapacktest.EigResidual(tc.a, e); res > 10 || orth > 10 {
					t.Errorf("%s k=%d range [%d, %d]: residual %.2f nε‖A‖, orthogonality %.2f nε", tc.name, k, r.IL, r.IU, res, orth)
				}
				// The public solver takes the same path with its fixed
				// seed: the same arithmetic in the same order, so the same
				// bits, and no vectors when none are asked for.
				pub, err := lapack.Go.SymEig(tc.a, r, false)
				if err != nil {
					t.Fatal(err)
				}
				if pub.Vectors != nil {
					t.Errorf("%s k=%d: vectors returned without being asked for", tc.name, k)
				}
				for i := range pub.Values {
					if pub.Values[i] != e.Values[i] {
						t.Errorf("%s k=%d: λ[%d] = %v from SymEig, %v from the partial path", tc.name, k, i, pub.Values[i], e.Values[i])
					}
				}
			}
		}
	}
}

// TestPartialDegenerate runs the solver on matrices whose Krylov spaces
// break down at once (the identity, zero, rank one): whatever path it
// takes, the answer must be right.
func TestPartialDegenerate(t *testing.T) {
	const n = 200
	u := make([]float64, n)
	for i := range u {
		u[i] = math.Sin(float64(i + 1))
	}
	rank1 := mat.NewSymDense(n, nil)
	rank1.SymOuterK(1, mat.NewDense(n, 1, u))
	ident := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		ident.SetSym(i, i, 1)
	}
	norm2 := 0.0
	for _, v := range u {
		norm2 += v * v
	}
	for _, tc := range []struct {
		name      string
		a         *mat.SymDense
		top, bott float64
	}{
		{"identity", ident, 1, 1},
		{"zero", mat.NewSymDense(n, nil), 0, 0},
		{"rank-one", rank1, 0, 0},
	} {
		for _, k := range []int{1, 4} {
			top := tc.top
			if tc.name == "rank-one" {
				top = norm2
			}
			for _, r := range []struct {
				r    lapack.Range
				last float64 // the eigenvalue at the wanted end
			}{{lapack.TopK(n, k), top}, {lapack.BottomK(k), tc.bott}} {
				e, err := lapack.Go.SymEig(tc.a, r.r, true)
				if err != nil {
					t.Fatalf("%s k=%d: %v", tc.name, k, err)
				}
				if len(e.Values) != k {
					t.Fatalf("%s k=%d: %d eigenvalues", tc.name, k, len(e.Values))
				}
				end := e.Values[k-1]
				if r.r.IL == 0 {
					end = e.Values[0]
				}
				if math.Abs(end-r.last) > 100*float64(n)*0x1p-52*math.Max(1, top) {
					t.Errorf("%s k=%d range [%d, %d]: end eigenvalue %v, want %v", tc.name, k, r.r.IL, r.r.IU, end, r.last)
				}
				if res, orth := lapacktest.EigResidual(tc.a, e); res > 10 || orth > 10 {
					t.Errorf("%s k=%d: residual %.2f nε‖A‖, orthogonality %.2f nε", tc.name, k, res, orth)
				}
			}
		}
	}
}

// TestPartialConcurrent: the solver is safe for concurrent use on its
// partial path (the Makefile runs this under -race): goroutines solving
// the same matrix get the bits of a serial solve.
func TestPartialConcurrent(t *testing.T) {
	a := lapacktest.RandSym(rand.New(rand.NewPCG(45, 2)), 160)
	r := lapack.TopK(160, 2)
	want, err := lapack.Go.SymEig(a, r, true)
	if err != nil {
		t.Fatal(err)
	}
	const g = 4
	got := make([]lapack.Eigen, g)
	errs := make([]error, g)
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = lapack.Go.SymEig(a, r, true)
		}()
	}
	wg.Wait()
	for i := range got {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if !mat.Equal(got[i].Vectors, want.Vectors) || got[i].Values[0] != want.Values[0] || got[i].Values[1] != want.Values[1] {
			t.Errorf("goroutine %d: a result other than the serial solve's", i)
		}
	}
}
