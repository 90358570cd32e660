// Package mvu embeds data by approximate maximum variance unfolding, the
// large-scale application of Section 5 of Shen, Kim, Liu, Wang and van den
// Hengel, "An Efficient Dual Approach to Distance Metric Learning", solved
// with the Frobenius-norm SDP solver of package sdp.
//
// Embed keeps the k-nearest-neighbour pairs from moving apart, centres the
// embedding and maximises its variance, with the Frobenius perturbation
// (1/2σ)‖X‖²_F that makes the dual smooth: C = −I, and C + Σ u_e A_e is a
// graph Laplacian minus the identity plus a rank-one term, whose negative
// part has the rank of the embedding, so the sparse Lanczos path handles N
// far beyond interior-point MVU. By default the distances are
// inequalities, the paper's form, which X = 0 satisfies strictly, and the
// solve stops at a certificate (DefaultGapTol, DefaultFeasTol) that the
// interior-point solution of the exact problem confirms. Options.Equalities
// keeps the distances exactly, as the original MVU does; hard equalities on
// a rigid neighbourhood graph leave no strictly feasible point and their
// dual converges slowly from a cold start, so Embed then starts it from the
// solution of the inequality relaxation.
package mvu

import (
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/errs"
	"gonum.org/v1/gonum/mat"
)

// ErrInput is wrapped by the errors about invalid data and options; it
// matches errs.ErrInvalid.
var ErrInput = errs.New("mvu: invalid input", errs.ErrInvalid)

// checkFinite rejects data with a NaN or infinite entry.
func checkFinite(x *mat.Dense) error {
	raw := x.RawMatrix()
	for i := 0; i < raw.Rows; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: data[%d,%d] = %v", ErrInput, i, j, v)
			}
		}
	}
	return nil
}
