package sparse

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// prefixCase is one generated search for the prefix screen: queries and
// references of d columns whose variance decays as (a+1)^−decay, with the
// columns shuffled (the screen must find their order), scaled, with some
// coordinates on an integer grid (exact ties of distances) and some
// outlier entries (references of very different norms).
type prefixCase struct {
	nq, nr, d, k, t int
	decay, scale    float64
	grid, outliers  int
	// split: a self-search by class (KNNByClass's plan: k of the row's
	// class, k of the others, classes of random sizes, identifiers a
	// random permutation); otherwise a plain search of nq queries.
	split bool
	seed  uint64
}

func (c prefixCase) String() string {
	kind := "plain"
	if c.split {
		kind = "split"
	}
	return fmt.Sprintf("%s-q%d-r%d-d%d-k%d-t%d-decay%g-scale%g-grid%d-out%d", kind, c.nq, c.nr, c.d, c.k, c.t, c.decay, c.scale, c.grid, c.outliers)
}

// plan returns the case's search plan and identifiers (nil for a plain
// search).
func (c prefixCase) plan() (*searchPlan, []int) {
	if !c.split {
		return &searchPlan{kOther: c.k}, nil
	}
	rng := rand.New(rand.NewPCG(c.seed, 53))
	ranges := make([][2]int, c.nr)
	for lo := 0; lo < c.nr; {
		hi := min(lo+1+rng.IntN(c.nr/3), c.nr)
		for i := lo; i < hi; i++ {
			ranges[i] = [2]int{lo, hi}
		}
		lo = hi
	}
	return &searchPlan{self: true, kSame: c.k, kOther: c.k, ranges: ranges}, rng.Perm(c.nr)
}

// search answers the case's queries with the plain screen (prefix false)
// or the prefix screen on the first c.t columns by variance.
func (c prefixCase) search(t *testing.T, q, ref *mat.Dense, prefix bool) (same, other *Neighbors) {
	plan, id := c.plan()
	qr, rr := q.RawMatrix(), ref.RawMatrix()
	nq, _ := q.Dims()
	other = &Neighbors{K: c.k, Index: make([]int, nq*c.k), Dist: make([]float64, nq*c.k)}
	res := &screenResult{other: other, id: id}
	if c.split {
		same = &Neighbors{K: c.k, Index: make([]int, nq*c.k), Dist: make([]float64, nq*c.k)}
		res.same = same
	}
	if !prefix {
		if !screen32(nativeBLAS, qr, rr, nq, c.nr, c.d, plan, res) {
			screen64(nativeBLAS, qr, rr, nq, c.nr, c.d, plan, res)
		}
		return same, other
	}
	perm, _ := varianceOrder(rr, c.nr, c.d)
	if !prefixScreen(nativeBLAS.(blas.Float32), qr, rr, nq, c.nr, c.d, plan, res, perm, c.t) {
		t.Fatal("the prefix screen declined")
	}
	return same, other
}

// sameNeighbors fails t at the first difference between got and want.
func sameNeighbors(t *testing.T, what string, got, want *Neighbors) {
	t.Helper()
	if got == nil && want == nil {
		return
	}
	k := want.K
	for p := range want.Index {
		if got.Index[p] != want.Index[p] || got.Dist[p] != want.Dist[p] {
			t.Fatalf("%s: query %d rank %d: got (%d, %.17g), want (%d, %.17g)", what, p/k, p%k, got.Index[p], got.Dist[p], want.Index[p], want.Dist[p])
		}
	}
}

func (c prefixCase) data() (q, ref *mat.Dense) {
	rng := rand.New(rand.NewPCG(c.seed, 41))
	cols := rng.Perm(c.d)
	gen := func(n int) *mat.Dense {
		x := mat.NewDense(n, c.d, nil)
		for i := 0; i < n; i++ {
			for a := 0; a < c.d; a++ {
				v := rng.NormFloat64() * math.Pow(float64(a+1), -c.decay)
				if a < c.grid {
					v = math.Round(2 * v)
				}
				x.Set(i, cols[a], c.scale*v)
			}
		}
		for o := 0; o < c.outliers; o++ {
			x.Set(rng.IntN(n), rng.IntN(c.d), c.scale*300*(1+rng.Float64()))
		}
		return x
	}
	ref = gen(c.nr)
	if c.split {
		return ref, ref
	}
	return gen(c.nq), ref
}

