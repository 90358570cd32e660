package bench

import (
	"runtime"
	"sync"
	"time"

	"github.com/psdlearn/psdlearn/internal/f64"
	"github.com/psdlearn/psdlearn/lapack"
	"gonum.org/v1/gonum/blas"
)

// Ceiling is how much faster two workers get through a kernel than one on
// this machine: each worker a goroutine on its own OS thread with
// single-threaded BLAS, doing the same amount of work, the two at once.
// A training phase made of these kernels cannot speed up on two ranks by
// more than its kernels do, whatever the distribution.
type Ceiling struct {
	Kernel string `json:"kernel"`
	// Detail says what one unit of the kernel is.
	Detail string `json:"detail"`
	// One and Two are the units per second of one worker alone and of two
	// workers together; Speedup is Two/One.
	One     float64 `json:"one_per_second"`
	Two     float64 `json:"two_per_second"`
	Speedup float64 `json:"speedup"`
}

// ceilings measures the kernels the sharded training phases are made of,
// at the training dimension d: the Gram's DGEMM (XᵀX over 20,000 rows of
// d, single-threaded BLAS), the product with the triplet graph's Laplacian
// (the axpy of a row of X into a row of the product, rows picked at random
// from 50,000: a read-bound stream), and scalar integer work (a
// random-number generator's loop, for what neither the vector units nor
// memory limit). Each is the best of three trials.
func ceilings(impl blas.Float64, d int) []Ceiling {
	if threads := lapack.BLASThreads(); threads != 1 {
		lapack.SetBLASThreads(1)
		defer lapack.SetBLASThreads(threads)
	}
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	const rows, graphRows, pairs = 20000, 50000, 400000
	gram := func() func() {
		x := make([]float64, rows*d)
		for i := range x {
			x[i] = float64(i%7) - 3
		}
		out := make([]float64, d*d)
		return func() { impl.Dgemm(blas.Trans, blas.NoTrans, d, d, rows, 1, x, d, x, d, 0, out, d) }
	}
	laplacian := func() func() {
		x := make([]float64, graphRows*d)
		y := make([]float64, graphRows*d)
		idx := make([]int32, 2*pairs)
		s := uint64(1)
		for i := range idx {
			s = s*6364136223846793005 + 1442695040888963407
			idx[i] = int32((s >> 33) % graphRows)
		}
		return func() {
			for k := 0; k < pairs; k++ {
				a, b := int(idx[2*k])*d, int(idx[2*k+1])*d
				f64.Axpy(0.5, x[a:a+d], y[b:b+d])
			}
		}
	}
	var sink [2]uint64
	scalar := func(w int) func() {
		return func() {
			x := uint64(w + 1)
			for i := 0; i < 50_000_000; i++ {
				x = x*6364136223846793005 + 1442695040888963407
				x ^= x >> 13
			}
			sink[w] = x
		}
	}
	return []Ceiling{
		measureCeiling("dgemm", "the Gram's DGEMM, XᵀX over 20,000 rows (flop)", 2*rows*float64(d*d), func(int) func() { return gram() }),
		measureCeiling("laplacian", "the triplet graph's Laplacian times X, a row axpy per pair (bytes read)", 16*pairs*float64(d), func(int) func() { return laplacian() }),
		measureCeiling("scalar", "an integer generator's loop (steps)", 50_000_000, scalar),
	}
}

// measureCeiling times newWork(w)() for one worker alone and for two at
// once (each on its own locked OS thread), units of work per call, and
// returns the best rates of three trials.
func measureCeiling(kernel, detail string, units float64, newWork func(w int) func()) Ceiling {
	work := []func(){newWork(0), newWork(1)}
	rate := func(p int) float64 {
		var best float64
		for t := 0; t < 3; t++ {
			var wg sync.WaitGroup
			start := make(chan struct{})
			for w := 0; w < p; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					<-start
					work[w]()
				}()
			}
			t0 := time.Now()
			close(start)
			wg.Wait()
			best = max(best, float64(p)*units/time.Since(t0).Seconds())
		}
		return best
	}
	one := rate(1)
	two := rate(2)
	return Ceiling{Kernel: kernel, Detail: detail, One: one, Two: two, Speedup: two / one}
}
