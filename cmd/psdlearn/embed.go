package main

import (
	"bufio"
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/algos/mvu"
	"github.com/psdlearn/psdlearn/algos/sdp"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/distributed"
	"github.com/psdlearn/psdlearn/internal/npy"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/mpi"
	"gonum.org/v1/gonum/mat"
)

func init() {
	register(command{
		name:    "embed",
		summary: "embed data by approximate maximum variance unfolding (mvu)",
		run:     runEmbed,
	})
}

// embedSummary is the JSON output of psdlearn embed.
type embedSummary struct {
	Algo        string    `json:"algo"`
	Backend     string    `json:"backend"`
	Data        string    `json:"data"`
	Method      string    `json:"method"`
	N           int       `json:"n"`
	InputDim    int       `json:"input_dim"`
	Dims        int       `json:"dims"`
	K           int       `json:"k"`
	Sigma       jsonFloat `json:"sigma"`
	Constraints string    `json:"constraints"`
	// GapTol and FeasTol are the tolerances of the certificate Converged
	// answers (the options' or MVU's defaults).
	GapTol      jsonFloat `json:"gap_tol"`
	FeasTol     jsonFloat `json:"feas_tol"`
	Edges       int       `json:"edges"`
	Iterations  int       `json:"iterations"`
	Evaluations int       `json:"evaluations"`
	// OperatorProducts counts the sparse eigensolvers' products with
	// C + Â (zero on the dense path), over the whole run.
	OperatorProducts int    `json:"operator_products"`
	Eigensolver      string `json:"eigensolver"`
	// Converged is the certificate: RelativeGap ≤ the gap tolerance and
	// MaxRelativeViolation ≤ the feasibility tolerance.
	Converged            bool      `json:"converged"`
	RelativeGap          jsonFloat `json:"relative_gap"`
	MaxRelativeViolation jsonFloat `json:"max_relative_violation"`
	// Repaired reports that the embedding comes from the primal repair of
	// the final dual point (sdp.Solution.Repaired), not from X(u) itself.
	Repaired bool `json:"repaired"`
	// Ranks is the number of MPI processes (1 outside mpirun).
	Ranks int `json:"ranks"`
	// RelaxIterations is the part of Iterations spent on the inequality
	// relaxation that starts the equality solve.
	RelaxIterations int         `json:"relax_iterations"`
	TrainSeconds    jsonFloat   `json:"train_seconds"`
	Objective       jsonFloat   `json:"objective"`
	DualObjective   jsonFloat   `json:"dual_objective"`
	DualityGap      jsonFloat   `json:"duality_gap"`
	MaxViolation    jsonFloat   `json:"max_violation"`
	EdgeError       jsonFloat   `json:"edge_error_mean"`
	EdgeErrorMax    jsonFloat   `json:"edge_error_max"`
	VarianceTop     jsonFloat   `json:"variance_top"`
	Eigenvalues     []jsonFloat `json:"eigenvalues"`
	Reason          string      `json:"reason"`
	Out             string      `json:"out,omitempty"`
	Plot            string      `json:"plot,omitempty"`
	// Model is --model, the learned Gram matrix saved as a kernel model,
	// and GramRank its rank (the columns of its factor).
	Model     string    `json:"model,omitempty"`
	GramRank  int       `json:"gram_rank,omitempty"`
	PeakRSSMB jsonFloat `json:"peak_rss_mb"`
}

// embedFlags are the options of psdlearn embed, as given and parsed.
type embedFlags struct {
	algo, dataSpec, labelCol, out, plot, backend, method, modelOut, eigensolver string
	k, dims, iters, relaxIters                                                  int
	sigma, penalty, gapTol, feasTol                                             float64
	standardize, inequalities, shiftInvert                                      bool
	seed                                                                        uint64

	// Parsed by checkEmbedFlags.
	m      sdp.Method
	solver sdp.Eigensolver
}

