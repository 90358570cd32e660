package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/progress"
)

// MPIScaling is the report of MPIScalingSection: `psdlearn train` run by
// mpirun with 1 and 2 ranks, one thread each, on the same protocol.
type MPIScaling struct {
	Machine string          `json:"machine"`
	Runs    int             `json:"runs"`
	Rows    []MPIScalingRow `json:"rows"`
	// Notes are lines about what could not be measured.
	Notes []string `json:"notes,omitempty"`
}

// MPIScalingRow is one protocol at one number of ranks: the medians over
// the runs of the training phase and of the whole command, the speed-up of
// the training phase over one rank, and what the run learned.
type MPIScalingRow struct {
	Case          string    `json:"case"`
	Ranks         int       `json:"ranks"`
	TrainSeconds  float64   `json:"train_seconds"`
	TotalSeconds  float64   `json:"total_seconds"`
	Speedup       float64   `json:"train_speedup"`
	TestError     float64   `json:"test_error"`
	ChosenC       float64   `json:"chosen_c"`
	Objective     float64   `json:"objective"`
	RankPeakRSSMB []float64 `json:"rank_peak_rss_mb"`
}

// mpiCase is one train command line of the scaling report.
type mpiCase struct {
	name string
	args []string
}

// mpiCases returns the scaling report's protocols: Fashion-MNIST (as the
// fashion cases of the algos suite) with FrobMetric's default C list and
// with BoostMetric when its files are found, else (or with quick, a
// MaxSize run) letters on its fixed split, standardised. BoostMetric
// prices in double precision (--precision double) on one rank as on
// several: the sharded pricing is in double, and one process would price
// Fashion-MNIST in single precision.
func mpiCases(quick bool) ([]mpiCase, string) {
	dir := FashionDir
	if d := os.Getenv("PSDLEARN_FASHION_DIR"); d != "" {
		dir = d
	}
	f := fashionFiles(dir)
	_, err := os.Stat(f[0])
	if quick || err != nil {
		note := ""
		if !quick {
			note = fmt.Sprintf("Fashion-MNIST not found (%s): letters instead", f[0])
		}
		args := []string{"--data", "builtin:letters", "--split", "rows:10500,4500,5000", "--standardize"}
		return []mpiCase{
			{"letters, frobmetric", append([]string{"--algo", "frobmetric"}, args...)},
			{"letters, boostmetric", append([]string{"--algo", "boostmetric", "--precision", "double"}, args...)},
		}, note
	}
	p := DefaultFashion
	args := []string{"--data", "idx:" + f[0] + ":" + f[1], "--test", "idx:" + f[2] + ":" + f[3],
		"--split", fmt.Sprintf("rows:%d,%d", p.Train, p.Val), "--standardize", "--pca", fmt.Sprint(p.PCA), "--k", fmt.Sprint(p.K)}
	return []mpiCase{
		{"fashion-mnist, frobmetric", append([]string{"--algo", "frobmetric"}, args...)},
		{"fashion-mnist, boostmetric", append([]string{"--algo", "boostmetric", "--precision", "double"}, args...)},
	}, ""
}

