package main

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/psdlearn/psdlearn/algos/mvu"
	"github.com/psdlearn/psdlearn/algos/sdp"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/internal/npy"
	"github.com/psdlearn/psdlearn/model"
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
	Algo        string  `json:"algo"`
	Backend     string  `json:"backend"`
	Data        string  `json:"data"`
	Method      string  `json:"method"`
	N           int     `json:"n"`
	InputDim    int     `json:"input_dim"`
	Dims        int     `json:"dims"`
	K           int     `json:"k"`
	Sigma       float64 `json:"sigma"`
	Constraints string  `json:"constraints"`
	Edges       int     `json:"edges"`
	Iterations  int     `json:"iterations"`
	Evaluations int     `json:"evaluations"`
	// OperatorProducts counts the sparse eigensolvers' products with
	// C + Â (zero on the dense path), over the whole run.
	OperatorProducts int    `json:"operator_products"`
	Eigensolver      string `json:"eigensolver"`
	// Converged is the certificate: RelativeGap ≤ the gap tolerance and
	// MaxRelativeViolation ≤ the feasibility tolerance.
	Converged            bool `json:"converged"`
	RelativeGap          any  `json:"relative_gap"`
	MaxRelativeViolation any  `json:"max_relative_violation"`
	// Repaired reports that the embedding comes from the primal repair of
	// the final dual point (sdp.Solution.Repaired), not from X(u) itself.
	Repaired bool `json:"repaired"`
	// Ranks is the number of MPI processes (1 outside mpirun).
	Ranks int `json:"ranks"`
	// RelaxIterations is the part of Iterations spent on the inequality
	// relaxation that starts the equality solve.
	RelaxIterations int       `json:"relax_iterations"`
	TrainSeconds    float64   `json:"train_seconds"`
	Objective       any       `json:"objective"`
	DualObjective   any       `json:"dual_objective"`
	DualityGap      any       `json:"duality_gap"`
	MaxViolation    any       `json:"max_violation"`
	EdgeError       any       `json:"edge_error_mean"`
	EdgeErrorMax    any       `json:"edge_error_max"`
	VarianceTop     any       `json:"variance_top"`
	Eigenvalues     []float64 `json:"eigenvalues"`
	Reason          string    `json:"reason"`
	Out             string    `json:"out,omitempty"`
	Plot            string    `json:"plot,omitempty"`
	// Model is --model, the learned Gram matrix saved as a kernel model,
	// and GramRank its rank (the columns of its factor).
	Model     string  `json:"model,omitempty"`
	GramRank  int     `json:"gram_rank,omitempty"`
	PeakRSSMB float64 `json:"peak_rss_mb"`
}