func runEmbed(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "embed")
	var f embedFlags
	defineEmbedFlags(fs, &f)
	rules := []flagRule{{"relax-iters", "mvu with equalities (--inequalities=false)", func() bool { return !f.inequalities }}}
	annotateFlagRules(fs, rules)
	if err := parseFlags(fs, "embed", args); err != nil {
		return err
	}
	if err := checkEmbedFlags(env, fs, &f, rules); err != nil {
		return err
	}
	b, err := resolveBackend(f.backend)
	if err != nil {
		return err
	}
	in, err := loadEmbedInput(env, f)
	if err != nil {
		return err
	}
	defer in.close()
	if err := checkKernelOut("embed", f.modelOut, in.n); err != nil {
		return err
	}
	prog := newProgress(env).withCap(cmp.Or(f.iters, sdp.DefaultMaxIter))
	e := psdlearn.MVU{Options: mvu.Options{
		K: f.k, Sigma: f.sigma, Dims: f.dims, Equalities: !f.inequalities, Penalty: f.penalty, RelaxIter: f.relaxIters,
		SDP: sdp.Options{Method: f.m, MaxIter: f.iters, GapTol: f.gapTol, FeasTol: f.feasTol, Backend: b, Seed: f.seed,
			Progress: prog.event, Eigensolver: f.solver, NoShiftInvert: !f.shiftInvert},
	}}
	start := time.Now()
	emb, err := in.embed(ctx, e)
	if err != nil || in.rank != 0 {
		return err
	}
	sum := embedSummaryOf(f, b.Name(), in, emb, time.Since(start).Seconds())
	if err := writeEmbedOutputs(env, f, e, in, emb, &sum); err != nil {
		return err
	}
	if sol := emb.Solution; !sol.Certified {
		fmt.Fprintf(env.stderr, "psdlearn: warning: embed: not converged (%s): relative gap %.3g, largest relative violation %.3g\n", sol.Reason, sol.RelGap, sol.MaxViolation)
	}
	sum.PeakRSSMB = jsonFloat(peakRSSMB())
	if env.json {
		return emitJSON(env, sum)
	}
	w := env.stdout
	if f.out == stdoutName {
		// stdout holds the coordinates: the summary goes to stderr.
		if env.quiet {
			return nil
		}
		w = env.stderr
	}
	printEmbedSummary(w, f, sum)
	return nil
}

// defineEmbedFlags defines the flags of embed on fs.
func defineEmbedFlags(fs *flag.FlagSet, f *embedFlags) {
	fs.StringVar(&f.algo, "algo", "mvu", "embedding algorithm: mvu")
	fs.StringVar(&f.dataSpec, "data", "", "data SPEC: file.csv, file.libsvm, idx:IMAGES:LABELS, builtin:NAME, swissroll:N[:SEED], or - (CSV on standard input)")
	labelColFlag(fs, &f.labelCol)
	noLabelsFlag(fs, "--out then has no label column and --plot one colour")
	fs.IntVar(&f.k, "k", mvu.DefaultK, "number of nearest neighbours whose distances are preserved")
	fs.Float64Var(&f.sigma, "sigma", 0, "σ of the Frobenius perturbation, in units of the mean squared neighbour distance (larger is closer to exact MVU; the value needed grows like N²); 0 chooses max(1e5, a tenth of the geodesic estimate of the unfolded top eigenvalue)")
	fs.IntVar(&f.dims, "dims", mvu.DefaultDims, "embedding dimension")
	fs.StringVar(&f.out, "out", "", "write the coordinates to FILE.npy (NumPy array, no labels) or, for any other name, CSV with labels (- for standard output)")
	fs.StringVar(&f.modelOut, "model", "", "save the learned Gram matrix X = F·Fᵀ (all its rank, not only --dims) as a kernel model file, or as the n×n matrix when the name ends in .npy")
	fs.StringVar(&f.plot, "plot", "", "write a scatter plot of the first two coordinates to this PNG file")
	fs.StringVar(&f.backend, "backend", "", "numerical backend: native|go (default: $PSDLEARN_BACKEND or native when built with cgo)")
	fs.StringVar(&f.method, "method", "auto", "negative part: dense (dense eigensolver), sparse (Lanczos or --eigensolver block), auto")
	fs.StringVar(&f.eigensolver, "eigensolver", "lanczos", "sparse method's eigensolver: lanczos (ARPACK, one start vector) | block (LOBPCG warm-started from the previous evaluation's block; see docs/algorithms/sdp-mvu.md)")
	fs.IntVar(&f.iters, "iters", 0, fmt.Sprintf("maximum L-BFGS-B iterations (0: %d)", sdp.DefaultMaxIter))
	fs.IntVar(&f.relaxIters, "relax-iters", 0, "with equalities: at most this many of the iterations go to the inequality relaxation that starts the solve (0: half, -1: none)")
	fs.Float64Var(&f.penalty, "penalty", 0, "soften the distance constraints with this per-unit penalty (0: hard)")
	fs.Float64Var(&f.gapTol, "gap-tol", 0, fmt.Sprintf("stop at this relative duality gap (0: MVU's default, %g)", mvu.DefaultGapTol))
	fs.Float64Var(&f.feasTol, "feas-tol", 0, fmt.Sprintf("and this largest distance violation relative to 1 + d² in units of the mean d² (0: MVU's default, %g)", mvu.DefaultFeasTol))
	fs.BoolVar(&f.inequalities, "inequalities", true, "neighbour distances may shrink (⟨A,X⟩ ≤ d²), the FrobMetric paper's form, which certifies; --inequalities=false keeps them exactly (the original MVU: slower, and on a rigid graph it may stop without a certificate)")
	fs.BoolVar(&f.shiftInvert, "shift-invert", true, "sparse method: Lanczos on (C + Â + sI)⁻¹ through a sparse factorization (far fewer products); false runs it on C + Â itself (under mpirun: every product split by rows)")
	fs.BoolVar(&f.standardize, "standardize", false, "standardise features first")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed (sparse eigensolver start)")
}

