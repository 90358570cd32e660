package sdp

import (
	"errors"
	"math"
	"slices"
	"sort"

	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/internal/f64"
	"gonum.org/v1/gonum/mat"
)

// Shift-and-invert for the sparse path. The wanted eigenvalues
// of C + Â (the negative ones, and the first few above zero that prove the
// negative part complete) sit next to a cluster at zero, while the rest of
// the spectrum of the Laplacian-like operator reaches hundreds of times
// further: Lanczos on C + Â itself separates them at the rate
// √(gap/spread) and spends about a thousand products per evaluation,
// whatever its tolerance or start vector (docs/algorithms/sdp-mvu.md). On
// (C + Â + sI)⁻¹ with s above −λ_min the wanted eigenvalues become the
// largest, 1/(λ + s), and their separation is measured against s instead of
// the spread. The inverse is applied with an LDLᵀ factorization of the sparse
// part plus sI in a bandwidth-reducing (reverse Cuthill–McKee) order, kept
// as an envelope (row i stores columns first[i]…i), and the big rank-one
// terms are added back with the Woodbury identity.

// errNotPD reports that the shifted matrix is not positive definite (the
// shift is below −λ_min), or that a pivot is too small to factor it
// without pivoting.
var errNotPD = errors.New("sdp: shifted matrix not positive definite")

// envelopeMaxFlops bounds the flops of one envelope factorization for which
// the shift-and-invert path is used (above it, plain Lanczos).
const envelopeMaxFlops = 4e9

// envLDL is the envelope LDLᵀ factorization (L D Lᵀ = P (S + sI) Pᵀ) of the
// sparse part S of C + Â, in the order perm (perm[old] = new).
type envLDL struct {
	n           int
	perm, iperm []int
	first       []int // first column stored in row i (permuted order)
	start       []int // row i is data[start[i] : start[i]+i−first[i]+1]
	data        []float64
	flops       float64
	tmp         []float64
}

// newEnvLDL computes the reverse Cuthill–McKee order of the pattern of s
// and the envelope of the permuted matrix; the caller allocates data
// (start[n] values).
func newEnvLDL(n int, indptr, ind []int) *envLDL {
	deg := make([]int, n)
	for i := 0; i < n; i++ {
		for p := indptr[i]; p < indptr[i+1]; p++ {
			if ind[p] != i {
				deg[i]++
			}
		}
	}
	order := make([]int, 0, n)
	seen := make([]bool, n)
	bfs := func(root int) (last []int) {
		// Breadth-first levels from root, neighbours by increasing degree;
		// returns the visit order.
		q := []int{root}
		seen[root] = true
		for h := 0; h < len(q); h++ {
			i := q[h]
			nb := make([]int, 0, indptr[i+1]-indptr[i])
			for p := indptr[i]; p < indptr[i+1]; p++ {
				if j := ind[p]; !seen[j] {
					seen[j] = true
					nb = append(nb, j)
				}
			}
			sort.Slice(nb, func(a, b int) bool { return deg[nb[a]] < deg[nb[b]] || deg[nb[a]] == deg[nb[b]] && nb[a] < nb[b] })
			q = append(q, nb...)
		}
		return q
	}
	for {
		// Next component: start from its vertex of least degree, then from
		// the last vertex of a BFS (a pseudo-peripheral vertex).
		root := -1
		for i := 0; i < n; i++ {
			if !seen[i] && (root < 0 || deg[i] < deg[root]) {
				root = i
			}
		}
		if root < 0 {
			break
		}
		comp := bfs(root)
		for _, i := range comp {
			seen[i] = false
		}
		comp = bfs(comp[len(comp)-1])
		order = append(order, comp...)
	}
	slices.Reverse(order)
	c := &envLDL{n: n, perm: make([]int, n), iperm: order, first: make([]int, n), start: make([]int, n+1), tmp: make([]float64, n)}
	for newI, old := range order {
		c.perm[old] = newI
	}
	for i := 0; i < n; i++ {
		c.first[i] = i
	}
	for old := 0; old < n; old++ {
		pi := c.perm[old]
		for p := indptr[old]; p < indptr[old+1]; p++ {
			pj := c.perm[ind[p]]
			if pj < pi && pj < c.first[pi] {
				c.first[pi] = pj
			}
		}
	}
	for i := 0; i < n; i++ {
		w := i - c.first[i] + 1
		c.start[i+1] = c.start[i] + w
		c.flops += float64(w) * float64(w)
	}
	return c
}

