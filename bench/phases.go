package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/algos/frob"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/internal/jsonnum"
	"github.com/psdlearn/psdlearn/progress"
	"gonum.org/v1/gonum/mat"
)

// PhasesDims are the input dimensions of the phases report: all 784 pixels
// of MNIST-sized images and a deep-feature width.
var PhasesDims = []int{784, 2048}

// The defaults of PhasesOptions.
const (
	// PhasesN is the number of training points; their 3-NN triplets
	// number 9 per point.
	PhasesN = 10000
	// PhasesIters bounds the iterations of each solve: the report profiles
	// iterations, it does not wait for a certificate.
	PhasesIters = 20
	// phasesClasses and phasesSubspace shape the data (see PhasesData).
	phasesClasses, phasesSubspace = 10, 16
)

// PhasesOptions configures Phases.
type PhasesOptions struct {
	// Backend runs the solvers (nil: engine.Default()).
	Backend engine.Backend
	// Seed fixes the data.
	Seed uint64
	// Dims are the input dimensions (nil: PhasesDims); MaxDim > 0 drops
	// those above it.
	Dims   []int
	MaxDim int
	// N is the number of training points (0: PhasesN) and Iters the
	// iteration limit of every solve (0: PhasesIters).
	N, Iters int
	// Progress, if non-nil, receives an event per solve profiled.
	Progress progress.Func
}

// Phase is one phase of a solve: its time, how often it ran, the flops
// it needs at least (0 when it has no flop bound) and that work's time at
// the measured DGEMM rate.
type Phase struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
	Count   int     `json:"count"`
	Flops   float64 `json:"flops"`
	// Bound is Flops at the DGEMM rate, in seconds; Fraction is Bound /
	// Seconds: 1 means the phase runs at the rate of a large DGEMM.
	Bound    float64 `json:"bound_seconds"`
	Fraction float64 `json:"fraction"`
	// Work says how Flops is counted.
	Work string `json:"work"`
}

// MarshalJSON encodes the figures that are not known as null.
func (p Phase) MarshalJSON() ([]byte, error) {
	type plain Phase
	return json.Marshal(struct {
		plain
		Seconds  jsonnum.Float `json:"seconds"`
		Flops    jsonnum.Float `json:"flops"`
		Bound    jsonnum.Float `json:"bound_seconds"`
		Fraction jsonnum.Float `json:"fraction"`
	}{plain(p), jsonnum.Float(p.Seconds), jsonnum.Float(p.Flops), jsonnum.Float(p.Bound), jsonnum.Float(p.Fraction)})
}

// PhasesRow is one solve profiled.
type PhasesRow struct {
	// Solver names the algorithm and its path.
	Solver   string `json:"solver"`
	Dim      int    `json:"dim"`
	N        int    `json:"n"`
	Triplets int    `json:"triplets"`
	Pairs    int    `json:"pairs"`
	// Seconds is the wall time of the solve; Iterations its iterations
	// (BoostMetric's terms, FrobMetric's L-BFGS-B iterations) and
	// Evaluations FrobMetric's dual evaluations.
	Seconds     float64 `json:"seconds"`
	Iterations  int     `json:"iterations"`
	Evaluations int     `json:"evaluations,omitempty"`
	// DGEMMGflops is the rate of a tall-skinny DGEMM XᵀY of this width
	// on every core, measured before the solve.
	DGEMMGflops float64 `json:"dgemm_gflops"`
	// Phases are the solve's phases; the last, "other", is the rest of
	// Seconds (the quasi-Newton or line-search bookkeeping, refinements,
	// allocation), without a bound.
	Phases []Phase `json:"phases"`
	Error  string  `json:"error,omitempty"`
}

// PhasesReport says where the time of FrobMetric and BoostMetric goes at
// large input dimensions.
type PhasesReport struct {
	Protocol string      `json:"protocol"`
	Backend  string      `json:"backend"`
	Rows     []PhasesRow `json:"rows"`
	MaxDim   int         `json:"max_dim,omitempty"`
	Machine  string      `json:"machine"`
}

// PhasesSection is Phases with the report options: MaxSize is the largest
// input dimension run; below every one of PhasesDims it makes a quick run
// at D = MaxSize on phasesQuickN points.
func PhasesSection(ctx context.Context, o ReportOptions) (Report, error) {
	if err := noCase(o, "phases"); err != nil {
		return nil, err
	}
	opt := PhasesOptions{Backend: o.Backend, Seed: o.Seed, MaxDim: o.MaxSize, Progress: o.Progress}
	if o.MaxSize > 0 && o.MaxSize < PhasesDims[0] {
		opt.Dims, opt.N = []int{o.MaxSize}, phasesQuickN
	}
	return Phases(ctx, opt)
}

