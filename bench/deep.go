package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine"
)

// DeepProtocol is the deep-feature benchmark: the rows of
// datasets.Subspace in Dim dimensions (10 classes structured in a
// 16-dimensional subspace, buried in isotropic noise), the first Train for
// training, the next Val for validation and the next Test for testing,
// standardised on the training rows, no PCA, K for the triplets and the
// k-NN evaluation, and FrobMetric with the one value C.
type DeepProtocol struct {
	Train, Val, Test int
	Dim              int
	C                float64
	K                int
}

// DefaultDeep is the protocol of the "deep" case of the algos suite:
// 20,000 training rows at D = 2,048, 5,000 each for validation and
// testing, C = 10, k = 3.
var DefaultDeep = DeepProtocol{Train: 20000, Val: 5000, Test: 5000, Dim: 2048, C: 10, K: 3}

// DeepCases returns the deep-feature case of protocol p, "deep subspace
// frobmetric C=…": FrobMetric with the one value p.C on the data of p, on
// every backend the run selects. That is the comparison of the backends
// at deep-feature dimensions, where each iteration's D×D
// eigendecomposition and the D-wide Gram products dominate.
//
// The data are generated when a backend's run is set up (not when the
// cases are listed), and not timed; the seconds it took are the run's
// "phase_load". So are the DGEMM and SGEMM rates of addFlopBounds, measured
// once per backend at width D (at D = 2,048 that is 1.7·10^11 flops per
// core, three times: tens of seconds or more). Each run reports the metrics of ExperimentMetrics (phases,
// converged, duality gap and its tolerance, test errors of the learned and
// the Euclidean metric), the rank of the learned metric, and every
// phase's flop bound and ratio; the harness adds the wall time and the
// peak RSS.
//
// At the default sizes every iteration eigendecomposes a 2,048×2,048
// matrix, and a run takes long, on the pure Go backend far longer: run
// the case with --runs 1 --warmup=false, and bound each run with
// Options.TimeLimit (--time-limit), which reports a run that reaches it as
// unfinished rather than as a result.
func DeepCases(seed uint64, p DeepProtocol) []Case {
	spec := fmt.Sprintf("subspace:%d:%d:%d", p.Train+p.Val+p.Test, p.Dim, seed)
	detail := fmt.Sprintf("%s rows:%d,%d,%d, standardised, k = %d", spec, p.Train, p.Val, p.Test, p.K)
	name := fmt.Sprintf("deep subspace frobmetric C=%g", p.C)
	return []Case{{Name: name, Size: p.Train, Detail: detail, Setup: func(b engine.Backend) (func(context.Context) (Outcome, error), error) {
		parts, loadSeconds, err := deepData(p, seed)
		if err != nil {
			return nil, err
		}
		dgemm, sgemm := gemmRates(b.BLAS(), p.Dim)
		return func(ctx context.Context) (Outcome, error) {
			l := psdlearn.FrobMetric{Common: psdlearn.Common{Standardize: true, K: p.K, Seed: seed, Backend: b}, C: []float64{p.C}}
			rep, err := runExperiment(ctx, l, parts)
			if err != nil {
				return Outcome{}, err
			}
			rep.Phases.Load = loadSeconds
			m := ExperimentMetrics(rep)
			m["rank"] = float64(rep.Rank)
			addFlopBoundsAt(m, rep, dgemm, sgemm)
			return Outcome{Iterations: rep.Iterations, Metrics: m, Curve: rep.Curve}, nil
		}, nil
	}}}
}

// deepData generates the rows of p and splits them into training,
// validation (when p.Val > 0) and test parts; it returns the seconds it
// took.
func deepData(p DeepProtocol, seed uint64) ([]*data.Dataset, float64, error) {
	const most = datasets.SubspaceMaxEntries
	if p.Train < 1 || p.Val < 0 || p.Test < 1 || p.Train > most || p.Val > most || p.Test > most || p.K < 1 || !(p.C > 0) {
		return nil, 0, fmt.Errorf("bench: deep: protocol %+v: want Train and Test in [1, 2^28], Val in [0, 2^28], K ≥ 1 and C > 0", p)
	}
	t0 := time.Now()
	x, y, err := datasets.Subspace(p.Train+p.Val+p.Test, p.Dim, seed)
	if err != nil {
		return nil, 0, fmt.Errorf("bench: deep: %w", err)
	}
	d := &data.Dataset{Name: "subspace", X: x, Y: y}
	for c := 0; c < datasets.SubspaceClasses; c++ {
		d.Classes = append(d.Classes, fmt.Sprint(c))
	}
	rows := []int{p.Train, p.Val, p.Test}
	if p.Val == 0 {
		rows = []int{p.Train, p.Test}
	}
	parts, err := data.SplitRows(d, rows)
	if err != nil {
		return nil, 0, fmt.Errorf("bench: deep: %w", err)
	}
	return parts, time.Since(t0).Seconds(), nil
}
