package model

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/errs"
	"github.com/psdlearn/psdlearn/preprocess"
	"gonum.org/v1/gonum/mat"
)

// sameArithmetic reports whether the destination-buffer methods and
// Transform run the same instructions: on amd64 gonum's GEMM is assembly
// with a separate multiply and add per update, and f64.Axpy (assembly or
// Go with the product rounded) does the same updates in the same order.
// Elsewhere gonum's pure-Go loops may be compiled to fused multiply-adds,
// so only the rounding-error bound is asserted there.
var sameArithmetic = runtime.GOARCH == "amd64"

type rowCase struct {
	name string
	m    *Model
}

// rowCases returns metric models of every shape the row methods handle:
// no preprocessing, standardisation, PCA with and without it, and models
// whose PCA components and coordinates exceed the stack chunk (several
// passes). They are built once per test binary.
func rowCases(t testing.TB) []rowCase {
	t.Helper()
	rowCasesOnce.Do(func() { rowCasesVal, rowCasesErr = buildRowCases() })
	if rowCasesErr != nil {
		t.Fatal(rowCasesErr)
	}
	return rowCasesVal
}

var (
	rowCasesOnce sync.Once
	rowCasesVal  []rowCase
	rowCasesErr  error
)

func buildRowCases() (cases []rowCase, err error) {
	metric := func(seed uint64, d, r int) *Metric {
		m, e := NewMetric(lowRankPSD(seed, d, r))
		if e != nil {
			err = e
		}
		return m
	}
	std := func(seed uint64, d int) *preprocess.Standardizer {
		s := &preprocess.Standardizer{Mean: make([]float64, d), Scale: make([]float64, d)}
		r := randDense(seed, 2, d)
		for j := 0; j < d; j++ {
			s.Mean[j], s.Scale[j] = 10*r.At(0, j), 0.5+math.Abs(r.At(1, j))
		}
		return s
	}
	pipeline := func(seed uint64, n, d int, standardize bool, pca int) *preprocess.Pipeline {
		p, e := data.FitPipeline(nil, randDense(seed, n, d), standardize, pca)
		if e != nil {
			err = e
		}
		return p
	}
	cases = []rowCase{
		{"identity D=3", &Model{Kind: KindMetric, Metric: Identity(3)}},
		{"rank 2 of D=5", &Model{Kind: KindMetric, Metric: metric(1, 5, 2)}},
		{"standardised D=13", &Model{Kind: KindMetric, Metric: metric(2, 13, 13), Preprocess: &preprocess.Pipeline{Std: std(3, 13)}}},
		{"standardised, PCA 6→3, rank 2", &Model{Kind: KindMetric, Metric: metric(4, 3, 2), Preprocess: pipeline(5, 40, 6, true, 3)}},
		{"PCA 10→4", &Model{Kind: KindMetric, Metric: metric(6, 4, 4), Preprocess: pipeline(7, 30, 10, false, 4)}},
		{"standardised D=300 (2 chunks)", &Model{Kind: KindMetric, Metric: metric(8, 300, 290), Preprocess: &preprocess.Pipeline{Std: std(9, 300)}}},
		{"standardised, PCA 320→280, rank 270 (2 chunks)", &Model{Kind: KindMetric, Metric: metric(10, 280, 270), Preprocess: pipeline(11, 330, 320, true, 280)}},
	}
	return cases, err
}

// rowBound returns, per coordinate of each row of x, γ·(|x′|·|C|·|L|)
// with x′ the standardised and centred rows: a bound on the rounding error
// of any order of summation, γ = 2(D + d)·ε.
func rowBound(t *testing.T, m *Model, x *mat.Dense) *mat.Dense {
	t.Helper()
	rm, err := m.rowMap()
	if err != nil {
		t.Fatal(err)
	}
	n, _ := x.Dims()
	abs := func(a mat.Matrix) *mat.Dense {
		r, c := a.Dims()
		out := mat.NewDense(r, c, nil)
		out.Apply(func(_, _ int, v float64) float64 { return math.Abs(v) }, a)
		return out
	}
	xp := mat.NewDense(n, rm.in, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < rm.in; j++ {
			xp.Set(i, j, math.Abs(rm.feature(j, x.At(i, j))))
		}
	}
	cur, dims := mat.Matrix(xp), rm.in
	if rm.comp != nil {
		var p mat.Dense
		p.Mul(cur, abs(m.Preprocess.PCA.Components))
		cur, dims = &p, dims+rm.d
	}
	var z mat.Dense
	z.Mul(cur, abs(m.Metric.L))
	z.Scale(2*float64(dims)*0x1p-52, &z)
	return &z
}