func runEmbed(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "embed")
	var (
		algo, dataSpec, labelCol, out, plotFile, backendName, method, modelOut, eigensolver string
		k, dims, iters, relaxIters                                                          int
		sigma, penalty, gapTol, feasTol                                                     float64
		standardize, inequalities, shiftInvert                                              bool
		seed                                                                                uint64
	)
	fs.StringVar(&algo, "algo", "mvu", "embedding algorithm: mvu")
	fs.StringVar(&dataSpec, "data", "", "data SPEC: file.csv, file.libsvm, idx:IMAGES:LABELS, builtin:NAME, swissroll:N[:SEED], or - (CSV on standard input)")
	labelColFlag(fs, &labelCol)
	noLabelsFlag(fs, "--out then has no label column and --plot one colour")
	fs.IntVar(&k, "k", mvu.DefaultK, "number of nearest neighbours whose distances are preserved")
	fs.Float64Var(&sigma, "sigma", 0, "σ of the Frobenius perturbation, in units of the mean squared neighbour distance (larger is closer to exact MVU; the value needed grows like N²); 0 chooses max(1e5, a tenth of the geodesic estimate of the unfolded top eigenvalue)")
	fs.IntVar(&dims, "dims", mvu.DefaultDims, "embedding dimension")
	fs.StringVar(&out, "out", "", "write the coordinates to FILE.npy (NumPy array, no labels) or, for any other name, CSV with labels (- for standard output)")
	fs.StringVar(&modelOut, "model", "", "save the learned Gram matrix X = F·Fᵀ (all its rank, not only --dims) as a kernel model file, or as the n×n matrix when the name ends in .npy")
	fs.StringVar(&plotFile, "plot", "", "write a scatter plot of the first two coordinates to this PNG file")
	fs.StringVar(&backendName, "backend", "", "numerical backend: native|go (default: $PSDLEARN_BACKEND or native when built with cgo)")
	fs.StringVar(&method, "method", "auto", "negative part: dense (dense eigensolver), sparse (Lanczos or --eigensolver block), auto")
	fs.StringVar(&eigensolver, "eigensolver", "lanczos", "sparse method's eigensolver: lanczos (ARPACK, one start vector) | block (LOBPCG warm-started from the previous evaluation's block; see docs/eigen-sequences.md)")
	fs.IntVar(&iters, "iters", 0, fmt.Sprintf("maximum L-BFGS-B iterations (0: %d)", sdp.DefaultMaxIter))
	fs.IntVar(&relaxIters, "relax-iters", 0, "with equalities: at most this many of the iterations go to the inequality relaxation that starts the solve (0: half, -1: none)")
	fs.Float64Var(&penalty, "penalty", 0, "soften the distance constraints with this per-unit penalty (0: hard)")
	fs.Float64Var(&gapTol, "gap-tol", 0, fmt.Sprintf("stop at this relative duality gap (0: the solver's default, %g)", sdp.DefaultGapTol))
	fs.Float64Var(&feasTol, "feas-tol", 0, fmt.Sprintf("and this largest relative distance violation (0: %g)", sdp.DefaultFeasTol))
	fs.BoolVar(&inequalities, "inequalities", false, "neighbour distances may shrink (⟨A,X⟩ ≤ d²) instead of being kept")
	fs.BoolVar(&shiftInvert, "shift-invert", true, "sparse method: Lanczos on (C + Â + sI)⁻¹ through a sparse factorization (far fewer products); false runs it on C + Â itself (under mpirun: every product split by rows)")
	fs.BoolVar(&standardize, "standardize", false, "standardise features first")
	fs.Uint64Var(&seed, "seed", 1, "random seed (sparse eigensolver start)")
	rules := []flagRule{{"relax-iters", "mvu with equalities (without --inequalities)", func() bool { return !inequalities }}}
	annotateFlagRules(fs, rules)
	if err := parseFlags(fs, "embed", args); err != nil {
		return err
	}
	if algo != "mvu" {
		return usagef("embed: unknown --algo %q (available: mvu)", algo)
	}
	if dataSpec == "" {
		return usagef("embed: --data is required")
	}
	chosen := "mvu with equalities"
	if inequalities {
		chosen = "mvu --inequalities"
	}
	if err := checkFlagRules(fs, "embed", chosen, rules); err != nil {
		return err
	}
	if out == "-" && env.json {
		return usagef("embed: --out - writes the coordinates to standard output, where --json writes its summary: give --out a file name")
	}
	if dims < 1 {
		return usagef("embed: --dims %d: want at least 1", dims)
	}
	if modelOut == stdoutName {
		return usagef("embed: --model - is not supported: give --model a file name")
	}
	if k < 1 {
		return usagef("embed: --k %d: want at least 1 neighbour", k)
	}
	if iters < 0 {
		return usagef("embed: --iters %d: want a positive limit, or 0 for the default", iters)
	}
	if relaxIters < -1 {
		return usagef("embed: --relax-iters %d: want ≥ 0, or -1 for none", relaxIters)
	}
	if sigma < 0 || math.IsNaN(sigma) || math.IsInf(sigma, 0) {
		return usagef("embed: --sigma %v: want a finite σ > 0, or 0 to choose it", sigma)
	}
	if !(gapTol >= 0 && gapTol < 1) || !(feasTol >= 0 && feasTol < 1) {
		return usagef("embed: --gap-tol %v, --feas-tol %v: want values in [0, 1) (0: the default)", gapTol, feasTol)
	}
	if penalty < 0 || math.IsNaN(penalty) || math.IsInf(penalty, 0) {
		return usagef("embed: --penalty %v: want a finite value ≥ 0", penalty)
	}
	if plotFile != "" && dims < 2 {
		return usagef("embed: --plot needs --dims ≥ 2")
	}
	var m sdp.Method
	switch method {
	case "auto":
		m = sdp.Auto
	case "dense":
		m = sdp.Dense
	case "sparse":
		m = sdp.Sparse
	default:
		return usagef("embed: unknown --method %q (dense, sparse, auto)", method)
	}
	var solver sdp.Eigensolver
	switch eigensolver {
	case "lanczos":
		solver = sdp.Lanczos
	case "block":
		solver = sdp.Block
	default:
		return usagef("embed: unknown --eigensolver %q (lanczos, block)", eigensolver)
	}
	b, err := resolveBackend(backendName)
	if err != nil {
		return err
	}
	// Under mpirun (embed_mpi.go) every rank holds a block of the rows
	// (one file per rank with {rank} in --data), the kNN graph is built
	// across the ranks and the negative parts are computed on PARPACK;
	// the rest of the solve is replicated, and only rank 0 reports and
	// writes.
	comm, closeMPI, err := embedMPI(env, &m, solver)
	if err != nil {
		return err
	}
	defer closeMPI()
	var prep func(*mat.Dense) (*mat.Dense, error)
	if standardize {
		prep = func(x *mat.Dense) (*mat.Dense, error) {
			s, err := data.FitStandardizer(x)
			if err != nil {
				return nil, err
			}
			return s.Apply(x)
		}
	}
	var (
		d        *data.Dataset   // the outputs' labels (and, in one process, the data)
		dataInfo *model.DataInfo // the data's description for --model
		x        *mat.Dense
		sh       *embedShard // under mpirun
		ranks    = 1
		rank     = 0
	)
	if comm == nil {
		if d, err = loadData(dataSpec, labelCol); err != nil {
			return err
		}
		x = d.X
		if prep != nil {
			if x, err = prep(x); err != nil {
				return err
			}
		}
		dataInfo = model.DescribeData(dataSpec, d.X, d.Y, d.Classes)
	} else {
		if sh, err = loadEmbedShard(env, comm, dataSpec, labelCol, k, prep); err != nil {
			return err
		}
		d, dataInfo, ranks, rank = sh.labels, sh.info, comm.Size(), comm.Rank()
	}
	n, inDim := sh.size(x)
	if err := checkKernelOut("embed", modelOut, n); err != nil {
		return err
	}
	budget := iters
	if budget == 0 {
		budget = sdp.DefaultMaxIter
	}
	progress := newProgress(env).withTotal(budget)
	start := time.Now()
	mopt := mvu.Options{
		K: k, Sigma: sigma, Dims: dims, Inequalities: inequalities, Penalty: penalty, RelaxIter: relaxIters,
		SDP: sdp.Options{Method: m, MaxIter: iters, GapTol: gapTol, FeasTol: feasTol, Backend: b, Seed: seed, Progress: progress.event, Eigensolver: solver, NoShiftInvert: !shiftInvert},
	}
	var emb *mvu.Embedding
	if sh == nil {
		emb, err = mvu.Embed(ctx, x, mopt)
	} else {
		mopt.SDP.Eigs = sh.eigs
		emb, err = mvu.EmbedGraph(ctx, n, sh.edges, sh.dist2, mopt)
	}
	if err != nil {
		return err
	}
	if rank != 0 {
		return nil
	}
	elapsed := time.Since(start).Seconds()
	sol := emb.Solution
	sigma = emb.Sigma
	eMean, eMax := edgeErrors(emb)
	var tr, top float64
	for i, v := range emb.Eigenvalues {
		tr += v
		if i < dims {
			top += v
		}
	}
	cons := "equalities"
	if inequalities {
		cons = "inequalities"
	}
	relaxIterations := 0
	if emb.Relaxation != nil {
		relaxIterations = emb.Relaxation.Iterations
	}
	sum := embedSummary{
		Algo: "mvu", Backend: b.Name(), Data: dataSpec, Method: sol.Method.String(),
		N: n, InputDim: inDim, Dims: dims, K: k, Sigma: sigma, Constraints: cons,
		Edges: len(emb.Edges), Iterations: emb.Iterations, Evaluations: emb.Evaluations, RelaxIterations: relaxIterations,
		TrainSeconds: elapsed, Objective: finiteOrNil(sol.Primal), DualObjective: finiteOrNil(sol.Dual),
		DualityGap: finiteOrNil(sol.RelGap), MaxViolation: finiteOrNil(sol.MaxViolation),
		EdgeError: finiteOrNil(eMean), EdgeErrorMax: finiteOrNil(eMax), VarianceTop: finiteOrNil(top / tr),
		Eigenvalues: emb.Eigenvalues[:min(len(emb.Eigenvalues), 10)], Reason: sol.Reason,
		Out: out, Plot: plotFile,
		OperatorProducts: emb.OperatorProducts, Eigensolver: solver.String(),
		Converged: sol.Certified, RelativeGap: finiteOrNil(sol.RelGap), MaxRelativeViolation: finiteOrNil(sol.MaxViolation),
		Repaired: sol.Repaired, Ranks: ranks,
	}
	if out != "" {
		if npy.IsNPY(out) {
			if err := npy.WriteFile(out, emb.Coords); err != nil {
				return fmt.Errorf("embed: %w", err)
			}
		} else if err := writeEmbedding(env, out, emb.Coords, d); err != nil {
			return err
		}
	}
	if modelOut != "" {
		m, err := embedKernelModel(emb, d.Classes, dataInfo, b.Name(), seed, cmp.Or(gapTol, sdp.DefaultGapTol), map[string]any{
			"data": dataSpec, "k": k, "sigma": sigma, "dims": dims, "inequalities": inequalities, "penalty": penalty,
			"standardize": standardize, "method": sol.Method.String(), "iterations": emb.Iterations, "seed": seed,
			"objective": sol.Primal, "dual_objective": sol.Dual, "duality_gap": sol.RelGap, "max_violation": sol.MaxViolation,
			"backend": b.Name(),
		})
		if err != nil {
			return fmt.Errorf("embed: --model: %w", err)
		}
		if err := writeKernelOut(modelOut, m, nil); err != nil {
			return fmt.Errorf("embed: %w", err)
		}
		sum.Model, sum.GramRank = modelOut, m.Kernel.Rank()
	}
	if plotFile != "" {
		if err := plotEmbedding(plotFile, emb.Coords, d, fmt.Sprintf("MVU of %s (k=%d, σ=%g)", d.Name, k, sigma)); err != nil {
			return err
		}
	}
	if !sol.Certified {
		fmt.Fprintf(env.stderr, "psdlearn: warning: embed: not converged (%s): relative gap %.3g, largest relative violation %.3g\n", sol.Reason, sol.RelGap, sol.MaxViolation)
	}
	sum.PeakRSSMB = peakRSSMB()
	if env.json {
		return emitJSON(env, sum)
	}
	w := env.stdout
	if out == "-" {
		// stdout holds the coordinates: the summary goes to stderr.
		if env.quiet {
			return nil
		}
		w = env.stderr
	}
	fmt.Fprintf(w, "mvu on %s: %d points, %d → %d dimensions, k = %d, σ = %g, %d %s (%s backend, %s)\n",
		dataSpec, sum.N, sum.InputDim, dims, k, sigma, sum.Edges, cons, sum.Backend, sum.Method)
	fmt.Fprintf(w, "  %d iterations (%d on the inequality relaxation), %d evaluations, %.2fs (%s)\n", sum.Iterations, sum.RelaxIterations, sum.Evaluations, elapsed, sol.Reason)
	fmt.Fprintf(w, "  objective %.8g, dual %.8g, relative gap %.3g, max violation %.3g\n", sol.Primal, sol.Dual, sol.RelGap, sol.MaxViolation)
	fmt.Fprintf(w, "  neighbour squared distances: mean relative error %.4g, max %.4g\n", eMean, eMax)
	fmt.Fprintf(w, "  variance in the top %d dimensions: %.4f; eigenvalues %.4g\n", dims, top/tr, sum.Eigenvalues)
	if out != "" && out != "-" {
		fmt.Fprintf(w, "  coordinates written to %s\n", out)
	}
	if plotFile != "" {
		fmt.Fprintf(w, "  plot written to %s\n", plotFile)
	}
	if sum.Model != "" {
		fmt.Fprintf(w, "  Gram matrix (rank %d) written to %s\n", sum.GramRank, sum.Model)
	}
	return nil
}

