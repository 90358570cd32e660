// Command distrun runs distributed stage-wise BoostMetric or FrobMetric
// (package distributed; -algo boostmetric or frobmetric, with -C), or SimpleNPKL's
// linear loss on the distributed kNN Laplacian (-algo simplenpkl) on a built-in
// data set under mpirun and prints one JSON line per rank: the learned
// metric, the run's iterations and stop (FrobMetric: its evaluations and
// certificate too), and its timings. The
// mpirun tests of package distributed compare them with a one-process run (with
// -out DIR each rank writes its line to DIR/rank-R.json instead: the ranks'
// long lines would interleave on mpirun's stdout); its timings need a
// quiet machine.
//
//	go build -tags mpi -o /tmp/distrun ./distributed/internal/distrun
//	mpirun --allow-run-as-root --oversubscribe -np 2 /tmp/distrun -data letters -rows 2000
//	mpirun --allow-run-as-root --oversubscribe -np 2 /tmp/distrun -data letters -rows 2000 -algo frobmetric -C 10
//	mpirun --allow-run-as-root --oversubscribe -np 2 /tmp/distrun -data letters -rows 3000 -algo simplenpkl -k 5 -pairs 1000
//
// Rank p takes the p-th contiguous block of the first -rows rows (every
// rank parses the embedded CSV and keeps its block: a harness, not a
// loader for data larger than one machine).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/algos/frob"
	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/distributed"
	_ "github.com/psdlearn/psdlearn/engine/backends"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// Report is one rank's output line.
type Report struct {
	Rank, Size    int
	Rows, Offset  int
	Triplets      int // anchored at this rank's rows
	Halo          int
	Iterations    int
	Stop          string
	Scale         float64
	Objective     float64   // FrobMetric: the primal value of the certificate
	Matrix        []float64 // D×D, row-major, in the units of the data
	TripletsSec   float64   // distributed.Triplets, wall clock
	BoostSec      float64   // distributed.BoostMetric or distributed.FrobMetric, wall clock
	PerIterMillis float64   // BoostSec / max(Iterations, 1)
	// FrobMetric only: dual evaluations (Hessian products of the polish
	// included), the certificate, and BoostSec per evaluation.
	Evaluations   int
	Dual, Gap     float64
	RelGap        float64
	Certified     bool
	PerEvalMillis float64
	Rounds        int // working-set rounds (-working-set on|auto)
	// Time in, number of and float64s sent by the collectives of
	// distributed.BoostMetric (the time includes waiting for the other ranks).
	CommSec    float64
	CommCalls  int
	CommFloats int
	// SimpleNPKL only: this rank's rows of the Laplacian (CSR arrays), the
	// kernel's eigenvalues, the objective (in Objective), the partition of
	// kernel k-means (seed 1, as many clusters as labels) on the gathered
	// kernel, its pairwise accuracy against the labels, and the times of
	// distributed.Laplacian (LaplacianSec) and distributed.SimpleNPKL (BoostSec).
	LapIndptr, LapInd []int
	LapData           []float64
	Lambda            []float64
	Eigenpairs        int
	OpApplies         int
	Assign            []int
	PairAcc           float64
	LaplacianSec      float64
}

// timedComm counts the collectives of a communicator and the time spent in
// them.
type timedComm struct {
	mpi.Comm
	calls, floats int
	d             time.Duration
}

func (c *timedComm) timed(n int, f func() error) error {
	start := time.Now()
	err := f()
	c.d += time.Since(start)
	c.calls++
	c.floats += n
	return err
}

func (c *timedComm) Barrier() error { return c.timed(0, c.Comm.Barrier) }
func (c *timedComm) AllreduceSum(b []float64) error {
	return c.timed(len(b), func() error { return c.Comm.AllreduceSum(b) })
}
func (c *timedComm) AllreduceMax(b []float64) error {
	return c.timed(len(b), func() error { return c.Comm.AllreduceMax(b) })
}
func (c *timedComm) AllreduceSumScalar(x float64) (v float64, err error) {
	err = c.timed(1, func() error { v, err = c.Comm.AllreduceSumScalar(x); return err })
	return v, err
}
func (c *timedComm) AllreduceMaxScalar(x float64) (v float64, err error) {
	err = c.timed(1, func() error { v, err = c.Comm.AllreduceMaxScalar(x); return err })
	return v, err
}
func (c *timedComm) Bcast(b []float64, root int) error {
	return c.timed(len(b), func() error { return c.Comm.Bcast(b, root) })
}
func (c *timedComm) BcastBytes(b []byte, root int) error {
	return c.timed(len(b)/8, func() error { return c.Comm.BcastBytes(b, root) })
}
func (c *timedComm) Allgatherv(send, recv []float64, counts []int) error {
	return c.timed(len(send), func() error { return c.Comm.Allgatherv(send, recv, counts) })
}

