package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/psdlearn/psdlearn"
	"github.com/psdlearn/psdlearn/algos/meg"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/internal/npy"
	"github.com/psdlearn/psdlearn/limits"
	"github.com/psdlearn/psdlearn/model"
	"gonum.org/v1/gonum/mat"
)

// The user's inputs of `psdlearn kernel`: a target kernel
// (--target) instead of the RBF kernel of --data, the labels of its objects
// (--labels), MEG's online distance examples (--distances) instead of
// --steps sampled from the target, and DefiniteBoost's must-link and
// cannot-link pairs (--pairs) instead of the target's close pairs. Without
// --target and without an explicit --data, --distances and --pairs need no
// target at all: the number of objects is --objects, else the number of
// --labels, else the largest index + 1.

// kernelSource is where the objects and the target kernel come from.
type kernelSource int

const (
	sourceData   kernelSource = iota // the RBF kernel of --data (meg.NewTarget)
	sourceTarget                     // --target FILE
	sourceNone                       // no target: --distances or --pairs alone
)

func (f *kernelFlags) source() kernelSource {
	switch {
	case f.target != "":
		return sourceTarget
	case (f.distances != "" || f.pairs != "") && !f.dataSet:
		return sourceNone
	}
	return sourceData
}

// inputFlags defines --target, --labels, --distances, --pairs and --eps-far.
func inputFlags(fs *flag.FlagSet, f *kernelFlags) {
	fs.StringVar(&f.target, "target", "", "target kernel FILE instead of the RBF kernel of --data: an n×n symmetric positive semidefinite matrix, .npy or CSV without header (normalised to trace one)")
	fs.StringVar(&f.labels, "labels", "", "FILE of one class label per line, one line per object, for the 1-NN errors (without it they are skipped)")
	fs.StringVar(&f.distances, "distances", "", "meg: the online examples, a CSV FILE with header i,j,d (0-based objects i != j, d = K_ii + K_jj - 2K_ij >= 0 of the target) used in file order instead of --steps sampled from the target")
	fs.StringVar(&f.pairs, "pairs", "", "definiteboost: the constraints, a CSV FILE with header i,j,y: y = +1 must-link ½|x_i-x_j|^2 <= epsilon, y = -1 cannot-link ½|x_i-x_j|^2 >= epsilon_far, instead of the target's close pairs")
	fs.IntVar(&f.passes, "passes", 1, "meg with --distances: passes over the file's examples, the first in file order, each further one in an order shuffled by --seed")
	fs.Float64Var(&f.epsFar, "eps-far", psdlearn.DefaultFar, "definiteboost with --pairs: epsilon_far*d of the cannot-links (the initial kernel I/d gives every pair ½|x_a-x_b|^2 = 1/d)")
}

// inputRules are the flag-scope rules of the user's inputs.
func inputRules(f *kernelFlags, isMEG, isBoost func() bool) []flagRule {
	fromData := func() bool { return f.source() == sourceData }
	const rbf = "the RBF target of --data"
	return []flagRule{
		{"distances", "meg", isMEG},
		{"pairs", "definiteboost", isBoost},
		{"eps-far", "definiteboost with --pairs", func() bool { return isBoost() && f.pairs != "" }},
		{"passes", "meg with --distances", func() bool { return isMEG() && f.distances != "" }},
		{"data", "runs without --target", func() bool { return f.target == "" }},
		{"gamma", rbf, fromData}, {"gamma-scale", rbf, fromData}, {"standardize", rbf, fromData}, {"label-col", rbf, fromData},
		{"labels", "--target, or --distances/--pairs without --data", func() bool { return !fromData() }},
		{"objects", "--data, or --distances/--pairs without --target", func() bool { return f.target == "" }},
		{"plot", "the RBF target of --data without --distances or --pairs", func() bool { return fromData() && f.distances == "" && f.pairs == "" }},
	}
}

// checkInputFlags refuses --steps and --noise with --distances: the
// examples and their labels are the file's.
func checkInputFlags(fs *flag.FlagSet, f kernelFlags) error {
	if f.distances == "" {
		return nil
	}
	var err error
	fs.Visit(func(fl *flag.Flag) {
		if err == nil && (fl.Name == "steps" || fl.Name == "noise") && fl.Value.String() != fl.DefValue {
			err = usagef("kernel: --%s does not apply with --distances (the online examples are the file's, in order)", fl.Name)
		}
	})
	return err
}

// flagGiven reports whether flag name was set on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(fl *flag.Flag) { given = given || fl.Name == name })
	return given
}

