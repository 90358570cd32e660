// Command distrun runs distributed stage-wise BoostMetric or FrobMetric
// (package dist; -algo boostmetric or frobmetric, with -C) on a built-in
// data set under mpirun and prints one JSON line per rank: the learned
// metric, the run's iterations and stop (FrobMetric: its evaluations and
// certificate too), and its timings. The
// mpirun tests of package dist compare them with a one-process run (with
// -out DIR each rank writes its line to DIR/rank-R.json instead: the ranks'
// long lines would interleave on mpirun's stdout),
// and docs/mpi.md's timings come from it.
//
//	go build -tags mpi -o /tmp/distrun ./dist/internal/distrun
//	mpirun --allow-run-as-root --oversubscribe -np 2 /tmp/distrun -data letters -rows 2000
//	mpirun --allow-run-as-root --oversubscribe -np 2 /tmp/distrun -data letters -rows 2000 -algo frobmetric -C 10
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
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/dist"
	_ "github.com/psdlearn/psdlearn/engine/backends"
	"github.com/psdlearn/psdlearn/mpi"
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
	TripletsSec   float64   // dist.Triplets, wall clock
	BoostSec      float64   // dist.BoostMetric or dist.FrobMetric, wall clock
	PerIterMillis float64   // BoostSec / max(Iterations, 1)
	// FrobMetric only: dual evaluations (Hessian products of the polish
	// included), the certificate, and BoostSec per evaluation.
	Evaluations   int
	Dual, Gap     float64
	RelGap        float64
	Certified     bool
	PerEvalMillis float64
	// Time in, number of and float64s sent by the collectives of
	// dist.BoostMetric (the time includes waiting for the other ranks).
	CommSec    float64
	CommCalls  int
	CommFloats int
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
	iters := flag.Int("iters", 0, "iteration limit (0: default)")
	algo := flag.String("algo", "boostmetric", "boostmetric or frobmetric")
	c := flag.Float64("C", 10, "FrobMetric's C")
	out := flag.String("out", "", "write each rank's report to DIR/rank-R.json instead of stdout")
	flag.Parse()
	if err := run(*name, *rows, *k, *loss, *iters, *algo, *c, *out); err != nil {
		fmt.Fprintln(os.Stderr, "distrun:", err)
		mpi.Close()
		os.Exit(1)
	}
	if err := mpi.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "distrun:", err)
		os.Exit(1)
	}
}

func run(name string, rows, k int, lossName string, iters int, algo string, c float64, out string) error {
	if algo != "boostmetric" && algo != "frobmetric" {
		return fmt.Errorf("unknown -algo %q", algo)
	}
	comm, err := mpi.Open()
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
	sh, err := dist.Triplets(comm, x, y, k)
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
		res, err := dist.FrobMetric(context.Background(), tc, x, sh, frob.MetricOptions{C: c, MaxIter: iters, WorkingSet: frob.WorkingSetOff})
		if err != nil {
			return err
		}
		m = res.M
		rep = Report{Iterations: res.Iterations, Stop: res.Reason, Scale: res.DataScale, Objective: res.Primal,
			Evaluations: res.Evaluations, Dual: res.Dual, Gap: res.Gap, RelGap: res.RelGap, Certified: res.Certified}
	} else {
		res, err := dist.BoostMetric(context.Background(), tc, x, sh, boost.Options{Loss: loss, Iters: iters})
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
	b, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	if out != "" {
		return os.WriteFile(filepath.Join(out, fmt.Sprintf("rank-%d.json", r)), b, 0o644)
	}
	fmt.Printf("distrun: %s\n", b)
	return nil
}