func main() {
	name := flag.String("data", "letters", "built-in data set")
	rows := flag.Int("rows", 2000, "use the first rows (0: all)")
	k := flag.Int("k", 3, "neighbours per point")
	loss := flag.String("loss", "exp", "exp or logistic")
	mode := flag.String("mode", "stagewise", "BoostMetric: stagewise or corrective")
	iters := flag.Int("iters", 0, "iteration limit (0: default)")
	algo := flag.String("algo", "boostmetric", "boostmetric, frobmetric or simplenpkl")
	m := flag.Int("pairs", 1000, "SimpleNPKL: random pair constraints (seed 1)")
	npklRank := flag.Int("rank", 16, "SimpleNPKL: eigenpairs first requested")
	c := flag.Float64("C", 10, "FrobMetric's C")
	wsName := flag.String("working-set", "off", "FrobMetric's working set: auto, on or off")
	out := flag.String("out", "", "write each rank's report to DIR/rank-R.json instead of stdout")
	flag.Parse()
	var err error
	if *algo == "simplenpkl" {
		err = runNPKL(*name, *rows, *k, *m, *npklRank, *c, *out)
	} else {
		err = run(*name, *rows, *k, *loss, *mode, *iters, *algo, *c, *wsName, *out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "distrun:", err)
		mpi.Close()
		os.Exit(1)
	}
	if err := mpi.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "distrun:", err)
		os.Exit(1)
	}
}

func run(name string, rows, k int, lossName, modeName string, iters int, algo string, c float64, wsName, out string) error {
	if algo != "boostmetric" && algo != "frobmetric" {
		return fmt.Errorf("unknown -algo %q", algo)
	}
	comm, err := mpi.Open()
	if err != nil {
		return err
	}
	mode, err := boost.ParseMode(modeName)
	if err != nil {
		return err
	}
	loss, err := boost.ParseLoss(lossName)
	if err != nil {
		return err
	}
	ds, err := datasets.Open(name)
	if err != nil {
		return err
	}
	n, d := ds.X.Dims()
	if rows > 0 && rows < n {
		n = rows
	}
	p, r := comm.Size(), comm.Rank()
	lo, hi := r*n/p, (r+1)*n/p
	var x *mat.Dense
	if hi > lo {
		x = mat.DenseCopyOf(ds.X.Slice(lo, hi, 0, d))
	}
	y := ds.Y[lo:hi]
	ds = nil // keep only the block
	if err := comm.Barrier(); err != nil {
		return err
	}
	start := time.Now()
	sh, err := distributed.Triplets(comm, x, y, k)
	if err != nil {
		return err
	}
	tTrip := time.Since(start)
	if err := comm.Barrier(); err != nil {
		return err
	}
	start = time.Now()
	tc := &timedComm{Comm: comm}
	var rep Report
	var m mat.Symmetric
	if algo == "frobmetric" {
		ws, err := frob.ParseWorkingSet(wsName)
		if err != nil {
			return err
		}
		res, err := distributed.FrobMetric(context.Background(), tc, x, sh, frob.MetricOptions{C: c, MaxIter: iters, WorkingSet: ws})
		if err != nil {
			return err
		}
		m = res.M
		rep = Report{Iterations: res.Iterations, Stop: res.Reason, Scale: res.DataScale, Objective: res.Primal,
			Evaluations: res.Evaluations, Dual: res.Dual, Gap: res.Gap, RelGap: res.RelGap, Certified: res.Certified, Rounds: res.Rounds}
	} else {
		res, err := distributed.BoostMetric(context.Background(), tc, x, sh, boost.Options{Loss: loss, Mode: mode, Iters: iters})
		if err != nil {
			return err
		}
		m = res.Matrix(d)
		rep = Report{Iterations: res.Iterations, Stop: res.Stop.String(), Scale: res.Scale, Objective: res.Objective}
	}
	tBoost := time.Since(start)
	rep.Rank, rep.Size, rep.Rows, rep.Offset, rep.Triplets, rep.Halo = r, p, hi-lo, lo, len(sh.Triplets), len(sh.HaloIndex)
	rep.TripletsSec, rep.BoostSec = tTrip.Seconds(), tBoost.Seconds()
	rep.PerIterMillis = 1e3 * tBoost.Seconds() / float64(max(rep.Iterations, 1))
	if rep.Evaluations > 0 {
		rep.PerEvalMillis = 1e3 * tBoost.Seconds() / float64(rep.Evaluations)
	}
	rep.CommSec, rep.CommCalls, rep.CommFloats = tc.d.Seconds(), tc.calls, tc.floats
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			rep.Matrix = append(rep.Matrix, m.At(i, j))
		}
	}
	return write(rep, out)
}