// row returns row i of L (columns first[i]…i; the diagonal slot holds d_i).
func (c *envLDL) row(i int) []float64 { return c.data[c.start[i]:c.start[i+1]] }

// factor computes the LDLᵀ factorization, without pivoting, of
// P (S + shift·I) Pᵀ, S given by the CSR values data; L is unit lower
// triangular and D is stored on its diagonal. It returns the number of
// negative pivots, or errNotPD when a pivot is too small for a stable
// factorization without pivoting.
func (c *envLDL) factor(indptr, ind []int, data []float64, shift float64) (neg int, err error) {
	clear(c.data)
	for old := 0; old < c.n; old++ {
		pi := c.perm[old]
		r := c.row(pi)
		for p := indptr[old]; p < indptr[old+1]; p++ {
			if pj := c.perm[ind[p]]; pj <= pi {
				r[pj-c.first[pi]] += data[p]
			}
		}
		r[pi-c.first[pi]] += shift
	}
	t := c.tmp
	for i := 0; i < c.n; i++ {
		ri := c.row(i)
		fi := c.first[i]
		// t_j = l_ij·d_j, computed left to right: t_j = a_ij − Σ_{k<j} t_k l_jk.
		for j := fi; j < i; j++ {
			rj := c.row(j)
			fj := c.first[j]
			lo := max(fi, fj)
			t[j-fi] = ri[j-fi] - f64.DotWide(t[lo-fi:j-fi], rj[lo-fj:j-fj])
		}
		d := ri[i-fi]
		scale := math.Abs(d)
		for j := fi; j < i; j++ {
			l := t[j-fi] / c.row(j)[j-c.first[j]]
			d -= t[j-fi] * l
			ri[j-fi] = l
		}
		if !(math.Abs(d) > 1e-12*math.Max(scale, math.Abs(shift))) {
			return 0, errNotPD
		}
		if d < 0 {
			neg++
		}
		ri[i-fi] = d
	}
	return neg, nil
}

// solve sets x = (S + shift·I)⁻¹ b in the original order.
func (c *envLDL) solve(x, b []float64) {
	y := c.tmp
	for old, v := range b {
		y[c.perm[old]] = v
	}
	// L y = b (unit diagonal)
	for i := 0; i < c.n; i++ {
		ri := c.row(i)
		fi := c.first[i]
		y[i] -= f64.DotWide(ri[:i-fi], y[fi:i])
	}
	// D z = y, then Lᵀ x = z (column sweep)
	for i := 0; i < c.n; i++ {
		y[i] /= c.data[c.start[i+1]-1]
	}
	for i := c.n - 1; i >= 0; i-- {
		ri := c.row(i)
		fi := c.first[i]
		f64.Axpy(-y[i], ri[:i-fi], y[fi:i])
	}
	for old := range x {
		x[old] = y[c.perm[old]]
	}
}

// invOp is (C + Â + shift·I)⁻¹ = (B + V W Vᵀ)⁻¹ with B = S + shift·I
// factored (LDLᵀ: B may be indefinite when the rank-one terms lift its
// negative directions, as MVU's centring term lifts the constant vector)
// and V W Vᵀ the active big rank-one terms (W > 0), by Woodbury:
// B⁻¹ − B⁻¹V K⁻¹ Vᵀ B⁻¹ with the capacitance K = W⁻¹ + Vᵀ B⁻¹ V.
type invOp struct {
	e     *dualEval
	shift float64
	bv    [][]float64 // B⁻¹ v_t of the active terms
	v     [][]float64 // the active v_t (dense)
	kq    *mat.Dense  // eigenvectors of K
	kl    []float64   // eigenvalues of K
	y, z  []float64
}

func (o *invOp) Dim() int { return o.e.n }

// Apply implements engine.Operator.
func (o *invOp) Apply(dst, x []float64) {
	o.e.ldl.solve(dst, x)
	r := len(o.v)
	if r == 0 {
		return
	}
	// y = K⁻¹ Vᵀ B⁻¹ x; dst −= B⁻¹ V y.
	for a := 0; a < r; a++ {
		var s float64
		for i, v := range o.v[a] {
			s += v * dst[i]
		}
		o.z[a] = s
	}
	for a := 0; a < r; a++ {
		var s float64
		for b := 0; b < r; b++ {
			s += o.kq.At(b, a) * o.z[b]
		}
		o.y[a] = s / o.kl[a]
	}
	for a := 0; a < r; a++ {
		var s float64
		for b := 0; b < r; b++ {
			s += o.kq.At(a, b) * o.y[b]
		}
		for i, v := range o.bv[a] {
			dst[i] -= s * v
		}
	}
}

