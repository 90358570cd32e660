// Package corrective holds what BoostMetric's totally corrective step
// shares between the one-process learner (algos/boost) and the distributed
// one (package distributed), so both run the same re-solves and compute the same bits:
// the L-BFGS-B settings and cost bounds of a re-solve, the acceptance of
// its result, and the two loops over the rank-one terms v_j v_jᵀ (the
// weighted sum X = Σ_j w_j v_j v_jᵀ and the quadratic forms v_jᵀ G v_j).
package corrective

import (
	"errors"
	"math"

	"github.com/psdlearn/psdlearn/engine"
	"gonum.org/v1/gonum/mat"
)

// Cost bounds of the re-solves.
const (
	// MaxIter bounds the L-BFGS-B iterations of each re-solve between two
	// pricing steps. Each re-solve starts from the previous weights with
	// the new term at its exact line-search weight, so it never does worse
	// than the stage-wise step; the cap only stops it refining weights that
	// the next pricing step will move again. The re-solve after the last
	// term is run to full accuracy (FinalIter).
	MaxIter = 5
	// FinalIter bounds the final full-accuracy re-solve.
	FinalIter = 2000
)

// Settings returns the L-BFGS-B settings of a re-solve of at most maxIter
// iterations. The final one (maxIter ≥ FinalIter) starts from weights
// refined only by capped re-solves, so it stops on the projected gradient,
// not on a small relative decrease of the objective.
func Settings(maxIter int) engine.MinimizeSettings {
	s := engine.MinimizeSettings{Factr: 1e4, Pgtol: 1e-10, MaxIter: maxIter}
	if maxIter >= FinalIter {
		s.Factr = -1
	}
	return s
}

// Accept returns the weights of a re-solve that started at objective f0,
// clamped to w ≥ 0 (L-BFGS-B honours bounds to rounding), or the solver's
// error. A solve that stopped short of its tolerances is accepted when it
// did not increase the objective: L-BFGS-B's line search only accepts
// decreasing steps.
func Accept(res engine.MinimizeResult, err error, f0 float64) ([]float64, error) {
	if err != nil {
		var nc *engine.MinimizeNotConvergedError
		if !errors.As(err, &nc) || res.X == nil || !(res.F <= f0) {
			return nil, err
		}
	}
	w := res.X
	for j := range w {
		w[j] = math.Max(w[j], 0)
	}
	return w, nil
}

// Sum sets the upper triangle of dst to Σ_j w[j]·vs[j]·vs[j]ᵀ (terms of
// zero weight are skipped) and returns Σ_j w[j]. Every vs[j] has length
// dst's dimension.
func Sum(dst *mat.SymDense, vs [][]float64, w []float64) float64 {
	raw := dst.RawSymmetric()
	d := raw.N
	for a := 0; a < d; a++ {
		clear(raw.Data[a*raw.Stride+a : a*raw.Stride+d])
	}
	var tr float64
	for j, v := range vs {
		wj := w[j]
		tr += wj
		if wj == 0 {
			continue
		}
		for a := 0; a < d; a++ {
			s := wj * v[a]
			row := raw.Data[a*raw.Stride:]
			for b := a; b < d; b++ {
				row[b] += s * v[b]
			}
		}
	}
	return tr
}

// QuadForms sets out[j] = vs[j]ᵀ G vs[j] for the symmetric G whose upper
// triangle is given row by row by upper(a) = G[a, a:] (a = 0, …, d−1).
func QuadForms(out []float64, vs [][]float64, d int, upper func(a int) []float64) {
	for j, v := range vs {
		var s float64
		for a := 0; a < d; a++ {
			row := upper(a)
			var off float64
			for b := 1; b < len(row); b++ {
				off += row[b] * v[a+b]
			}
			s += v[a] * (row[0]*v[a] + 2*off)
		}
		out[j] = s
	}
}
