// Command mpibench measures the latency and bandwidth of mpi's Allreduce on
// the world communicator (on a quiet machine; the figures are not kept in
// docs/):
//
//	go build -tags mpi -o /tmp/mpibench ./mpi/internal/mpibench
//	mpirun --allow-run-as-root --oversubscribe -np 2 /tmp/mpibench
//
// For each buffer size every rank runs the same fixed number of
// AllreduceSum calls (a count chosen from the size, not from timings, so
// that all ranks make the same calls), after a warm-up and a Barrier; the
// time of a repetition is the slowest rank's (an AllreduceMax of the
// elapsed times), and rank 0 prints the median over -reps repetitions:
// the time per call and the bandwidth as buffer bytes per second of one call.
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/psdlearn/psdlearn/mpi"
)

func main() {
	reps := flag.Int("reps", 3, "repetitions of each measurement (the median is reported)")
	flag.Parse()
	comm, err := mpi.Open()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := run(comm, *reps); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := mpi.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(comm mpi.Comm, reps int) error {
	if comm.Rank() == 0 {
		fmt.Printf("Allreduce sum of float64, %d ranks, median of %d repetitions\n", comm.Size(), reps)
		fmt.Printf("%10s %8s %14s %12s\n", "bytes", "calls", "time/call", "bandwidth")
	}
	for _, bytes := range []int{8, 1 << 20, 16 << 20} {
		n := bytes / 8
		calls := max(5, min(20000, (256<<20)/bytes))
		buf := make([]float64, n)
		for i := range buf {
			buf[i] = float64(comm.Rank() + i)
		}
		for i := 0; i < max(2, calls/10); i++ { // warm-up: connections, page faults
			if err := comm.AllreduceSum(buf); err != nil {
				return err
			}
		}
		times := make([]float64, reps)
		for k := range times {
			if err := comm.Barrier(); err != nil {
				return err
			}
			start := time.Now()
			for i := 0; i < calls; i++ {
				if err := comm.AllreduceSum(buf); err != nil {
					return err
				}
			}
			t, err := comm.AllreduceMaxScalar(time.Since(start).Seconds() / float64(calls))
			if err != nil {
				return err
			}
			times[k] = t
		}
		sort.Float64s(times)
		med := times[len(times)/2]
		if comm.Rank() == 0 {
			fmt.Printf("%10d %8d %14s %9.2f GB/s   (all: %v)\n", bytes, calls,
				time.Duration(med*1e9).Round(10*time.Nanosecond), float64(bytes)/med/1e9, fmtTimes(times))
		}
	}
	return nil
}

func fmtTimes(ts []float64) []time.Duration {
	out := make([]time.Duration, len(ts))
	for i, t := range ts {
		out[i] = time.Duration(t * 1e9).Round(10 * time.Nanosecond)
	}
	return out
}
