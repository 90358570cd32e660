package npkl

import (
	"fmt"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// ErrInvalidConstraint is wrapped by errors about malformed constraints.
var ErrInvalidConstraint = errs.New("npkl: invalid constraint", errs.ErrInvalid)

// checkPairs validates a constraint set on n points.
func checkPairs(n int, p *constraints.Pairs) error {
	if p == nil || len(p.List) == 0 {
		return fmt.Errorf("%w: no constraints", ErrInvalidConstraint)
	}
	if p.N != n {
		return fmt.Errorf("%w: constraints on %d points, the graph has %d", ErrInvalidConstraint, p.N, n)
	}
	for c, q := range p.List {
		if q.A < 0 || q.A >= n || q.B < 0 || q.B >= n {
			return fmt.Errorf("%w: constraint %d = (%d,%d) outside [0,%d)", ErrInvalidConstraint, c, q.A, q.B, n)
		}
		if q.A == q.B {
			return fmt.Errorf("%w: constraint %d joins point %d to itself", ErrInvalidConstraint, c, q.A)
		}
	}
	return nil
}

// Operator is the sparse symmetric matrix A = Σ_c w_c T_c E_{a_c b_c} − L,
// E_ab = (e_a e_bᵀ + e_b e_aᵀ)/2, applied matrix-free: one CSR product with L
// plus O(m) work for the m constraints. It satisfies engine.Operator.
//
// With w_c = C it is the linear-loss matrix; with w_c = α_c it is the
// squared-hinge iterate A_t. Weights may be changed with SetWeights between
// solves; an Operator is not safe for concurrent SetWeights and Apply.
type Operator struct {
	lap  *sparse.CSR
	a, b []int
	t    []float64
	half []float64    // w_c·T_c/2
	rows *RowOperator // all the rows of A, merged into one CSR matrix
}

// NewOperator returns A for the n×n Laplacian lap, the constraints and their
// weights (len(w) == pairs.Len()).
func NewOperator(lap *sparse.CSR, pairs *constraints.Pairs, w []float64) (*Operator, error) {
	if lap == nil || lap.Rows != lap.Cols {
		return nil, fmt.Errorf("npkl: NewOperator: Laplacian must be square")
	}
	if err := checkPairs(lap.Rows, pairs); err != nil {
		return nil, err
	}
	m := pairs.Len()
	op := &Operator{lap: lap, a: make([]int, m), b: make([]int, m), t: pairs.T(), half: make([]float64, m)}
	for c, q := range pairs.List {
		op.a[c], op.b[c] = q.A, q.B
	}
	if len(w) != m {
		return nil, fmt.Errorf("npkl: %d weights for %d constraints", len(w), m)
	}
	rows, err := NewRowOperator(lap, 0, pairs, w)
	if err != nil {
		return nil, err
	}
	op.rows = rows
	if err := op.SetWeights(w); err != nil {
		return nil, err
	}
	return op, nil
}

// SetWeights replaces the constraint weights w_c.
func (o *Operator) SetWeights(w []float64) error {
	// The merged rows check the weights (length, finite) before any change.
	if err := o.rows.SetWeights(w); err != nil {
		return err
	}
	for c, v := range w {
		o.half[c] = 0.5 * v * o.t[c]
	}
	return nil
}

// Dim returns the number of points.
func (o *Operator) Dim() int { return o.lap.Rows }

// Apply overwrites dst with A·x: one parallel pass over the rows of A,
// the Laplacian's entries and the constraints' merged (RowOperator).
func (o *Operator) Apply(dst, x []float64) { o.rows.MulVec(dst, x) }

// ApplyBlock overwrites dst (n×c) with A·x (n×c): one pass over the rows
// for the whole block, the rows of x and dst contiguous. It makes Operator
// an engine.BlockOperator.
func (o *Operator) ApplyBlock(dst, x *mat.Dense) {
	n := o.lap.Rows
	if r, c := x.Dims(); r != n || dst.RawMatrix().Rows != n || dst.RawMatrix().Cols != c {
		panic(fmt.Sprintf("npkl: ApplyBlock: x is %d×%d, dst %d×%d, dimension %d", r, c, dst.RawMatrix().Rows, dst.RawMatrix().Cols, n))
	}
	o.rows.MulBlock(dst, x)
}
