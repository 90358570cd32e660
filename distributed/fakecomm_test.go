package distributed_test

import (
	"fmt"
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
