package distributed

import (
	"errors"
	"testing"

	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/mpi/mpitest"
)

// TestPassBlocksOneRankFails checks that a visit failing on one rank only
// stops every rank at the same block (no rank left waiting in the next
// Bcast): the failing rank returns its error, the others ErrRemote.
func TestPassBlocksOneRankFails(t *testing.T) {
	boom := errors.New("boom")
	visited := make([]int, 3)
	errs := mpitest.RunFake(3, func(c mpi.Comm) error {
		r := c.Rank()
		return passBlocks(c, []int{2, 3, 1}, func(buf []float64) {
			for i := range buf {
				buf[i] = float64(r)
			}
		}, func(q int, buf []float64) error {
			visited[r]++
			if r == 2 && q == 1 {
				return boom
			}
			return nil
		})
	})
	for r, err := range errs {
		want := ErrRemote
		if r == 2 {
			want = boom
		}
		if !errors.Is(err, want) {
			t.Errorf("rank %d: %v, want %v", r, err, want)
		}
		if visited[r] != 2 {
			t.Errorf("rank %d visited %d blocks, want 2 (stopped at the failing block)", r, visited[r])
		}
	}
}
