package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strings"

	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/internal/sdpa"
	"github.com/psdlearn/psdlearn/lapack"
	"github.com/psdlearn/psdlearn/progress"
)

// SDPRow is one problem of the SDP reference section: psdlearn's solve and
// CSDP's solve of the same semidefinite program.
type SDPRow struct {
	// Problem names the solver compared ("mvu", "npkl linear", "npkl
	// sqhinge", "psdboost"), Data the data set, Size its number of points,
	// Detail the parameters, Constraints the number of SDP constraints.
	Problem     string `json:"problem"`
	Data        string `json:"data"`
	Size        int    `json:"size"`
	Detail      string `json:"detail"`
	Constraints int    `json:"constraints"`
	// Objective is psdlearn's objective in the units of the comparison
	// (see each problem), Seconds its wall time, Iterations its iterations
	// and Certified whether it met its own certificate.
	Objective  float64 `json:"psdlearn_objective"`
	Seconds    float64 `json:"psdlearn_seconds"`
	Iterations int     `json:"psdlearn_iterations"`
	Certified  bool    `json:"psdlearn_certified"`
	// RefObjective is CSDP's primal objective, RefDual its dual, RefSeconds
	// the csdp process's wall time, RefIterations its interior-point
	// iterations and RefStatus its return status.
	RefObjective  float64 `json:"csdp_objective"`
	RefDual       float64 `json:"csdp_dual"`
	RefSeconds    float64 `json:"csdp_seconds"`
	RefIterations int     `json:"csdp_iterations"`
	RefStatus     string  `json:"csdp_status"`
	// Difference is RefObjective − Objective (signed so that a positive
	// value means psdlearn's objective is worse), RelDiff that relative to
	// |RefObjective|, Bound the largest difference the certificates allow
	// (the σ bound for MVU), and Within whether the difference respects it.
	Difference float64 `json:"difference"`
	RelDiff    float64 `json:"relative_difference"`
	Bound      float64 `json:"bound"`
	Within     bool    `json:"within_bound"`
	// Ratio is RefSeconds / Seconds; Claim the paper's claim it answers.
	Ratio float64 `json:"time_ratio"`
	// CPUSeconds and RefCPUSeconds are the CPU times (user and system, all
	// threads) of psdlearn's solve and of the csdp process, and CPURatio
	// theirs: on a shared machine the better measure of the work.
	CPUSeconds    float64 `json:"psdlearn_cpu_seconds"`
	RefCPUSeconds float64 `json:"csdp_cpu_seconds"`
	CPURatio      float64 `json:"cpu_ratio"`
	Claim         string  `json:"paper_claim,omitempty"`
	// Metrics holds the problem's other figures (accuracies, σ, gaps).
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// Note explains a row that could not be measured or compared.
	Note string `json:"note,omitempty"`
}

// setRef records CSDP's solve in the row.
func (r *SDPRow) setRef(s *sdpa.Solution) {
	r.RefObjective, r.RefDual, r.RefSeconds, r.RefIterations, r.RefStatus = s.Primal, s.Dual, s.Seconds, s.Iterations, s.Status.String()
	if r.Seconds > 0 {
		r.Ratio = s.Seconds / r.Seconds
	}
	r.RefCPUSeconds = s.CPUSeconds
	if r.CPUSeconds > 0 {
		r.CPURatio = s.CPUSeconds / r.CPUSeconds
	}
	if s.Status != sdpa.Success {
		r.Note = strings.TrimSpace(r.Note + " csdp did not report success: " + s.Status.String())
	}
}

// SDPOptions configures SDPReference.
type SDPOptions struct {
	// Backend runs psdlearn's solvers; nil means engine.Default().
	Backend engine.Backend
	// Seed fixes the generated data and every random choice.
	Seed uint64
	// MaxSize skips the problems with more points (0: no limit).
	MaxSize int
	// MVUSizes and NPKLData override the Swiss-roll sizes (MVUSizes) and
	// the data sets (NPKLReferenceData) compared.
	MVUSizes []int
	NPKLData []string
	// Parts selects the problems by name ("mvu", "npkl", "psdboost");
	// empty runs them all.
	Parts []string
	// PlotDir, if not empty, receives the PSDBoost convergence figure.
	PlotDir string
	// Progress, if non-nil, receives an event per finished problem.
	Progress progress.Func
}