// userInput is what the user's files gave.
type userInput struct {
	kfile    *mat.Dense // the --target matrix as read
	trace    float64    // the trace of the target as given (--target, or n for the RBF kernel of --data): d of --distances is divided by it
	examples *meg.DistSequence
	pairs    *constraints.Pairs
	cons     []meg.Sym // DefiniteBoost's constraints of pairs
}

// inputSummary is the part of the JSON summaries about the user's inputs.
type inputSummary struct {
	Target        string     `json:"target,omitempty"`
	TargetTrace   *jsonFloat `json:"target_trace,omitempty"`
	Labels        string     `json:"labels,omitempty"`
	Distances     string     `json:"distances,omitempty"`
	DistanceScale *jsonFloat `json:"distance_scale,omitempty"` // d of --distances is multiplied by it
	Passes        int        `json:"passes,omitempty"`         // over --distances
	Pairs         string     `json:"pairs,omitempty"`
	MustLinks     *int       `json:"must_links,omitempty"`
	CannotLinks   *int       `json:"cannot_links,omitempty"`
	EpsilonFar    *jsonFloat `json:"epsilon_far,omitempty"`
	// NNSkipped says why the 1-NN errors (null) were not computed.
	NNSkipped string `json:"nn_evaluation_skipped,omitempty"`
}

func (s *kernelSetup) summary(f kernelFlags) inputSummary {
	sum := inputSummary{Target: f.target, Labels: f.labels, Distances: f.distances, Pairs: f.pairs}
	if f.target != "" {
		sum.TargetTrace = ptrFloat(s.in.trace)
	}
	if s.in.examples != nil {
		scale := 1.0
		if s.in.trace > 0 {
			scale = 1 / s.in.trace
		}
		sum.DistanceScale = ptrFloat(scale)
		sum.Passes = f.passes
	}
	if s.in.pairs != nil {
		ml, cl := s.in.pairs.Counts()
		sum.MustLinks, sum.CannotLinks = &ml, &cl
	}
	if !s.Labelled() {
		sum.NNSkipped = "no labels: give --labels FILE for the 1-NN errors"
	}
	return sum
}

// info is the kernel model's record of the user's inputs.
func (in userInput) info(f kernelFlags) map[string]any {
	m := map[string]any{}
	for k, v := range map[string]string{"target": f.target, "labels": f.labels, "distances": f.distances, "pairs": f.pairs} {
		if v != "" {
			m[k] = v
		}
	}
	if f.target != "" {
		m["target_trace"] = in.trace
	}
	if in.examples != nil {
		m["passes"] = f.passes
	}
	if in.pairs != nil {
		m["eps_far"] = f.epsFar
	}
	return m
}

// provenanceData describes a --target matrix as read with the labels (nil
// without a target).
func (s *kernelSetup) provenanceData(f kernelFlags) *model.DataInfo {
	if s.in.kfile == nil {
		return nil
	}
	return model.DescribeData(f.target, s.in.kfile, s.Y, s.classes)
}

func (s *kernelSetup) dataName(f kernelFlags) string {
	switch f.source() {
	case sourceData:
		return f.data
	case sourceTarget:
		return f.target
	}
	return ""
}

func (s *kernelSetup) dim() int {
	if s.X == nil {
		return 0
	}
	return s.X.RawMatrix().Cols
}

// describe is the progress line about the objects and the target.
func (s *kernelSetup) describe(f kernelFlags) string {
	var what string
	switch f.source() {
	case sourceData:
		what = fmt.Sprintf("%d objects of %s (%d classes), RBF gamma %.4g", s.Objects(), s.name, s.Classes, s.Gamma)
	case sourceTarget:
		what = fmt.Sprintf("%d objects of the target kernel %s (trace %.6g)", s.Objects(), f.target, s.in.trace)
	default:
		what = fmt.Sprintf("%d objects, no target kernel", s.Objects())
	}
	switch {
	case s.U != nil && s.Labelled():
		what += fmt.Sprintf("; target 1-NN error %.4f (LOO %.4f)", s.NN.Mean, s.NN.LOO)
	case !s.Labelled():
		what += "; no labels, no 1-NN errors"
	}
	if s.in.examples != nil {
		what += fmt.Sprintf("; %d distance examples from %s", s.in.examples.Len(), f.distances)
	}
	if s.in.pairs != nil {
		ml, cl := s.in.pairs.Counts()
		what += fmt.Sprintf("; %d must-links and %d cannot-links from %s", ml, cl, f.pairs)
	}
	return what
}