// checkEmbedFlags checks the flags of embed against one another and
// parses the method and the eigensolver.
func checkEmbedFlags(env *cmdEnv, fs *flag.FlagSet, f *embedFlags, rules []flagRule) error {
	if f.algo != "mvu" {
		return usagef("embed: unknown --algo %q (available: mvu)", f.algo)
	}
	if f.dataSpec == "" {
		return usagef("embed: --data is required")
	}
	chosen := "mvu --inequalities=false"
	if f.inequalities {
		chosen = "mvu --inequalities"
	}
	if err := checkFlagRules(fs, "embed", chosen, rules); err != nil {
		return err
	}
	switch {
	case f.out == stdoutName && env.json:
		return usagef("embed: --out - writes the coordinates to standard output, where --json writes its summary: give --out a file name")
	case f.dims < 1:
		return usagef("embed: --dims %d: want at least 1", f.dims)
	case f.modelOut == stdoutName:
		return usagef("embed: --model - is not supported: give --model a file name")
	case f.k < 1:
		return usagef("embed: --k %d: want at least 1 neighbour", f.k)
	case f.iters < 0:
		return usagef("embed: --iters %d: want a positive limit, or 0 for the default", f.iters)
	case f.relaxIters < -1:
		return usagef("embed: --relax-iters %d: want ≥ 0, or -1 for none", f.relaxIters)
	case f.sigma < 0 || math.IsNaN(f.sigma) || math.IsInf(f.sigma, 0):
		return usagef("embed: --sigma %v: want a finite σ > 0, or 0 to choose it", f.sigma)
	case !(f.gapTol >= 0 && f.gapTol < 1) || !(f.feasTol >= 0 && f.feasTol < 1):
		return usagef("embed: --gap-tol %v, --feas-tol %v: want values in [0, 1) (0: the default)", f.gapTol, f.feasTol)
	case f.penalty < 0 || math.IsNaN(f.penalty) || math.IsInf(f.penalty, 0):
		return usagef("embed: --penalty %v: want a finite value ≥ 0", f.penalty)
	case f.plot != "" && f.dims < 2:
		return usagef("embed: --plot needs --dims ≥ 2")
	}
	methods := map[string]sdp.Method{"auto": sdp.Auto, "dense": sdp.Dense, "sparse": sdp.Sparse}
	solvers := map[string]sdp.Eigensolver{"lanczos": sdp.Lanczos, "block": sdp.Block}
	var ok bool
	if f.m, ok = methods[f.method]; !ok {
		return usagef("embed: unknown --method %q (dense, sparse, auto)", f.method)
	}
	if f.solver, ok = solvers[f.eigensolver]; !ok {
		return usagef("embed: unknown --eigensolver %q (lanczos, block)", f.eigensolver)
	}
	return nil
}

// embedInput is the data embed runs on: the rows in one process, or this
// rank's rows under mpirun (distributed.MVU).
type embedInput struct {
	d        *data.Dataset   // the outputs' labels (and, in one process, the data)
	dataInfo *model.DataInfo // the data's description for --model
	x        *mat.Dense      // the preprocessed rows (one process)
	rows     *distributed.Rows
	comm     mpi.Comm
	close    func()
	n, dim   int
	ranks    int
	rank     int
}

