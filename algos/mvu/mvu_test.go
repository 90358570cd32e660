package mvu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn/algos/sdp"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine/enginetest"
	"github.com/psdlearn/psdlearn/progress"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
)

func swissRoll(n int, seed uint64) (*mat.Dense, []float64, []float64) {
	return datasets.SwissRoll(n, seed)
}

// TestMVUSwissRoll unrolls a Swiss roll: the kNN distances must be kept, the
// variance must lie in two dimensions, and the embedding must follow the
// roll's intrinsic coordinates (the first along the spiral, the second along
// its height) — which no linear projection of the rolled-up points does.
func TestMVUSwissRoll(t *testing.T) {
	b := engine.Default()
	if b.Name() == "go" && os.Getenv("PSDLEARN_LONG") == "" {
		// Some 4,600 dense 400×400 eigendecompositions: seconds with
		// LAPACK, minutes with gonum.
		t.Skip("the pure-Go backend takes minutes here; set PSDLEARN_LONG=1")
	}
	x, ts, hs := swissRoll(400, 7)
	emb, err := Embed(context.Background(), x, Options{K: 6, Sigma: 1e5, Dims: 2, SDP: sdp.Options{Backend: b, MaxIter: 2000}})
	if err != nil {
		t.Fatal(err)
	}
	sol := emb.Solution
	t.Logf("%d edges, %d iterations, %d evaluations, rel. gap %.3g, max violation %.3g (%s), eigenvalues %.4g",
		len(emb.Edges), sol.Iterations, sol.Evaluations, sol.RelGap, sol.MaxViolation, sol.Reason, emb.Eigenvalues[:min(4, len(emb.Eigenvalues))])
	// Local distances in the learned Gram matrix: the median relative
	// error of the constrained squared distances, and the aggregate
	// Σ|d̂² − d²| / Σd².
	med, agg := edgeDistortion(emb)
	t.Logf("constrained squared distances: median relative error %.3g, aggregate %.3g", med, agg)
	if med > 0.2 || agg > 0.25 {
		t.Errorf("local distances not preserved: median relative error %.3g, aggregate %.3g", med, agg)
	}
	// Variance in the top two dimensions.
	var tr float64
	for _, v := range emb.Eigenvalues {
		tr += v
	}
	frac := (emb.Eigenvalues[0] + emb.Eigenvalues[1]) / tr
	t.Logf("variance in the top 2 dimensions: %.4f", frac)
	if frac < 0.95 {
		t.Errorf("top-2 variance fraction %.4f, want ≥ 0.95", frac)
	}
	// Unrolled: coordinates follow (t, h).
	c0 := mat.Col(nil, 0, emb.Coords)
	c1 := mat.Col(nil, 1, emb.Coords)
	r0, r1 := math.Abs(eval.Spearman(c0, ts)), math.Abs(eval.Spearman(c1, hs))
	t.Logf("rank correlations: first coordinate with t %.4f, second with h %.4f", r0, r1)
	if r0 < 0.99 || r1 < 0.9 {
		t.Errorf("not unrolled: |ρ(y1, t)| = %.4f, |ρ(y2, h)| = %.4f", r0, r1)
	}
	// Centred.
	for j := 0; j < 2; j++ {
		if m := stat.Mean(mat.Col(nil, j, emb.Coords), nil); math.Abs(m) > 1e-3*math.Sqrt(emb.Eigenvalues[0]) {
			t.Errorf("coordinate %d has mean %g", j, m)
		}
	}
}

func TestMVUInputErrors(t *testing.T) {
	x, _, _ := swissRoll(50, 1)
	nan := mat.DenseCopyOf(x)
	nan.Set(0, 0, math.NaN())
	// Two far-apart clusters: the 3-NN graph is disconnected.
	split := mat.NewDense(20, 2, nil)
	for i := 0; i < 20; i++ {
		split.Set(i, 0, float64(i%10)+1e3*float64(i/10))
	}
	for _, tc := range []struct {
		name string
		x    *mat.Dense
		opt  Options
	}{
		{"nil", nil, Options{}},
		{"NaN", nan, Options{}},
		{"k too large", x, Options{K: 50}},
		{"negative k", x, Options{K: -1}},
		{"negative sigma", x, Options{Sigma: -1}},
		{"dims", x, Options{Dims: 51}},
		{"disconnected", split, Options{K: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Embed(context.Background(), tc.x, tc.opt); !errors.Is(err, ErrInput) {
				t.Errorf("got %v, want ErrInput", err)
			}
		})
	}
}

