package sdp

import (
	"math"

	"github.com/psdlearn/psdlearn/algos/internal/dualsolve"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// Primal repair. Near the optimum of a degenerate dual such as
// MVU's, the primal X(u) = σ(C + Â)₋ recovered from the dual point has an
// objective within a few 1e-6 of the dual's long before its constraints
// hold: on the certified 2,000-point Swiss roll the relative gap is below
// 1e-5 after ~500 evaluations, while the largest distance violation takes
// another ~1,100 to fall under 1e-3. When every hard constraint is a
// rank-one form ⟨w·a·aᵀ, X⟩ (MVU's squared distances, a = e_a − e_b, and its
// centring, a = 1), the violated ones can be met directly on the factor
// Y of X = Y·Yᵀ: scaling the component of Y along a,
//
//	Y ← Y − (1 − f)·a·(aᵀY)/‖a‖²,  f = √(b/(w‖aᵀY‖²)),
//
// makes that constraint hold exactly and moves only the rows in a's
// support, and cyclic sweeps over the violated constraints (the SHAKE
// algorithm of constrained molecular dynamics) bring them all within
// tolerance while the objective moves by far less than the gap tolerance.
// X̃ = Y·Yᵀ is positive semidefinite by construction, and its objective and
// violations are recomputed exactly over all constraints: the certificate
// stays the exact primal–dual gap of the point returned.

// rankOneForm is a hard constraint ⟨w·a·aᵀ, X⟩ (w > 0) with a on a support.
type rankOneForm struct {
	ci   int       // constraint index
	idx  []int     // support of a (nil: all n entries)
	val  []float64 // a on its support
	w    float64
	nrm2 float64 // ‖a‖²
}

// repairRetry is the longest wait, in evaluations, between two repair
// attempts.
const repairRetry = 50

// repairSweeps bounds the cyclic sweeps of one repair.
const repairSweeps = 300

// repairSet holds the hard constraints as rank-one forms for the repair:
// those with a sparse a, the rows' incident forms (incident[start[v]:
// start[v+1]] lists the sparse forms whose support holds row v), and those
// with a dense a.
type repairSet struct {
	sparse, dense   []rankOneForm
	start, incident []int
	// translationFree reports that every dense a is constant and every
	// sparse a sums to zero: projecting on a dense form (a translation of
	// all rows) then leaves the sparse forms unchanged.
	translationFree bool
	// The attempt schedule (see repairPrimal): the violation of X(u) at
	// the last attempt that did not certify, and the evaluations since the
	// last attempt.
	failViol float64
	since    int
}

// newRepairSet returns the hard constraints of p as rank-one forms, or nil
// when one of them is not of that form (repair is then not attempted).
func newRepairSet(p *Problem) *repairSet {
	rs := &repairSet{translationFree: true, failViol: math.Inf(1)}
	for ci, c := range p.Constraints {
		if c.Penalty > 0 {
			continue
		}
		f, ok := asRankOne(c.A)
		if !ok {
			return nil
		}
		f.ci = ci
		var sum float64
		for _, v := range f.val {
			f.nrm2 += v * v
			sum += v
		}
		if !(f.nrm2 > 0) {
			return nil
		}
		if f.idx == nil {
			for _, v := range f.val {
				if v != f.val[0] {
					rs.translationFree = false
				}
			}
			rs.dense = append(rs.dense, f)
			continue
		}
		if sum != 0 {
			rs.translationFree = false
		}
		rs.sparse = append(rs.sparse, f)
	}
	if len(rs.sparse)+len(rs.dense) == 0 {
		return nil
	}
	rs.start = make([]int, p.N+1)
	for _, f := range rs.sparse {
		for _, v := range f.idx {
			rs.start[v+1]++
		}
	}
	for v := 0; v < p.N; v++ {
		rs.start[v+1] += rs.start[v]
	}
	rs.incident = make([]int, rs.start[p.N])
	fill := append([]int(nil), rs.start[:p.N]...)
	for j, f := range rs.sparse {
		for _, v := range f.idx {
			rs.incident[fill[v]] = j
			fill[v]++
		}
	}
	return rs
}

// asRankOne recognises w·a·aᵀ, w > 0: one rank-one term, one diagonal
// entry, or the pair pattern {aa: v, bb: v, ab: −v} of a squared distance.
func asRankOne(a SymMatrix) (rankOneForm, bool) {
	switch {
	case len(a.Entries) == 0 && len(a.RankOnes) == 1 && a.RankOnes[0].W > 0:
		r := a.RankOnes[0]
		return rankOneForm{idx: r.Index, val: r.Value, w: r.W}, true
	case len(a.RankOnes) != 0:
		return rankOneForm{}, false
	case len(a.Entries) == 1 && a.Entries[0].I == a.Entries[0].J && a.Entries[0].V > 0:
		e := a.Entries[0]
		return rankOneForm{idx: []int{e.I}, val: []float64{1}, w: e.V}, true
	case len(a.Entries) == 3:
		var diag [2]Entry
		var off Entry
		nd, no := 0, 0
		for _, e := range a.Entries {
			if e.I == e.J {
				if nd == 2 {
					return rankOneForm{}, false
				}
				diag[nd] = e
				nd++
			} else {
				off = e
				no++
			}
		}
		if nd != 2 || no != 1 || diag[0].I == diag[1].I {
			return rankOneForm{}, false
		}
		v := diag[0].V
		ends := (off.I == diag[0].I && off.J == diag[1].I) || (off.I == diag[1].I && off.J == diag[0].I)
		if !(v > 0) || diag[1].V != v || off.V != -v || !ends {
			return rankOneForm{}, false
		}
		return rankOneForm{idx: []int{diag[0].I, diag[1].I}, val: []float64{1, -1}, w: v}, true
	}
	return rankOneForm{}, false
}

// shake makes the rank-one constraints hold on the factor y (n×r, X = y·yᵀ)
// to within tol of relative violation, by sweeps of the update above over
// a work list: the first sweep visits every form, the next ones only the
// forms sharing a row of y with one the previous sweep moved (a form with
// a dense a moves every row, and puts every form back on the list unless
// it is constant and the others are translation invariant, as in MVU). It
// reports whether the last sweep found them all within tol.
func (rs *repairSet) shake(y *mat.Dense, cons []Constraint, tol float64) bool {
	raw := y.RawMatrix()
	r := raw.Cols
	row := func(i int) []float64 { return raw.Data[i*raw.Stride : i*raw.Stride+r] }
	s := make([]float64, r)
	// project meets form f if it is violated, reporting whether it moved y.
	project := func(f *rankOneForm) bool {
		combineRows(s, f.idx, f.val, row)
		var ss float64
		for _, v := range s {
			ss += v * v
		}
		c := cons[f.ci]
		q := f.w * ss
		viol := q - c.B
		if c.Equality {
			viol = math.Abs(viol)
		}
		if viol <= tol*(1+math.Abs(c.B)) {
			return false
		}
		fac := 0.0
		if c.B > 0 && q > 0 {
			fac = math.Sqrt(c.B / q)
		}
		g := (1 - fac) / f.nrm2
		for t, v := range f.val {
			i := t
			if f.idx != nil {
				i = f.idx[t]
			}
			yi := row(i)
			for k := range yi {
				yi[k] -= g * v * s[k]
			}
		}
		return true
	}
	m := len(rs.sparse)
	list := make([]int, m)
	for i := range list {
		list[i] = i
	}
	mark := make([]bool, m)
	for sweep := 0; sweep < repairSweeps; sweep++ {
		moved := false
		for _, i := range list {
			f := &rs.sparse[i]
			if !project(f) {
				continue
			}
			moved = true
			for _, v := range f.idx {
				for _, j := range rs.incident[rs.start[v]:rs.start[v+1]] {
					mark[j] = true
				}
			}
		}
		for t := range rs.dense {
			if project(&rs.dense[t]) {
				moved = true
				if !rs.translationFree {
					for j := range mark {
						mark[j] = true
					}
				}
			}
		}
		if !moved {
			return true
		}
		// The next list in constraint order, so that the result does not
		// depend on the order the marks were set in.
		list = list[:0]
		for j, ok := range mark {
			if ok {
				list = append(list, j)
				mark[j] = false
			}
		}
	}
	return false
}

// repairPrimal tries the repair on the cached evaluation (force: whatever
// the attempt schedule says, as for the point a solve returns): when X(u)
// violates a hard constraint by more than feasTol while its relative gap is
// within gapTol, it runs shake on a copy of the factor and keeps the result
// as the cache's primal point if its exact merit, max(|gap|/gapTol,
// violation/feasTol), is the lower.
func (e *dualEval) repairPrimal(force bool) {
	e.rep = nil
	if e.rset == nil || e.comp || e.z == nil || !(e.maxViol > e.feasTol) {
		return
	}
	pr, du := e.certificate()
	g := math.Abs(dualsolve.RelGap(pr, du))
	if !(g <= e.gapTol) {
		return
	}
	rs := e.rset
	// An attempt costs about an evaluation. After one that did not
	// certify, the next waits for X(u) to improve on that attempt's
	// violation by 10% or for repairRetry evaluations.
	rs.since++
	if !force && !(e.maxViol < 0.9*rs.failViol) && rs.since < repairRetry {
		return
	}
	rs.since = 0
	before := e.maxViol
	y := mat.DenseCopyOf(e.z)
	y.Scale(math.Sqrt(e.sigma), y)
	rs.shake(y, e.p.Constraints, e.feasTol/2)

	// The exact primal objective and violations of X̃ = y·yᵀ.
	cons := e.p.Constraints
	ax := make([]float64, len(cons))
	_, r := y.Dims()
	sparse.ParallelRows(len(cons), len(cons)*(r+1)*4, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			ax[i] = quadForm(y, cons[i].A)
		}
	})
	var gram mat.SymDense
	gram.SymOuterK(1, y.T())
	var fro float64
	for i := 0; i < r; i++ {
		for j := 0; j < r; j++ {
			v := gram.At(i, j)
			fro += v * v
		}
	}
	primal := quadForm(y, e.p.C) + fro/(2*e.sigma)
	var viol float64
	for i, c := range cons {
		v := ax[i] - c.B
		if c.Equality {
			v = math.Abs(v)
		}
		if c.Penalty > 0 {
			primal += c.Penalty * math.Max(v, 0)
			continue
		}
		viol = max(viol, v/(1+math.Abs(c.B)))
	}
	merit := func(pr, v float64) float64 {
		return math.Max(math.Abs(dualsolve.RelGap(pr, du))/e.gapTol, v/e.feasTol)
	}
	if mr := merit(primal, viol); mr < merit(pr, e.maxViol) {
		e.rep, e.repPrimal, e.maxViol = y, primal, viol
		e.repairs++
		if mr <= 1 {
			return
		}
	}
	rs.failViol = before
}