// loadEmbedInput loads --data and standardises it (--standardize): in one
// process, or, under mpirun (embed_mpi.go), this rank's rows.
func loadEmbedInput(env *cmdEnv, f embedFlags) (*embedInput, error) {
	var prep func(*mat.Dense) (*mat.Dense, error)
	if f.standardize {
		prep = func(x *mat.Dense) (*mat.Dense, error) {
			s, err := data.FitStandardizer(x)
			if err != nil {
				return nil, err
			}
			return s.Apply(x)
		}
	}
	if mpi.Launched() {
		return loadEmbedRows(env, f, prep)
	}
	d, err := loadData(f.dataSpec, f.labelCol)
	if err != nil {
		return nil, err
	}
	in := &embedInput{d: d, x: d.X, close: func() {}, ranks: 1, dataInfo: model.DescribeData(f.dataSpec, d.X, d.Y, d.Classes)}
	if prep != nil {
		if in.x, err = prep(in.x); err != nil {
			return nil, err
		}
	}
	in.n, in.dim = d.X.Dims()
	return in, nil
}

// embed runs e on the input: Embed in one process, distributed.MVU under
// mpirun.
func (in *embedInput) embed(ctx context.Context, e psdlearn.MVU) (*mvu.Embedding, error) {
	if in.rows == nil {
		return e.Embed(ctx, in.x)
	}
	emb, y, err := distributed.MVU(ctx, in.comm, in.rows, e.Options)
	if err != nil {
		return nil, mpiDataError("embed", err)
	}
	in.d = &data.Dataset{Name: in.rows.Name, Y: y, Classes: in.rows.Classes}
	return emb, nil
}

// embedSummaryOf is the summary of an embedding.
func embedSummaryOf(f embedFlags, backend string, in *embedInput, emb *mvu.Embedding, seconds float64) embedSummary {
	sol := emb.Solution
	eMean, eMax := edgeErrors(emb)
	var tr, top float64
	for i, v := range emb.Eigenvalues {
		tr += v
		if i < f.dims {
			top += v
		}
	}
	cons := "equalities"
	if f.inequalities {
		cons = "inequalities"
	}
	relaxIterations := 0
	if emb.Relaxation != nil {
		relaxIterations = emb.Relaxation.Iterations
	}
	return embedSummary{
		Algo: "mvu", Backend: backend, Data: f.dataSpec, Method: sol.Method.String(),
		N: in.n, InputDim: in.dim, Dims: f.dims, K: f.k, Sigma: jsonFloat(emb.Sigma), Constraints: cons,
		GapTol: jsonFloat(emb.GapTol), FeasTol: jsonFloat(emb.FeasTol),
		Edges: len(emb.Edges), Iterations: emb.Iterations, Evaluations: emb.Evaluations, RelaxIterations: relaxIterations,
		TrainSeconds: jsonFloat(seconds), Objective: jsonFloat(sol.Primal), DualObjective: jsonFloat(sol.Dual),
		DualityGap: jsonFloat(sol.RelGap), MaxViolation: jsonFloat(sol.MaxViolation),
		EdgeError: jsonFloat(eMean), EdgeErrorMax: jsonFloat(eMax), VarianceTop: jsonFloat(top / tr),
		Eigenvalues: jsonFloats(emb.Eigenvalues[:min(len(emb.Eigenvalues), 10)]), Reason: sol.Reason,
		Out: f.out, Plot: f.plot, OperatorProducts: emb.OperatorProducts, Eigensolver: f.solver.String(),
		Converged: sol.Certified, RelativeGap: jsonFloat(sol.RelGap), MaxRelativeViolation: jsonFloat(sol.MaxViolation),
		Repaired: sol.Repaired, Ranks: in.ranks,
	}
}

