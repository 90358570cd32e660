// Command npklbench times distributed SimpleNPKL's operator products on a
// built-in data set (the measurements need a quiet machine; docs/mpi.md
// describes the distributed path, not its timings): every rank builds the whole kNN
// Laplacian (a harness, not a distributed graph builder; its time is
// reported apart), keeps its rows, then times
//
//   - -products bare operator products (distributed.SimpleNPKL's operator: one
//     Allgatherv of x, this rank's rows of L and of the constraints), after
//     a Barrier, the slowest rank's time;
//   - one distributed.SimpleNPKL solve with PARPACK (parpack.For the world) and
//     one with the replicated pure-Go solver (parpack.Go), with their
//     operator products and time per product.
//
// Rank 0 prints one line per measurement.
//
//	go build -tags mpi -o /tmp/npklbench ./distributed/internal/npklbench
//	mpirun --allow-run-as-root --oversubscribe -np 2 /tmp/npklbench -data letters
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/distributed"
	_ "github.com/psdlearn/psdlearn/engine/backends"
	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/parpack"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "npklbench:", err)
		mpi.Close()
		os.Exit(1)
	}
	if err := mpi.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "npklbench:", err)
		os.Exit(1)
	}
}

func run() error {
	name := flag.String("data", "letters", "built-in data set")
	rows := flag.Int("rows", 0, "use the first rows (0: all)")
	knn := flag.Int("k", 5, "neighbours of the kNN graph")
	m := flag.Int("pairs", 2000, "random constraints")
	products := flag.Int("products", 200, "bare operator products to time")
	rank := flag.Int("rank", 16, "eigenpairs first requested")
	flag.Parse()
	comm, err := mpi.Open()
	if err != nil {
		return err
	}
	ds, err := datasets.Open(*name)
	if err != nil {
		return err
	}
	x, y := ds.X, ds.Y
	n, d := x.Dims()
	if *rows > 0 && *rows < n {
		n = *rows
		x, y = mat.DenseCopyOf(x.Slice(0, n, 0, d)), y[:n]
	}
	t0 := time.Now()
	lap, err := npkl.Laplacian(x, *knn, sparse.GraphOptions{}, nil)
	if err != nil {
		return err
	}
	lapSec := time.Since(t0).Seconds()
	pairs, err := constraints.RandomPairs(y, *m, 1)
	if err != nil {
		return err
	}
	p := comm.Size()
	counts := make([]int, p)
	lo := 0
	for r := range counts {
		counts[r] = n / p
		if r < n%p {
			counts[r]++
		}
		if r < comm.Rank() {
			lo += counts[r]
		}
	}
	loc := counts[comm.Rank()]
	mine := distributed.RowBlock(lap, lo, lo+loc)
	say := func(format string, args ...any) {
		if comm.Rank() == 0 {
			fmt.Printf("npklbench: np=%d n=%d: "+format+"\n", append([]any{p, n}, args...)...)
		}
	}
	say("Laplacian %.2f s (every rank, whole), %d nonzeros, %d on rank 0", lapSec, lap.NNZ(), mine.NNZ())

	// Bare products: the operator distributed.SimpleNPKL builds (L rows only here;
	// the m constraints add O(m) per product).
	op := parpack.Gathered(comm, counts, func(yy, xx []float64) {
		mine.MulVec(yy, xx)
	})
	xl := make([]float64, loc)
	yl := make([]float64, loc)
	for i := range xl {
		xl[i] = float64((lo+i)%7) - 3
	}
	for i := 0; i < 10; i++ {
		if err := op.Apply(yl, xl); err != nil {
			return err
		}
	}
	if err := comm.Barrier(); err != nil {
		return err
	}
	t1 := time.Now()
	for i := 0; i < *products; i++ {
		if err := op.Apply(yl, xl); err != nil {
			return err
		}
	}
	sec, err := comm.AllreduceMaxScalar(time.Since(t1).Seconds())
	if err != nil {
		return err
	}
	say("bare operator product %.3f ms (%d products, slowest rank)", 1000*sec/float64(*products), *products)

	for _, s := range []struct {
		name   string
		solver parpack.Solver
	}{{"PARPACK", parpack.For(comm)}, {"Go", parpack.Go}} {
		if err := comm.Barrier(); err != nil {
			return err
		}
		t2 := time.Now()
		res, err := distributed.SimpleNPKL(context.Background(), comm, mine, counts, pairs,
			npkl.Options{Loss: npkl.Linear, B: 1, C: 1, Rank: *rank, Seed: 1}, s.solver)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		sec, err := comm.AllreduceMaxScalar(time.Since(t2).Seconds())
		if err != nil {
			return err
		}
		say("SimpleNPKL %s (%T): rank %d of K, %d eigenpairs, %d products, %.3f s, %.3f ms per product", s.name, s.solver,
			len(res.Values), res.Eigenpairs, res.OpApplies, sec, 1000*sec/float64(res.OpApplies))
	}
	return nil
}