// prefixCases generates n cases from seed.
func prefixCases(seed uint64, n int) []prefixCase {
	rng := rand.New(rand.NewPCG(seed, 43))
	pick := func(v ...float64) float64 { return v[rng.IntN(len(v))] }
	var out []prefixCase
	for i := 0; i < n; i++ {
		c := prefixCase{
			nq: 300 + rng.IntN(500), nr: 600 + rng.IntN(1500),
			d: int(pick(48, 64, 100)), k: int(pick(1, 3, 10)), t: int(pick(8, 16, 32)),
			decay: pick(0.5, 1, 1.5), scale: pick(1, 1e-15, 1e12),
			seed: rng.Uint64(),
		}
		if rng.IntN(3) == 0 {
			c.grid = 4
		}
		if rng.IntN(3) == 0 {
			c.outliers = 5
		}
		if rng.IntN(2) == 0 {
			c.split, c.nq = true, c.nr
		}
		out = append(out, c)
	}
	return out
}

// TestPrefixScreen checks the prefix screen against the plain screen, bit
// for bit, on generated cases (plain and class-split self-searches, ties,
// tiny and huge scales, outlier norms, shuffled columns) with the prefix
// length forced, whatever the pilot would choose.
func TestPrefixScreen(t *testing.T) {
	if _, ok := nativeBLAS.(blas.Float32); !ok {
		t.Skip("no single-precision BLAS")
	}
	n := 32
	if testing.Short() {
		n = 8
	}
	for _, c := range prefixCases(1, n) {
		t.Run(c.String(), func(t *testing.T) {
			q, ref := c.data()
			wantSame, wantOther := c.search(t, q, ref, false)
			gotSame, gotOther := c.search(t, q, ref, true)
			sameNeighbors(t, "same", gotSame, wantSame)
			sameNeighbors(t, "other", gotOther, wantOther)
		})
	}
}

// TestPrefixScreenNearTies checks the screen's error bounds where they
// decide: references on a sphere around the query, displaced only in the
// first span columns, at radii that differ by a relative 1e-9, far below
// float32's resolution. The screened values of the nearest then round
// above and below the k-th exact distance at random, and only the error
// bounds keep them in: the prefix's when the prefix holds the whole
// displacement (span = t), the rest's float32 sum's when most of it lies
// beyond the prefix, in columns offset by 500 (rounding to float32 then
// moves each coordinate by up to 3e-5), around a query whose prefix is 0
// (so that the prefix's bound leaves no slack).
func TestPrefixScreenNearTies(t *testing.T) {
	if _, ok := nativeBLAS.(blas.Float32); !ok {
		t.Skip("no single-precision BLAS")
	}
	const nq, nr, d, t8, k = 64, 2048, 48, 8, 3
	offset := func(a int) float64 {
		if a < t8 {
			return 0
		}
		return 500
	}
	for seed := uint64(1); seed <= 12; seed++ {
		span := t8 << (2 * (seed % 2)) // 8 or 32
		rng := rand.New(rand.NewPCG(seed, 47))
		ref := mat.NewDense(nr, d, nil)
		for i := 0; i < nr/2; i++ {
			for a := 0; a < d; a++ {
				ref.Set(i, a, 10*rng.NormFloat64()/float64(a+1)+offset(a))
			}
		}
		center := make([]float64, d)
		for a := range center {
			if a >= t8 || span == t8 {
				center[a] = rng.NormFloat64()/float64(a+1) + offset(a)
			}
		}
		rho := 0.5 + rng.Float64()
		for i := nr / 2; i < nr; i++ {
			dir := make([]float64, span)
			var norm float64
			for a := range dir {
				dir[a] = rng.NormFloat64()
				norm += dir[a] * dir[a]
			}
			r := rho * (1 + 1e-9*rng.Float64()) / math.Sqrt(norm)
			for a := 0; a < d; a++ {
				v := center[a]
				if a < span {
					v += r * dir[a]
				}
				ref.Set(i, a, v)
			}
		}
		q := mat.NewDense(nq, d, nil)
		for i := 0; i < nq; i++ {
			q.SetRow(i, center)
		}
		want, err := knnBLAS(nativeBLAS, q, ref, k, false, false)
		if err != nil {
			t.Fatal(err)
		}
		_, got := prefixCase{nr: nr, d: d, k: k, t: t8}.search(t, q, ref, true)
		sameNeighbors(t, fmt.Sprintf("seed %d", seed), got, want)
	}
}