// phasesQuickN is the number of points of a quick run (PhasesSection).
const phasesQuickN = 1000

// PhasesData returns n points in dim dimensions in phasesClasses classes
// (point i in class i mod 10) whose structure lies in a random subspace of
// phasesSubspace dimensions: x_i = B(μ_c + g_i) + e_i with B a dim×16
// Gaussian matrix scaled by 1/√16, μ_c ~ N(0, 9·I) per class, g_i ~ N(0, I)
// and isotropic noise e_i ~ N(0, I_dim). Seeded.
func PhasesData(n, dim int, seed uint64) (*mat.Dense, []int) {
	rng := rand.New(rand.NewPCG(seed, 0x9ba5e5))
	s := phasesSubspace
	basis := make([]float64, dim*s)
	for i := range basis {
		basis[i] = rng.NormFloat64() / math.Sqrt(float64(s))
	}
	means := make([]float64, phasesClasses*s)
	for i := range means {
		means[i] = 3 * rng.NormFloat64()
	}
	x := mat.NewDense(n, dim, nil)
	y := make([]int, n)
	z := make([]float64, s)
	for i := 0; i < n; i++ {
		c := i % phasesClasses
		y[i] = c
		for k := range z {
			z[k] = means[c*s+k] + rng.NormFloat64()
		}
		row := x.RawRowView(i)
		for j := range row {
			v := rng.NormFloat64()
			for k, zk := range z {
				v += basis[j*s+k] * zk
			}
			row[j] = v
		}
	}
	return x, y
}

// Phases profiles FrobMetric (C = 1, L-BFGS-B only) and BoostMetric (stage-wise,
// exponential loss; the Lanczos path and the dense path) at every dimension: PhasesData, its 3-NN triplets, Iters
// iterations, and per phase the seconds, the count, the least flops and
// their time at the measured DGEMM rate.
func Phases(ctx context.Context, opt PhasesOptions) (*PhasesReport, error) {
	b := engine.Or(opt.Backend)
	dims := opt.Dims
	if dims == nil {
		dims = PhasesDims
	}
	n := opt.N
	if n == 0 {
		n = PhasesN
	}
	iters := opt.Iters
	if iters == 0 {
		iters = PhasesIters
	}
	rep := &PhasesReport{Backend: b.Name(), Machine: Machine(), MaxDim: opt.MaxDim,
		Protocol: fmt.Sprintf("%d training points in %d classes structured in a random %d-dimensional subspace plus isotropic unit noise, their 3-NN triplets; "+
			"each solve stopped after %d iterations (FrobMetric C = 1, working set as by default, its L-BFGS-B iterations only: no restarts and no Newton polish, whose Hessian products the table would show; BoostMetric stage-wise, exponential loss, double precision)",
			n, phasesClasses, phasesSubspace, iters)}
	for _, d := range dims {
		if opt.MaxDim > 0 && d > opt.MaxDim {
			continue
		}
		x, y := PhasesData(n, d, opt.Seed)
		ts, err := constraints.TripletsBLAS(b.BLAS(), x, y, 3)
		if err != nil {
			return rep, err
		}
		dgemm, _ := gemmRates(b.BLAS(), d)
		for _, s := range []struct {
			name string
			run  func() (PhasesRow, error)
		}{
			{"frobmetric", func() (PhasesRow, error) { return frobPhases(ctx, b, x, ts, iters, dgemm) }},
			{"boostmetric lanczos", func() (PhasesRow, error) { return boostPhases(ctx, b, x, ts, iters, dgemm, boost.EigLanczos) }},
			{"boostmetric dense", func() (PhasesRow, error) { return boostPhases(ctx, b, x, ts, iters, dgemm, boost.EigDense) }},
		} {
			row, err := s.run()
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
			row.Solver, row.Dim, row.N, row.Triplets, row.Pairs, row.DGEMMGflops = s.name, d, n, ts.Len(), len(ts.Pairs), dgemm/1e9
			if err != nil {
				row.Error = err.Error()
			}
			rep.Rows = append(rep.Rows, row)
			if opt.Progress != nil {
				opt.Progress(progress.Event{Algorithm: "bench phases", Objective: math.NaN(), Gap: math.NaN(),
					Message: fmt.Sprintf("phases: %s at D = %d: %.3g s", s.name, d, row.Seconds)})
			}
		}
	}
	if len(rep.Rows) == 0 {
		return rep, fmt.Errorf("phases: no dimension of %v is at most --max-size %d", dims, opt.MaxDim)
	}
	return rep, nil
}

