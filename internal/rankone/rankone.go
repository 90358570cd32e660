// Package rankone holds the two loops over rank-one terms v_j v_jᵀ that
// BoostMetric's totally corrective step needs, shared by the one-process
// learner (algos/boost) and the distributed one (dist) so both compute the
// same bits: the weighted sum X = Σ_j w_j v_j v_jᵀ and the quadratic forms
// v_jᵀ G v_j of a symmetric G.
package rankone

import "gonum.org/v1/gonum/mat"

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
