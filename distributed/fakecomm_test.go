package distributed_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/mpi/mpitest"
)

// runRanks runs body on p in-process ranks (mpitest.RunFake).
func runRanks(p int, body func(c mpi.Comm) error) []error { return mpitest.RunFake(p, body) }

// TestFakeComm runs mpi's conformance suite on the fake with 1, 2 and 3
// ranks, so that the tests below run on a communicator that behaves like
// the real ones.
func TestFakeComm(t *testing.T) {
	for _, p := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("P=%d", p), func(t *testing.T) {
			runRanks(p, func(c mpi.Comm) error {
				mpitest.TestComm(t, c)
				return nil
			})
		})
	}
}

// TestFakeCommPanic: a rank that panics returns the panic as its error,
// and a rank waiting for it in a collective fails instead of hanging, so
// a fuzz input that panics one rank is reported, not a dead process.
func TestFakeCommPanic(t *testing.T) {
	errs := runRanks(2, func(c mpi.Comm) error {
		if c.Rank() == 1 {
			var s []int
			_ = s[c.Rank()]
		}
		return c.Barrier()
	})
	if errs[0] == nil || errs[1] == nil || !strings.Contains(errs[1].Error(), "rank 1 panicked: runtime error: index out of range") {
		t.Fatalf("errors %v", errs)
	}
}
