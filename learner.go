package psdlearn

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/progress"
	"gonum.org/v1/gonum/mat"
)

// A Learner is a metric learner the pipeline (Run) can drive: its typed
// options, the values of C it compares, and a Solver for one prepared
// training set. BoostMetric, PSDBoost, FrobMetric, ITML and LMNN are
// Learners; so is any type registered with Register.
type Learner interface {
	// Name is the algorithm's name ("frobmetric", …), as Lookup finds it.
	Name() string
	// Settings returns the settings every learner shares.
	Settings() Common
	// Candidates returns the values of C the learner compares when
	// Common.Grid is nil (nil: the learner has no C, and Run fits once).
	Candidates() []float64
	// NewSolver checks the learner's options against the prepared
	// problem p and returns a Solver for it. A learner that cannot learn
	// from p (LMNN without labels, say) returns an error matching
	// errs.ErrInvalid.
	NewSolver(p *Problem) (Solver, error)
}

// A Problem is one training set as the pipeline hands it to a solver:
// the preprocessed rows, their labels remapped to 0..classes−1 (nil when
// learning from constraints) and the triplets on them.
type Problem struct {
	// X holds the preprocessed training rows (n×D).
	X *mat.Dense
	// Y labels the rows of X with 0..Classes−1; nil for constraint input.
	Y       []int
	Classes int
	// Triplets are the training triplets on the rows of X: built from Y
	// (K targets × K impostors per point), or the training part of the
	// given triplets or pairs.
	Triplets *constraints.TripletSet
	// Pairs is the training part of given pairs (nil otherwise).
	Pairs *constraints.Pairs
	// ValX and ValY are the labelled validation rows, preprocessed like X
	// and labelled like Y, when the run has them (nil otherwise): a
	// learner whose stopping follows the data (BoostMetric's iteration
	// limit) scores its iterates on them.
	ValX *mat.Dense
	ValY []int
	// K is the number of neighbours of the triplets and of the k-NN
	// evaluation.
	K    int
	Seed uint64
	// Backend runs the numerical kernels; never nil.
	Backend engine.Backend
	// Progress receives the solver's progress events (may be nil).
	Progress progress.Func
	// Dist, if set, runs FrobMetric's and BoostMetric's solves (and
	// LMNN's, when it is an LMNNDistributor) across the processes of an
	// execution mode (an Executor sets it; nil: in this process).
	Dist Distributor
}

// A Solver learns a metric on one Problem for the values of C the
// pipeline asks for, in ascending order; it may warm-start a value from
// the one before. Learners without C are called with C = NaN.
type Solver interface {
	// Solve learns with c. Cancelled or capped, it returns the best iterate
	// so far (Solution.M non-nil when it has one) next to the error.
	Solve(ctx context.Context, c float64) (*Solution, error)
}

// Solution is the outcome of one solve.
type Solution struct {
	// M is the learned PSD matrix (D×D), nil when the solve has none.
	M          *mat.SymDense
	Iterations int
	// Objective is the algorithm's objective at M (NaN if none).
	Objective float64
	// DualityGap is the relative duality gap of the certificate, GapTol
	// the tolerance it is held to (NaN: the algorithm has no duality
	// certificate).
	DualityGap, GapTol float64
	// Converged reports that the solve met its certificate or stopping
	// rule; Reason says why it stopped.
	Converged bool
	Reason    string
	// Curve is the objective (or the algorithm's progress measure) per
	// iteration.
	Curve []float64
	// Warnings are one-line messages about the solve beyond its
	// certificate (which the pipeline reports itself).
	Warnings []string
	// SingleIterations counts iterations priced in single precision
	// (BoostMetric's mixed precision).
	SingleIterations int
	// Summary is a one-line description of the solve for progress lines.
	Summary string
}

// Algorithm is a registered learner.
type Algorithm struct {
	// Name is the name Lookup takes (lower case).
	Name string
	// Summary is a one-line description.
	Summary string
	// New returns a pointer to a learner with its documented defaults (the
	// zero value), whose fields a caller may set.
	New func() Learner
}

var registry = struct {
	sync.RWMutex
	algos map[string]Algorithm
}{algos: map[string]Algorithm{}}

// Register adds an algorithm to the ones Lookup finds. It refuses an empty
// or duplicate name and a nil constructor.
func Register(a Algorithm) error {
	name := strings.ToLower(a.Name)
	if name == "" || a.New == nil {
		return fmt.Errorf("%w: an algorithm needs a name and a constructor", ErrInvalid)
	}
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.algos[name]; dup {
		return fmt.Errorf("%w: algorithm %q is already registered", ErrInvalid, name)
	}
	a.Name = name
	registry.algos[name] = a
	return nil
}

// Lookup returns a new learner of the algorithm registered under name
// (case-insensitive), with its defaults.
func Lookup(name string) (Learner, error) {
	registry.RLock()
	a, ok := registry.algos[strings.ToLower(name)]
	registry.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: unknown algorithm %q (available: %s)", ErrInvalid, name, strings.Join(Algorithms(), ", "))
	}
	return a.New(), nil
}

// Algorithms returns the registered algorithm names, sorted.
func Algorithms() []string {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]string, 0, len(registry.algos))
	for n := range registry.algos {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func init() {
	for _, a := range []Algorithm{
		{Name: "boostmetric", Summary: "BoostMetric: exponential or logistic loss, rank-one updates", New: func() Learner { return &BoostMetric{} }},
		{Name: "psdboost", Summary: "PSDBoost: hinge loss by column generation, certified by λmax − π", New: func() Learner { return &PSDBoost{} }},
		{Name: "frobmetric", Summary: "FrobMetric: Frobenius-regularised hinge loss, certified by the duality gap", New: func() Learner { return &FrobMetric{} }},
		{Name: "itml", Summary: "ITML: LogDet divergence to a prior under pair constraints", New: func() Learner { return &ITML{} }},
		{Name: "lmnn", Summary: "LMNN: large-margin nearest neighbours", New: func() Learner { return &LMNN{} }},
	} {
		if err := Register(a); err != nil {
			panic(err) // the built-in names are distinct
		}
	}
}