// edgeDistortion returns the median relative error |d̂² − d²|/d² of the
// constrained squared distances in X = F Fᵀ and the aggregate Σ|d̂² − d²|/Σd².
func edgeDistortion(emb *Embedding) (median, aggregate float64) {
	rel := emb.EdgeErrors()
	var num, den float64
	for k, d := range emb.Dist2 {
		num += rel[k] * d
		den += d
	}
	sort.Float64s(rel)
	return rel[len(rel)/2], num / den
}

// TestMVUMethodsAgree unrolls a helix (a chain of points joined to their two
// nearest neighbours — a graph that admits a strictly feasible Gram matrix,
// so the dual converges) with the dense and the sparse (Lanczos) method on
// both backends: the embeddings must agree and be straight. (The sparse
// method with the Block eigensolver reaches the same embedding but needs
// about 30 times the operator products here; see TestSDPBlockEigensolver
// and docs/algorithms/sdp-mvu.md.)
func TestMVUMethodsAgree(t *testing.T) {
	const n = 80
	x := mat.NewDense(n, 3, nil)
	for i := 0; i < n; i++ {
		a := 4 * math.Pi * float64(i) / (n - 1)
		x.SetRow(i, []float64{3 * math.Cos(a), 3 * math.Sin(a), 0.5 * a})
	}
	var ref []float64
	for _, b := range enginetest.Backends(t) {
		for _, cfg := range []struct {
			method sdp.Method
			solver sdp.Eigensolver
		}{{sdp.Dense, sdp.Lanczos}, {sdp.Sparse, sdp.Lanczos}} {
			method := cfg.method
			t.Run(b.Name()+"/"+method.String()+"/"+cfg.solver.String(), func(t *testing.T) {
				emb, err := Embed(context.Background(), x, Options{K: 2, Dims: 1, SDP: sdp.Options{Backend: b, Method: method, Eigensolver: cfg.solver}})
				if err != nil {
					t.Fatal(err)
				}
				sol := emb.Solution
				var tr float64
				for _, v := range emb.Eigenvalues {
					tr += v
				}
				med, agg := edgeDistortion(emb)
				t.Logf("%d iterations (%s), rel. gap %.3g, violation %.3g, top eigenvalue fraction %.5f, distortion %.3g/%.3g, %d operator products in %d evaluations",
					sol.Iterations, sol.Reason, sol.RelGap, sol.MaxViolation, emb.Eigenvalues[0]/tr, med, agg, emb.OperatorProducts, emb.Evaluations)
				if sol.Method != method {
					t.Errorf("method %v used", sol.Method)
				}
				if f := emb.Eigenvalues[0] / tr; f < 0.99 {
					t.Errorf("variance in one dimension %.4f, want ≥ 0.99", f)
				}
				if agg > 0.01 {
					t.Errorf("aggregate distance distortion %.3g", agg)
				}
				// The unrolled chain is ordered along the line.
				if r := math.Abs(eval.Spearman(mat.Col(nil, 0, emb.Coords), func() []float64 {
					v := make([]float64, n)
					for i := range v {
						v[i] = float64(i)
					}
					return v
				}())); r < 0.999 {
					t.Errorf("rank correlation with the chain order %.4f", r)
				}
				if ref == nil {
					ref = emb.Eigenvalues
				} else if math.Abs(emb.Eigenvalues[0]-ref[0]) > 1e-3*ref[0] {
					t.Errorf("top eigenvalue %.8g, first run %.8g", emb.Eigenvalues[0], ref[0])
				}
			})
		}
	}
}