// writeEmbedOutputs writes --out, --model and --plot.
func writeEmbedOutputs(env *cmdEnv, f embedFlags, e psdlearn.MVU, in *embedInput, emb *mvu.Embedding, sum *embedSummary) error {
	switch {
	case f.out != "" && npy.IsNPY(f.out):
		if err := npy.WriteFile(f.out, emb.Coords); err != nil {
			return fmt.Errorf("embed: %w", err)
		}
	case f.out != "":
		if err := writeEmbedding(env, f.out, emb.Coords, in.d); err != nil {
			return err
		}
	}
	if f.modelOut != "" {
		m, err := e.Model(emb)
		if err != nil {
			return fmt.Errorf("embed: --model: %w", err)
		}
		m.Classes, m.Provenance.Data = in.d.Classes, in.dataInfo
		m.Info["data"], m.Info["standardize"] = f.dataSpec, f.standardize
		if err := writeKernelOut(f.modelOut, m, nil); err != nil {
			return fmt.Errorf("embed: %w", err)
		}
		sum.Model, sum.GramRank = f.modelOut, m.Kernel.Rank()
	}
	if f.plot != "" {
		return plotEmbedding(f.plot, emb.Coords, in.d, fmt.Sprintf("MVU of %s (k=%d, σ=%g)", in.d.Name, f.k, emb.Sigma))
	}
	return nil
}

// printEmbedSummary prints the text summary of an embedding.
func printEmbedSummary(w io.Writer, f embedFlags, sum embedSummary) {
	fmt.Fprintf(w, "mvu on %s: %d points, %d → %d dimensions, k = %d, σ = %g, %d %s (%s backend, %s)\n",
		f.dataSpec, sum.N, sum.InputDim, f.dims, f.k, sum.Sigma, sum.Edges, sum.Constraints, sum.Backend, sum.Method)
	fmt.Fprintf(w, "  %d iterations (%d on the inequality relaxation), %d evaluations, %.2fs (%s)\n", sum.Iterations, sum.RelaxIterations, sum.Evaluations, sum.TrainSeconds, sum.Reason)
	fmt.Fprintf(w, "  objective %.8g, dual %.8g, relative gap %.3g, max violation %.3g\n", sum.Objective, sum.DualObjective, sum.DualityGap, sum.MaxViolation)
	fmt.Fprintf(w, "  neighbour squared distances: mean relative error %.4g, max %.4g\n", sum.EdgeError, sum.EdgeErrorMax)
	fmt.Fprintf(w, "  variance in the top %d dimensions: %.4f; eigenvalues %.4g\n", f.dims, sum.VarianceTop, sum.Eigenvalues)
	if f.out != "" && f.out != stdoutName {
		fmt.Fprintf(w, "  coordinates written to %s\n", f.out)
	}
	if f.plot != "" {
		fmt.Fprintf(w, "  plot written to %s\n", f.plot)
	}
	if sum.Model != "" {
		fmt.Fprintf(w, "  Gram matrix (rank %d) written to %s\n", sum.GramRank, sum.Model)
	}
}

// edgeErrors returns the mean and largest relative error |d̂² − d²|/d² of
// the constrained neighbour distances in the learned Gram matrix.
func edgeErrors(emb *mvu.Embedding) (mean, worst float64) {
	rel := emb.EdgeErrors()
	for _, r := range rel {
		mean += r
		worst = math.Max(worst, r)
	}
	if len(rel) > 0 {
		mean /= float64(len(rel))
	}
	return mean, worst
}

// writeEmbedding writes the coordinates as CSV — y1, …, yd, label (no label
// under --no-labels) — to path, or to stdout for "-".
func writeEmbedding(env *cmdEnv, path string, y *mat.Dense, d *data.Dataset) error {
	f, err := createOutput(env, path)
	if err != nil {
		return fmt.Errorf("embed: %w", err)
	}
	w := bufio.NewWriter(f)
	n, c := y.Dims()
	for j := 0; j < c; j++ {
		if j > 0 {
			w.WriteByte(',')
		}
		fmt.Fprintf(w, "y%d", j+1)
	}
	if cur.noLabels {
		w.WriteByte('\n')
	} else {
		fmt.Fprintln(w, ",label")
	}
	for i := 0; i < n; i++ {
		for j := 0; j < c; j++ {
			if j > 0 {
				w.WriteByte(',')
			}
			w.WriteString(strconv.FormatFloat(y.At(i, j), 'g', 10, 64))
		}
		if cur.noLabels {
			w.WriteByte('\n')
			continue
		}
		w.WriteByte(',')
		label := ""
		if i < len(d.Y) && d.Y[i] >= 0 && d.Y[i] < len(d.Classes) {
			label = d.Classes[d.Y[i]]
		}
		if strings.ContainsAny(label, ",\"\n") {
			label = strconv.Quote(label)
		}
		w.WriteString(label)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("embed: writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("embed: writing %s: %w", path, err)
	}
	return nil
}