// write prints rep or writes it to DIR/rank-R.json.
func write(rep Report, out string) error {
	b, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	if out != "" {
		return os.WriteFile(filepath.Join(out, fmt.Sprintf("rank-%d.json", rep.Rank)), b, 0o644)
	}
	fmt.Printf("distrun: %s\n", b)
	return nil
}

// runNPKL builds the kNN Laplacian (k neighbours, union 0/1 graph) with
// distributed.Laplacian, runs distributed.SimpleNPKL (linear loss, B = 1, C = c, m
// random pairs, first rank eigenpairs, PARPACK on the native world) and
// kernel k-means on the gathered kernel. The labels are gathered (n
// floats) because the pairs are drawn from all of them (a harness).
func runNPKL(name string, rows, k, m, rank int, c float64, out string) error {
	comm, err := mpi.Open()
	if err != nil {
		return err
	}
	ds, err := datasets.Open(name)
	if err != nil {
		return err
	}
	n, d := ds.X.Dims()
	if rows > 0 && rows < n {
		n = rows
	}
	p, r := comm.Size(), comm.Rank()
	lo, hi := r*n/p, (r+1)*n/p
	var x *mat.Dense
	if hi > lo {
		x = mat.DenseCopyOf(ds.X.Slice(lo, hi, 0, d))
	}
	yl := make([]float64, hi-lo)
	for i := range yl {
		yl[i] = float64(ds.Y[lo+i])
	}
	ds = nil // keep only the block
	if err := comm.Barrier(); err != nil {
		return err
	}
	start := time.Now()
	lr, err := distributed.Laplacian(comm, x, k, sparse.GraphOptions{})
	if err != nil {
		return err
	}
	tLap := time.Since(start)
	yf := make([]float64, n)
	if err := comm.Allgatherv(yl, yf, lr.Counts); err != nil {
		return err
	}
	y := make([]int, n)
	classes := map[int]bool{}
	for i, v := range yf {
		y[i] = int(v)
		classes[y[i]] = true
	}
	pairs, err := constraints.RandomPairs(y, m, 1)
	if err != nil {
		return err
	}
	if err := comm.Barrier(); err != nil {
		return err
	}
	start = time.Now()
	res, err := distributed.SimpleNPKL(context.Background(), comm, lr.L, lr.Counts, pairs,
		npkl.Options{Loss: npkl.Linear, B: 1, C: c, Rank: rank, Seed: 1}, nil)
	if err != nil {
		return err
	}
	tNPKL := time.Since(start)
	kern, err := res.Kernel(comm, lr.Counts)
	if err != nil {
		return err
	}
	km, err := eval.KernelKMeans(context.Background(), kern, len(classes), eval.KMeansOptions{Seed: 1})
	if err != nil {
		return err
	}
	rep := Report{Rank: r, Size: p, Rows: hi - lo, Offset: lo, Objective: res.Objective,
		LapIndptr: lr.L.Indptr, LapInd: lr.L.Ind, LapData: lr.L.Data, Lambda: res.Values,
		Eigenpairs: res.Eigenpairs, OpApplies: res.OpApplies, Assign: km.Assign,
		PairAcc: eval.PairwiseAccuracy(y, km.Assign), LaplacianSec: tLap.Seconds(), BoostSec: tNPKL.Seconds()}
	return write(rep, out)
}