func TestTransformRowTo(t *testing.T) {
	for _, tc := range rowCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.m
			x := randDense(12, 7, m.InputDim())
			x.Scale(5, x)
			want, err := m.Transform(x)
			if err != nil {
				t.Fatal(err)
			}
			n, r := want.Dims()
			if r != m.OutputDim() {
				t.Fatalf("OutputDim %d, Transform gives %d columns", m.OutputDim(), r)
			}
			bound := rowBound(t, m, x)
			check := func(how string, got *mat.Dense) {
				t.Helper()
				for i := 0; i < n; i++ {
					for j := 0; j < r; j++ {
						g, w := got.At(i, j), want.At(i, j)
						if sameArithmetic && g != w || math.Abs(g-w) > bound.At(i, j) {
							t.Fatalf("%s: row %d coordinate %d: %v, Transform %v (bound %g)", how, i, j, g, w, bound.At(i, j))
						}
					}
				}
			}
			rows := mat.NewDense(n, r, nil)
			for i := 0; i < n; i++ {
				if err := m.TransformRowTo(rows.RawRowView(i), x.RawRowView(i)); err != nil {
					t.Fatal(err)
				}
			}
			check("TransformRowTo", rows)
			dst := mat.NewDense(n, r, nil)
			if err := m.TransformTo(dst, x); err != nil {
				t.Fatal(err)
			}
			check("TransformTo", dst)
			var empty mat.Dense
			if err := m.TransformTo(&empty, x); err != nil {
				t.Fatal(err)
			}
			check("TransformTo into an empty matrix", &empty)
		})
	}
}

func TestDistanceRows(t *testing.T) {
	for _, tc := range rowCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.m
			x := randDense(13, 6, m.InputDim())
			x.Scale(3, x)
			pairs := [][2]int{{0, 1}, {2, 3}, {4, 5}, {5, 5}}
			want, err := m.PairDistances(x, pairs)
			if err != nil {
				t.Fatal(err)
			}
			bound := rowBound(t, m, x)
			a, b := mat.NewDense(len(pairs), m.InputDim(), nil), mat.NewDense(len(pairs), m.InputDim(), nil)
			for k, p := range pairs {
				a.SetRow(k, x.RawRowView(p[0]))
				b.SetRow(k, x.RawRowView(p[1]))
			}
			got := make([]float64, len(pairs))
			if err := m.DistancesTo(got, a, b); err != nil {
				t.Fatal(err)
			}
			for k, p := range pairs {
				d, err := m.Distance(x.RawRowView(p[0]), x.RawRowView(p[1]))
				if err != nil {
					t.Fatal(err)
				}
				// |Δd| ≤ ‖Δz_a‖ + ‖Δz_b‖, plus the rounding of the sum of squares.
				tol := mat.Norm(bound.RowView(p[0]), 2) + mat.Norm(bound.RowView(p[1]), 2) + 4*float64(m.OutputDim())*0x1p-52*want[k]
				for _, g := range []float64{d, got[k]} {
					if sameArithmetic && g != want[k] || math.Abs(g-want[k]) > tol {
						t.Errorf("pair %v: %v, PairDistances %v (bound %g)", p, g, want[k], tol)
					}
				}
			}
			if want[3] != 0 {
				t.Errorf("distance of a row to itself %v", want[3])
			}
		})
	}
}