// TestMVURelaxation checks how the equality form is started from the
// inequality relaxation: the relaxation keeps to its iteration budget and
// its edge multipliers are dual feasible for it (≥ 0); the equality solve
// starts at the relaxation's dual point (its first dual value is the
// relaxation's last); the iteration counts add up within MaxIter; and
// without equalities, or with RelaxIter < 0, there is no relaxation.
func TestMVURelaxation(t *testing.T) {
	x, _, _ := swissRoll(300, 3)
	const maxIter, relaxIter = 120, 40
	for _, method := range []sdp.Method{sdp.Dense, sdp.Sparse} {
		t.Run(method.String(), func(t *testing.T) {
			emb, err := Embed(context.Background(), x, Options{K: 6, Equalities: true, RelaxIter: relaxIter, SDP: sdp.Options{Method: method, MaxIter: maxIter}})
			if err != nil {
				t.Fatal(err)
			}
			r, s := emb.Relaxation, emb.Solution
			if r == nil {
				t.Fatal("no relaxation")
			}
			t.Logf("relaxation: %d iterations, %d evaluations, dual %.10g (%s); equalities: %d iterations, dual %.10g → %.10g, max violation %.3g (%s)",
				r.Iterations, r.Evaluations, r.Dual, r.Reason, s.Iterations, s.Curve[0], s.Dual, s.MaxViolation, s.Reason)
			if r.Iterations > relaxIter {
				t.Errorf("relaxation took %d iterations, budget %d", r.Iterations, relaxIter)
			}
			if emb.Iterations != r.Iterations+s.Iterations || emb.Evaluations != r.Evaluations+s.Evaluations {
				t.Errorf("totals %d iterations, %d evaluations; parts %d+%d, %d+%d",
					emb.Iterations, emb.Evaluations, r.Iterations, s.Iterations, r.Evaluations, s.Evaluations)
			}
			if emb.Iterations > maxIter {
				t.Errorf("%d iterations in all, MaxIter %d", emb.Iterations, maxIter)
			}
			for i, u := range r.U[:len(emb.Edges)] {
				if u < 0 {
					t.Fatalf("relaxation multiplier %d = %g < 0", i, u)
				}
			}
			if d := math.Abs(s.Curve[0] - r.Dual); d > 1e-9*math.Abs(r.Dual) {
				t.Errorf("equality solve starts at dual %.15g, relaxation ended at %.15g", s.Curve[0], r.Dual)
			}
		})
	}
	for _, opt := range []Options{{K: 6, Equalities: true, RelaxIter: -1}, {K: 6}} {
		opt.SDP = sdp.Options{Method: sdp.Dense, MaxIter: 20}
		emb, err := Embed(context.Background(), x, opt)
		if err != nil {
			t.Fatal(err)
		}
		if emb.Relaxation != nil || emb.Iterations != emb.Solution.Iterations {
			t.Errorf("RelaxIter %d, Equalities %v: relaxation %v, %d of %d iterations", opt.RelaxIter, opt.Equalities, emb.Relaxation != nil, emb.Solution.Iterations, emb.Iterations)
		}
	}
}

// TestMVUCancelMidRun cancels MVU at its first progress report (after 100
// dual evaluations) with either eigen-method and checks that the embedding
// of the best iterate comes back with the context's error, promptly.
func TestMVUCancelMidRun(t *testing.T) {
	x, _, _ := swissRoll(300, 7)
	for _, method := range []sdp.Method{sdp.Dense, sdp.Sparse} {
		t.Run(method.String(), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			reports := 0
			emb, err := Embed(ctx, x, Options{K: 6, Sigma: 1e5, Dims: 2, Equalities: true, SDP: sdp.Options{Method: method, Progress: func(progress.Event) {
				if reports++; reports == 1 {
					cancel()
				}
			}}})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v, want context.Canceled", err)
			}
			if emb == nil {
				t.Fatal("no embedding returned with the cancellation error")
			}
			sol := emb.Solution
			// The first report comes from the relaxation, so that is where
			// the run stopped.
			if emb.Relaxation != sol {
				t.Errorf("cancelled during the relaxation, but sdp.Solution is not Relaxation")
			}
			if sol.Certified || sol.Evaluations > 102 {
				t.Errorf("Certified %v after %d evaluations: want an uncertified iterate from at most 102 evaluations", sol.Certified, sol.Evaluations)
			}
			if r, c := emb.Coords.Dims(); r != 300 || c != 2 {
				t.Fatalf("coordinates %d×%d, want 300×2", r, c)
			}
			for i := 0; i < 300; i++ {
				for j := 0; j < 2; j++ {
					if v := emb.Coords.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("coordinate (%d,%d) = %v", i, j, v)
					}
				}
			}
		})
	}
}