// userTarget builds the experiment of --target, or of --distances/--pairs
// without a target.
func userTarget(f *kernelFlags, b engine.Backend) (*kernelSetup, error) {
	s := &kernelSetup{b: b}
	var y []int
	if f.labels != "" {
		var err error
		if y, s.classes, err = readLabelFile(f.labels); err != nil {
			return nil, err
		}
	}
	opt := meg.KernelTargetOptions{Splits: f.splits, Seed: f.seed}
	if f.target != "" {
		k, err := readTargetFile(f.target)
		if err != nil {
			return nil, err
		}
		n, _ := k.Dims()
		if y != nil && len(y) != n {
			return nil, fmt.Errorf("kernel: --labels %s: %d labels for the %d objects of --target %s", f.labels, len(y), n, f.target)
		}
		if err := checkKernelOut("kernel", f.out, n); err != nil {
			return nil, err
		}
		t, err := meg.NewKernelTarget(k, y, opt)
		if err != nil {
			return nil, fmt.Errorf("kernel: --target %s: %w", f.target, err)
		}
		t.Gamma = math.NaN()
		s.Target, s.name = t, filepath.Base(f.target)
		s.in.kfile = k
		for i := 0; i < n; i++ {
			s.in.trace += k.At(i, i)
		}
		if _, err := s.readInputs(f, n); err != nil {
			return nil, err
		}
		if err := s.makeExamples(f); err != nil {
			return nil, err
		}
		return s, nil
	}
	n := f.objects // -1: not given
	if n < 0 && y != nil {
		n = len(y)
	}
	n, err := s.readInputs(f, n)
	if err != nil {
		return nil, err
	}
	if y != nil && len(y) != n {
		return nil, fmt.Errorf("kernel: --labels %s: %d labels for %d objects (--objects)", f.labels, len(y), n)
	}
	// The learners keep a few dense n×n matrices; an index far beyond the
	// data's objects is refused here rather than by running out of memory.
	if err := limits.Check(fmt.Sprintf("kernel: the %d×%d kernels of %d objects (largest index of %s + 1, or --objects)", n, n, n, f.distances+f.pairs), limits.Words(6, n, n)); err != nil {
		return nil, err
	}
	if err := checkKernelOut("kernel", f.out, n); err != nil {
		return nil, err
	}
	t, err := meg.NewObjectTarget(n, y, opt)
	if err != nil {
		return nil, fmt.Errorf("kernel: %w", err)
	}
	t.Gamma = math.NaN()
	s.Target, s.name = t, filepath.Base(f.distances+f.pairs) // one of them
	if err := s.makeExamples(f); err != nil {
		return nil, err
	}
	return s, nil
}

// readExamples reads --distances and --pairs about the objects of the RBF
// target of --data (whose kernel has K_ii = 1, trace n).
func (s *kernelSetup) readExamples(f *kernelFlags) error {
	n := s.Objects()
	s.in.trace = float64(n)
	if _, err := s.readInputs(f, n); err != nil {
		return err
	}
	return s.makeExamples(f)
}

// readInputs reads --distances or --pairs about n objects (n ≤ 0: the
// largest index + 1) and returns n.
func (s *kernelSetup) readInputs(f *kernelFlags, n int) (int, error) {
	if f.distances != "" {
		fh, err := os.Open(f.distances)
		if err != nil {
			return 0, fmt.Errorf("kernel: --distances: %w", err)
		}
		defer fh.Close()
		d, err := constraints.ReadDistances(bufio.NewReader(fh), n)
		if err != nil {
			return 0, fmt.Errorf("kernel: --distances %s: %w", f.distances, err)
		}
		if d.N < 2 {
			return 0, fmt.Errorf("kernel: --distances %s: the indices name %d object(s), want at least 2", f.distances, d.N)
		}
		n = d.N
		pairs := make([]engine.Pair, len(d.List))
		sq := make([]float64, len(d.List))
		for t, e := range d.List {
			pairs[t], sq[t] = engine.Pair{A: e.A, B: e.B}, e.D
		}
		s.in.examples = &meg.DistSequence{N: n, Pairs: pairs, Y: sq} // made into examples by makeExamples
	}
	if f.pairs != "" {
		fh, err := os.Open(f.pairs)
		if err != nil {
			return 0, fmt.Errorf("kernel: --pairs: %w", err)
		}
		defer fh.Close()
		bound := n
		if bound <= 0 {
			bound = math.MaxInt32
		}
		p, err := constraints.ReadPairs(bufio.NewReader(fh), bound)
		if err != nil {
			return 0, fmt.Errorf("kernel: --pairs %s: %w", f.pairs, err)
		}
		if n <= 0 {
			n = 0
			for _, q := range p.List {
				n = max(n, q.B+1)
			}
			if p, err = constraints.NewPairs(n, p.List); err != nil {
				return 0, fmt.Errorf("kernel: --pairs %s: %w", f.pairs, err)
			}
		}
		s.in.pairs = p
	}
	return n, nil
}

