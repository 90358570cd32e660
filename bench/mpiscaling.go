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
	"sync"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/progress"
)

// MPIScaling is the report of MPIScalingSection: `psdlearn train` run by
// mpirun with 1 and 2 ranks, one thread each, on the same protocol.
type MPIScaling struct {
	Machine string          `json:"machine"`
	Runs    int             `json:"runs"`
	Rows    []MPIScalingRow `json:"rows"`
	// Copies are, per protocol, two one-rank runs at once against one
	// alone: the machine's throughput on that very workload.
	Copies []MPICopies `json:"copies"`
	// Ceilings are the kernels of the training phases, one worker against
	// two.
	Ceilings []Ceiling `json:"ceilings"`
	// Notes are lines about what could not be measured.
	Notes []string `json:"notes,omitempty"`
}

// MPIScalingRow is one protocol at one number of ranks: the medians over
// the runs of the training phase and of the whole command, the speed-up of
// the training phase over one rank, and what the run learned.
type MPIScalingRow struct {
	Case         string  `json:"case"`
	Ranks        int     `json:"ranks"`
	TrainSeconds float64 `json:"train_seconds"`
	TotalSeconds float64 `json:"total_seconds"`
	Speedup      float64 `json:"train_speedup"`
	// Iterations are the solves' iterations (of the last run); the
	// per-iteration speed-up compares training seconds per iteration,
	// since ranks can take another greedy path than one process.
	Iterations       int       `json:"iterations"`
	IterationSpeedup float64   `json:"iteration_speedup"`
	TestError        float64   `json:"test_error"`
	ChosenC          float64   `json:"chosen_c"`
	Objective        float64   `json:"objective"`
	RankPeakRSSMB    []float64 `json:"rank_peak_rss_mb"`
}

// MPICopies is one protocol's one-rank run alone and as one of two copies
// run at once: the training phase's medians and the throughput two copies
// get out of the machine, 2·Alone/AtOnce. A two-rank run does the same
// work as one rank, split, on about the same memory (every rank holds the
// data): this ratio is the speed-up it would reach if every part of the
// training were split evenly and no rank waited for another.
type MPICopies struct {
	Case          string  `json:"case"`
	AloneSeconds  float64 `json:"alone_train_seconds"`
	AtOnceSeconds float64 `json:"at_once_train_seconds"`
	Throughput    float64 `json:"throughput"`
}

// mpiCase is one train command line of the scaling report.
type mpiCase struct {
	name string
	args []string
}

// mpiCases returns the scaling report's protocols and the dimension they
// train in: Fashion-MNIST (as the fashion cases of the algos suite) with
// FrobMetric's default C list and with BoostMetric when its files are
// found, else (or with quick, a MaxSize run) letters on its fixed split,
// standardised. BoostMetric prices in double precision (--precision
// double) on one rank as on several: the sharded pricing is in double, and
// one process would price Fashion-MNIST in single precision.
func mpiCases(quick bool) (cases []mpiCase, dim int, note string) {
	dir := FashionDir
	if d := os.Getenv("PSDLEARN_FASHION_DIR"); d != "" {
		dir = d
	}
	f := fashionFiles(dir)
	_, err := os.Stat(f[0])
	if quick || err != nil {
		if !quick {
			note = fmt.Sprintf("Fashion-MNIST not found (%s): letters instead", f[0])
		}
		args := []string{"--data", "builtin:letters", "--split", "rows:10500,4500,5000", "--standardize"}
		return []mpiCase{
			{"letters, frobmetric", append([]string{"--algo", "frobmetric"}, args...)},
			{"letters, boostmetric", append([]string{"--algo", "boostmetric", "--precision", "double"}, args...)},
		}, 16, note
	}
	p := DefaultFashion
	args := []string{"--data", "idx:" + f[0] + ":" + f[1], "--test", "idx:" + f[2] + ":" + f[3],
		"--split", fmt.Sprintf("rows:%d,%d", p.Train, p.Val), "--standardize", "--pca", fmt.Sprint(p.PCA), "--k", fmt.Sprint(p.K)}
	return []mpiCase{
		{"fashion-mnist, frobmetric", append([]string{"--algo", "frobmetric"}, args...)},
		{"fashion-mnist, boostmetric", append([]string{"--algo", "boostmetric", "--precision", "double"}, args...)},
	}, p.PCA, ""
}

