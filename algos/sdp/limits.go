package sdp

import (
	"fmt"

	"github.com/psdlearn/psdlearn/limits"
)

// Memory estimates the bytes Solve needs for an N×N problem with m
// constraints: with the dense method the N×N matrix C + Â, its
// eigenvectors and the primal (about 4·N²); with the sparse method the
// Lanczos basis and eigenvectors (about 4·N·(rank+10)) and the sparsity
// pattern; in both cases about 25·m values per constraint vector.
func Memory(n, m, rank int, dense bool) float64 {
	b := limits.Words(25, m) + limits.Words(8, n)
	if dense {
		return b + limits.Words(4, n, n)
	}
	return b + limits.Words(4, n, rank+10)
}

// checkMemory applies limits.Check to Memory.
func checkMemory(n, m, rank int, method Method) error {
	if err := limits.Check(fmt.Sprintf("the %s SDP on %d points (%d constraints)", method, n, m), Memory(n, m, rank, method == Dense)); err != nil {
		return fmt.Errorf("sdp: %w", err)
	}
	return nil
}