// frobPhases runs FrobMetric for iters iterations and returns its phases.
func frobPhases(ctx context.Context, b engine.Backend, x *mat.Dense, ts *constraints.TripletSet, iters int, dgemm float64) (PhasesRow, error) {
	start := time.Now()
	// The polish is off: a run capped at a few iterations would hand over
	// to it at once, and its Hessian products (8D³ flops each and more)
	// would take the profile over, while a full solve polishes only at its
	// end.
	res, err := frob.Learn(ctx, x, ts, frob.MetricOptions{C: 1, MaxIter: iters, NewtonSteps: -1, Restarts: -1, Backend: b})
	row := PhasesRow{Seconds: time.Since(start).Seconds()}
	if res == nil {
		return row, err
	}
	row.Iterations, row.Evaluations = res.Iterations, res.Evaluations
	n, d := x.Dims()
	row.Phases = frobPhaseList(res.Phases, n, d, len(ts.Pairs), dgemm, row.Seconds)
	return row, err
}

// frobPhaseList turns FrobMetric's phase times into Phases, with "other"
// the rest of total.
func frobPhaseList(p frob.Phases, n, d, pairs int, dgemm, total float64) []Phase {
	fn, fd := float64(n), float64(d)
	return withOther(dgemm, total, []Phase{
		{Name: "weighted Gram", Seconds: p.Gram, Count: p.Grams, Flops: 2 * float64(p.GramRows) * fd * fd,
			Work: "2·rows·D² per Gram, rows those of L_W with a nonzero entry (the GEMM Xᵀ(L_W X); the sparse L_W X uncounted)"},
		{Name: "eigendecomposition", Seconds: p.Eig, Count: p.Eigs, Flops: float64(p.Eigs)*4*fd*fd*fd/3 + 2*fd*fd*float64(p.EigPairs),
			Work: fmt.Sprintf("4D³/3 per eigendecomposition (the tridiagonal reduction) + 2D² per eigenvector returned (back-transformation); %d of them full, for the Newton polish", p.FullEigs)},
		{Name: "embedding", Seconds: p.Embed, Count: p.Embeds, Flops: 2 * fn * fd * float64(p.EmbedCols),
			Work: "2·N·D·r per embedding Z = X·V√Λ of width r"},
		{Name: "pair forms", Seconds: p.Pairs, Count: p.PairPasses, Flops: 3 * float64(pairs) * float64(p.EmbedCols),
			Work: "3·P·r per pass over the P distinct pairs in Z (memory-bound)"},
		{Name: "Hessian products", Seconds: p.Hessian, Count: p.HessianProducts,
			Flops: 2*float64(p.HessianRows)*fd*fd + float64(p.HessianProducts)*(8*fd*fd*fd+2*fn*fd*fd+4*float64(pairs)*fd),
			Work:  "per product of the Newton polish: 2·rows·D² (Gram) + 8D³ (four D×D rotations) + 2·N·D² + 4·P·D (pair quadratic forms); Jacobi diagonals timed, not counted"},
	})
}

// boostPhases runs BoostMetric for iters terms on the eigensolver path eig
// and returns its phases.
func boostPhases(ctx context.Context, b engine.Backend, x *mat.Dense, ts *constraints.TripletSet, iters int, dgemm float64, eig boost.EigMethod) (PhasesRow, error) {
	start := time.Now()
	res, err := boost.BoostMetric(ctx, x, ts, boost.Options{Loss: boost.Exp, Mode: boost.Stagewise, Iters: iters, Eig: eig, Precision: boost.PrecisionDouble, Backend: b})
	row := PhasesRow{Seconds: time.Since(start).Seconds()}
	if res == nil {
		return row, err
	}
	row.Iterations = res.Iterations
	n, d := x.Dims()
	row.Phases = boostPhaseList(res.Phases, n, d, len(ts.Pairs), dgemm, row.Seconds)
	return row, err
}

