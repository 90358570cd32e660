package bench

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/psdlearn/psdlearn/algos/mvu"
	"github.com/psdlearn/psdlearn/algos/sdp"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/internal/sdpa"
	"gonum.org/v1/gonum/mat"
)

// MVUPaperSigma is the σ of the FrobMetric paper's Swiss-roll experiment
// (500 points, k = 6), in the units MVU solves in (the mean squared
// neighbour distance is 1).
const MVUPaperSigma = 1e5

// mvuExactSDP returns the exact MVU SDP in the paper's inequality form, in
// the units of unit (squared neighbour distances divided by their mean),
// with the centring moved into the objective:
//
//	max tr X − (2/n)·1ᵀX1  s.t.  X_aa + X_bb − 2X_ab + s_e = unit_e,  s ≥ 0,  X ⪰ 0,
//
// block 1 the n×n Gram matrix, block 2 the slacks s (diagonal). It has the
// optimal value of max tr X under 1ᵀX1 = 0: centring a feasible X keeps
// its distances, lowers tr X by 1ᵀX1/n and zeroes the penalty, so the
// optimum is centred. Unlike the centring equality, which leaves no
// strictly feasible X (X1 = 0), this form has interior points on both
// sides (X = εI; and Z = Σ y_e A_e − I + (2/n)11ᵀ ≻ 0 for suitable y), so
// the interior-point method does not stall: with the equality, CSDP
// stopped for lack of progress at a relative gap of 6e-4 on 200 points.
func mvuExactSDP(n int, edges []engine.Pair, unit []float64) *sdpa.Problem {
	m := len(edges)
	p := &sdpa.Problem{Blocks: []int{n, -m}, B: make([]float64, m)}
	p.C = make([]sdpa.Entry, 0, n*(n+1)/2)
	w := 2 / float64(n)
	for i := 0; i < n; i++ {
		p.C = append(p.C, sdpa.Entry{Block: 0, I: i, J: i, V: 1 - w})
		for j := i + 1; j < n; j++ {
			p.C = append(p.C, sdpa.Entry{Block: 0, I: i, J: j, V: -w})
		}
	}
	p.A = make([][]sdpa.Entry, m)
	for t, e := range edges {
		p.A[t] = []sdpa.Entry{{Block: 0, I: e.A, J: e.A, V: 1}, {Block: 0, I: e.B, J: e.B, V: 1}, {Block: 0, I: e.A, J: e.B, V: -1}, {Block: 1, I: t, J: t, V: 1}}
		p.B[t] = unit[t]
	}
	return p
}