// TestMVUSwissRollSparse is the acceptance test of approximate MVU on the
// sparse (Lanczos) path: Swiss rolls of N = 500 and N = 2,000 points, k = 6,
// 300 L-BFGS-B iterations (half of them on the inequality relaxation that
// starts the equality solve). The first embedding coordinate must follow the
// roll's angle (|Spearman ρ| ≥ 0.95) and the constrained local distances
// must be kept to a median relative error of 0.2 (native backend: about
// 10 s and 45 s).
func TestMVUSwissRollSparse(t *testing.T) {
	b := engine.Default()
	if b.Name() == "go" && os.Getenv("PSDLEARN_LONG") == "" {
		t.Skip("the pure-Go backend takes minutes here; set PSDLEARN_LONG=1")
	}
	for _, n := range []int{500, 2000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			x, angle, _ := swissRoll(n, 7)
			start := time.Now()
			emb, err := Embed(context.Background(), x, Options{K: 6, Sigma: 1e5, Dims: 2, Equalities: true, SDP: sdp.Options{Backend: b, Method: sdp.Sparse, MaxIter: 300}})
			if err != nil {
				t.Fatal(err)
			}
			sol := emb.Solution
			if sol.Method != sdp.Sparse {
				t.Errorf("method %v used, want sparse", sol.Method)
			}
			rho := math.Abs(eval.Spearman(mat.Col(nil, 0, emb.Coords), angle))
			med, agg := edgeDistortion(emb)
			t.Logf("N=%d: %v, %d iterations (%d on the relaxation), %d evaluations, rel. gap %.3g, max violation %.3g (%s); |ρ(y1, angle)| %.4f; distance error median %.3f, aggregate %.3f",
				n, time.Since(start).Round(time.Millisecond), emb.Iterations, emb.Relaxation.Iterations, emb.Evaluations, sol.RelGap, sol.MaxViolation, sol.Reason, rho, med, agg)
			if rho < 0.95 {
				t.Errorf("|ρ(y1, angle)| = %.4f, want ≥ 0.95", rho)
			}
			if med > 0.2 {
				t.Errorf("median relative distance error %.3f, want ≤ 0.2", med)
			}
		})
	}
}