// SDPReport is the SDP reference section: every problem solved by psdlearn
// and by CSDP.
type SDPReport struct {
	// CSDP is the path of the csdp binary, or empty when it is not
	// installed; Skipped then says so, and the rows carry psdlearn's side
	// only.
	CSDP    string   `json:"csdp"`
	Skipped string   `json:"skipped,omitempty"`
	Machine string   `json:"machine"`
	Rows    []SDPRow `json:"rows"`
	// PSDBoost holds the dual value per column-generation iteration of the
	// Figure 1 problem and CSDP's optimum.
	PSDBoost *PSDBoostCurve `json:"psdboost,omitempty"`
	Plots    []string       `json:"plots,omitempty"`
}

// MVUSizes are the Swiss-roll sizes of the MVU comparison.
var MVUSizes = []int{200, 500, 1000, 2000}

// SDPReference runs the SDP reference section: MVU on Swiss rolls of
// MVUSizes points, NPKL with the linear and the squared hinge loss on
// iris, wine, glass and sonar, and PSDBoost on the protocol of its paper's
// Figure 1, each solved by psdlearn and, when csdp is installed, by CSDP
// on the same SDP. Without csdp the report says so in Skipped and holds
// psdlearn's side only.
func SDPReference(ctx context.Context, opt SDPOptions) (*SDPReport, error) {
	b := engine.Or(opt.Backend)
	rep := &SDPReport{Machine: Machine()}
	path, err := sdpa.CSDPPath()
	withCSDP := err == nil
	if withCSDP {
		rep.CSDP = path
	} else {
		rep.Skipped = "csdp is not installed (apt-get install coinor-csdp): CSDP's side of every row is skipped"
	}
	want := func(part string) bool {
		if len(opt.Parts) == 0 {
			return true
		}
		for _, p := range opt.Parts {
			if p == part {
				return true
			}
		}
		return false
	}
	emit := func(r SDPRow) {
		rep.Rows = append(rep.Rows, r)
		if opt.Progress != nil {
			opt.Progress(progress.Event{Algorithm: "bench sdp", Objective: math.NaN(), Gap: math.NaN(),
				Message: fmt.Sprintf("%s %s: psdlearn %.4gs, csdp %.4gs, relative difference %.3g", r.Problem, r.Data, r.Seconds, r.RefSeconds, r.RelDiff)})
		}
	}
	if want("mvu") {
		sizes := opt.MVUSizes
		if sizes == nil {
			sizes = MVUSizes
		}
		for _, n := range sizes {
			if opt.MaxSize > 0 && n > opt.MaxSize {
				continue
			}
			r, err := mvuReference(ctx, b, n, opt.Seed, withCSDP)
			if err != nil {
				return rep, err
			}
			emit(r)
		}
	}
	if want("npkl") {
		names := opt.NPKLData
		if names == nil {
			names = NPKLReferenceData
		}
		for _, name := range names {
			if n := npklSize(name); opt.MaxSize > 0 && n > opt.MaxSize {
				continue
			}
			for _, loss := range []npkl.Loss{npkl.Linear, npkl.SquaredHinge} {
				r, err := npklReference(ctx, b, name, loss, opt.Seed, withCSDP)
				if err != nil {
					return rep, err
				}
				emit(r)
			}
		}
	}
	if want("psdboost") && (opt.MaxSize == 0 || fig1Points <= opt.MaxSize) {
		rows, curve, files, err := psdBoostReference(ctx, b, opt.Seed, withCSDP, opt.PlotDir)
		if err != nil {
			return rep, err
		}
		rep.PSDBoost = curve
		rep.Plots = append(rep.Plots, files...)
		for _, r := range rows {
			emit(r)
		}
	}
	return rep, nil
}