// MPIScalingSection runs every protocol of mpiCases with mpirun -np 1 and
// -np 2 (GOMAXPROCS=1 and OPENBLAS_NUM_THREADS=1 per rank) and as two
// one-rank runs at once, o.Runs rounds of the three (3 by default, 1 for a
// quick run with MaxSize > 0), with the binary that runs it, which must be
// built with -tags mpi; then measures the ceilings of the training phases'
// kernels. Run it alone on the machine: the figures are wall times.
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
	cases, dim, note := mpiCases(o.MaxSize > 0)
	rep := &MPIScaling{Machine: Machine(), Runs: runs}
	if note != "" {
		rep.Notes = append(rep.Notes, note)
	}
	for _, c := range cases {
		rows, atOnce, err := mpiScalingCase(ctx, mpirun, exe, c, runs, o)
		if err != nil {
			return nil, err
		}
		one, onePerIter := rows[0].TrainSeconds, rows[0].TrainSeconds/float64(max(rows[0].Iterations, 1))
		for _, row := range rows {
			perIter := row.TrainSeconds / float64(max(row.Iterations, 1))
			row.Speedup, row.IterationSpeedup = one/row.TrainSeconds, onePerIter/perIter
			rep.Rows = append(rep.Rows, row)
		}
		rep.Copies = append(rep.Copies, MPICopies{Case: c.name, AloneSeconds: one, AtOnceSeconds: atOnce, Throughput: 2 * one / atOnce})
	}
	rep.Ceilings = ceilings(engine.Or(o.Backend).BLAS(), dim)
	return rep, nil
}

// mpiScalingCase runs case c runs times in rounds, each round one rank,
// two ranks and two one-rank copies at once, so that a drift of the
// machine's speed falls on all three alike. It returns the medians of the
// one- and two-rank rows (speed-ups unset) and of the copies' mean
// training phase.
func mpiScalingCase(ctx context.Context, mpirun, exe string, c mpiCase, runs int, o ReportOptions) ([]MPIScalingRow, float64, error) {
	rows := []MPIScalingRow{{Case: c.name, Ranks: 1}, {Case: c.name, Ranks: 2}}
	train, total := make([][]float64, len(rows)), make([][]float64, len(rows))
	var copies []float64
	for r := 0; r < runs; r++ {
		for i := range rows {
			row := &rows[i]
			sum, err := mpiTrain(ctx, mpirun, exe, c, row.Ranks, nil, o)
			if err != nil {
				return nil, 0, fmt.Errorf("%s, %d ranks: %w", c.name, row.Ranks, err)
			}
			train[i], total[i] = append(train[i], sum.Phases.Train), append(total[i], sum.Total)
			row.TestError, row.ChosenC, row.Objective = deref(sum.TestErr), deref(sum.ChosenC), deref(sum.Objective)
			row.Iterations = 0
			for _, s := range sum.Phases.Solves {
				row.Iterations += s.Iterations
			}
			row.RankPeakRSSMB = sum.RSS
			if len(row.RankPeakRSSMB) == 0 && sum.PeakRSS != nil {
				row.RankPeakRSSMB = []float64{*sum.PeakRSS}
			}
			if o.Progress != nil {
				o.Progress(progress.Event{Algorithm: "mpi", Message: fmt.Sprintf("%s, %d ranks, run %d: train %.2f s, total %.2f s", c.name, row.Ranks, r+1, sum.Phases.Train, sum.Total)})
			}
		}
		t, err := copiesSeconds(ctx, mpirun, exe, c, o)
		if err != nil {
			return nil, 0, fmt.Errorf("%s, two copies at once: %w", c.name, err)
		}
		copies = append(copies, t)
		if o.Progress != nil {
			o.Progress(progress.Event{Algorithm: "mpi", Message: fmt.Sprintf("%s, two one-rank copies at once, run %d: train %.2f s on average", c.name, r+1, t)})
		}
	}
	for i := range rows {
		rows[i].TrainSeconds, rows[i].TotalSeconds = medianOf(train[i]), medianOf(total[i])
	}
	return rows, medianOf(copies), nil
}

// copiesSeconds runs two one-rank copies of case c at once and returns
// their mean training phase. The copies are not bound to cores: each
// mpirun would bind its one rank to the first core, both to the same one.
func copiesSeconds(ctx context.Context, mpirun, exe string, c mpiCase, o ReportOptions) (float64, error) {
	var sums [2]trainSummary
	var errs [2]error
	var wg sync.WaitGroup
	for i := range sums {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sums[i], errs[i] = mpiTrain(ctx, mpirun, exe, c, 1, []string{"--bind-to", "none"}, o)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		return 0, err
	}
	return (sums[0].Phases.Train + sums[1].Phases.Train) / 2, nil
}

