package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
)

// FashionDir is where the "fashion" cases of the algos suite look for the
// Fashion-MNIST IDX files, as the Debian package dataset-fashion-mnist
// installs them. $PSDLEARN_FASHION_DIR overrides it.
var FashionDir = "/usr/share/datasets/fashion-mnist"

// FashionProtocol is the Fashion-MNIST protocol: the 60,000 training
// images followed by the 10,000 test images, rows 1–50,000 for training,
// 50,001–60,000 for validation and 60,001–70,000 for testing; standardised,
// projected onto the top PCA components of the training rows, k = 3 for
// the triplets and the k-NN evaluation.
type FashionProtocol struct {
	Dir        string // directory of the four *-idx?-ubyte.gz files
	Train, Val int    // leading rows of the training file; the rest is unused
	PCA, K     int
}

// DefaultFashion is the protocol of the fashion cases.
var DefaultFashion = FashionProtocol{Dir: FashionDir, Train: 50000, Val: 10000, PCA: 164, K: 3}

// fashionFiles names the IDX files of dir: training images and labels,
// test images and labels.
func fashionFiles(dir string) [4]string {
	return [4]string{
		filepath.Join(dir, "train-images-idx3-ubyte.gz"), filepath.Join(dir, "train-labels-idx1-ubyte.gz"),
		filepath.Join(dir, "t10k-images-idx3-ubyte.gz"), filepath.Join(dir, "t10k-labels-idx1-ubyte.gz"),
	}
}

// fashionData loads the protocol's train, validation and test parts once,
// whichever backend asks first; later callers get the same parts (read
// only) and the load time measured the first time.
type fashionData struct {
	once    sync.Once
	parts   []*data.Dataset
	seconds float64
	err     error
}

func (f *fashionData) load(p FashionProtocol) ([]*data.Dataset, float64, error) {
	f.once.Do(func() {
		files := fashionFiles(p.Dir)
		for _, name := range files {
			if _, err := os.Stat(name); err != nil {
				f.err = fmt.Errorf("skipped: Fashion-MNIST not found (%s); install the Debian package dataset-fashion-mnist or set $PSDLEARN_FASHION_DIR", name)
				return
			}
		}
		t0 := time.Now()
		tr, err := data.Load("idx:"+files[0]+":"+files[1], data.LoadOptions{})
		if err != nil {
			f.err = fmt.Errorf("bench: fashion: %w", err)
			return
		}
		test, err := data.Load("idx:"+files[2]+":"+files[3], data.LoadOptions{})
		if err != nil {
			f.err = fmt.Errorf("bench: fashion: %w", err)
			return
		}
		if tr.Dim() != test.Dim() {
			f.err = fmt.Errorf("bench: fashion: training images have %d pixels, test images %d", tr.Dim(), test.Dim())
			return
		}
		if err := data.UnifyClasses(tr, test); err != nil {
			f.err = fmt.Errorf("bench: fashion: %w", err)
			return
		}
		parts, err := data.SplitRows(tr, []int{p.Train, p.Val})
		if err != nil {
			f.err = fmt.Errorf("bench: fashion: %w", err)
			return
		}
		f.parts = append(parts, test)
		f.seconds = time.Since(t0).Seconds()
	})
	return f.parts, f.seconds, f.err
}

// FashionCases returns the Fashion-MNIST cases of protocol p: BoostMetric
// (exponential loss, stage-wise), FrobMetric at C = 100, and FrobMetric
// with its default list of C values chosen on validation. The data are
// loaded on the first run, not when the cases are listed; without the data
// files every case reports a "skipped: …" error naming the missing file and
// the package. Each run reports, in Result.Metrics, the seconds of every
// phase (load — measured once, when the data were first read —
// preprocessing, triplets, training, each C solve, evaluation), the
// iterations and duality gap of the chosen model, whether it converged, and
// the test errors, and each phase's flop bound and the ratio of its time to
// that bound (see addFlopBounds); the harness adds the peak RSS. The cases take minutes:
// run them with --runs 1 --warmup=false.
func FashionCases(seed uint64, p FashionProtocol) []Case {
	if dir := os.Getenv("PSDLEARN_FASHION_DIR"); dir != "" {
		p.Dir = dir
	}
	fd := &fashionData{}
	detail := fmt.Sprintf("fashion-mnist rows:%d,%d + t10k, standardised, PCA %d, k = %d", p.Train, p.Val, p.PCA, p.K)
	var cases []Case
	for _, c := range []struct {
		name    string
		algo    string
		learner func(psdlearn.Common) psdlearn.Learner
	}{
		{"fashion boostmetric exp stage-wise", "boostmetric", func(c psdlearn.Common) psdlearn.Learner {
			return psdlearn.BoostMetric{Common: c, Loss: boost.Exp, Mode: boost.Stagewise}
		}},
		{"fashion frobmetric C=100", "frobmetric", func(c psdlearn.Common) psdlearn.Learner { return psdlearn.FrobMetric{Common: c, C: []float64{100}} }},
		{"fashion frobmetric", "frobmetric", func(c psdlearn.Common) psdlearn.Learner { return psdlearn.FrobMetric{Common: c} }},
	} {
		c := c
		cases = append(cases, Case{Name: c.name, Size: p.Train, Detail: detail, Setup: func(b engine.Backend) (func(context.Context) (Outcome, error), error) {
			parts, loadSeconds, err := fd.load(p)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context) (Outcome, error) {
				rep, err := runExperiment(ctx, c.learner(psdlearn.Common{Standardize: true, PCA: p.PCA, K: p.K, Seed: seed, Backend: b}), parts)
				if err != nil {
					return Outcome{}, err
				}
				rep.Phases.Load = loadSeconds
				m := ExperimentMetrics(rep)
				addFlopBounds(m, rep, b)
				return Outcome{Iterations: rep.Iterations, Metrics: m, Curve: rep.Curve}, nil
			}, nil
		}})
	}
	return cases
}

// ExperimentMetrics are the figures of a psdlearn.Result as bench metrics:
// test and validation errors (learned and Euclidean), the chosen C, the
// duality gap and its tolerance when the algorithm has them, converged (1
// or 0), and the seconds of every phase — "phase_load", "phase_preprocess",
// "phase_triplets", "phase_train", "phase_evaluation", and one
// "phase_solve_C=…" (or "phase_solve") per solve.
func ExperimentMetrics(rep *psdlearn.Result) map[string]float64 {
	m := map[string]float64{
		"test_error": rep.Eval.TestError, "euclidean_test_error": rep.Eval.EuclideanTestError,
		"phase_load": rep.Phases.Load, "phase_preprocess": rep.Phases.Preprocess, "phase_triplets": rep.Phases.Triplets,
		"phase_train": rep.Phases.Train, "phase_evaluation": rep.Phases.Evaluation, "converged": 0,
	}
	if rep.Certificate.Converged {
		m["converged"] = 1
	}
	for k, v := range map[string]float64{"val_error": rep.Eval.ValError, "duality_gap": rep.DualityGap, "gap_tolerance": rep.Certificate.Tolerance, "chosen_c": rep.ChosenC} {
		if !math.IsNaN(v) {
			m[k] = v
		}
	}
	for _, s := range rep.Phases.Solves {
		key := "phase_solve"
		if !math.IsNaN(s.C) {
			key = fmt.Sprintf("phase_solve_C=%g", s.C)
		}
		m[key] += s.Seconds
	}
	return m
}