// newInvOp factors C + Â + shift·I; errNotPD if it is not positive definite
// (by Haynsworth's inertia formula, B + V W Vᵀ with W ≻ 0 has
// neg(B) − pos(K) + r negative eigenvalues), if a big rank-one term has a
// negative weight, or if a pivot is too small.
func (e *dualEval) newInvOp(shift float64) (*invOp, error) {
	neg, err := e.ldl.factor(e.s.Indptr, e.s.Ind, e.s.Data, shift)
	if err != nil {
		return nil, err
	}
	o := &invOp{e: e, shift: shift}
	bd := e.bigVectors()
	var ws []float64
	for t, w := range e.bigW {
		if w == 0 {
			continue
		}
		if w < 0 {
			return nil, errNotPD
		}
		bv := make([]float64, e.n)
		e.ldl.solve(bv, bd[t])
		o.v = append(o.v, bd[t])
		o.bv = append(o.bv, bv)
		ws = append(ws, w)
	}
	r := len(o.v)
	if r == 0 {
		if neg > 0 {
			return nil, errNotPD
		}
		return o, nil
	}
	o.y, o.z = make([]float64, r), make([]float64, r)
	k := mat.NewSymDense(r, nil)
	for a := 0; a < r; a++ {
		for b := 0; b <= a; b++ {
			var s float64
			for i, v := range o.v[a] {
				s += v * o.bv[b][i]
			}
			if a == b {
				s += 1 / ws[a]
			}
			k.SetSym(a, b, s)
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(k, true) {
		return nil, errNotPD
	}
	o.kl = eig.Values(nil)
	o.kq = new(mat.Dense)
	eig.VectorsTo(o.kq)
	pos := 0
	var kmax float64
	for _, l := range o.kl {
		kmax = math.Max(kmax, math.Abs(l))
	}
	for _, l := range o.kl {
		if math.Abs(l) <= 1e-12*kmax {
			return nil, errNotPD
		}
		if l > 0 {
			pos++
		}
	}
	if neg-pos+r != 0 {
		return nil, errNotPD
	}
	return o, nil
}

// invertedEigs computes the k smallest eigenpairs of C + Â with Lanczos on
// (C + Â + sI)⁻¹, s = shift (raised fourfold, up to three times, while
// C + Â + sI is not positive definite). Its Values are those of
// C + Â + shift·I, the convention of negativePart, taken as Rayleigh
// quotients on C + Â itself (one product per pair). ok is false when no
// shift gave a positive definite matrix: the caller then runs plain
// Lanczos.
func (e *dualEval) invertedEigs(shift float64, k int, opt engine.EigsOptions) (res engine.EigsResult, ok bool, err error) {
	s := shift
	var o *invOp
	for try := 0; ; try++ {
		o, err = e.newInvOp(s)
		e.factorizations++
		if err == nil {
			break
		}
		if try == 3 {
			return engine.EigsResult{}, false, nil
		}
		s *= 4
	}
	e.applies += len(o.v) // the Woodbury solves
	opt.NCV = min(e.n, max(2*k+1, k+20))
	inv, err := e.eigsSolver().Eigs(e.ctx, o, k, engine.LargestAlgebraic, opt)
	e.applies += inv.OpApplies
	res.Iterations, res.OpApplies = inv.Iterations, inv.OpApplies
	m := len(inv.Values)
	if m == 0 {
		return res, true, err
	}
	rq := make([]float64, m)
	x, ax := make([]float64, e.n), make([]float64, e.n)
	for j := 0; j < m; j++ {
		mat.Col(x, j, inv.Vectors)
		e.Apply(ax, x)
		var d float64
		for i, v := range x {
			d += v * ax[i]
		}
		rq[j] = d
	}
	e.applies += m
	idx := make([]int, m)
	for j := range idx {
		idx[j] = j
	}
	sort.SliceStable(idx, func(a, b int) bool { return rq[idx[a]] < rq[idx[b]] })
	res.Values = make([]float64, m)
	res.Vectors = mat.NewDense(e.n, m, nil)
	for t, j := range idx {
		res.Values[t] = rq[j] + shift
		mat.Col(x, j, inv.Vectors)
		res.Vectors.SetCol(t, x)
	}
	return res, true, err
}
