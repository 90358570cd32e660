package boost

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/psdlearn/psdlearn/arpack"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/engine/enginetest"
	"github.com/psdlearn/psdlearn/lapack"
	"gonum.org/v1/gonum/mat"
)

// TestCorrectiveStrictDecrease: totally corrective BoostMetric decreases the
// primal objective strictly at every iteration (JMLR 2012, Theorem 5), from
// its value at X = 0, and ends at a KKT point of the weights.
func TestCorrectiveStrictDecrease(t *testing.T) {
	x, y := standardized(t, "iris") // overlapping classes: the exponential loss is bounded
	for _, b := range enginetest.Backends(t) {
		ts, err := makeTriplets(b, x, y, 3)
		if err != nil {
			t.Fatal(err)
		}
		m := float64(ts.Len())
		for _, loss := range []Loss{Exp, Logistic} {
			t.Run(b.Name()+"/"+loss.String(), func(t *testing.T) {
				res, err := BoostMetric(context.Background(), x, ts, Options{Backend: b, Loss: loss, Mode: Corrective, Iters: 60})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%d iterations (%s), objective %.12g, %d terms", res.Iterations, res.Stop, res.Objective, len(res.W))
				if len(res.Curve) < 5 {
					t.Fatalf("only %d iterations", len(res.Curve))
				}
				prev := math.Log(m) // F(0)
				if loss == Logistic {
					prev = m * math.Log(2)
				}
				for i, f := range res.Curve {
					if !(f < prev) {
						t.Errorf("iteration %d: objective %.17g does not decrease from %.17g", i+1, f, prev)
					}
					prev = f
				}
				if res.Stop == StopUnbounded {
					t.Fatalf("unexpectedly unbounded")
				}
				// KKT of the weights at the end: ∂F/∂w_j = ν − Σ_r u_r H_rj = 0 for w_j > 0,
				// with u and H recomputed from the points.
				_, d := x.Dims()
				rho := naiveMargins(x, ts, res.Matrix(d))
				u := make([]float64, len(rho))
				tripletWeights(loss, rho, u)
				for j := range res.W {
					v := res.V.ColView(j)
					z := mat.NewSymDense(d, nil)
					z.SymRankOne(z, 1, v)
					h := naiveMargins(x, ts, z)
					g := DefaultNu
					var scale float64
					for r := range h {
						g -= u[r] * h[r]
						scale += math.Abs(u[r] * h[r])
					}
					if math.Abs(g) > 1e-6*scale {
						t.Errorf("term %d (w = %g): gradient %g (scale %g)", j, res.W[j], g, scale)
					}
				}
			})
		}
	}
}

// TestJMLRToy is the illustrative example of JMLR 2012 (Section 4.1): four
// classes on concentric circles in two dimensions plus eight dimensions of
// Gaussian noise, 9,000 triplets; BoostMetric (exponential loss) finds the
// informative plane: the two largest eigenvalues of X hold ≥ 90% of its trace.
func TestJMLRToy(t *testing.T) {
	const noise = 2
	x, y := circles(1, 250, noise)
	// PCA for comparison: how much of its top-2 subspace lies in the circle plane.
	n, _ := x.Dims()
	var cov mat.SymDense
	cov.SymOuterK(1/float64(n), x.T())
	pe, err := lapack.Go.SymEig(&cov, lapack.TopK(10, 2), true)
	if err != nil {
		t.Fatal(err)
	}
	pcaPlane := 0.0
	for k := 0; k < 2; k++ {
		pcaPlane += (math.Pow(pe.Vectors.At(0, k), 2) + math.Pow(pe.Vectors.At(1, k), 2)) / 2
	}
	for _, b := range enginetest.Backends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			ts, err := makeTriplets(b, x, y, 3)
			if err != nil {
				t.Fatal(err)
			}
			if ts.Len() != 9000 {
				t.Fatalf("%d triplets, want 9000", ts.Len())
			}
			res, err := BoostMetric(context.Background(), x, ts, Options{Backend: b})
			if err != nil {
				t.Fatal(err)
			}
			e, err := b.SymEig(res.Matrix(10), lapack.AllRange(), true)
			if err != nil {
				t.Fatal(err)
			}
			ev := e.Values
			tr := res.Trace()
			frac := (ev[9] + ev[8]) / tr
			plane := 0.0
			for k := 8; k < 10; k++ {
				plane += (math.Pow(e.Vectors.At(0, k), 2) + math.Pow(e.Vectors.At(1, k), 2)) / 2
			}
			t.Logf("noise σ=%g: %d iterations (%s); eigenvalues of X/tr X (largest first): %.4f; top-2 fraction %.4f; top-2 eigenvectors in the circle plane: %.4f (PCA's top 2: %.4f)",
				float64(noise), res.Iterations, res.Stop, reverseScaled(ev, tr), frac, plane, pcaPlane)
			if frac < 0.9 {
				t.Errorf("two largest eigenvalues hold %.4f of the trace, want ≥ 0.9", frac)
			}
			if plane < 0.9 {
				t.Errorf("the top-2 eigenvectors lie %.4f in the circle plane, want ≥ 0.9", plane)
			}
		})
	}
}

