package psdlearn

import (
	"context"
	"fmt"

	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/algos/frob"
	"github.com/psdlearn/psdlearn/algos/lmnn"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	_ "github.com/psdlearn/psdlearn/engine/backends" // registers the "go" and "native" backends
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/grid"
	"github.com/psdlearn/psdlearn/progress"
	"gonum.org/v1/gonum/mat"
)

// ErrInvalid is wrapped by errors about invalid estimator settings or data.
var ErrInvalid = errs.New("psdlearn: invalid input", errs.ErrInvalid)

// optionf is an error about a setting whose value cannot be right whatever
// the data (a negative iteration count, C ≤ 0): it wraps ErrInvalid and
// matches errs.ErrOption, which the command line reports as a usage error.
func optionf(format string, args ...any) error {
	return errs.Option(fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...))
}

// The defaults of the zero values, each defined once.
const (
	// DefaultK is the number of target and impostor neighbours of the
	// generated triplets and the k of k-NN.
	DefaultK = 3
	// DefaultFolds is the number of cross-validation folds.
	DefaultFolds = 3
	// DefaultHoldOut is the share of given constraints held out to choose
	// C when Common.HoldOut is 0.
	DefaultHoldOut = 0.2
	// DefaultBoostIters bounds BoostMetric's rank-one terms
	// (boost.DefaultIters).
	DefaultBoostIters = boost.DefaultIters
	// DefaultPSDBoostIters bounds PSDBoost's column-generation iterations
	// (boost.DefaultPSDBoostIters).
	DefaultPSDBoostIters = boost.DefaultPSDBoostIters
)

// DefaultPSDBoostC are the values of C PSDBoost chooses among: C = 1/f
// lets roughly a fraction f = 1/2, 1/5, 1/10, 1/20 of the triplets violate
// the margin (the LP's per-triplet slack weight is C/m for m triplets).
var DefaultPSDBoostC = []float64{2, 5, 10, 20}

// DefaultFrobMetricC is the base of the values of C FrobMetric chooses
// among when its C is nil: the list on which the reference letters figure
// (2.84%) was measured, on standardised data. C is in the units of the
// normalised data (see frob.Learn), so the same list serves data of any
// overall scale; Run joins it with its multiple for the spread of the
// feature scales when standardising them lowers the Euclidean validation
// error, and extends it beyond an edge (see FrobMetric.C).
var DefaultFrobMetricC = []float64{0.1, 1, 10, 100}

// DefaultITMLGamma are the values of Gamma ITML chooses among. On letters
// (10,500 training rows) the three fits take about 0.35 s together and
// choose 30.
var DefaultITMLGamma = []float64{3, 10, 30}

// Common holds the settings every metric learner shares. The zero value of
// every field means the documented default.
type Common struct {
	// Standardize centres every feature and scales it to unit variance
	// (fitted on the training rows, stored in the model).
	Standardize bool
	// PCA projects onto this many principal components after
	// standardisation (0: no projection; at most the number of features).
	PCA int
	// K is the number of target and impostor neighbours per point of the
	// generated triplets, and the k of the k-NN scores (0: DefaultK).
	K int
	// Validation, if set, is the labelled set on which several C values are
	// compared (raw features, preprocessed like the training rows); the
	// model is the one fitted on all training rows with the chosen C.
	Validation *data.Dataset
	// Folds is the number of stratified cross-validation folds on which
	// several C values are compared without Validation (0: DefaultFolds).
	// Every class needs at least Folds rows.
	Folds int
	// HoldOut is the share of given triplets or pairs held out to compare
	// several C values (0: DefaultHoldOut); it must be below 1.
	HoldOut float64
	// Grid proposes the values of C to compare (nil: FixedGrid, the
	// learner's list; for FrobMetric without C, AdaptiveGrid).
	Grid Grid
	// Seed fixes every random choice: the folds, the held-out constraints,
	// sampled pairs and the solvers' start vectors.
	Seed uint64
	// Backend runs the numerical kernels (nil: engine.Default()).
	Backend engine.Backend
	// Progress, if set, receives the progress events of the run.
	Progress progress.Func
	// Executor runs the solves and the k-NN scores (nil: in this process).
	// A distributed execution mode supplies its own.
	Executor Executor
}

// Settings returns c: every learner that embeds Common satisfies this part
// of Learner.
func (c Common) Settings() Common { return c }

// SetCommon sets the shared settings: a learner returned by Lookup (a
// pointer to a struct that embeds Common) takes them through it.
func (c *Common) SetCommon(s Common) { *c = s }

// A Grid proposes the values of C that model selection compares. Run calls
// Next until it returns no new value; it must be safe for concurrent use
// when the learner is.
type Grid interface {
	// Next returns the values of C to try next. start is the learner's
	// list (its C field or default), scored the values tried so far with
	// their validation errors, ascending in C (nil at the first call).
	// Values already scored are skipped.
	Next(start []float64, scored []Score) []float64
}

