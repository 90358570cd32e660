package mpitest

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"sync"

	"github.com/psdlearn/psdlearn/mpi"
)

// fakeWorld (RunFake) is an in-process MPI job: p goroutines, one per rank, whose
// collectives meet in shared slots. Every collective is: each rank posts its
// operation's signature and its data in its slot, a barrier, each rank
// computes its result from all the slots (in rank order, so reductions add
// in rank order), a second barrier. A rank that posts another operation, or
// another length, than rank 0 fails the collective on every rank (real MPI
// would hang or truncate); a rank that returns while others wait in a
// collective fails them with errLeft instead of hanging the test.
type fakeWorld struct {
	p       int
	mu      sync.Mutex
	cond    *sync.Cond
	gen     int
	arrived int
	left    int
	sig     []string
	slot    [][]float64
	bytes   [][]byte
}

var errLeft = errors.New("fake mpi: a rank returned while others wait in a collective")

type fakeComm struct {
	w    *fakeWorld
	rank int
}

// RunFake runs body on p in-process ranks of a fake MPI job and returns
// their errors. The fake communicators pass this package's conformance
// suite; they let distributed code be tested with several ranks in one
// plain go test, without MPI. Reductions add in rank order. A rank that
// panics returns an error carrying the panic and its stack (the other
// ranks fail with errLeft where they wait for it), so a fuzz target or a
// test reports the input instead of the whole process dying.
func RunFake(p int, body func(c mpi.Comm) error) []error {
	w := &fakeWorld{p: p, sig: make([]string, p), slot: make([][]float64, p), bytes: make([][]byte, p)}
	w.cond = sync.NewCond(&w.mu)
	errs := make([]error, p)
	var wg sync.WaitGroup
	for r := 0; r < p; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			defer func() {
				w.mu.Lock()
				w.left++
				w.cond.Broadcast()
				w.mu.Unlock()
			}()
			defer func() {
				if v := recover(); v != nil {
					errs[r] = fmt.Errorf("fake mpi: rank %d panicked: %v\n%s", r, v, debug.Stack())
				}
			}()
			errs[r] = body(&fakeComm{w: w, rank: r})
		}(r)
	}
	wg.Wait()
	return errs
}

func (w *fakeWorld) barrier() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	g := w.gen
	w.arrived++
	if w.arrived == w.p {
		w.arrived = 0
		w.gen++
		w.cond.Broadcast()
		return nil
	}
	for g == w.gen && w.left == 0 {
		w.cond.Wait()
	}
	if g == w.gen {
		return errLeft
	}
	return nil
}

// collective posts (sig, data, bytes), waits for every rank, runs compute
// on all the posts, and waits again.
func (c *fakeComm) collective(op, sig string, data []float64, b []byte, compute func(slot [][]float64, bytes [][]byte)) error {
	w := c.w
	w.sig[c.rank] = sig
	w.slot[c.rank] = append([]float64(nil), data...)
	w.bytes[c.rank] = append([]byte(nil), b...)
	if err := w.barrier(); err != nil {
		return fmt.Errorf("mpi: %s: %w", op, err)
	}
	var err error
	for r := range w.sig {
		if w.sig[r] != w.sig[0] {
			err = fmt.Errorf("mpi: %s: fake mpi: rank %d called %q, rank 0 %q", op, r, w.sig[r], w.sig[0])
		}
	}
	if err == nil {
		compute(w.slot, w.bytes)
	}
	if berr := w.barrier(); berr != nil && err == nil {
		err = fmt.Errorf("mpi: %s: %w", op, berr)
	}
	return err
}

func argErr(op, format string, args ...any) error {
	return fmt.Errorf("mpi: %s: %w: %s", op, mpi.ErrInvalidArgument, fmt.Sprintf(format, args...))
}

func (c *fakeComm) Rank() int { return c.rank }
func (c *fakeComm) Size() int { return c.w.p }

func (c *fakeComm) Barrier() error {
	return c.collective("barrier", "barrier", nil, nil, func([][]float64, [][]byte) {})
}

func (c *fakeComm) allreduce(buf []float64, op func(a, b float64) float64) error {
	if buf == nil {
		return argErr("allreduce", "nil buffer")
	}
	return c.collective("allreduce", fmt.Sprintf("allreduce %d", len(buf)), buf, nil, func(slot [][]float64, _ [][]byte) {
		copy(buf, slot[0])
		for _, s := range slot[1:] {
			for i, v := range s {
				buf[i] = op(buf[i], v)
			}
		}
	})
}

func (c *fakeComm) AllreduceSum(buf []float64) error {
	return c.allreduce(buf, func(a, b float64) float64 { return a + b })
}

func (c *fakeComm) AllreduceMax(buf []float64) error { return c.allreduce(buf, math.Max) }

func (c *fakeComm) AllreduceSumScalar(x float64) (float64, error) {
	b := []float64{x}
	err := c.AllreduceSum(b)
	return b[0], err
}

func (c *fakeComm) AllreduceMaxScalar(x float64) (float64, error) {
	b := []float64{x}
	err := c.AllreduceMax(b)
	return b[0], err
}

func (c *fakeComm) Bcast(buf []float64, root int) error {
	if buf == nil {
		return argErr("bcast", "nil buffer")
	}
	if root < 0 || root >= c.w.p {
		return argErr("bcast", "root %d out of range", root)
	}
	return c.collective("bcast", fmt.Sprintf("bcast %d from %d", len(buf), root), buf, nil, func(slot [][]float64, _ [][]byte) {
		copy(buf, slot[root])
	})
}

func (c *fakeComm) BcastBytes(buf []byte, root int) error {
	if buf == nil {
		return argErr("bcast", "nil buffer")
	}
	if root < 0 || root >= c.w.p {
		return argErr("bcast", "root %d out of range", root)
	}
	return c.collective("bcast", fmt.Sprintf("bcastbytes %d from %d", len(buf), root), nil, buf, func(_ [][]float64, b [][]byte) {
		copy(buf, b[root])
	})
}

func (c *fakeComm) Allgatherv(send, recv []float64, counts []int) error {
	op := "allgatherv"
	if counts == nil {
		return argErr(op, "nil counts")
	}
	if len(counts) != c.w.p {
		return argErr(op, "%d counts for %d ranks", len(counts), c.w.p)
	}
	total := 0
	for r, n := range counts {
		if n < 0 {
			return argErr(op, "negative count %d for rank %d", n, r)
		}
		total += n
	}
	if len(send) != counts[c.rank] {
		return argErr(op, "send has length %d but counts[%d] = %d", len(send), c.rank, counts[c.rank])
	}
	if len(recv) != total {
		return argErr(op, "recv has length %d but the counts sum to %d", len(recv), total)
	}
	if len(send) > 0 && len(recv) > 0 && &send[0] == &recv[0] {
		return argErr(op, "send and recv overlap")
	}
	return c.collective(op, fmt.Sprintf("allgatherv %v", counts), send, nil, func(slot [][]float64, _ [][]byte) {
		k := 0
		for _, s := range slot {
			k += copy(recv[k:], s)
		}
	})
}