func reverseScaled(ev []float64, s float64) []float64 {
	out := make([]float64, len(ev))
	for i, v := range ev {
		out[len(ev)-1-i] = v / s
	}
	return out
}

// TestStagewiseWine: stage-wise BoostMetric (exponential and logistic) on
// standardised wine, 10 seeded 70/30 splits: the mean 3-NN test error is not
// worse than Euclidean 3-NN's.
func TestStagewiseWine(t *testing.T) {
	d, err := datasets.Open("wine")
	if err != nil {
		t.Fatal(err)
	}
	b := engine.Default()
	const splits = 10
	var eu, ex, lo float64
	for seed := uint64(1); seed <= splits; seed++ {
		parts, err := data.Split(d, []float64{0.7, 0.3}, seed)
		if err != nil {
			t.Fatal(err)
		}
		tr, te := parts[0], parts[1]
		std, err := data.Standardize(tr, te)
		if err != nil {
			t.Fatal(err)
		}
		xtr, xte := std[0].X, std[1].X
		ts, err := makeTriplets(b, xtr, tr.Y, 3)
		if err != nil {
			t.Fatal(err)
		}
		eu += testError(t, b, nil, xtr, tr.Y, xte, te.Y)
		for _, loss := range []Loss{Exp, Logistic} {
			res, err := BoostMetric(context.Background(), xtr, ts, Options{Backend: b, Loss: loss, Iters: 200})
			if err != nil {
				t.Fatal(err)
			}
			e := testError(t, b, res, xtr, tr.Y, xte, te.Y)
			if loss == Exp {
				ex += e
			} else {
				lo += e
			}
		}
	}
	eu, ex, lo = eu/splits, ex/splits, lo/splits
	t.Logf("wine, mean 3-NN test error over %d splits: Euclidean %.4f, BoostMetric-E %.4f, BoostMetric-L %.4f", splits, eu, ex, lo)
	if ex > eu || lo > eu {
		t.Errorf("BoostMetric is worse than Euclidean: exp %.4f, logistic %.4f, Euclidean %.4f", ex, lo, eu)
	}
}