// TestPrefixPilot checks the choice: KNNBLAS takes the prefix screen on
// data whose variance decays fast and gives the plain screen's answer, and
// declines on isotropic noise, where every prefix leaves most references.
func TestPrefixPilot(t *testing.T) {
	if _, ok := nativeBLAS.(blas.Float32); !ok {
		t.Skip("no single-precision BLAS")
	}
	for _, tc := range []struct {
		decay float64
		want  bool
	}{{1.5, true}, {0, false}} {
		t.Run(fmt.Sprintf("decay%g", tc.decay), func(t *testing.T) {
			c := prefixCase{nq: prefixMinQueries, nr: prefixMinRefs, d: 96, k: 3, decay: tc.decay, scale: 1, seed: 5}
			q, ref := c.data()
			qr, rr := q.RawMatrix(), ref.RawMatrix()
			got := &Neighbors{K: c.k, Index: make([]int, c.nq*c.k), Dist: make([]float64, c.nq*c.k)}
			plan, res := &searchPlan{kOther: c.k}, &screenResult{other: got}
			if took := tryPrefixScreen(nativeBLAS, qr, rr, c.nq, c.nr, c.d, plan, res); took != tc.want {
				t.Fatalf("took the prefix screen: %v, want %v", took, tc.want)
			}
			if !tc.want {
				return
			}
			want, err := knnBLAS(nativeBLAS, q, ref, c.k, false, false)
			if err != nil {
				t.Fatal(err)
			}
			for p := range want.Index {
				if got.Index[p] != want.Index[p] || got.Dist[p] != want.Dist[p] {
					t.Fatalf("query %d rank %d: got (%d, %g), want (%d, %g)", p/c.k, p%c.k, got.Index[p], got.Dist[p], want.Index[p], want.Dist[p])
				}
			}
		})
	}
}

// TestScreenCeiling checks that the ceiling inverts the bound, rounded up:
// a screened value above the ceiling has a bound above u (the filter is
// safe), and the float32 below it a bound at most u (it is the tightest).
func TestScreenCeiling(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 10000; i++ {
		u := math.Exp(40 * (rng.Float64() - 0.5))
		qn, rmax := u*math.Exp(4*rng.NormFloat64()), u*math.Exp(6*rng.NormFloat64())
		kappa := float64(8+rng.IntN(300)) * 0x1p-23
		c := screenCeiling(u, qn, rmax, kappa)
		if b := leftOutBound(float64(c), qn, rmax, kappa); b < u*(1-1e-12) {
			t.Fatalf("u %g: ceiling %g has bound %g below u: a value above it may pass", u, c, b)
		}
		below := math.Nextafter32(c, 0)
		if b := leftOutBound(float64(below), qn, rmax, kappa); b > u*(1+1e-12) {
			t.Fatalf("u %g: the float32 below the ceiling %g has bound %g above u", u, below, b)
		}
	}
}

// BenchmarkKNNPrefix compares the plain screen with KNNBLAS's choice on
// searches of 5,000 queries against 20,000 references in 128 dimensions
// whose standard deviation decays as (a+1)^−decay: with decay 1 most of the
// variance is in a few columns, the shape of principal components, and the
// prefix screen runs; with decay 0.5 it is spread and the choice is the
// plain screen.
//
//	go test -run XXX -bench KNNPrefix ./sparse
func BenchmarkKNNPrefix(b *testing.B) {
	for _, decay := range []float64{1, 0.5} {
		c := prefixCase{nq: 5000, nr: 20000, d: 128, k: 3, decay: decay, scale: 1, seed: 9}
		q, ref := c.data()
		for _, fast := range []bool{false, true} {
			b.Run(fmt.Sprintf("decay=%g/fast=%v", decay, fast), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, err := knnBLAS(nativeBLAS, q, ref, c.k, false, fast); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
