package sdp

import (
	"errors"
	"testing"

	"github.com/psdlearn/psdlearn/limits"
)

// TestMemoryLimit: the dense SDP of MVU on a million points is refused
// before anything of size N² is allocated, while the sparse method's
// estimate for the same problem is accepted.
func TestMemoryLimit(t *testing.T) {
	if err := checkMemory(1000000, 6000000, 16, Dense); !errors.Is(err, limits.ErrMemory) {
		t.Errorf("dense SDP on 10⁶ points: %v", err)
	}
	if err := checkMemory(1000000, 6000000, 16, Sparse); err != nil {
		t.Errorf("sparse SDP on 10⁶ points: %v", err)
	}
}