// TestMVUClosedCurve embeds 120 points of a closed curve in 100 dimensions
// (random Fourier coefficients up to the third harmonic), each joined to its
// 4 nearest neighbours. MVU must return a closed curve traversed in order:
// between consecutive points the angle about the centre turns the same way
// every time and the curve winds exactly once; and the variance must lie
// in the two dimensions kept.
func TestMVUClosedCurve(t *testing.T) {
	const n, dim = 120, 100
	rng := rand.New(rand.NewPCG(5, 5))
	x := mat.NewDense(n, dim, nil)
	for k := 1; k <= 3; k++ {
		a, b := make([]float64, dim), make([]float64, dim)
		for j := range a {
			a[j] = rng.NormFloat64() / float64(k)
			b[j] = rng.NormFloat64() / float64(k)
		}
		for i := 0; i < n; i++ {
			th := 2 * math.Pi * float64(i) / n
			c, s := math.Cos(float64(k)*th), math.Sin(float64(k)*th)
			for j := 0; j < dim; j++ {
				x.Set(i, j, x.At(i, j)+a[j]*c+b[j]*s)
			}
		}
	}
	emb, err := Embed(context.Background(), x, Options{K: 4, Dims: 2, Equalities: true, SDP: sdp.Options{Method: sdp.Dense}})
	if err != nil {
		t.Fatal(err)
	}
	var winding float64
	forward := 0
	for i := 0; i < n; i++ {
		j := (i + 1) % n
		d := math.Remainder(math.Atan2(emb.Coords.At(j, 1), emb.Coords.At(j, 0))-math.Atan2(emb.Coords.At(i, 1), emb.Coords.At(i, 0)), 2*math.Pi)
		winding += d
		if d > 0 {
			forward++
		}
	}
	winding /= 2 * math.Pi
	var tr float64
	for _, v := range emb.Eigenvalues {
		tr += v
	}
	top2 := (emb.Eigenvalues[0] + emb.Eigenvalues[1]) / tr
	t.Logf("%d iterations, rel. gap %.3g, max violation %.3g (%s); winding number %.6f, %d of %d steps forward; top-2 variance %.5f",
		emb.Solution.Iterations, emb.Solution.RelGap, emb.Solution.MaxViolation, emb.Solution.Reason, winding, forward, n, top2)
	if forward != 0 && forward != n {
		t.Errorf("%d of %d steps turn forward: the curve is not traversed in order", forward, n)
	}
	if math.Abs(math.Abs(winding)-1) > 1e-9 {
		t.Errorf("winding number %.6f, want ±1", winding)
	}
	if top2 < 0.99 {
		t.Errorf("top-2 variance fraction %.5f, want ≥ 0.99", top2)
	}
	// The equality solve starts where the relaxation stopped (stalled, its
	// line search failing) and must still advance: the optimal dual value
	// of the equalities is at least that of the relaxation, whose
	// multipliers are restricted to u ≥ 0.
	r, s := emb.Relaxation, emb.Solution
	t.Logf("relaxation: %d iterations (%s), dual %.10g; equalities: %d iterations, dual %.10g", r.Iterations, r.Reason, r.Dual, s.Iterations, s.Dual)
	if s.Iterations == 0 || s.Dual < r.Dual {
		t.Errorf("the equality solve made %d iterations from the relaxation's dual %.10g to %.10g", s.Iterations, r.Dual, s.Dual)
	}
}

// TestEdgeErrors checks the per-edge relative distance errors on a known
// one-dimensional embedding 0, 1, 3 (a coincident pair counts as exact).
func TestEdgeErrors(t *testing.T) {
	emb := &Embedding{
		Edges:    []engine.Pair{{A: 0, B: 1}, {A: 1, B: 2}, {A: 0, B: 2}, {A: 1, B: 1}},
		Dist2:    []float64{2, 4, 12, 0},
		Solution: &sdp.Solution{Factor: mat.NewDense(3, 1, []float64{0, 1, 3})},
	}
	want := []float64{0.5, 0, 0.25, 0} // squared distances 1, 4, 9, 0
	got := emb.EdgeErrors()
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-15 {
			t.Errorf("edge %d: error %g, want %g", i, got[i], want[i])
		}
	}
}

// TestEmbedGraph: Embed is EmbedGraph on the kNN edges (the same
// embedding to the last bit), and EmbedGraph rejects malformed graphs.
func TestEmbedGraph(t *testing.T) {
	x, _, _ := swissRoll(120, 3)
	opt := Options{K: 6, Dims: 2, SDP: sdp.Options{MaxIter: 300}}
	want, err := Embed(context.Background(), x, opt)
	if err != nil {
		t.Fatal(err)
	}
	got, err := EmbedGraph(context.Background(), 120, want.Edges, want.Dist2, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(got.Coords, want.Coords) || got.Iterations != want.Iterations || got.Sigma != want.Sigma {
		t.Errorf("EmbedGraph differs from Embed: %d iterations against %d", got.Iterations, want.Iterations)
	}
	e := want.Edges
	for _, tc := range []struct {
		name  string
		n     int
		edges []engine.Pair
		dist2 []float64
	}{
		{"lengths", 120, e, want.Dist2[1:]},
		{"unsorted", 120, append([]engine.Pair{e[1], e[0]}, e[2:]...), want.Dist2},
		{"A ≥ B", 120, append([]engine.Pair{{A: e[0].B, B: e[0].A}}, e[1:]...), want.Dist2},
		{"outside", 100, e, want.Dist2},
		{"disconnected", 120, e[:10], want.Dist2[:10]},
		{"NaN distance", 120, e, append([]float64{math.NaN()}, want.Dist2[1:]...)},
	} {
		if _, err := EmbedGraph(context.Background(), tc.n, tc.edges, tc.dist2, opt); !errors.Is(err, ErrInput) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
