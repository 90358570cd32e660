package frob

import (
	"fmt"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/limits"
	"gonum.org/v1/gonum/mat"
)

// MetricMemory estimates the bytes Learn needs for n points with d features
// and m triplets: the D×D dual matrix, its eigendecomposition and the
// factor (about 4·D² values), the data and its projections (3·N·D), and the
// per-triplet vectors of the dual and of L-BFGS-B (about 25·m).
func MetricMemory(n, d, m int) float64 {
	return limits.Words(4, d, d) + limits.Words(3, n, d) + limits.Words(25, m)
}

// checkMetricLimits rejects a negative iteration limit and a run whose
// estimated memory exceeds limits.MaxMemory, before anything that grows with
// D is allocated.
func checkMetricLimits(x *mat.Dense, ts *constraints.TripletSet, opt MetricOptions) error {
	if opt.MaxIter < 0 {
		return fmt.Errorf("%w: MaxIter = %d, want a positive limit or 0 for the default", ErrInput, opt.MaxIter)
	}
	n, d := x.Dims()
	if err := limits.Check(fmt.Sprintf("frobmetric on %d points × %d features (%d triplets)", n, d, ts.Len()), MetricMemory(n, d, ts.Len())); err != nil {
		return fmt.Errorf("frob: %w", err)
	}
	return nil
}