// FixedGrid is the default Grid: the learner's list, once.
type FixedGrid struct{}

// Next returns start at the first call and nothing after.
func (FixedGrid) Next(start []float64, scored []Score) []float64 {
	if len(scored) == 0 {
		return start
	}
	return nil
}

// AdaptiveGrid is the Grid that follows the validation errors: the
// learner's list, then one value at a time beyond an edge of the values
// tried while the validation optimum sits strictly at that edge (the data
// ask for a weaker or stronger regularisation than the list offers), by
// a factor Step, at most MaxExtend values beyond each end of the list (see
// grid.Extend). It is FrobMetric's grid when neither C nor Common.Grid is
// given.
type AdaptiveGrid struct {
	// Step is the factor of each extension (0: grid.DefaultStep, 10).
	Step float64
	// MaxExtend bounds the extensions beyond each end (0:
	// grid.DefaultMaxExtend, 3; negative: none).
	MaxExtend int
}

// Next returns start at the first call, then the next extension beyond an
// edge, if any.
func (g AdaptiveGrid) Next(start []float64, scored []Score) []float64 {
	if len(scored) == 0 {
		return start
	}
	n := g.MaxExtend
	if n == 0 {
		n = grid.DefaultMaxExtend
	}
	pts := make([]grid.Point, len(scored))
	for i, s := range scored {
		pts[i] = grid.Point{C: s.C, Err: s.ValError}
	}
	if c, ok := grid.Extend(start, pts, g.Step, n); ok {
		return []float64{c}
	}
	return nil
}

// Executor runs the parts of a pipeline that an execution mode may spread
// over processes: the solves and the k-NN scores. Its methods are called
// from one goroutine per Run.
type Executor interface {
	// NewSolver returns the solver of l on p (the local executor calls
	// l.NewSolver).
	NewSolver(l Learner, p *Problem) (Solver, error)
	// KNNErrors returns the k-NN errors of every query set against the
	// labelled reference rows under the metric with factor L (nil:
	// Euclidean), as eval.FactorKNNErrors.
	KNNErrors(b engine.Backend, l, refX *mat.Dense, refY []int, k int, sets ...eval.Queries) ([]float64, error)
}

// A ChunkExecutor is an Executor that also computes the chunks of a
// reduction (PCA's covariance, data.ChunkRunner) over its processes,
// returning every chunk's part on every process so that the sum is one
// process's to the bit. The pipeline uses it when its Executor has it.
type ChunkExecutor interface {
	Executor
	RunChunks(chunks int, part func(c int) []float64) ([][]float64, error)
}

// A Distributor runs the solves of FrobMetric and BoostMetric over the
// processes of an execution mode. Each method returns what frob.Learn and
// boost.BoostMetric return on the same arguments, to rounding (FrobMetric
// within its duality-gap certificate), and is called on every process
// with the same arguments in the same order.
type Distributor interface {
	FrobMetric(ctx context.Context, x *mat.Dense, ts *constraints.TripletSet, opt frob.MetricOptions) (*frob.MetricResult, error)
	BoostMetric(ctx context.Context, x *mat.Dense, ts *constraints.TripletSet, opt boost.Options) (*boost.Result, error)
}

// An LMNNDistributor is a Distributor that also runs LMNN's solves over its
// processes: it returns what lmnn.Learn returns on the same arguments, to
// rounding (the parts of the objective and the subgradient are summed in
// another order), on every process. The pipeline uses it when its
// Distributor has it.
type LMNNDistributor interface {
	Distributor
	LMNN(ctx context.Context, x *mat.Dense, y []int, ts *constraints.TripletSet, opt lmnn.Options) (*lmnn.Result, error)
}

// A KNNDistributor is a Distributor that also scores k-NN errors over its
// processes, as Executor.KNNErrors, each process its block of the query
// rows. BoostMetric's validation checkpoints in a sharded solve use it when
// the Problem's Distributor has it; every process calls it at the same
// step.
type KNNDistributor interface {
	Distributor
	KNNErrors(b engine.Backend, l, refX *mat.Dense, refY []int, k int, sets ...eval.Queries) ([]float64, error)
}

// Local is the Executor of one process.
type Local struct{}

// NewSolver returns l.NewSolver(p).
func (Local) NewSolver(l Learner, p *Problem) (Solver, error) { return l.NewSolver(p) }

// KNNErrors returns eval.FactorKNNErrors.
func (Local) KNNErrors(b engine.Backend, l, refX *mat.Dense, refY []int, k int, sets ...eval.Queries) ([]float64, error) {
	return eval.FactorKNNErrors(b, l, refX, refY, k, sets...)
}
