package engine

import (
	"context"
	"errors"
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"
)

// SymEigensolver computes dense symmetric eigendecompositions (package
// lapack implements it).
type SymEigensolver interface {
	SymEig(a mat.Symmetric, r EigRange, vectors bool) (Eigen, error)
}

// EigsSolver computes eigenpairs of a symmetric operator (package arpack
// implements it).
type EigsSolver interface {
	Eigs(ctx context.Context, op Operator, k int, which Which, opt EigsOptions) (EigsResult, error)
}

// Minimizer minimises under bounds (package lbfgsb implements it).
type Minimizer interface {
	Minimize(ctx context.Context, p Problem, x0 []float64, s MinimizeSettings) (MinimizeResult, error)
}

// Parts are the implementations a Backend is composed of.
type Parts struct {
	Eig  SymEigensolver
	Eigs EigsSolver
	Min  Minimizer
	LP   LPSolver
	BLAS blas.Float64
}

// New composes parts into a Backend called name. Every part must be set.
func New(name string, p Parts) (Backend, error) {
	if name == "" || p.Eig == nil || p.Eigs == nil || p.Min == nil || p.LP == nil || p.BLAS == nil {
		return nil, fmt.Errorf("engine: backend %q: a name and every part are required", name)
	}
	return &backend{name: name, p: p}, nil
}

// backend composes one implementation of each binding package into a Backend.
type backend struct {
	name string
	p    Parts
}

func (b *backend) Name() string       { return b.name }
func (b *backend) BLAS() blas.Float64 { return b.p.BLAS }
func (b *backend) LP() LPSolver       { return b.p.LP }

func (b *backend) SymEig(a mat.Symmetric, r EigRange, vectors bool) (Eigen, error) {
	e, err := b.p.Eig.SymEig(a, r, vectors)
	if err != nil {
		return e, fmt.Errorf("engine %s: %w", b.name, err)
	}
	return e, nil
}

func (b *backend) WeightedGram(dst *mat.SymDense, x *mat.Dense, g *PairGraph) error {
	return weightedGram(b.p.BLAS, dst, x, g)
}

func (b *backend) PairQuadForms(dst []float64, x *mat.Dense, m mat.Symmetric, pairs []Pair) error {
	return pairQuadForms(b.p.BLAS, dst, x, m, pairs)
}

func (b *backend) PairSqDists(dst []float64, z *mat.Dense, pairs []Pair) error {
	return pairSqDists(dst, z, pairs)
}

func (b *backend) Eigs(ctx context.Context, op Operator, k int, which Which, opt EigsOptions) (EigsResult, error) {
	return b.p.Eigs.Eigs(ctx, op, k, which, opt)
}

func (b *backend) Minimize(ctx context.Context, p Problem, x0 []float64, s MinimizeSettings) (MinimizeResult, error) {
	return b.p.Min.Minimize(ctx, p, x0, s)
}

// ErrNoBackend is wrapped by every call on the backend Default returns when
// no backend is registered.
var ErrNoBackend = errors.New(`engine: no backend registered: import _ "github.com/psdlearn/psdlearn/engine/backends" (the root package psdlearn does)`)

// none is what Default returns when nothing is registered: every numerical
// call fails with ErrNoBackend.
type none struct{}

func (none) Name() string       { return "none" }
func (none) BLAS() blas.Float64 { return gonum.Implementation{} }
func (none) LP() LPSolver       { return noLP{} }
func (none) SymEig(mat.Symmetric, EigRange, bool) (Eigen, error) {
	return Eigen{}, ErrNoBackend
}
func (none) WeightedGram(*mat.SymDense, *mat.Dense, *PairGraph) error { return ErrNoBackend }
func (none) PairQuadForms([]float64, *mat.Dense, mat.Symmetric, []Pair) error {
	return ErrNoBackend
}
func (none) PairSqDists([]float64, *mat.Dense, []Pair) error { return ErrNoBackend }
func (none) Eigs(context.Context, Operator, int, Which, EigsOptions) (EigsResult, error) {
	return EigsResult{}, ErrNoBackend
}
func (none) Minimize(context.Context, Problem, []float64, MinimizeSettings) (MinimizeResult, error) {
	return MinimizeResult{}, ErrNoBackend
}

type noLP struct{}

func (noLP) Name() string                        { return "none" }
func (noLP) NewModel(LPProblem) (LPModel, error) { return nil, ErrNoBackend }