// TestRowMethodsRefuse checks that bad models, shapes and values give an
// error of the right class, never a panic.
func TestRowMethodsRefuse(t *testing.T) {
	cases := rowCases(t)
	good := cases[2].m // standardised D=13
	pca := cases[3].m  // standardised, PCA 6→3
	kern, _ := NewKernel(randDense(1, 3, 1), []float64{1})
	row := func(d int, v float64) []float64 {
		x := make([]float64, d)
		for i := range x {
			x[i] = v
		}
		return x
	}
	nan := row(13, 1)
	nan[4] = math.NaN()
	inf := row(13, 1)
	inf[12] = math.Inf(-1)
	badStd := *good
	badStd.Preprocess = &preprocess.Pipeline{Std: &preprocess.Standardizer{Mean: make([]float64, 13), Scale: make([]float64, 12)}}
	noComp := *pca
	noComp.Preprocess = &preprocess.Pipeline{Std: pca.Preprocess.Std, PCA: &preprocess.PCA{Mean: pca.Preprocess.PCA.Mean}}
	wrongPCA := *pca
	wrongPCA.Metric = Identity(4)
	shortMean := *pca
	shortMean.Preprocess = &preprocess.Pipeline{PCA: &preprocess.PCA{Mean: []float64{0}, Components: pca.Preprocess.PCA.Components}}
	stdMismatch := *good
	stdMismatch.Metric = Identity(12)
	huge := &Model{Kind: KindMetric, Metric: func() *Metric { m, _ := NewMetric(mat.NewSymDense(1, []float64{1e300})); return m }()}
	x13 := randDense(1, 3, 13)
	nanX := mat.DenseCopyOf(x13)
	nanX.Set(2, 7, math.NaN())
	dst := make([]float64, 13)
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"nil model", (*Model)(nil).TransformRowTo(dst, nanX.RawRowView(0)), errs.ErrInvalid},
		{"kernel model", (&Model{Kind: KindKernel, Kernel: kern}).TransformRowTo(dst, row(13, 1)), ErrInvalid},
		{"zero Model", (&Model{}).TransformRowTo(dst, row(13, 1)), ErrInvalid},
		{"zero Metric", (&Model{Kind: KindMetric, Metric: &Metric{}}).TransformRowTo(dst, row(13, 1)), ErrInvalid},
		{"Metric without M", (&Model{Kind: KindMetric, Metric: &Metric{L: Identity(3).L}}).TransformRowTo(dst, row(3, 1)), ErrInvalid},
		{"empty factor", (&Model{Kind: KindMetric, Metric: &Metric{M: Identity(3).M, L: &mat.Dense{}}}).TransformRowTo(dst, row(3, 1)), ErrInvalid},
		{"standardizer lengths", badStd.TransformRowTo(dst, row(13, 1)), ErrInvalid},
		{"PCA without components", noComp.TransformRowTo(dst[:2], row(6, 1)), ErrInvalid},
		{"PCA mean length", shortMean.TransformRowTo(dst[:2], row(6, 1)), ErrInvalid},
		{"PCA vs metric", wrongPCA.TransformRowTo(dst[:4], row(6, 1)), ErrInvalid},
		{"standardizer vs metric", stdMismatch.TransformRowTo(dst[:12], row(13, 1)), ErrInvalid},
		{"short row", good.TransformRowTo(dst, row(12, 1)), errs.ErrDimension},
		{"long destination", good.TransformRowTo(make([]float64, 14), row(13, 1)), ErrDimension},
		{"nil row", good.TransformRowTo(dst, nil), ErrDimension},
		{"NaN", good.TransformRowTo(dst, nan), errs.ErrInvalid},
		{"-Inf", good.TransformRowTo(dst, inf), ErrInvalid},
		{"overflow", huge.TransformRowTo(dst[:1], []float64{1e200}), ErrInvalid},
		{"TransformTo nil destination", good.TransformTo(nil, x13), ErrInvalid},
		{"TransformTo nil data", good.TransformTo(mat.NewDense(3, 13, nil), nil), ErrInvalid},
		{"TransformTo empty data", good.TransformTo(mat.NewDense(3, 13, nil), &mat.Dense{}), ErrInvalid},
		{"TransformTo in place", good.TransformTo(x13, x13), ErrInvalid},
		{"TransformTo rows", good.TransformTo(mat.NewDense(2, 13, nil), x13), errs.ErrDimension},
		{"TransformTo columns", good.TransformTo(mat.NewDense(3, 13, nil), randDense(1, 3, 12)), ErrDimension},
		{"TransformTo empty destination, columns", good.TransformTo(&mat.Dense{}, randDense(1, 3, 12)), ErrDimension},
		{"TransformTo NaN", good.TransformTo(mat.NewDense(3, 13, nil), nanX), ErrInvalid},
		{"TransformTo kernel", (&Model{Kind: KindKernel, Kernel: kern}).TransformTo(mat.NewDense(3, 13, nil), x13), ErrInvalid},
		{"Distance zero Metric", second((&Model{Kind: KindMetric, Metric: &Metric{}}).Distance(row(3, 1), row(3, 1))), ErrInvalid},
		{"Distance overflow", second(huge.Distance([]float64{1e200}, []float64{0})), ErrInvalid},
		{"DistancesTo nil", good.DistancesTo(make([]float64, 3), nil, x13), ErrInvalid},
		{"DistancesTo rows", good.DistancesTo(make([]float64, 3), x13, randDense(1, 2, 13)), ErrDimension},
		{"DistancesTo destination", good.DistancesTo(make([]float64, 2), x13, x13), ErrDimension},
		{"DistancesTo NaN", good.DistancesTo(make([]float64, 3), x13, nanX), ErrInvalid},
		{"DistancesTo kernel", (&Model{Kind: KindKernel, Kernel: kern}).DistancesTo(make([]float64, 3), x13, x13), ErrInvalid},
	} {
		if !errors.Is(tc.err, tc.want) || !errors.Is(tc.err, errs.ErrInvalid) {
			t.Errorf("%s: error %v, want one wrapping %v and errs.ErrInvalid", tc.name, tc.err, tc.want)
		}
	}
	if err := good.TransformRowTo(dst, nan); err == nil || !containsAll(err.Error(), "feature 4", "NaN") {
		t.Errorf("NaN error does not name the feature: %v", err)
	}
	if err := good.TransformTo(mat.NewDense(3, 13, nil), nanX); err == nil || !containsAll(err.Error(), "row 2", "feature 7") {
		t.Errorf("TransformTo NaN error does not name the row and feature: %v", err)
	}
	if n := (&Model{Kind: KindKernel, Kernel: kern}).OutputDim(); n != 0 {
		t.Errorf("kernel model OutputDim %d", n)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// TestRowMethodsAllocateNothing is the serving promise: one row
// transformed, one distance, a few rows into a reused matrix, no heap
// allocation, for every shape (several stack chunks included).
func TestRowMethodsAllocateNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation changes allocation counts")
	}
	for _, tc := range rowCases(t) {
		m := tc.m
		x := randDense(14, 4, m.InputDim())
		z := mat.NewDense(4, m.OutputDim(), nil)
		d := make([]float64, 4)
		a, b := x.RawRowView(0), x.RawRowView(1)
		for _, f := range []struct {
			name string
			run  func() error
		}{
			{"TransformRowTo", func() error { return m.TransformRowTo(z.RawRowView(0), a) }},
			{"TransformTo", func() error { return m.TransformTo(z, x) }},
			{"Distance", func() error { _, err := m.Distance(a, b); return err }},
			{"DistancesTo", func() error { return m.DistancesTo(d, x, x) }},
		} {
			var err error
			if allocs := testing.AllocsPerRun(50, func() { err = f.run() }); allocs != 0 || err != nil {
				t.Errorf("%s, %s: %v allocations per call, error %v", tc.name, f.name, allocs, err)
			}
		}
	}
}