// boostPhaseList turns BoostMetric's phase times into Phases, with
// "other" the rest of total.
func boostPhaseList(p boost.Phases, n, d, pairs int, dgemm, total float64) []Phase {
	fn, fd := float64(n), float64(d)
	eig := Phase{Name: "leading eigenpair", Seconds: p.Eig, Count: p.Eigs}
	if p.Products > 0 {
		eig.Flops = 4 * fn * fd * float64(p.Products)
		eig.Work = "4·N·D per Lanczos operator product (X·v and Xᵀ·w; L_W uncounted)"
	} else {
		eig.Flops = float64(p.Eigs) * 4 * fd * fd * fd / 3
		eig.Work = "4D³/3 per dense eigensolve (the tridiagonal reduction)"
	}
	return withOther(dgemm, total, []Phase{
		{Name: "weighted Gram", Seconds: p.Gram, Count: p.Grams, Flops: 2 * float64(p.GramRows) * fd * fd,
			Work: "2·rows·D² per Gram, rows those of L_W with a nonzero entry (dense path only)"},
		eig,
		{Name: "margins", Seconds: p.Margins, Count: p.MarginPasses, Flops: float64(p.MarginPasses) * (2*fn*fd + 3*float64(pairs)),
			Work: "2·N·D (z = X·v) + 3·P (pair forms) per term"},
		{Name: "weights", Seconds: p.Weights, Count: p.MarginPasses, Work: "line search over the margins (exponentials): no flop bound"},
	})
}

// withOther fills every phase's bound and fraction at the rate dgemm and
// appends "other", the part of total outside the phases.
func withOther(dgemm, total float64, ps []Phase) []Phase {
	sum := 0.0
	for i := range ps {
		p := &ps[i]
		sum += p.Seconds
		p.Bound, p.Fraction = math.NaN(), math.NaN()
		if p.Flops > 0 && dgemm > 0 {
			p.Bound = p.Flops / dgemm
			if p.Seconds > 0 {
				p.Fraction = p.Bound / p.Seconds
			}
		}
	}
	return append(ps, Phase{Name: "other", Seconds: total - sum, Bound: math.NaN(), Fraction: math.NaN(),
		Work: "the rest of the solve: quasi-Newton or line-search bookkeeping, refinements, allocation"})
}

// Markdown writes the report as a page for docs/.
func (r *PhasesReport) Markdown(w io.Writer) error {
	var b strings.Builder
	cmd := "psdlearn bench --suite phases --md docs/phases.md"
	if r.MaxDim > 0 {
		cmd = fmt.Sprintf("psdlearn bench --suite phases --max-size %d --md docs/phases.md", r.MaxDim)
	}
	fmt.Fprintf(&b, "# Where the time goes at large input dimensions\n\nThis page is generated by `%s`; do not edit it by hand.\n\n", cmd)
	fmt.Fprintf(&b, "Protocol: %s. Backend %s; machine: %s. Each phase: its wall time, how often it ran, its time per run, and the fraction of a large DGEMM's rate it reaches — the least flops the phase needs (column \"work\") at the DGEMM rate measured on the machine for this width, over its time. A fraction near 1 leaves little to gain on that phase without doing less work; a small one says the phase runs far from the machine's rate (memory-bound, BLAS-2 or sequential).\n", r.Protocol, r.Backend, r.Machine)
	for _, row := range r.Rows {
		fmt.Fprintf(&b, "\n## %s, D = %d\n\n", row.Solver, row.Dim)
		if row.Error != "" {
			fmt.Fprintf(&b, "Stopped with an error: %s.\n\n", row.Error)
		}
		fmt.Fprintf(&b, "N = %d, %d triplets over %d pairs; %s s for %d iterations", row.N, row.Triplets, row.Pairs, fig2Num(row.Seconds), row.Iterations)
		if row.Evaluations > 0 {
			fmt.Fprintf(&b, " (%d dual evaluations)", row.Evaluations)
		}
		fmt.Fprintf(&b, "; DGEMM %.1f Gflop/s.\n\n", row.DGEMMGflops)
		b.WriteString("| phase | s | share | runs | s per run | fraction of DGEMM rate | work |\n|---|---:|---:|---:|---:|---:|---|\n")
		for _, p := range row.Phases {
			per := math.NaN()
			if p.Count > 0 {
				per = p.Seconds / float64(p.Count)
			}
			share := math.NaN()
			if row.Seconds > 0 {
				share = p.Seconds / row.Seconds
			}
			count := "—"
			if p.Count > 0 {
				count = fmt.Sprint(p.Count)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", p.Name, fig2Num(p.Seconds), fig2Pct(share)+"%", count, fig2Num(per), fig2Num(p.Fraction), p.Work)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