// MPIScalingSection runs every protocol of mpiCases with mpirun -np 1 and
// -np 2 (GOMAXPROCS=1 and OPENBLAS_NUM_THREADS=1 per rank), o.Runs times
// each (3 by default, 1 for a quick run with MaxSize > 0), with the binary
// that runs it, which must be built with -tags mpi. Run it alone on the
// machine: the figures are wall times.
func MPIScalingSection(ctx context.Context, o ReportOptions) (Report, error) {
	if err := noCase(o, "mpi"); err != nil {
		return nil, err
	}
	if !mpi.HaveNative {
		return nil, errors.New("the mpi suite runs psdlearn under mpirun: build the binary with -tags mpi")
	}
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		return nil, fmt.Errorf("the mpi suite needs mpirun on PATH: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	runs := o.Runs
	if runs <= 0 {
		runs = 3
		if o.MaxSize > 0 {
			runs = 1
		}
	}
	cases, note := mpiCases(o.MaxSize > 0)
	rep := &MPIScaling{Machine: Machine(), Runs: runs}
	if note != "" {
		rep.Notes = append(rep.Notes, note)
	}
	for _, c := range cases {
		var one float64
		for _, np := range []int{1, 2} {
			row, err := mpiScalingRow(ctx, mpirun, exe, c, np, runs, o)
			if err != nil {
				return nil, fmt.Errorf("%s, %d ranks: %w", c.name, np, err)
			}
			if np == 1 {
				one = row.TrainSeconds
			}
			row.Speedup = one / row.TrainSeconds
			rep.Rows = append(rep.Rows, row)
		}
	}
	return rep, nil
}

// mpiScalingRow runs case c on np ranks runs times and returns the medians.
func mpiScalingRow(ctx context.Context, mpirun, exe string, c mpiCase, np, runs int, o ReportOptions) (MPIScalingRow, error) {
	row := MPIScalingRow{Case: c.name, Ranks: np}
	var train, total []float64
	for r := 0; r < runs; r++ {
		args := []string{"--allow-run-as-root", "--oversubscribe", "-np", fmt.Sprint(np), "-x", "GOMAXPROCS=1", "-x", "OPENBLAS_NUM_THREADS=1",
			exe, "train", "--json", "--quiet", "--seed", fmt.Sprint(max(o.Seed, 1))}
		if o.Backend != nil {
			args = append(args, "--backend", o.Backend.Name())
		}
		cmd := exec.CommandContext(ctx, mpirun, append(args, c.args...)...)
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "OPENBLAS_NUM_THREADS=1")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return row, fmt.Errorf("%w: %s", err, lastLine(stderr.String()))
		}
		var sum struct {
			Total     float64   `json:"total_seconds"`
			TestErr   *float64  `json:"test_error"`
			ChosenC   *float64  `json:"chosen_c"`
			Objective *float64  `json:"objective"`
			RSS       []float64 `json:"rank_peak_rss_mb"`
			PeakRSS   *float64  `json:"peak_rss_mb"`
			Phases    struct {
				Train float64 `json:"train"`
			} `json:"phases"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
			return row, fmt.Errorf("the summary: %w", err)
		}
		train, total = append(train, sum.Phases.Train), append(total, sum.Total)
		row.TestError, row.ChosenC, row.Objective = deref(sum.TestErr), deref(sum.ChosenC), deref(sum.Objective)
		row.RankPeakRSSMB = sum.RSS
		if len(row.RankPeakRSSMB) == 0 && sum.PeakRSS != nil {
			row.RankPeakRSSMB = []float64{*sum.PeakRSS}
		}
		if o.Progress != nil {
			o.Progress(progress.Event{Algorithm: "mpi", Message: fmt.Sprintf("%s, %d ranks, run %d: train %.2f s, total %.2f s", c.name, np, r+1, sum.Phases.Train, sum.Total)})
		}
	}
	row.TrainSeconds, row.TotalSeconds = medianOf(train), medianOf(total)
	return row, nil
}

// deref returns *p, NaN for nil (a null in the JSON).
func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// medianOf returns the median of v (0 for none).
func medianOf(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return median(s)
}

// Markdown writes the report as a page of docs/.
func (r *MPIScaling) Markdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# MPI scaling\n\n")
	b.WriteString("This page is generated by `psdlearn bench --suite mpi --md docs/mpi-scaling.md` (a binary built with `-tags mpi`); do not edit it by hand. ")
	b.WriteString("Each row is `mpirun -np P psdlearn train …` with one thread per rank (`GOMAXPROCS=1`, `OPENBLAS_NUM_THREADS=1`; BoostMetric with `--precision double`, the arithmetic of its sharded pricing), ")
	fmt.Fprintf(&b, "the median of %d run(s); the speed-up is that of the training phase over one rank. Machine: %s.\n\n", r.Runs, r.Machine)
	b.WriteString("| protocol | ranks | training s | whole command s | training speed-up | test error % | C | peak RSS per rank (MB) |\n|---|---:|---:|---:|---:|---:|---:|---|\n")
	for _, row := range r.Rows {
		rss := make([]string, len(row.RankPeakRSSMB))
		for i, v := range row.RankPeakRSSMB {
			rss[i] = fmt.Sprintf("%.0f", v)
		}
		c := "–"
		if !math.IsNaN(row.ChosenC) {
			c = fmt.Sprintf("%g", row.ChosenC)
		}
		fmt.Fprintf(&b, "| %s | %d | %.2f | %.2f | %.2f× | %.2f | %s | %s |\n", row.Case, row.Ranks, row.TrainSeconds, row.TotalSeconds, row.Speedup, 100*row.TestError, c, strings.Join(rss, ", "))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "\n- %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
