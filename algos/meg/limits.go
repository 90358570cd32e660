package meg

import (
	"fmt"

	"github.com/psdlearn/psdlearn/limits"
)

// SequenceMemory estimates the bytes of a DistSequence of T examples: a pair
// of indices and a label, 24 bytes per example.
func SequenceMemory(T int) float64 { return limits.Words(3, T) }

// KernelMemory estimates the bytes RBFKernel needs for n objects: the
// squared distances and the kernel, two n×n matrices.
func KernelMemory(n int) float64 { return limits.Words(2, n, n) }

// LearnerMemory estimates the bytes of a Learner on d×d matrices: the
// exponent, its eigendecomposition, W and workspace, about 6·d².
func LearnerMemory(d int) float64 { return limits.Words(6, d, d) }

// checkMemory applies limits.Check, naming what would be allocated.
func checkMemory(what string, estimate float64) error {
	if err := limits.Check(what, estimate); err != nil {
		return fmt.Errorf("meg: %w", err)
	}
	return nil
}