// TestConcurrentRowMethods calls the row methods on one model from many
// goroutines (run it with -race) and checks every result against the
// serial one: the methods share nothing but the model, which they only
// read.
func TestConcurrentRowMethods(t *testing.T) {
	cases := rowCases(t)
	m := cases[len(cases)-1].m // PCA, several chunks
	x := randDense(15, 16, m.InputDim())
	want := mat.NewDense(16, m.OutputDim(), nil)
	if err := m.TransformTo(want, x); err != nil {
		t.Fatal(err)
	}
	wantD := make([]float64, 15)
	for i := range wantD {
		var err error
		if wantD[i], err = m.Distance(x.RawRowView(i), x.RawRowView(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	const workers, rounds = 8, 20
	var wg sync.WaitGroup
	errc := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			z := make([]float64, m.OutputDim())
			all := mat.NewDense(16, m.OutputDim(), nil)
			for k := 0; k < rounds; k++ {
				i := (w + k) % 16
				if err := m.TransformRowTo(z, x.RawRowView(i)); err != nil {
					errc <- err
					return
				}
				if !mat.Equal(mat.NewVecDense(len(z), z), want.RowView(i)) {
					errc <- fmt.Errorf("worker %d: row %d differs from the serial result", w, i)
					return
				}
				if i < 15 {
					d, err := m.Distance(x.RawRowView(i), x.RawRowView(i+1))
					if err != nil || d != wantD[i] {
						errc <- fmt.Errorf("worker %d: distance %d: %v, %v, want %v", w, i, d, err, wantD[i])
						return
					}
				}
				if k%5 == 0 {
					if err := m.TransformTo(all, x); err != nil || !mat.Equal(all, want) {
						errc <- fmt.Errorf("worker %d: TransformTo differs from the serial result (%v)", w, err)
						return
					}
				}
			}
		}(w)
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
}