// makeExamples turns the squared distances of --distances into MEG's
// examples y = d/(2·trace), in the units of the trace-one target.
func (s *kernelSetup) makeExamples(f *kernelFlags) error {
	if s.in.examples == nil {
		return nil
	}
	raw := s.in.examples
	d := raw.Y
	if s.in.trace > 0 {
		d = make([]float64, len(raw.Y))
		for t, v := range raw.Y {
			d[t] = v / s.in.trace
		}
	}
	if f.passes < 1 {
		return usagef("kernel: --passes must be at least 1")
	}
	pairs := raw.Pairs
	if f.passes > 1 {
		m := len(d)
		if m > constraints.MaxReadConstraints*16/f.passes {
			return usagef("kernel: --passes %d over %d examples: more than %d online examples", f.passes, m, constraints.MaxReadConstraints*16)
		}
		pairs = append(make([]engine.Pair, 0, m*f.passes), raw.Pairs...)
		d = append(make([]float64, 0, m*f.passes), d...)
		rng := rand.New(rand.NewPCG(f.seed, 0x70617373)) // "pass"
		for p := 1; p < f.passes; p++ {
			for _, t := range rng.Perm(m) {
				pairs, d = append(pairs, pairs[t]), append(d, d[t])
			}
		}
	}
	seq, err := meg.NewDistances(s.Objects(), pairs, d)
	if err != nil {
		return fmt.Errorf("kernel: --distances %s: %w", f.distances, err)
	}
	s.in.examples = seq
	f.steps = seq.Len()
	return nil
}

// pairConstraints makes DefiniteBoost's constraints of --pairs:
// must-links ½|x_a-x_b|^2 <= epsilon, cannot-links >= epsilon_far.
func (s *kernelSetup) pairConstraints(f kernelFlags) error {
	if s.in.pairs == nil {
		return nil
	}
	d := s.Objects()
	eps, far := f.epsScale/float64(d), f.epsFar/float64(d)
	if !(far > 0 && far < 1) {
		return usagef("kernel: --eps-far must give 0 < epsilon_far = eps-far/d < 1 (d = %d objects)", d)
	}
	s.in.cons = make([]meg.Sym, 0, s.in.pairs.Len())
	for _, p := range s.in.pairs.List {
		if p.Same {
			s.in.cons = append(s.in.cons, meg.NearConstraint(d, p.A, p.B, eps))
		} else {
			s.in.cons = append(s.in.cons, meg.FarConstraint(d, p.A, p.B, far))
		}
	}
	return nil
}

// readTargetFile reads the --target matrix: .npy, or CSV without header,
// one row per line (data.ParseCSV, within the data limits). The matrix
// checks (symmetric, PSD) are meg.NewKernelTarget's.
func readTargetFile(path string) (*mat.Dense, error) {
	var m *mat.Dense
	if npy.IsNPY(path) {
		var err error
		if m, err = npy.ReadFile(path); err != nil {
			return nil, fmt.Errorf("kernel: --target: %w", err)
		}
	} else {
		d, err := readUserFile(path, func(r io.Reader, opt data.LoadOptions) (*data.Dataset, error) {
			opt.Header, opt.NoLabels = data.HeaderAbsent, true
			return data.ParseCSV(r, path, opt)
		})
		if err != nil {
			return nil, fmt.Errorf("kernel: --target (a CSV matrix without header): %w", err)
		}
		m = d.X
	}
	if r, c := m.Dims(); r != c {
		return nil, fmt.Errorf("kernel: --target %s: a %d×%d matrix, want a square matrix", path, r, c)
	}
	return m, nil
}

// readLabelFile reads --labels: one class label per line
// (data.ParseLabels); y holds the indices of the classes.
func readLabelFile(path string) ([]int, []string, error) {
	type labels struct {
		y       []int
		classes []string
	}
	l, err := readUserFile(path, func(r io.Reader, opt data.LoadOptions) (labels, error) {
		y, classes, err := data.ParseLabels(r, path, opt)
		return labels{y, classes}, err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("kernel: --labels: %w", err)
	}
	return l.y, l.classes, nil
}

// readUserFile opens path and parses it with parse, within the data limits
// of the command line (--max-memory, --max-input, --max-line): the parser
// reads a bounded text input (openTextReader) that names path in its
// errors.
func readUserFile[T any](path string, parse func(io.Reader, data.LoadOptions) (T, error)) (T, error) {
	var zero T
	opt, err := loadOptions("")
	if err != nil {
		return zero, err
	}
	r, closer, err := openTextReader(path)
	if err != nil {
		return zero, err
	}
	defer closer.Close()
	v, err := parse(r, opt)
	if err != nil {
		return zero, limitHint(err, "")
	}
	return v, nil
}
