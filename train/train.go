// Package train runs the experimental protocol (RunExperiment: preprocessing
// fitted on the training rows, LMNN triplets, a trainer, k-NN evaluation) and
// holds the registry of metric learners that it and `psdlearn train`
// dispatches to. Each algorithm package registers a Trainer under its name
// (for example "boostmetric", "psdboost", "frobmetric") from its init function.
package train

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/progress"
	"gonum.org/v1/gonum/mat"
)

// Options are the algorithm flags of `psdlearn train`. Zero values mean "the
// algorithm's default".
type Options struct {
	Loss string // exp | logistic | hinge
	Mode string // stagewise | corrective
	// Precision is BoostMetric's Gram arithmetic: "" or "auto", "double"
	// or "mixed" (see boost.Precision).
	Precision string
	Passes    int // multi-pass BoostMetric
	// Iters bounds the iterations of every phase of a solve (rank-one
	// terms, L-BFGS-B iterations, Newton polish steps). Zero selects the
	// algorithm's default; a negative value is an error.
	Iters int
	Nu    float64   // BoostMetric ν
	C     []float64 // regularisation values; several are chosen among on the validation set
	// WorkingSet is FrobMetric's working-set strategy: "" or "auto" (on from
	// frob.WorkingSetMinTriplets triplets), "on" or "off".
	WorkingSet string
	// Mu is LMNN's push weight μ in (0, 1]: the objective is
	// (1−μ)·pull + μ·push (0: the default 0.5).
	Mu float64
	// Rank selects LMNN's low-rank parametrisation M = L Lᵀ with L D×Rank
	// (1 ≤ Rank ≤ D, D the dimension after preprocessing); 0 learns the
	// full-rank M.
	Rank int
}

// Input is what a Trainer learns from. Train and the triplets are required;
// Val may be nil (then a list of C values cannot be chosen among).
type Input struct {
	Train, Val *data.Dataset
	Triplets   *constraints.TripletSet // on the rows of Train.X
	K          int                     // k of the k-NN evaluation (default 3)
	Seed       uint64
	Backend    engine.Backend // nil means engine.Default()
	Options    Options
	// Progress, if non-nil, receives progress events of long runs.
	Progress progress.Func
}

// Output is a learned Mahalanobis metric and a summary of the run.
type Output struct {
	M          *mat.SymDense // the learned PSD matrix (D×D)
	Iterations int
	Objective  float64
	DualityGap float64 // NaN when the algorithm has no duality certificate
	// ValError is the validation k-NN error in [0,1] of the chosen model
	// when the trainer chose among candidates on the validation set; NaN
	// when it chose nothing (train.Experiment scores the returned model
	// itself, on the validation and test parts in one search).
	ValError float64
	ChosenC  float64   // the C value used (NaN if not applicable)
	Curve    []float64 // objective per iteration, for convergence plots
	// Candidates lists every value the trainer chose among on the
	// validation set, in the order tried (nil when there was no choice).
	Candidates []Candidate
	// CPolicy describes where the values of C (or γ) tried came from (see
	// package grid) and Searched lists them in the order tried; both are
	// empty for a trainer without such a parameter.
	CPolicy  string
	Searched []float64
	// Converged reports that the solve of the returned model reached its
	// certificate (duality gap within GapTol, or the method's own stopping
	// rule); false after an iteration or evaluation cap, a stalled line
	// search or a cancellation.
	Converged bool
	// Reason says why the solve of the returned model stopped.
	Reason string
	// GapTol is the tolerance the certificate DualityGap is held to, NaN
	// when the algorithm has no duality certificate.
	GapTol float64
	// Warnings are one-line messages about the run — one for every solve
	// that stopped without its certificate, with the reason — that callers
	// should show the user.
	Warnings []string
	// Solves lists every solve in the order run, with its wall time.
	Solves []Solve
}

// Solve is one solver run of a trainer (one per C value tried).
type Solve struct {
	C          float64 `json:"c"` // NaN when the algorithm has no C
	Seconds    float64 `json:"seconds"`
	Iterations int     `json:"iterations"`
	Converged  bool    `json:"converged"`
	Reason     string  `json:"reason,omitempty"`
	// SingleIterations counts the iterations priced in single precision
	// (BoostMetric's mixed precision, see boost.Precision).
	SingleIterations int `json:"single_precision_iterations,omitempty"`
}

// Candidate is one regularisation value tried during model selection and
// how its model fared.
type Candidate struct {
	C          float64
	ValError   float64 // validation k-NN error in [0,1], NaN if not evaluated
	Iterations int
	DualityGap float64 // relative; NaN when the algorithm has no certificate
	Converged  bool    // the solve reached its certificate
}

// Trainer learns a metric.
type Trainer func(ctx context.Context, in Input) (Output, error)

var (
	mu       sync.RWMutex
	trainers = map[string]Trainer{}
)

// Register adds t under name. It panics on a duplicate name (a programming error at init time).
func Register(name string, t Trainer) {
	mu.Lock()
	defer mu.Unlock()
	name = strings.ToLower(name)
	if _, dup := trainers[name]; dup {
		panic("train: duplicate trainer " + name)
	}
	trainers[name] = t
}

// Lookup returns the trainer registered under name.
func Lookup(name string) (Trainer, error) {
	mu.RLock()
	defer mu.RUnlock()
	t, ok := trainers[strings.ToLower(name)]
	if !ok {
		return nil, fmt.Errorf("train: unknown algorithm %q (available: %s)", name, strings.Join(namesLocked(), ", "))
	}
	return t, nil
}

// Names returns the registered algorithm names, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	return namesLocked()
}

func namesLocked() []string {
	out := make([]string, 0, len(trainers))
	for n := range trainers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
