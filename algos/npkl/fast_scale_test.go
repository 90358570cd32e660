package npkl

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/datasets"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// TestScaleLettersSolvers compares the squared-hinge eigensolver variants on
// letters: products and time per iteration, final objective and
// clustering accuracy. NPKL_VARIANTS lists them, comma separated, from
// auto (the default: Krylov–Schur with its filter here; NPKL_BLOCK,
// NPKL_DEGREE and NPKL_CUT tune it), ksplain (Krylov–Schur without the
// filter), lanczos, early (Lanczos with EarlyEigTol = NPKL_EARLYTOL,
// default 1e-4), block, blockearly, krylovschur (block size NPKL_BLOCK,
// default 4), filtered, filteredearly; NPKL_ROWS > 0 keeps the first rows
// of letters only.
func TestScaleLettersSolvers(t *testing.T) {
	longOnly(t)
	defer func(on bool, b, kd, d int, c float64, log func(filterStats)) {
		ksFilter, ksBlock, ksFilterDegree, filterDegree, filterCut, filterLog = on, b, kd, d, c, log
	}(ksFilter, ksBlock, ksFilterDegree, filterDegree, filterCut, filterLog)
	ds, err := datasets.Open("letters")
	if err != nil {
		t.Fatal(err)
	}
	b := engine.Default()
	if rows := envInt("NPKL_ROWS", 0); rows > 0 {
		// The first rows only (the Auto threshold's measurements).
		_, d := ds.X.Dims()
		ds.X, ds.Y = mat.DenseCopyOf(ds.X.Slice(0, rows, 0, d)), ds.Y[:rows]
	}
	lap, err := Laplacian(ds.X, 50, sparse.GraphOptions{}, b)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := constraints.XingPairs(ds.Y, 0.7, 1)
	if err != nil {
		t.Fatal(err)
	}
	variants := os.Getenv("NPKL_VARIANTS")
	if variants == "" {
		variants = "auto,lanczos"
	}
	var ref float64
	for _, v := range strings.Split(variants, ",") {
		opt := Options{Loss: SquaredHinge, C: 0.5, MaxRank: 100, EigTol: envFloat("NPKL_EIGTOL", 1e-8), Iters: envInt("NPKL_ITERS", 10), Backend: b, Seed: 1}
		ksFilter = true
		switch v {
		case "lanczos":
			opt.Eigensolver = Lanczos
		case "early":
			opt.Eigensolver = Lanczos
			opt.EarlyEigTol = envFloat("NPKL_EARLYTOL", 1e-4)
		case "block":
			opt.Eigensolver = Block
		case "krylovschur":
			opt.Eigensolver = KrylovSchur
			ksBlock = envInt("NPKL_BLOCK", 0)
		case "ksplain":
			opt.Eigensolver = KrylovSchur
			ksFilter = false
		case "auto":
			ksBlock = envInt("NPKL_BLOCK", 0)
			ksFilterDegree = envInt("NPKL_DEGREE", ksFilterDegree)
			filterCut = envFloat("NPKL_CUT", filterCut)
			filterLog = func(f filterStats) { t.Logf("  %s degree %d: %s", v, ksFilterDegree, f) }
		case "filtered", "filteredearly":
			opt.Eigensolver = Filtered
			filterDegree = envInt("NPKL_DEGREE", filterDegree)
			filterCut = envFloat("NPKL_CUT", filterCut)
			if v == "filteredearly" {
				opt.EarlyEigTol = envFloat("NPKL_EARLYTOL", 1e-4)
			}
			filterLog = func(f filterStats) { t.Logf("  %s degree %d: %s", v, filterDegree, f) }
		case "blockearly":
			opt.Eigensolver = Block
			opt.EarlyEigTol = envFloat("NPKL_EARLYTOL", 1e-4)
		}
		res, err := Learn(context.Background(), lap, cons, opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range res.History {
			t.Logf("%s: t=%d products %d %.1fs objective %.12g rank %d", v, it.T, it.OpApplies, it.Seconds, it.Objective, it.Rank)
		}
		if sp := res.Spectrum; len(sp) > 0 {
			t.Logf("%s: last spectrum %.4g %.4g … %.4g %.4g", v, sp[0], sp[1], sp[len(sp)-2], sp[len(sp)-1])
		}
		obj := res.History[len(res.History)-1].Objective
		if ref == 0 {
			ref = obj
		}
		km, err := eval.KMeans(context.Background(), res.Factor(), numClasses(ds.Y), eval.KMeansOptions{Restarts: 3, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: learn %.1fs, %d products, final objective %.12g (rel. diff %.2g to the first variant), pairwise accuracy %.4f",
			v, res.Seconds, res.OpApplies, obj, math.Abs(obj-ref)/math.Abs(ref), eval.PairwiseAccuracy(ds.Y, km.Assign))
	}
}