// trainSummary is what the scaling report reads of train's JSON summary.
type trainSummary struct {
	Total     float64   `json:"total_seconds"`
	TestErr   *float64  `json:"test_error"`
	ChosenC   *float64  `json:"chosen_c"`
	Objective *float64  `json:"objective"`
	RSS       []float64 `json:"rank_peak_rss_mb"`
	PeakRSS   *float64  `json:"peak_rss_mb"`
	Phases    struct {
		Train  float64 `json:"train"`
		Solves []struct {
			Iterations int `json:"iterations"`
		} `json:"solves"`
	} `json:"phases"`
}

// mpiTrain runs case c once under mpirun (with the options opts) with np
// ranks, one thread each.
func mpiTrain(ctx context.Context, mpirun, exe string, c mpiCase, np int, opts []string, o ReportOptions) (trainSummary, error) {
	var sum trainSummary
	args := append([]string{"--allow-run-as-root", "--oversubscribe", "-np", fmt.Sprint(np), "-x", "GOMAXPROCS=1", "-x", "OPENBLAS_NUM_THREADS=1"}, opts...)
	args = append(args, exe, "train", "--json", "--quiet", "--seed", fmt.Sprint(max(o.Seed, 1)))
	if o.Backend != nil {
		args = append(args, "--backend", o.Backend.Name())
	}
	cmd := exec.CommandContext(ctx, mpirun, append(args, c.args...)...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "OPENBLAS_NUM_THREADS=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return sum, fmt.Errorf("%w: %s", err, lastLine(stderr.String()))
	}
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		return sum, fmt.Errorf("the summary: %w", err)
	}
	return sum, nil
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
	fmt.Fprintf(&b, "the median of %d run(s) taken in rounds (one rank, two ranks, two one-rank runs at once) so that a drift of the machine's speed falls on all alike; the speed-up is that of the training phase over one rank, in all and per iteration (the solves' iterations of the last run: ranks sum in another order than one process, and a greedy learner can take another path). Machine: %s.\n\n", r.Runs, r.Machine)
	b.WriteString("| protocol | ranks | training s | whole command s | training speed-up | iterations | speed-up per iteration | test error % | C | peak RSS per rank (MB) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, row := range r.Rows {
		rss := make([]string, len(row.RankPeakRSSMB))
		for i, v := range row.RankPeakRSSMB {
			rss[i] = fmt.Sprintf("%.0f", v)
		}
		c := "–"
		if !math.IsNaN(row.ChosenC) {
			c = fmt.Sprintf("%g", row.ChosenC)
		}
		fmt.Fprintf(&b, "| %s | %d | %.2f | %.2f | %.2f× | %d | %.2f× | %.2f | %s | %s |\n", row.Case, row.Ranks, row.TrainSeconds, row.TotalSeconds, row.Speedup,
			row.Iterations, row.IterationSpeedup, 100*row.TestError, c, strings.Join(rss, ", "))
	}
	if len(r.Copies) > 0 {
		b.WriteString("\n## What the machine gives two ranks\n\n")
		b.WriteString("Two one-rank runs of the same protocol started at once, against one alone (the medians of their training phases): ")
		b.WriteString("the throughput is 2 × alone / at once, what the two cores together get through of this very workload. ")
		b.WriteString("A two-rank run does the same work split in two, on about the same memory (every rank holds the data): ")
		b.WriteString("this throughput is the speed-up it would reach if every part of the training were split evenly and no rank waited for another.\n\n")
		b.WriteString("| protocol | alone, training s | two at once, training s | throughput |\n|---|---:|---:|---:|\n")
		for _, c := range r.Copies {
			fmt.Fprintf(&b, "| %s | %.2f | %.2f | %.2f× |\n", c.Case, c.AloneSeconds, c.AtOnceSeconds, c.Throughput)
		}
	}
	if len(r.Ceilings) > 0 {
		b.WriteString("\nThe training phases' kernels, one worker alone against two at once (each a thread with single-threaded BLAS; the best of three trials):\n\n")
		b.WriteString("| kernel | unit | one worker, per s | two workers, per s | two over one |\n|---|---|---:|---:|---:|\n")
		for _, c := range r.Ceilings {
			fmt.Fprintf(&b, "| %s | %s | %.3g | %.3g | %.2f× |\n", c.Kernel, c.Detail, c.One, c.Two, c.Speedup)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "\n- %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