// embedKernelModel returns the Gram matrix X = F·Fᵀ that MVU learned (F
// the n×r factor of the SDP solution) as a kernel model: the thin SVD
// F = U·Σ·Wᵀ gives X = U·Σ²·Uᵀ, so V = U and λ = σ² (descending) at a cost
// of O(n·r²), no n×n matrix formed. Columns with σ = 0 are dropped. Like
// the other learned kernels it is transductive: MVU defines no embedding
// of new points.
func embedKernelModel(emb *mvu.Embedding, classes []string, dataInfo *model.DataInfo, backend string, seed uint64, gapTol float64, info map[string]any) (*model.Model, error) {
	f := emb.Solution.Factor
	if f == nil {
		return nil, fmt.Errorf("the solution has no factor")
	}
	var svd mat.SVD
	if !svd.Factorize(f, mat.SVDThin) {
		return nil, fmt.Errorf("SVD of the Gram factor failed")
	}
	sv := svd.Values(nil)
	var u mat.Dense
	svd.UTo(&u)
	r := 0
	for r < len(sv) && sv[r] > 0 {
		r++
	}
	if r == 0 {
		return nil, fmt.Errorf("the learned Gram matrix is zero")
	}
	n, _ := u.Dims()
	v := mat.DenseCopyOf(u.Slice(0, n, 0, r))
	lam := make([]float64, r)
	for i := range lam {
		lam[i] = sv[i] * sv[i]
	}
	k, err := model.NewKernel(v, lam)
	if err != nil {
		return nil, err
	}
	sol := emb.Solution
	cert := &model.Certificate{Converged: sol.Certified, Gap: sol.RelGap, Tolerance: gapTol, Reason: sol.Reason}
	prov := model.NewProvenance(backend, seed)
	prov.Data = dataInfo
	return &model.Model{Kind: model.KindKernel, Algo: "mvu", Kernel: k, Classes: classes, Info: info, Certificate: cert, Provenance: prov}, nil
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
