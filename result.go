package psdlearn

import (
	"errors"
	"fmt"

	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/model"
)

// Result is the outcome of Run. Errors are fractions in [0, 1]; fields
// that do not apply are NaN.
type Result struct {
	// Model is the learned metric with its preprocessing, certificate and
	// provenance: the chosen one, or, when the run was cancelled or capped,
	// the best one so far (see Run). Nil when there is none.
	Model *model.Model
	// Algorithm and Backend name what ran.
	Algorithm, Backend string

	// Selection says how C was chosen, Folds over how many folds
	// (SelectFolds only).
	Selection Selection
	Folds     int
	// Searched lists every value of C tried, ascending (nil for a learner
	// without C), Scores their validation scores in the same order (nil
	// when nothing was chosen), ChosenC the value of the model (NaN: no C).
	Searched []float64
	Scores   []Score
	ChosenC  float64
	// CPolicy says where the values of C tried came from: the given list,
	// or the learner's default as it followed the data ("" without C).
	CPolicy string

	// The solve of the returned model.
	Iterations            int
	Objective, DualityGap float64
	// Certificate is the returned model's certificate (also Model's).
	Certificate model.Certificate
	Curve       []float64
	// Rank is the learned metric's numerical rank.
	Rank int

	// Sizes: training, validation and test rows, features before and
	// after preprocessing, the k of the triplets and of k-NN, the training
	// triplets; for constraint input, the validation and held-out triplets.
	NTrain, NVal, NTest, InputDim, Dim, K, Triplets int
	ValTriplets, HeldOutTriplets                    int

	// Eval holds the scores of the returned model.
	Eval Evaluation
	// Phases is where the time went, with every solve in the order run.
	Phases Phases
	// Warnings are one-line messages the caller should show the user: one
	// for every solve that stopped without its certificate, one for a
	// cancelled run, one when the model's validation error is above the
	// Euclidean metric's, and the algorithms' own.
	Warnings []string
	// Interrupted reports that the run was cancelled and Model is the best
	// one found before.
	Interrupted bool
}

// Selection is how Run chose C.
type Selection int

const (
	// SelectNone: one value (or none) was given; nothing was chosen.
	SelectNone Selection = iota
	// SelectValidation: k-NN error on Common.Validation.
	SelectValidation
	// SelectFolds: mean k-NN error over stratified folds of the training
	// rows, then a fit on all of them.
	SelectFolds
	// SelectHeldOut: the fraction of held-out constraints violated.
	SelectHeldOut
)

// String returns "none", "validation", "folds" or "held-out constraints".
func (s Selection) String() string {
	switch s {
	case SelectValidation:
		return "validation"
	case SelectFolds:
		return "folds"
	case SelectHeldOut:
		return "held-out constraints"
	}
	return "none"
}

// Score is one value of C tried during selection.
type Score struct {
	C float64
	// ValError is the validation error: the k-NN error on the validation
	// rows, its mean over the folds, or the fraction of the held-out
	// constraints violated.
	ValError float64
	// Iterations, DualityGap and Converged are the solve's (of the last
	// fold with SelectFolds).
	Iterations int
	DualityGap float64
	Converged  bool
}

// Evaluation holds the scores of a learned metric next to the Euclidean
// metric's on the same preprocessed rows; NaN where they do not apply.
type Evaluation struct {
	// k-NN errors on the validation rows and on Data.Test.
	ValError, EuclideanValError   float64
	TestError, EuclideanTestError float64
	// Satisfaction is the fraction of the held-out triplets (i, j, k) with
	// d(i,j) < d(i,k) (constraint input with Data.HoldOut).
	Satisfaction, EuclideanSatisfaction float64
}

// Solve is one solver run (one per C value and fold).
type Solve struct {
	C          float64 `json:"c"` // NaN when the algorithm has no C
	Seconds    float64 `json:"seconds"`
	Iterations int     `json:"iterations"`
	Converged  bool    `json:"converged"`
	Reason     string  `json:"reason,omitempty"`
	// Fold is the fold (from 1) of a cross-validation solve, 0 for a solve
	// on all training rows.
	Fold int `json:"fold,omitempty"`
	// SingleIterations counts the iterations priced in single precision
	// (BoostMetric's mixed precision, see boost.Precision).
	SingleIterations int `json:"single_precision_iterations,omitempty"`
}

// Phases are the wall times of the stages of a run, in seconds. Load is
// left to the caller, which loads the data before Run. Train covers every
// solve and the validation scores; Solves breaks the solves down.
type Phases struct {
	Load       float64 `json:"load"`
	Preprocess float64 `json:"preprocess"`
	Triplets   float64 `json:"triplets"`
	Train      float64 `json:"train"`
	Solves     []Solve `json:"solves"`
	Evaluation float64 `json:"evaluation"`
}

// NotConvergedError is returned with a model that did not reach its
// certificate: an iteration cap, a stall, or a cancellation (then Err is
// the context's error). It matches errs.ErrNotConverged and, through Err,
// the context's error.
type NotConvergedError struct {
	Algorithm string
	// Reason says why the solve of the returned model stopped.
	Reason string
	// Err is the cause: the context's error when cancelled, else nil.
	Err error
}

// Error says what stopped and that the model is the best found.
func (e *NotConvergedError) Error() string {
	msg := fmt.Sprintf("psdlearn: %s: not converged (%s)", e.Algorithm, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg + "; the model is the best found"
}

// Is reports whether target is errs.ErrNotConverged.
func (e *NotConvergedError) Is(target error) bool { return target == errs.ErrNotConverged }

// Unwrap returns the cause.
func (e *NotConvergedError) Unwrap() error { return e.Err }

// asNotConverged reports whether err means only that the solve did not
// converge (an iteration cap or a solver's own stop), not a failure.
func asNotConverged(err error) bool {
	return err != nil && errors.Is(err, errs.ErrNotConverged)
}
