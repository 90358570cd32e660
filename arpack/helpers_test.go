package arpack_test

import (
	"math"
	"sort"
	"testing"

	"github.com/psdlearn/psdlearn/arpack"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

type namedSolver struct {
	name string
	s    arpack.Solver
}

// solvers returns the implementations compiled into this build.
func solvers() []namedSolver {
	out := []namedSolver{{"go", arpack.Go}}
	if arpack.HaveNative {
		out = append(out, namedSolver{"native", arpack.Native})
	}
	return out
}

// gridLaplacian returns the combinatorial Laplacian of the n1×n2 grid graph
// (the Cartesian product of two paths), in CSR form.
func gridLaplacian(tb testing.TB, n1, n2 int) *sparse.CSR {
	tb.Helper()
	var is, js []int
	var vs []float64
	id := func(a, b int) int { return a*n2 + b }
	edge := func(p, q int) {
		is = append(is, p, q)
		js = append(js, q, p)
		vs = append(vs, 1, 1)
	}
	for a := 0; a < n1; a++ {
		for b := 0; b < n2; b++ {
			if a+1 < n1 {
				edge(id(a, b), id(a+1, b))
			}
			if b+1 < n2 {
				edge(id(a, b), id(a, b+1))
			}
		}
	}
	s, err := sparse.NewCSRFromTriplets(n1*n2, n1*n2, is, js, vs)
	if err != nil {
		tb.Fatal(err)
	}
	l, err := sparse.Laplacian(s)
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

// gridSpectrum returns the eigenvalues (2−2cos(πa/n1)) + (2−2cos(πb/n2)) of
// the n1×n2 grid Laplacian, ascending.
func gridSpectrum(n1, n2 int) []float64 {
	out := make([]float64, 0, n1*n2)
	for a := 0; a < n1; a++ {
		for b := 0; b < n2; b++ {
			out = append(out, (2-2*math.Cos(math.Pi*float64(a)/float64(n1)))+(2-2*math.Cos(math.Pi*float64(b)/float64(n2))))
		}
	}
	sort.Float64s(out)
	return out
}

// gridOp returns the operator of the n1×n2 grid Laplacian.
func gridOp(tb testing.TB, n1, n2 int) *sparse.SymCSR {
	tb.Helper()
	op, err := sparse.NewSymCSR(gridLaplacian(tb, n1, n2))
	if err != nil {
		tb.Fatal(err)
	}
	return op
}

// maxResidual returns max_j ‖A v_j − λ_j v_j‖ and max |VᵀV − I|.
func maxResidual(op arpack.Operator, res arpack.Result) (resid, orth float64) {
	n := op.Dim()
	m := len(res.Values)
	if m == 0 {
		return 0, 0
	}
	x := make([]float64, n)
	y := make([]float64, n)
	for j := 0; j < m; j++ {
		mat.Col(x, j, res.Vectors)
		op.Apply(y, x)
		var s float64
		for i := range y {
			d := y[i] - res.Values[j]*x[i]
			s += d * d
		}
		resid = math.Max(resid, math.Sqrt(s))
	}
	var g mat.Dense
	g.Mul(res.Vectors.T(), res.Vectors)
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			want := 0.0
			if i == j {
				want = 1
			}
			orth = math.Max(orth, math.Abs(g.At(i, j)-want))
		}
	}
	return resid, orth
}

// funcOp is an Operator from a function.
type funcOp struct {
	n int
	f func(dst, x []float64)
}

func (o funcOp) Dim() int               { return o.n }
func (o funcOp) Apply(dst, x []float64) { o.f(dst, x) }

// deflated is A + σ Σ_c u_c u_cᵀ for orthonormal u_c: it moves the
// eigenvalues of an exactly known invariant subspace of A to σ.
type deflated struct {
	a     arpack.Operator
	u     [][]float64
	sigma float64
}

func (d deflated) Dim() int { return d.a.Dim() }
func (d deflated) Apply(dst, x []float64) {
	d.a.Apply(dst, x)
	for _, u := range d.u {
		var s float64
		for i, v := range u {
			s += v * x[i]
		}
		s *= d.sigma
		for i, v := range u {
			dst[i] += s * v
		}
	}
}