// TestLineSearch checks the stage-wise weight against the optimality
// condition of the papers' equations (15) and (22), evaluated directly, on
// margins large enough that exp(−ρ) underflows without the log-sum-exp form.
func TestLineSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	const m = 500
	for trial := 0; trial < 6; trial++ {
		base := make([]float64, m)
		h := make([]float64, m)
		for r := range base {
			base[r] = 0.5 + rng.Float64()
			h[r] = rng.NormFloat64()
		}
		for _, loss := range []Loss{Exp, Logistic} {
			// Exponential: exp(−ρ) underflows at these scales without the
			// log-sum-exp form; logistic: σ(−ρ) is tiny but representable.
			scale := []float64{1, 100, 2000}[trial%3]
			if loss == Logistic {
				scale = []float64{1, 10, 30}[trial%3]
			}
			rho := make([]float64, m)
			for r := range rho {
				rho[r] = scale * base[r]
			}
			u := make([]float64, m)
			tripletWeights(loss, rho, u)
			var lam float64
			for r := range u {
				lam += u[r] * h[r]
			}
			if lam < 0 {
				for r := range h {
					h[r] = -h[r]
				}
				lam = -lam
			}
			// ν below λ = Σ u_r h_r, so that the derivative is negative at w = 0
			// (with the logistic loss λ is tiny when the margins are large).
			nu := 0.1 * lam
			w, unb := lineSearch(loss, rho, h, nu)
			if unb || !(w > 0) {
				t.Fatalf("trial %d %v: w = %g, unbounded %v", trial, loss, w, unb)
			}
			// (15): Σ (h − ν) u exp(−w h) = 0 with u ∝ exp(−ρ), rescaled by its
			// largest term; (22): Σ h σ(−(ρ + w h)) − ν = 0.
			var s, sabs float64
			switch loss {
			case Exp:
				mx := math.Inf(-1)
				for r := range rho {
					mx = math.Max(mx, -rho[r]-w*h[r])
				}
				for r := range rho {
					e := math.Exp(-rho[r] - w*h[r] - mx)
					s += (h[r] - nu) * e
					sabs += math.Abs(h[r]-nu) * e
				}
			case Logistic:
				for r := range rho {
					e := h[r] * sigmoidNeg(rho[r]+w*h[r])
					s += e
					sabs += math.Abs(e)
				}
				s -= nu
			}
			if math.Abs(s) > 1e-10*sabs {
				t.Errorf("trial %d %v (ρ scale %g): w = %g leaves residual %g (scale %g)", trial, loss, scale, w, s, sabs)
			}
		}
	}
	// Every margin above ν: the exponential objective has no minimiser.
	h := []float64{1, 2, 3}
	if w, unb := lineSearch(Exp, []float64{0, 0, 0}, h, 1e-7); !unb || !(w > 0) {
		t.Errorf("separating term: w = %g, unbounded %v", w, unb)
	}
}

// TestMargins checks H_r = (p_r·v)² − (q_r·v)² from the pair graph against
// the direct formula.
func TestMargins(t *testing.T) {
	x, y := standardized(t, "wine")
	rng := rand.New(rand.NewPCG(8, 9))
	for _, b := range enginetest.Backends(t) {
		ts, err := makeTriplets(b, x, y, 2)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := newPricer(b, x, ts, Options{})
		if err != nil {
			t.Fatal(err)
		}
		v := make([]float64, 13)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		normalize(v)
		h := make([]float64, ts.Len())
		if err := pr.margins(h, v); err != nil {
			t.Fatal(err)
		}
		z := mat.NewSymDense(13, nil)
		z.SymRankOne(z, 1, mat.NewVecDense(13, v))
		want := naiveMargins(x, ts, z)
		for r := range h {
			if math.Abs(h[r]-want[r]) > 1e-12*(1+math.Abs(want[r])) {
				t.Fatalf("%s: H[%d] = %.15g, want %.15g", b.Name(), r, h[r], want[r])
			}
		}
	}
}