// mvuReference compares psdlearn's MVU with its default options (σ fixed
// at the paper's value) against CSDP on the exact SDP for a Swiss roll of n
// points, k = 6. The objective compared is tr X, the variance of the
// embedding, in units of the mean squared neighbour distance.
//
// With X_e the exact solution and X_σ the regularised one, X_σ's
// certificate (its dual value D, a lower bound of the regularised optimum,
// and its gap) gives tr X_e − tr X_σ ≤ (‖X_e‖²_F − ‖X_σ‖²_F)/(2σ) + gap,
// whatever X_σ's violation; the row's bound is ‖X_e‖²_F/(2σ) + gap. From
// above, CSDP's dual solution y ≥ 0 (Z = Σ y_e A_e − C ⪰ 0) gives, for any
// X ⪰ 0, tr X − (2/n)·1ᵀX1 ≤ Σ y_e⟨A_e, X⟩ ≤ bᵀy + Σ y_e·(⟨A_e, X⟩ − b_e)₊:
// X_σ's trace can exceed the optimum only by what its violations, weighted
// by the interior-point multipliers, and its centring error allow.
func mvuReference(ctx context.Context, b engine.Backend, n int, seed uint64, withCSDP bool) (SDPRow, error) {
	row := SDPRow{Problem: "mvu", Data: fmt.Sprintf("swissroll:%d:%d", n, seed), Size: n,
		Detail: fmt.Sprintf("k = 6, σ = %g, inequality form", MVUPaperSigma), Claim: mvuClaim}
	x, _, _ := datasets.SwissRoll(n, seed)
	t0, c0 := time.Now(), processCPU()
	emb, err := mvu.Embed(ctx, x, mvu.Options{K: 6, Sigma: MVUPaperSigma, SDP: mvuDefaultSDP(b, seed)})
	if err != nil {
		return row, fmt.Errorf("mvu, %d points: %w", n, err)
	}
	row.Seconds = time.Since(t0).Seconds()
	if c0 >= 0 {
		row.CPUSeconds = (processCPU() - c0).Seconds()
	}
	sol := emb.Solution
	row.Constraints = len(emb.Edges) + 1
	row.Certified = sol.Certified
	row.Iterations = emb.Iterations
	unit, scale2 := meanUnits(emb.Dist2)
	f := mat.DenseCopyOf(sol.Factor)
	f.Scale(1/math.Sqrt(scale2), f) // X_σ in units: F Fᵀ
	trS := frob2(f)
	row.Objective = trS
	gapAbs := math.Abs(sol.Gap) / scale2
	row.Metrics = map[string]float64{
		"sigma":         emb.Sigma,
		"relative_gap":  sol.RelGap,
		"max_violation": sol.MaxViolation,
	}
	if !withCSDP {
		return row, nil
	}
	p := mvuExactSDP(n, emb.Edges, unit)
	ref, err := sdpa.Run(ctx, p, csdpOptions(false))
	if err != nil {
		return row, fmt.Errorf("mvu, %d points: %w", n, err)
	}
	row.setRef(ref)
	if ref.X != nil {
		xe := ref.X[0].Sym
		var fro2 float64
		raw := xe.RawSymmetric()
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				v := raw.Data[i*raw.Stride+j]
				if i == j {
					fro2 += v * v
				} else {
					fro2 += 2 * v * v
				}
			}
		}
		row.Bound = fro2/(2*emb.Sigma) + gapAbs
		row.Metrics["csdp_trace_x"] = mat.Trace(xe)
		row.Metrics["csdp_sum_x"] = sumAll(xe)
		row.Metrics["csdp_frobenius2"] = fro2
	}
	diff := row.RefObjective - trS
	row.Difference = diff
	row.RelDiff = diff / math.Abs(row.RefObjective)
	if ref.Y == nil {
		return row, nil
	}
	above := ipmExcess(f, emb.Edges, unit, ref.Y) + math.Abs(ref.Dual-ref.Primal)
	row.Metrics["allowed_above"] = above
	tol := 1e-7 * math.Abs(row.RefObjective) // CSDP's own accuracy
	row.Within = diff <= row.Bound+tol && -diff <= above+tol
	return row, nil
}

// mvuClaim is the paper's speed claim for MVU against CSDP.
const mvuClaim = "about 15× faster than CSDP (teapot 4 s vs 85 s; faces 131 s vs 4,732 s)"

// meanUnits returns dist2 divided by its mean, and the mean.
func meanUnits(dist2 []float64) ([]float64, float64) {
	var s float64
	for _, v := range dist2 {
		s += v
	}
	s /= float64(len(dist2))
	unit := make([]float64, len(dist2))
	for i, v := range dist2 {
		unit[i] = v / s
	}
	return unit, s
}

// frob2 returns ‖F‖²_F = tr(F Fᵀ).
func frob2(f *mat.Dense) float64 {
	r, c := f.Dims()
	var s float64
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			v := f.At(i, j)
			s += v * v
		}
	}
	return s
}

// ipmExcess returns Σ_e y_e·(⟨A_e, X⟩ − b_e)₊ + (2/n)·1ᵀX1 for X = F Fᵀ:
// how far tr X may exceed the exact optimum by the interior-point dual
// certificate y (see mvuReference).
func ipmExcess(f *mat.Dense, edges []engine.Pair, unit, y []float64) float64 {
	n, r := f.Dims()
	var s float64
	for t, e := range edges {
		var d2 float64
		for j := 0; j < r; j++ {
			v := f.At(e.A, j) - f.At(e.B, j)
			d2 += v * v
		}
		if ex := d2 - unit[t]; ex > 0 && y[t] > 0 {
			s += y[t] * ex
		}
	}
	var sum2 float64
	for j := 0; j < r; j++ {
		var c float64
		for i := 0; i < n; i++ {
			c += f.At(i, j)
		}
		sum2 += c * c // 1ᵀX1 = ‖Fᵀ1‖²
	}
	return s + 2/float64(n)*sum2
}

// mvuDefaultSDP is the solver configuration of the MVU rows: MVU's
// defaults (its certificate tolerances, the automatic method), with the
// backend and seed of the run.
func mvuDefaultSDP(b engine.Backend, seed uint64) sdp.Options {
	return sdp.Options{Backend: b, Seed: seed}
}

// sumAll returns 1ᵀX1.
func sumAll(x *mat.SymDense) float64 {
	n := x.SymmetricDim()
	var s float64
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			s += x.At(i, j)
		}
	}
	return s
}
