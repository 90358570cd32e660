package sdp

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// The operator C + Â(u) of the SDP dual: assembled from the constraint
// data, applied matrix-free for the sparse eigensolver, or formed densely.

// assemble sets the current values of C + Â(u).
func (e *dualEval) assemble(u []float64) {
	copy(e.s.Data, e.base)
	for i, ui := range u {
		if ui == 0 {
			continue
		}
		for _, c := range e.contrib[e.cStart[i]:e.cStart[i+1]] {
			e.s.Data[c.slot] += ui * c.coef
		}
	}
	for t, r := range e.big {
		if r.owner < 0 {
			e.bigW[t] = r.w
		} else {
			e.bigW[t] = u[r.owner] * r.w
		}
	}
}

// Dim implements engine.Operator.
func (e *dualEval) Dim() int { return e.n }

// Apply implements engine.Operator: dst = (C + Â) x.
func (e *dualEval) Apply(dst, x []float64) {
	e.s.MulVec(dst, x)
	for t, r := range e.big {
		w := e.bigW[t]
		if w == 0 {
			continue
		}
		if r.idx == nil {
			var d float64
			for i, v := range r.val {
				d += v * x[i]
			}
			d *= w
			for i, v := range r.val {
				dst[i] += d * v
			}
			continue
		}
		var d float64
		for i, v := range r.val {
			d += v * x[r.idx[i]]
		}
		d *= w
		for i, v := range r.val {
			dst[r.idx[i]] += d * v
		}
	}
}

// ApplyRows implements engine.RowApplier: rows [lo, lo+len(dst)) of
// (C + Â) x, with the big rank-one terms' inner products taken over all of
// x. Its rows equal Apply's up to the order of the rank-one additions.
func (e *dualEval) ApplyRows(dst, x []float64, lo int) {
	hi := lo + len(dst)
	s := &e.s
	for i := lo; i < hi; i++ {
		var d float64
		for p := s.Indptr[i]; p < s.Indptr[i+1]; p++ {
			d += s.Data[p] * x[s.Ind[p]]
		}
		dst[i-lo] = d
	}
	for t, r := range e.big {
		w := e.bigW[t]
		if w == 0 {
			continue
		}
		var d float64
		if r.idx == nil {
			for i, v := range r.val {
				d += v * x[i]
			}
			d *= w
			for i := lo; i < hi; i++ {
				dst[i-lo] += d * r.val[i]
			}
			continue
		}
		for i, v := range r.val {
			d += v * x[r.idx[i]]
		}
		d *= w
		for i, v := range r.val {
			if j := r.idx[i]; j >= lo && j < hi {
				dst[j-lo] += d * v
			}
		}
	}
}

// dense returns C + Â as a dense symmetric matrix.
func (e *dualEval) dense() *mat.SymDense {
	n := e.n
	a := mat.NewSymDense(n, nil)
	raw := a.RawSymmetric()
	for i := 0; i < n; i++ {
		for p := e.s.Indptr[i]; p < e.s.Indptr[i+1]; p++ {
			if j := e.s.Ind[p]; j >= i {
				raw.Data[i*raw.Stride+j] += e.s.Data[p]
			}
		}
	}
	for t, r := range e.big {
		w := e.bigW[t]
		if w == 0 {
			continue
		}
		if r.idx == nil {
			e.b.BLAS().Dsyr(blas.Upper, n, w, r.val, 1, raw.Data, raw.Stride)
			continue
		}
		for ta, ia := range r.idx {
			for tb, ib := range r.idx {
				if ib >= ia {
					raw.Data[ia*raw.Stride+ib] += w * r.val[ta] * r.val[tb]
				}
			}
		}
	}
	return a
}