// TestLanczosPricing: the matrix-free Lanczos eigenpair of Xᵀ L_W X equals the
// dense one.
func TestLanczosPricing(t *testing.T) {
	x, y := standardized(t, "wine")
	rng := rand.New(rand.NewPCG(10, 11))
	for _, b := range enginetest.Backends(t) {
		ts, err := makeTriplets(b, x, y, 2)
		if err != nil {
			t.Fatal(err)
		}
		dense, err := newPricer(b, x, ts, Options{Eig: EigDense})
		if err != nil {
			t.Fatal(err)
		}
		lanczos, err := newPricer(b, x, ts, Options{Eig: EigLanczos, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		if dense.op != nil || lanczos.op == nil {
			t.Fatalf("wrong eigensolver choice")
		}
		if auto, _ := newPricer(b, x, ts, Options{DenseMaxDim: 5}); auto.dense {
			t.Errorf("EigAuto with D = 13 > DenseMaxDim = 5 chose the dense solver")
		}
		u := make([]float64, ts.Len())
		for r := range u {
			u[r] = rng.Float64()
		}
		l1, v1, err := dense.top(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		l2, v2, err := lanczos.top(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		var dot float64
		for i := range v1 {
			dot += v1[i] * v2[i]
		}
		if math.Abs(l1-l2) > 1e-10*math.Abs(l1) || math.Abs(math.Abs(dot)-1) > 1e-8 {
			t.Errorf("%s: dense λ = %.15g, Lanczos λ = %.15g, |v₁·v₂| = %.12f", b.Name(), l1, l2, math.Abs(dot))
		}
		// The same run with either eigensolver.
		r1, err := BoostMetric(context.Background(), x, ts, Options{Backend: b, Iters: 8, Eig: EigDense})
		if err != nil {
			t.Fatal(err)
		}
		r2, err := BoostMetric(context.Background(), x, ts, Options{Backend: b, Iters: 8, Eig: EigLanczos})
		if err != nil {
			t.Fatal(err)
		}
		for i := range r1.Curve {
			if math.Abs(r1.Curve[i]-r2.Curve[i]) > 1e-8*(1+math.Abs(r1.Curve[i])) {
				t.Errorf("%s: iteration %d objective dense %.12g, Lanczos %.12g", b.Name(), i+1, r1.Curve[i], r2.Curve[i])
			}
		}
	}
}

func TestLargestAlgebraicConstant(t *testing.T) {
	if arpack.LargestAlgebraic.String() != "LA" {
		t.Fatalf("arpack.LargestAlgebraic is %v", arpack.LargestAlgebraic)
	}
}

// TestMultiPass: the composition of two passes is the metric L X₂ Lᵀ, and
// its terms are unit vectors with non-negative weights.
func TestMultiPass(t *testing.T) {
	x, y := standardized(t, "iris")
	b := engine.Default()
	res, err := MultiPass(context.Background(), x, y, 3, 2, nil, Options{Backend: b, Iters: 40})
	if err != nil {
		t.Fatal(err)
	}
	for j, w := range res.W {
		if !(w > 0) || math.Abs(mat.Norm(res.V.ColView(j), 2)-1) > 1e-12 {
			t.Errorf("term %d: w = %g, ‖v‖ = %g", j, w, mat.Norm(res.V.ColView(j), 2))
		}
	}
	// compose reproduces L X Lᵀ.
	one, err := BoostMetric(context.Background(), x, mustTriplets(t, b, x, y), Options{Backend: b, Iters: 10})
	if err != nil {
		t.Fatal(err)
	}
	l := one.Factor()
	var z mat.Dense
	z.Mul(x, l)
	two, err := BoostMetric(context.Background(), &z, mustTriplets(t, b, &z, y), Options{Backend: b, Iters: 10})
	if err != nil {
		t.Fatal(err)
	}
	_, r := l.Dims()
	var lx, want mat.Dense
	lx.Mul(l, two.Matrix(r))
	want.Mul(&lx, l.T())
	got := compose(l, two).Matrix(4)
	if !mat.EqualApprox(got, &want, 1e-10*mat.Norm(&want, 1)) {
		t.Errorf("compose: got\n%v\nwant\n%v", mat.Formatted(got), mat.Formatted(&want))
	}
}

func mustTriplets(t *testing.T, b engine.Backend, x *mat.Dense, y []int) *constraints.TripletSet {
	t.Helper()
	ts, err := makeTriplets(b, x, y, 3)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestBoostMetricInvalid(t *testing.T) {
	x, y := standardized(t, "iris")
	b := goBackend(t)
	ts := mustTriplets(t, b, x, y)
	for _, opt := range []Options{
		{Loss: Hinge},
		{Loss: Loss(9)},
		{Mode: Mode(4)},
		{Nu: -1},
		{Nu: math.Inf(1)},
	} {
		opt.Backend = b
		if _, err := BoostMetric(context.Background(), x, ts, opt); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: error %v, want ErrInvalid", opt, err)
		}
	}
	if _, err := ParseLoss("square"); !errors.Is(err, ErrInvalid) {
		t.Errorf("ParseLoss: %v", err)
	}
	if _, err := ParseMode("sideways"); !errors.Is(err, ErrInvalid) {
		t.Errorf("ParseMode: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := BoostMetric(ctx, x, ts, Options{Backend: b}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func ExampleBoostMetric() {
	d, err := datasets.Open("iris")
	if err != nil {
		fmt.Println(err)
		return
	}
	// One pass of stage-wise BoostMetric with the exponential loss on
	// triplets of 3 targets × 3 impostors per point.
	res, err := MultiPass(context.Background(), d.X, d.Y, 3, 1, nil, Options{Loss: Exp, Mode: Stagewise})
	if err != nil {
		fmt.Println(err)
		return
	}
	ev := spectrumOf(res.Matrix(4))
	fmt.Printf("%s; X ⪰ 0: %v\n", res.Stop, ev[0] > -1e-12)
	// Output: converged; X ⪰ 0: true
}

func spectrumOf(s mat.Symmetric) []float64 {
	e, err := lapack.Go.SymEig(s, lapack.AllRange(), false)
	if err != nil {
		panic(err)
	}
	return e.Values
}

// BenchmarkPricing compares the dense and the matrix-free (Lanczos) leading
// eigenpair of Â(u) at D = 400 (2,000 points, 18,000 triplets).
func BenchmarkPricing(b *testing.B) {
	rng := rand.New(rand.NewPCG(21, 22))
	x, ts := classTriplets(b, rng, 2000, 400, 5, 0.3)
	be := engine.Default()
	u := make([]float64, ts.Len())
	for r := range u {
		u[r] = rng.Float64()
	}
	for _, eig := range []EigMethod{EigDense, EigLanczos} {
		name := map[EigMethod]string{EigDense: "dense", EigLanczos: "lanczos"}[eig]
		b.Run(name, func(b *testing.B) {
			pr, err := newPricer(be, x, ts, Options{Eig: eig})
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < b.N; i++ {
				if _, _, err := pr.top(context.Background(), u); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestExtend: at the iteration limit BoostMetric asks Options.Extend how
// many more iterations to run, with the terms so far, and runs them; 0
// stops. Raw wine does not converge within the limits used here.
func TestExtend(t *testing.T) {
	d, ts, b := rawWine(t)
	for _, mode := range []Mode{Stagewise, Corrective} {
		var asked []int
		res, err := BoostMetric(context.Background(), d.X, ts, Options{Backend: b, Mode: mode, Iters: 20, Extend: func(it int, r *Result) int {
			if _, terms := r.V.Dims(); terms != len(r.W) || terms == 0 || terms > it {
				t.Errorf("%v: Extend at %d with %d terms and %d weights", mode, it, terms, len(r.W))
			}
			asked = append(asked, it)
			if len(asked) == 1 {
				return 5
			}
			return 0
		}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Stop != StopIterations || res.Iterations != 25 || len(asked) != 2 || asked[0] != 20 || asked[1] != 25 {
			t.Errorf("%v: stopped %v after %d iterations, Extend asked at %v; want the limit after 25, asked at 20 and 25", mode, res.Stop, res.Iterations, asked)
		}
	}
}

// TestDenseWins checks EigAuto's cost model at the sizes it was measured
// on: BoostMetric's Figure 2 (100 points) keeps the dense path up to
// D = 200 and leaves it by D = 300; MNIST's 784 pixels with 20,000 or
// 50,000 points take it (0.33 s against 0.72 s per iteration measured),
// 2,048 features with 20,000 points do not, and a double-precision Gram
// moves the limit down.
func TestDenseWins(t *testing.T) {
	for _, tc := range []struct {
		n, d int
		prec Precision
		want bool
	}{
		{100, 50, PrecisionAuto, true},
		{100, 200, PrecisionAuto, true},
		{100, 300, PrecisionAuto, false},
		{100, 1000, PrecisionAuto, false},
		{20000, 784, PrecisionAuto, true},
		{50000, 784, PrecisionAuto, true},
		{20000, 2048, PrecisionAuto, false},
		{50000, 1500, PrecisionDouble, false},
		{50000, 1000, PrecisionDouble, true},
	} {
		if got := denseWins(tc.n, tc.d, tc.prec); got != tc.want {
			t.Errorf("denseWins(%d, %d, %v) = %v, want %v", tc.n, tc.d, tc.prec, got, tc.want)
		}
	}
}

// stopAt is a PassMonitor that asks at every multiple of every and stops
// at stop, keeping a copy of the Result of every check; it keeps the terms
// of its keep-th check (0: the run's own), and records the passes.
type stopAt struct {
	every, stop, keep int
	seen              []int
	results           []*Result
	passes            []int
	transforms        []*mat.Dense
}

func (m *stopAt) Due(it int) bool { return it%m.every == 0 }

func (m *stopAt) Check(it int, r *Result) bool {
	m.seen = append(m.seen, it)
	c := *r
	c.V, c.W = mat.DenseCopyOf(r.V), slices.Clone(r.W)
	m.results = append(m.results, &c)
	return it == m.stop
}

func (m *stopAt) Keep(r *Result) *Result {
	if m.keep == 0 {
		return r
	}
	k := *r
	k.V, k.W = m.results[m.keep-1].V, m.results[m.keep-1].W
	return &k
}

func (m *stopAt) StartPass(p int, l *mat.Dense) {
	m.passes = append(m.passes, p)
	m.transforms = append(m.transforms, l)
}

// TestMonitor: BoostMetric calls Options.Monitor's Check at the iterations
// Due names, with the terms so far, and stops with StopMonitor when it
// says so. Stage-wise, a run stopped at iteration j holds the same terms,
// bit for bit, as a run limited to j iterations (the same arithmetic), and
// the terms seen at an earlier check are the leading ones of the end.
func TestMonitor(t *testing.T) {
	d, ts, b := rawWine(t)
	for _, mode := range []Mode{Stagewise, Corrective} {
		m := &stopAt{every: 4, stop: 12}
		res, err := BoostMetric(context.Background(), d.X, ts, Options{Backend: b, Mode: mode, Iters: 30, Monitor: m})
		if err != nil {
			t.Fatal(err)
		}
		if res.Stop != StopMonitor || res.Iterations != 12 || !slices.Equal(m.seen, []int{4, 8, 12}) {
			t.Errorf("%v: stopped %v after %d iterations, checked at %v; want StopMonitor after 12, checked at 4, 8, 12", mode, res.Stop, res.Iterations, m.seen)
		}
		for i, r := range m.results {
			if _, j := r.V.Dims(); j > m.seen[i] || j == 0 || j != len(r.W) {
				t.Errorf("%v: %d terms at iteration %d", mode, j, m.seen[i])
			}
		}
		if mode != Stagewise {
			continue
		}
		ref, err := BoostMetric(context.Background(), d.X, ts, Options{Backend: b, Mode: mode, Iters: 12})
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(ref.V, res.V) || !slices.Equal(ref.W, res.W) || ref.Objective != res.Objective {
			t.Errorf("stage-wise: the run stopped at 12 differs from the run limited to 12")
		}
		if early := m.results[1].V; !mat.Equal(early, res.V.Slice(0, 13, 0, 8)) {
			t.Errorf("stage-wise: the terms seen at 8 are not the first 8 of the end")
		}
	}
}

// TestMonitorKeep: a run returns the terms its Monitor keeps, and
// MultiPass tells a PassMonitor where every pass starts, counting the
// iterations of each pass from one.
func TestMonitorKeep(t *testing.T) {
	d, ts, b := rawWine(t)
	m := &stopAt{every: 4, stop: 12, keep: 2}
	res, err := BoostMetric(context.Background(), d.X, ts, Options{Backend: b, Iters: 30, Monitor: m})
	if err != nil {
		t.Fatal(err)
	}
	if res.Iterations != 12 || !mat.Equal(res.V, m.results[1].V) || !slices.Equal(res.W, m.results[1].W) {
		t.Errorf("after %d iterations returned %d terms, want the 8 of the second check", res.Iterations, len(res.W))
	}
	m = &stopAt{every: 4, stop: 8}
	if _, err := MultiPass(context.Background(), d.X, d.Y, 3, 2, ts, Options{Backend: b, Iters: 30, Monitor: m}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.passes, []int{1, 2}) || m.transforms[0] != nil || m.transforms[1] == nil || !slices.Equal(m.seen, []int{4, 8, 4, 8}) {
		t.Fatalf("passes %v, checks at %v, first transform %v", m.passes, m.seen, m.transforms[0])
	}
	if r, _ := m.transforms[1].Dims(); r != 13 {
		t.Errorf("the second pass's transform has %d rows, want 13", r)
	}
}

// rawWine returns the raw wine data, its 3-NN triplets and the default
// backend: a run that does not converge within the limits used here.
func rawWine(t *testing.T) (*data.Dataset, *constraints.TripletSet, engine.Backend) {
	t.Helper()
	d, err := datasets.Open("wine")
	if err != nil {
		t.Fatal(err)
	}
	b := engine.Default()
	ts, err := makeTriplets(b, d.X, d.Y, 3)
	if err != nil {
		t.Fatal(err)
	}
	return d, ts, b
}
