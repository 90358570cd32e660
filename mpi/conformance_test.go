package mpi_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/mpi/mpitest"
)

// TestConformance runs the suite on Single and on the world communicator
// of this process (in a native build run by go test, a singleton MPI job of
// size 1; mpirun_test.go runs it on 2 and 3 ranks).
func TestConformance(t *testing.T) {
	t.Run("Single", func(t *testing.T) { mpitest.TestComm(t, mpi.Single) })
	t.Run("World", func(t *testing.T) {
		c, err := mpi.Open()
		if err != nil {
			t.Fatal(err)
		}
		if c.Size() != 1 || c.Rank() != 0 {
			t.Fatalf("world of go test: rank %d of %d, want 0 of 1", c.Rank(), c.Size())
		}
		mpitest.TestComm(t, c)
		if c2, err := mpi.Open(); err != nil || c2 != c {
			t.Errorf("second Open = %v, %v; want the same communicator", c2, err)
		}
	})
}

// TestConcurrentCalls issues collectives from several goroutines at once on
// a world of one process (where their order does not matter): the calls are
// serialised, as MPI_THREAD_SERIALIZED requires, and all succeed.
func TestConcurrentCalls(t *testing.T) {
	c, err := mpi.Open()
	if err != nil {
		t.Fatal(err)
	}
	if c.Size() != 1 {
		t.Skip("collectives from several goroutines need a fixed order on more than one rank")
	}
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Go(func() {
			buf := []float64{float64(g)}
			for i := 0; i < 200; i++ {
				if err := c.AllreduceSum(buf); err != nil || buf[0] != float64(g) {
					errc <- fmt.Errorf("goroutine %d: AllreduceSum = %v, %v", g, buf, err)
					return
				}
				if err := c.Bcast(buf, 0); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
}

// TestGoPanicsAfterOpen checks that initialising MPI leaves the Go
// runtime's signal handlers in place: a nil dereference is still a Go panic
// that recover stops (Open MPI does not replace handlers that exist).
func TestGoPanicsAfterOpen(t *testing.T) {
	if _, err := mpi.Open(); err != nil {
		t.Fatal(err)
	}
	var p *int
	func() {
		defer func() {
			if r := recover(); r == nil {
				t.Error("no panic from a nil dereference")
			}
		}()
		_ = *p
	}()
}