// Markdown writes the report as markdown tables.
func (r *SDPReport) Markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## psdlearn against CSDP\n\n")
	if r.Skipped != "" {
		fmt.Fprintf(&b, "%s.\n\n", r.Skipped)
	}
	fmt.Fprintf(&b, "Machine: %s. Times are wall-clock seconds of one run each; the ratio is CSDP's over psdlearn's, the CPU ratio the same for their CPU times (user and system, all threads). psdlearn runs OpenBLAS single-threaded and parallelises with goroutines; csdp runs with OpenBLAS's own threads, as installed, and with the OpenBLAS kernels psdlearn uses.\n\n", r.Machine)
	byProblem := map[string][]SDPRow{}
	var order []string
	for _, row := range r.Rows {
		if _, ok := byProblem[row.Problem]; !ok {
			order = append(order, row.Problem)
		}
		byProblem[row.Problem] = append(byProblem[row.Problem], row)
	}
	sort.SliceStable(order, func(i, j int) bool { return problemRank(order[i]) < problemRank(order[j]) })
	for _, p := range order {
		rows := byProblem[p]
		fmt.Fprintf(&b, "### %s\n\n", p)
		if text := problemText[strings.Fields(p)[0]]; text != "" {
			fmt.Fprintf(&b, "%s\n\n", text)
		}
		if c := rows[0].Claim; c != "" {
			fmt.Fprintf(&b, "The paper's claim: %s.\n\n", c)
		}
		extra := strings.HasPrefix(p, "npkl")
		fmt.Fprintf(&b, "| data | n | constraints | detail | psdlearn objective | CSDP objective | rel. difference | allowed | within | psdlearn s | CSDP s | ratio | CPU ratio | certified | CSDP status |")
		if extra {
			b.WriteString(" accuracy psdlearn | accuracy CSDP |")
		}
		fmt.Fprintf(&b, "\n|---|---:|---:|---|---:|---:|---:|---:|:---:|---:|---:|---:|---:|:---:|---|")
		if extra {
			b.WriteString("---:|---:|")
		}
		b.WriteString("\n")
		for _, row := range rows {
			ref := row.RefStatus != ""
			allowed := "—"
			if ref && row.RefObjective != 0 {
				allowed = fmt.Sprintf("%.3g", row.Bound/math.Abs(row.RefObjective))
			}
			fmt.Fprintf(&b, "| %s | %d | %d | %s | %.8g | %s | %s | %s | %s | %.3g | %s | %s | %s | %s | %s |",
				row.Data, row.Size, row.Constraints, row.Detail, row.Objective,
				orDash(ref, "%.8g", row.RefObjective), orDash(ref, "%.3g", row.RelDiff),
				allowed, yesNo(row.Within, ref), row.Seconds,
				orDash(ref, "%.3g", row.RefSeconds), orDash(row.Ratio > 0, "%.3g", row.Ratio), orDash(row.CPURatio > 0, "%.3g", row.CPURatio),
				yesNo(row.Certified, true), orDash(ref, "%s", row.RefStatus))
			if extra {
				acc, ok := row.Metrics["csdp_accuracy"]
				fmt.Fprintf(&b, " %.4f | %s |", row.Metrics["psdlearn_accuracy"], orDash(ok, "%.4f", acc))
			}
			b.WriteString("\n")
		}
		for _, row := range rows {
			if row.Note != "" {
				fmt.Fprintf(&b, "\n- %s: %s", row.Data, row.Note)
			}
		}
		b.WriteString("\n\n")
	}
	if missing := r.missing(); len(missing) > 0 {
		fmt.Fprintf(&b, "Not measured in this report (a run with --max-size below them, or a merge of runs without them): %s.\n\n", strings.Join(missing, "; "))
	}
	for _, p := range r.Plots {
		fmt.Fprintf(&b, "![%s](%s)\n\n", filepath.Base(p), plotLink(p))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// missing lists the problems of the full section (MVUSizes,
// NPKLReferenceData with both losses, PSDBoost's Figure 1) that have no
// row in the report.
func (r *SDPReport) missing() []string {
	has := func(problem string, match func(SDPRow) bool) bool {
		for _, row := range r.Rows {
			if row.Problem == problem && match(row) {
				return true
			}
		}
		return false
	}
	var out []string
	for _, n := range MVUSizes {
		if !has("mvu", func(row SDPRow) bool { return row.Size == n }) {
			out = append(out, fmt.Sprintf("mvu on the %d-point Swiss roll", n))
		}
	}
	for _, name := range NPKLReferenceData {
		for _, loss := range []npkl.Loss{npkl.Linear, npkl.SquaredHinge} {
			if !has("npkl "+loss.String(), func(row SDPRow) bool { return row.Data == name }) {
				out = append(out, fmt.Sprintf("npkl %s on %s", loss, name))
			}
		}
	}
	if !has("psdboost", func(SDPRow) bool { return true }) {
		out = append(out, "psdboost on its Figure 1 protocol")
	}
	return out
}

// problemText says, per problem, what is compared and what the columns
// "allowed" (relative to CSDP's objective) and "within" mean.
var problemText = map[string]string{
	"mvu": "psdlearn: mvu.Embed with its defaults (the inequality form, relative gap 1e-4, violation 1e-3) at the paper's σ = 1e5; " +
		"CSDP: the exact SDP, max tr X under the same distance inequalities, centred. Objective: tr X, in units of the mean squared neighbour distance. " +
		"Allowed: the σ bound, ‖X_e‖²_F/(2σ) plus psdlearn's duality gap, by which the regularised optimum may fall below the exact one. " +
		"Within: the difference lies inside that bound, and psdlearn's objective exceeds CSDP's by no more than its violations, weighted by CSDP's multipliers, allow.",
	"npkl": "psdlearn: SimpleNPKL on one draw of the paper's constraints (k = 5, r = 0.7, B = 1, C = 1); objective tr(LK) + C·Σ ℓ(T_ij K_ij), minimised. " +
		"CSDP cannot take the capacity tr(K²) ≤ B (a second-order cone in the n(n+1)/2 entries of K; its exact semidefinite lift adds as many constraints), " +
		"so it solves the same SDP with the capacity in its trace form, tr K ≤ √(Bn), which SimpleNPKL's kernel also satisfies: CSDP's optimum must lie below psdlearn's objective (within), " +
		"and the difference is what the Frobenius capacity costs. Allowed: psdlearn's own certificate (0 for the linear loss's closed form; for the squared hinge, its objective minus its best lower bound J(K_t, α_{t−1})). " +
		"The accuracies are the pairwise clustering accuracies of kernel k-means on either kernel.",
	"psdboost": "psdlearn: PSDBoost as the paper runs it (one column per iteration, no smoothing, 1,000 iterations at most), and with psdlearn's defaults (16 columns per iteration, dual smoothing); CSDP: the paper's SDP (3) on the same triplets and C. " +
		"Objective: the margin objective ρ − C·Σξ, maximised; psdlearn's is the restricted master's π, a lower bound. Allowed: PSDBoost's certificate λmax(Â(u)) − π, which bounds the optimum from above. " +
		"Within: CSDP's optimum lies in [π, π + λmax(Â(u)) − π].",
}

func problemRank(p string) int {
	for i, q := range []string{"mvu", "npkl linear", "npkl sqhinge", "psdboost"} {
		if p == q {
			return i
		}
	}
	return 99
}

func orDash(ok bool, format string, v any) string {
	if !ok {
		return "—"
	}
	return fmt.Sprintf(format, v)
}

func yesNo(v, known bool) string {
	switch {
	case !known:
		return "—"
	case v:
		return "yes"
	}
	return "no"
}

// plotLink is the link to a plot from a markdown page beside the plot's
// directory: the directory's last element and the file name (docs/img/a.png
// is linked as img/a.png from docs/).
func plotLink(path string) string {
	return filepath.ToSlash(filepath.Join(filepath.Base(filepath.Dir(path)), filepath.Base(path)))
}

// csdpOptions are the options of every CSDP run of the report. When
// psdlearn replaced OpenBLAS's pre-AVX fallback kernels in this process
// (lapack.BLASCore), csdp, which loads the same OpenBLAS, gets the same
// kernels through OPENBLAS_CORETYPE: otherwise it would run 4 to 6 times
// slower GEMMs and the ratio would flatter psdlearn.
func csdpOptions(noSolution bool) sdpa.Options {
	o := sdpa.Options{NoSolution: noSolution}
	if c := lapack.BLASCore(); c.Detected != "" {
		o.Env = []string{"OPENBLAS_CORETYPE=" + c.Name}
	}
	return o
}
