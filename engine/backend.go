package engine

import (
	"context"
	"fmt"

	"github.com/psdlearn/psdlearn/arpack"
	"github.com/psdlearn/psdlearn/lapack"
	"github.com/psdlearn/psdlearn/lbfgsb"
	"github.com/psdlearn/psdlearn/lp"
	"gonum.org/v1/gonum/mat"
)

// backend composes one implementation of each binding package into a Backend.
type backend struct {
	name string
	eig  lapack.Eigensolver
	eigs arpack.Solver
	min  lbfgsb.Solver
	lp   lp.Solver
	blas lapack.BLAS
}

func (b *backend) Name() string      { return b.name }
func (b *backend) BLAS() lapack.BLAS { return b.blas }
func (b *backend) LP() LPSolver      { return b.lp }

func (b *backend) SymEig(a mat.Symmetric, r EigRange, vectors bool) (Eigen, error) {
	e, err := b.eig.SymEig(a, r, vectors)
	if err != nil {
		return e, fmt.Errorf("engine %s: %w", b.name, err)
	}
	return e, nil
}

func (b *backend) WeightedGram(dst *mat.SymDense, x *mat.Dense, g *PairGraph) error {
	return weightedGram(b.blas, dst, x, g)
}

func (b *backend) PairQuadForms(dst []float64, x *mat.Dense, m mat.Symmetric, pairs []Pair) error {
	return pairQuadForms(b.blas, dst, x, m, pairs)
}

func (b *backend) PairSqDists(dst []float64, z *mat.Dense, pairs []Pair) error {
	return pairSqDists(dst, z, pairs)
}

func (b *backend) Eigs(ctx context.Context, op Operator, k int, which Which, opt EigsOptions) (EigsResult, error) {
	return b.eigs.Eigs(ctx, op, k, which, opt)
}

func (b *backend) Minimize(ctx context.Context, p Problem, x0 []float64, s MinimizeSettings) (MinimizeResult, error) {
	return b.min.Minimize(ctx, p, x0, s)
}

func init() {
	Register(&backend{name: "go", eig: lapack.Go, eigs: arpack.Go, min: lbfgsb.Go, lp: lp.Go, blas: lapack.GoBLAS})
	if lapack.HaveNative && arpack.HaveNative && lbfgsb.HaveNative && lp.HaveNative {
		Register(&backend{name: "native", eig: lapack.Native, eigs: arpack.Native, min: lbfgsb.Native, lp: lp.Native, blas: lapack.NativeBLAS})
	}
}
