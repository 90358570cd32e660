package reliability

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/algos/boost"
	"github.com/psdlearn/psdlearn/algos/frob"
	"github.com/psdlearn/psdlearn/algos/meg"
	"github.com/psdlearn/psdlearn/algos/mvu"
	"github.com/psdlearn/psdlearn/algos/sdp"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/limits"
	"github.com/psdlearn/psdlearn/lp"
	"github.com/psdlearn/psdlearn/model"
	"gonum.org/v1/gonum/mat"
)

// adversarial holds the hostile numbers: every one of them,
// given where a positive finite number of ordinary size is expected, must
// give an error.
var adversarial = []struct {
	name string
	v    float64
}{
	{"NaN", math.NaN()},
	{"+Inf", math.Inf(1)},
	{"-Inf", math.Inf(-1)},
	{"negative", -1},
	{"-MaxFloat64", -math.MaxFloat64},
}

// hugeValues are finite values too large for the quantity they stand for.
var hugeValues = []struct {
	name string
	v    float64
}{
	{"6e307", 6e307},
	{"MaxFloat64", math.MaxFloat64},
}

// hostileCase is one call of an exported entry point with adversarial input;
// it must return an error and never panic.
type hostileCase struct {
	name string
	f    func() error
}

// TestHostileInputs calls the exported entry points of the algorithm and
// data packages with NaN, ±Inf, zero, negative, huge, empty and mismatched
// values where each is invalid, on every backend, and requires
// an error — never a panic, never a silent result. It runs under a memory
// limit of 1 GiB so that a size check that is missing fails fast instead of
// exhausting the machine.
func TestHostileInputs(t *testing.T) {
	defer limits.SetMaxMemory(limits.SetMaxMemory(1 << 30))
	ctx := context.Background()
	x, y := twoClasses(40, 3)
	ts, err := constraints.Triplets(x, y, 2)
	if err != nil {
		t.Fatal(err)
	}
	d := dataset(x, y)
	bigX := func(v float64) *mat.Dense { return withValue(x, 4, 1, v) }
	total := 0
	for _, bname := range scaleBackends() {
		b, _ := engine.Get(bname)
		var cases []hostileCase
		add := func(name string, f func() error) { cases = append(cases, hostileCase{name, f}) }
		bad := append(append([]struct {
			name string
			v    float64
		}{}, adversarial...), hugeValues...)

		// Values in the data matrix: non-finite, and finite but so large
		// that squared distances overflow (negative values are ordinary data).
		for _, a := range bad {
			if a.name == "negative" {
				continue
			}
			xv := bigX(a.v)
			add("Triplets x="+a.name, func() error { _, err := constraints.Triplets(xv, y, 2); return err })
			add("KNNError x="+a.name, func() error { _, err := eval.KNNError(b, xv, y, x, y, 3); return err })
			add("KNNError test x="+a.name, func() error { _, err := eval.KNNError(b, x, y, xv, y, 3); return err })
			add("LOOKNNError x="+a.name, func() error { _, err := eval.LOOKNNError(b, xv, y, 3); return err })
			add("KMeans x="+a.name, func() error { _, err := eval.KMeans(ctx, xv, 2, eval.KMeansOptions{Restarts: 1}); return err })
			add("BoostMetric x="+a.name, func() error {
				_, err := boost.BoostMetric(ctx, xv, ts, boost.Options{Backend: b, Iters: 5})
				return err
			})
			add("PSDBoost x="+a.name, func() error {
				_, err := boost.PSDBoost(ctx, xv, ts, boost.Options{Backend: b, Iters: 5})
				return err
			})
			add("FrobMetric x="+a.name, func() error {
				_, err := frob.Learn(ctx, xv, ts, frob.MetricOptions{C: 1, Backend: b, MaxIter: 20})
				return err
			})
			add("MVU x="+a.name, func() error {
				_, err := mvu.Embed(ctx, xv, mvu.Options{K: 4, SDP: sdp.Options{Backend: b}})
				return err
			})
			add("RBFKernel x="+a.name, func() error { _, err := meg.RBFKernel(xv, 1); return err })
			add("MedianGamma x="+a.name, func() error { _, err := meg.MedianGamma(xv); return err })
			add("FitPCA x="+a.name, func() error { _, err := data.FitPCA(b, xv, 2); return err })
			if math.IsNaN(a.v) || math.IsInf(a.v, 0) {
				add("FitStandardizer x="+a.name, func() error { _, err := data.FitStandardizer(xv); return err })
				add("NewMetric entry="+a.name, func() error {
					_, err := model.NewMetric(mat.NewSymDense(2, []float64{1, a.v, a.v, 1}))
					return err
				})
			}
		}
		// Scalar options: every adversarial value where a positive finite
		// number is required; the huge ones where the range is bounded.
		for _, a := range append(adversarial, struct {
			name string
			v    float64
		}{"zero", 0}) {
			v := a.v
			if v != 0 { // zero selects the default for these
				add("BoostMetric Nu="+a.name, func() error {
					_, err := boost.BoostMetric(ctx, x, ts, boost.Options{Backend: b, Nu: v, Iters: 5})
					return err
				})
				add("PSDBoost C="+a.name, func() error {
					_, err := boost.PSDBoost(ctx, x, ts, boost.Options{Backend: b, C: v, Iters: 5})
					return err
				})
			}
			if !(v == 0) && !(v < 0 && !math.IsInf(v, 0)) { // Eps: 0 default, negative finite rejected below
				add("PSDBoost Eps="+a.name, func() error {
					_, err := boost.PSDBoost(ctx, x, ts, boost.Options{Backend: b, Eps: v, Iters: 5})
					return err
				})
			}
			add("FrobMetric C="+a.name, func() error {
				_, err := frob.Learn(ctx, x, ts, frob.MetricOptions{C: v, Backend: b, MaxIter: 20})
				return err
			})
			add("RBFKernel gamma="+a.name, func() error { _, err := meg.RBFKernel(x, v); return err })
			add("XingPairs ratio="+a.name, func() error { _, err := constraints.XingPairs(y, v, 1); return err })
			add("Split frac="+a.name, func() error { _, err := data.Split(d, []float64{v, 1 - v}, 1); return err })
			add("NewLearner eta="+a.name, func() error {
				if v == 0 {
					_, err := meg.NewLearner(3, meg.LearnerOptions{}) // zero Eta needs C and R
					return err
				}
				_, err := meg.NewLearner(3, meg.LearnerOptions{Eta: v})
				return err
			})
			if v != 0 {
				add("SampleDistances noise="+a.name, func() error {
					_, err := meg.SampleDistances(mat.NewSymDense(2, []float64{1, 0, 0, 1}), 10, v, 1)
					return err
				})
				if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > lp.MaxValue { // negative costs and coefficients are ordinary
					add("LP objective="+a.name, func() error { return lpWith(b, a.v, 1, 1) })
					add("LP coefficient="+a.name, func() error { return lpWith(b, 1, a.v, 1) })
				}
			}
		}
		for _, h := range []struct {
			name string
			v    float64
		}{{"1e25", 1e25}, {"1e300", 1e300}, {"MaxFloat64", math.MaxFloat64}} {
			add("PSDBoost C="+h.name, func() error {
				_, err := boost.PSDBoost(ctx, x, ts, boost.Options{Backend: b, C: h.v, Iters: 5})
				return err
			})
			add("LP objective="+h.name, func() error { return lpWith(b, h.v, 1, 1) })
			add("LP coefficient="+h.name, func() error { return lpWith(b, 1, h.v, 1) })
			add("LP row bound="+h.name, func() error { return lpWith(b, 1, 1, h.v) })
			add("Split frac="+h.name, func() error { _, err := data.Split(d, []float64{h.v, 1}, 1); return err })
		}
		// Integer limits: zero, negative, huge.
		for _, k := range []int{0, -1, math.MinInt, 41, math.MaxInt} {
			if k <= 0 { // k beyond a class takes the whole class (documented)
				add(fmt.Sprintf("Triplets k=%d", k), func() error { _, err := constraints.Triplets(x, y, k); return err })
			}
			add(fmt.Sprintf("KNNError k=%d", k), func() error { _, err := eval.KNNError(b, x, y, x, y, k); return err })
			add(fmt.Sprintf("KMeans k=%d", k), func() error { _, err := eval.KMeans(ctx, x, k, eval.KMeansOptions{Restarts: 1}); return err })
			add(fmt.Sprintf("FitPCA d=%d", k), func() error { _, err := data.FitPCA(b, x, k); return err })
			add(fmt.Sprintf("MVU K=%d", k), func() error {
				if k == 0 {
					k = 40 // zero selects the default 6
				}
				_, err := mvu.Embed(ctx, x, mvu.Options{K: k, SDP: sdp.Options{Backend: b}})
				return err
			})
		}
		for _, k := range []int{-1, math.MinInt, math.MaxInt, 1 << 40} {
			add(fmt.Sprintf("SampleDistances T=%d", k), func() error {
				_, err := meg.SampleDistances(mat.NewSymDense(2, []float64{1, 0, 0, 1}), k, 0, 1)
				return err
			})
			add(fmt.Sprintf("NewLearner d=%d", k), func() error { _, err := meg.NewLearner(k, meg.LearnerOptions{Eta: 1}); return err })
			add(fmt.Sprintf("RandomPairs m=%d", k), func() error { _, err := constraints.RandomPairs(y, k, 1); return err })
			if k < 0 { // a huge iteration limit is valid
				add(fmt.Sprintf("FrobMetric MaxIter=%d", k), func() error {
					_, err := frob.Learn(ctx, x, ts, frob.MetricOptions{C: 1, Backend: b, MaxIter: k})
					return err
				})
			}
			add(fmt.Sprintf("BoostMetric Iters=%d", k), func() error {
				if k > 0 {
					_, err := boost.BoostMetric(ctx, mat.NewDense(40, 20000, nil), ts, boost.Options{Backend: b, Iters: k})
					return err // refused by the memory estimate, not run
				}
				_, err := boost.Train(ctx, x, ts, boost.Options{Backend: b, Iters: k, Loss: boost.Hinge, C: math.NaN()})
				return err
			})
		}
		for _, counts := range [][]int{{math.MaxInt, 1}, {1, math.MaxInt}, {1 << 62, 1 << 62, 10}, {0}, {-1, 5}, {}, {41}, {20, 21}} {
			add(fmt.Sprintf("SplitRows %v", counts), func() error { _, err := data.SplitRows(d, counts); return err })
		}
		// Empty and mismatched inputs.
		empty := mat.NewDense(1, 1, nil)
		add("Triplets labels mismatch", func() error { _, err := constraints.Triplets(x, y[:39], 2); return err })
		add("KNNError labels mismatch", func() error { _, err := eval.KNNError(b, x, y[:3], x, y, 1); return err })
		add("KNNError dims mismatch", func() error { _, err := eval.KNNError(b, x, y, mat.NewDense(40, 2, nil), y, 1); return err })
		add("KNNError nil", func() error { _, err := eval.KNNError(b, nil, y, x, y, 1); return err })
		add("BoostMetric nil x", func() error { _, err := boost.BoostMetric(ctx, nil, ts, boost.Options{Backend: b}); return err })
		add("BoostMetric nil triplets", func() error { _, err := boost.BoostMetric(ctx, x, nil, boost.Options{Backend: b}); return err })
		add("PSDBoost rows mismatch", func() error { _, err := boost.PSDBoost(ctx, empty, ts, boost.Options{Backend: b}); return err })
		add("FrobMetric nil", func() error { _, err := frob.Learn(ctx, nil, nil, frob.MetricOptions{C: 1}); return err })
		add("FrobMetric U0 mismatch", func() error {
			_, err := frob.Learn(ctx, x, ts, frob.MetricOptions{C: 1, U0: []float64{1}, Backend: b})
			return err
		})
		add("FitStandardizer nil", func() error { _, err := data.FitStandardizer(nil); return err })
		add("FitPCA nil", func() error { _, err := data.FitPCA(b, nil, 1); return err })
		add("Standardize nil", func() error { _, err := data.Standardize(nil); return err })
		add("Split nil", func() error { _, err := data.Split(nil, []float64{1}, 1); return err })
		add("Split no fractions", func() error { _, err := data.Split(d, nil, 1); return err })
		add("SplitRows nil", func() error { _, err := data.SplitRows(nil, []int{1}); return err })
		add("NewMetric nil", func() error { _, err := model.NewMetric(nil); return err })
		add("NewMetric negative diagonal", func() error {
			_, err := model.NewMetric(mat.NewSymDense(2, []float64{-1, 0, 0, 1}))
			return err
		})
		add("NewKernel nil", func() error { _, err := model.NewKernel(nil, nil); return err })
		add("NewKernel negative eigenvalue", func() error {
			_, err := model.NewKernel(mat.NewDense(2, 1, []float64{1, 0}), []float64{-1})
			return err
		})
		add("NewKernel NaN eigenvalue", func() error {
			_, err := model.NewKernel(mat.NewDense(2, 1, []float64{1, 0}), []float64{math.NaN()})
			return err
		})
		add("NewPairs out of range", func() error { _, err := constraints.NewPairs(3, []constraints.LabelledPair{{A: 0, B: 7}}); return err })
		add("NewPairs self pair", func() error { _, err := constraints.NewPairs(3, []constraints.LabelledPair{{A: 1, B: 1}}); return err })
		add("NewTripletSet out of range", func() error {
			_, err := constraints.NewTripletSet(3, []constraints.Triplet{{I: 0, J: 1, K: 9}})
			return err
		})
		add("Load empty spec", func() error { _, err := data.Load("", data.LoadOptions{}); return err })
		add("ParseCSV empty", func() error { _, err := data.ParseCSV(strings.NewReader(""), "e", data.LoadOptions{}); return err })
		add("ParseCSV too many features", func() error {
			_, err := data.ParseCSV(strings.NewReader("a,b,c,l\n1,2,3,x\n"), "e", data.LoadOptions{MaxFeatures: 2})
			return err
		})
		add("ParseLIBSVM huge index", func() error {
			_, err := data.ParseLIBSVM(strings.NewReader("1 4194304:1\n"), "e", data.LoadOptions{MaxFeatures: 1000})
			return err
		})
		add("ParseLIBSVM empty", func() error { _, err := data.ParseLIBSVM(strings.NewReader(""), "e", data.LoadOptions{}); return err })
		add("ParseIDX empty", func() error {
			_, err := data.ParseIDX(bytes.NewReader(nil), bytes.NewReader(nil), "e", data.LoadOptions{})
			return err
		})
		add("ParseSplit overflow", func() error { _, err := data.ParseSplit("rows:9223372036854775807,1"); return err })
		add("ParseSplit NaN", func() error { _, err := data.ParseSplit("NaN,0.5"); return err })
		add("model.Load trailing", func() error {
			_, err := model.Load(strings.NewReader(`{"format":"psdlearn-model","version":1,"kind":"metric","metric":{"dim":1,"m":[[1]]}} x`))
			return err
		})
		add("VerificationAccuracy NaN distance", func() error {
			p, err := constraints.NewPairs(3, []constraints.LabelledPair{{A: 0, B: 1, Same: true}, {A: 1, B: 2}})
			if err != nil {
				return nil // fail the case: the pairs are valid
			}
			_, err = eval.VerificationAccuracy([]float64{math.NaN(), 1}, p, 0.5)
			return err
		})

		for _, c := range cases {
			total++
			name := bname + "/" + c.name
			_, err, panicked := call(t, name, func() (float64, error) { return 0, c.f() })
			if !panicked && err == nil {
				t.Errorf("%s: no error", name)
			}
		}
	}
	t.Logf("%d adversarial cases", total)
}

// lpWith solves min obj·x s.t. coef·x ≥ 1, x ≤ bound on the backend's LP solver.
func lpWith(b engine.Backend, obj, coef, bound float64) error {
	s := b.LP()
	p := lp.Problem{RowLower: []float64{1}, RowUpper: []float64{math.Inf(1)},
		Cols: []lp.Column{{Obj: obj, Lower: 0, Upper: bound, Rows: []int{0}, Vals: []float64{coef}}}}
	m, err := s.NewModel(p)
	if err != nil {
		return err
	}
	defer m.Close()
	_, err = m.Solve(context.Background())
	return err
}
