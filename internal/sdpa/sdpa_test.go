package sdpa

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// example is the example problem of CSDP's user guide: two symmetric
// blocks (2×2 and 3×3) and a diagonal block of two scalars, whose optimal
// value is 2.75.
func example() *Problem {
	return &Problem{
		Blocks: []int{2, 3, -2},
		C: []Entry{
			{0, 0, 0, 2}, {0, 0, 1, 1}, {0, 1, 1, 2},
			{1, 0, 0, 3}, {1, 1, 1, 2}, {1, 0, 2, 1}, {1, 2, 2, 3},
		},
		A: [][]Entry{
			{{0, 0, 0, 3}, {0, 0, 1, 1}, {0, 1, 1, 3}, {2, 0, 0, 1}},
			{{1, 0, 0, 3}, {1, 1, 1, 4}, {1, 0, 2, 1}, {1, 2, 2, 5}, {2, 1, 1, 1}},
		},
		B: []float64{1, 2},
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	// A random problem with every position used once per matrix (Write
	// merges repeats; TestWriteMergesRepeats checks that).
	rng := rand.New(rand.NewPCG(1, 2))
	random := &Problem{Blocks: []int{4, -3}, B: []float64{rng.NormFloat64(), 1e-300, -7.25}}
	type pos struct{ b, i, j int }
	entries := func(k int, scale bool) []Entry {
		used := map[pos]bool{}
		var es []Entry
		for range k {
			e := Entry{0, rng.IntN(4), rng.IntN(4), rng.NormFloat64()}
			if rng.IntN(2) == 0 {
				i := rng.IntN(3)
				e = Entry{1, i, i, rng.NormFloat64()}
			}
			if scale {
				e.V *= math.Pow(10, float64(rng.IntN(40)-20))
			}
			p := pos{e.Block, min(e.I, e.J), max(e.I, e.J)}
			if used[p] {
				continue
			}
			used[p] = true
			es = append(es, e)
		}
		return es
	}
	random.C = entries(10, false)
	for range random.B {
		random.A = append(random.A, entries(6, true))
	}
	for name, p := range map[string]*Problem{"example": example(), "random": random} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, p); err != nil {
				t.Fatal(err)
			}
			q, err := Read(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatalf("%v\n%s", err, buf.String())
			}
			// Write stores the upper triangle: compare with p's entries
			// in that orientation.
			want := upper(p)
			if !reflect.DeepEqual(q, want) {
				t.Errorf("read back\n%+v\nwant\n%+v", q, want)
			}
			var again bytes.Buffer
			if err := Write(&again, q); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again.Bytes(), buf.Bytes()) {
				t.Errorf("second write differs:\n%s\nfirst:\n%s", again.String(), buf.String())
			}
		})
	}
}

// upper returns a copy of p with every entry in the upper triangle.
func upper(p *Problem) *Problem {
	fix := func(es []Entry) []Entry {
		var out []Entry
		for _, e := range es {
			if e.V == 0 {
				continue
			}
			out = append(out, Entry{e.Block, min(e.I, e.J), max(e.I, e.J), e.V})
		}
		return out
	}
	q := &Problem{Blocks: append([]int(nil), p.Blocks...), C: fix(p.C), B: append([]float64(nil), p.B...)}
	for _, a := range p.A {
		q.A = append(q.A, fix(a))
	}
	return q
}

// TestReadFormatVariants reads the example as the format's own files write
// it: comment lines, braces and commas.
func TestReadFormatVariants(t *testing.T) {
	const text = `"Example from the CSDP user guide
* a second comment
2
3
{2, 3, -2}
{1.0, 2.0}
0 1 1 1 2.0
0 1 1 2 1.0
0 1 2 2 2.0
0 2 1 1 3.0
0 2 2 2 2.0
0 2 1 3 1.0
0 2 3 3 3.0
1 1 1 1 3.0
1 1 1 2 1.0
1 1 2 2 3.0
1 3 1 1 1.0
2 2 1 1 3.0
2 2 2 2 4.0
2 2 1 3 1.0
2 2 3 3 5.0
2 3 2 2 1.0
`
	p, err := Read(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if want := upper(example()); !reflect.DeepEqual(p, want) {
		t.Errorf("got\n%+v\nwant\n%+v", p, want)
	}
}

func TestValidateAndReadErrors(t *testing.T) {
	bad := []*Problem{
		{Blocks: []int{2}, A: [][]Entry{{{0, 0, 2, 1}}}, B: []float64{1}},          // outside the block
		{Blocks: []int{-2}, A: [][]Entry{{{0, 0, 1, 1}}}, B: []float64{1}},         // off-diagonal in a diagonal block
		{Blocks: []int{2}, A: [][]Entry{{{1, 0, 0, 1}}}, B: []float64{1}},          // no such block
		{Blocks: []int{2}, A: [][]Entry{{{0, 0, 0, math.NaN()}}}, B: []float64{1}}, // NaN
		{Blocks: []int{2}, A: [][]Entry{{{0, 0, 0, 1}}}, B: []float64{1, 2}},       // counts differ
		{Blocks: []int{0}, A: [][]Entry{{}}, B: []float64{1}},                      // empty block
	}
	for i, p := range bad {
		if err := Write(&bytes.Buffer{}, p); !errors.Is(err, ErrFormat) {
			t.Errorf("problem %d: Write error %v, want ErrFormat", i, err)
		}
	}
	for _, text := range []string{
		"", "x", "1\n1\n2\n", "1\n1\n2\n1\n1 1 3 1 1\n", "1\n1\n-2\n1\n1 1 1 2 1\n",
		"1\n1\n2\n1\n2 1 1 1 1\n", "1\n1\n2\n1\n1 1 1 1\n", "1\n1\n2\nNaN\n", "99999999999\n1\n",
	} {
		if _, err := Read(strings.NewReader(text)); err == nil {
			t.Errorf("Read(%q) succeeded", text)
		}
	}
}

// TestCSDP solves problems with known optima: the user guide's example
// (2.75) and max ⟨C, X⟩ s.t. tr X = 1, whose optimum is λmax(C), and
// checks the returned X and y against the problem: feasibility, ⟨C, X⟩
// equal to the printed primal value, and Z = Σ y_i A_i − C positive
// semidefinite.
func TestCSDP(t *testing.T) {
	if _, err := CSDPPath(); err != nil {
		t.Skip("csdp not installed (apt-get install coinor-csdp): skipping the solver test")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 6
	c := mat.NewSymDense(n, nil)
	var cEntries, trace []Entry
	for i := 0; i < n; i++ {
		trace = append(trace, Entry{0, i, i, 1})
		for j := i; j < n; j++ {
			v := rng.NormFloat64()
			c.SetSym(i, j, v)
			cEntries = append(cEntries, Entry{0, i, j, v})
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(c, false) {
		t.Fatal("eigendecomposition failed")
	}
	lmax := eig.Values(nil)[n-1]
	cases := []struct {
		name string
		p    *Problem
		opt  float64
	}{
		{"example", example(), 2.75},
		{"lambda max", &Problem{Blocks: []int{n}, C: cEntries, A: [][]Entry{trace}, B: []float64{1}}, lmax},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sol, err := Run(context.Background(), tc.p, Options{KeepZ: true})
			if err != nil {
				t.Fatal(err)
			}
			if sol.Status != Success {
				t.Fatalf("status %v\n%s", sol.Status, sol.Log)
			}
			if math.Abs(sol.Primal-tc.opt) > 1e-6*(1+math.Abs(tc.opt)) || math.Abs(sol.Dual-tc.opt) > 1e-6*(1+math.Abs(tc.opt)) {
				t.Errorf("objectives %.10g, %.10g; want %.10g", sol.Primal, sol.Dual, tc.opt)
			}
			if got := inner(tc.p.C, sol.X); math.Abs(got-sol.Primal) > 1e-7*(1+math.Abs(got)) {
				t.Errorf("⟨C, X⟩ = %.10g, printed primal %.10g", got, sol.Primal)
			}
			for i, a := range tc.p.A {
				if got := inner(a, sol.X); math.Abs(got-tc.p.B[i]) > 1e-7*(1+math.Abs(tc.p.B[i])) {
					t.Errorf("⟨A_%d, X⟩ = %.10g, want %g", i+1, got, tc.p.B[i])
				}
			}
			if by := dot(tc.p.B, sol.Y); math.Abs(by-sol.Dual) > 1e-7*(1+math.Abs(by)) {
				t.Errorf("bᵀy = %.10g, printed dual %.10g", by, sol.Dual)
			}
			for k, blk := range sol.X {
				if blk.Sym != nil {
					if v := minEig(blk.Sym); v < -1e-8 {
						t.Errorf("X block %d has eigenvalue %g", k+1, v)
					}
				} else {
					for i, v := range blk.Diag {
						if v < -1e-8 {
							t.Errorf("X block %d entry %d = %g", k+1, i+1, v)
						}
					}
				}
			}
			// Z as CSDP returned it is Σ y_i A_i − C.
			for k, blk := range sol.Z {
				if blk.Sym == nil {
					continue
				}
				want := assemble(tc.p, k, sol.Y)
				if !mat.EqualApprox(blk.Sym, want, 1e-7) {
					t.Errorf("Z block %d differs from Σ y_i A_i − C:\n%v\n%v", k+1, mat.Formatted(blk.Sym), mat.Formatted(want))
				}
				if v := minEig(blk.Sym); v < -1e-8 {
					t.Errorf("Z block %d has eigenvalue %g", k+1, v)
				}
			}
		})
	}
}

func TestRunWithoutCSDP(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := Run(context.Background(), example(), Options{}); !errors.Is(err, ErrNoCSDP) {
		t.Errorf("Run without csdp on PATH: %v, want ErrNoCSDP", err)
	}
}

// inner returns ⟨A, X⟩ for a matrix given by its upper-triangle entries.
func inner(a []Entry, x []Block) float64 {
	var s float64
	for _, e := range a {
		b := x[e.Block]
		switch {
		case b.Diag != nil:
			s += e.V * b.Diag[e.I]
		case e.I == e.J:
			s += e.V * b.Sym.At(e.I, e.J)
		default:
			s += 2 * e.V * b.Sym.At(e.I, e.J)
		}
	}
	return s
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// assemble returns block k of Σ y_i A_i − C.
func assemble(p *Problem, k int, y []float64) *mat.SymDense {
	z := mat.NewSymDense(p.Blocks[k], nil)
	add := func(es []Entry, w float64) {
		for _, e := range es {
			if e.Block == k {
				i, j := min(e.I, e.J), max(e.I, e.J)
				z.SetSym(i, j, z.At(i, j)+w*e.V)
			}
		}
	}
	add(p.C, -1)
	for i, a := range p.A {
		add(a, y[i])
	}
	return z
}

func minEig(a *mat.SymDense) float64 {
	var eig mat.EigenSym
	if !eig.Factorize(a, false) {
		return math.NaN()
	}
	return eig.Values(nil)[0]
}

// TestWriteMergesRepeats: entries of one matrix at the same position,
// in either orientation, are written once with their sum.
func TestWriteMergesRepeats(t *testing.T) {
	p := &Problem{Blocks: []int{3, -2}, B: []float64{1},
		C: []Entry{{0, 0, 1, 1}, {0, 2, 2, 4}, {0, 1, 0, 0.5}, {1, 1, 1, 2}, {1, 1, 1, -2}},
		A: [][]Entry{{{0, 0, 0, 1}, {0, 0, 0, 1}, {0, 1, 2, 3}}}}
	var buf bytes.Buffer
	if err := Write(&buf, p); err != nil {
		t.Fatal(err)
	}
	q, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	wantC := []Entry{{0, 0, 1, 1.5}, {0, 2, 2, 4}} // the diagonal block's entries cancel
	wantA := []Entry{{0, 0, 0, 2}, {0, 1, 2, 3}}
	if !reflect.DeepEqual(q.C, wantC) || !reflect.DeepEqual(q.A[0], wantA) {
		t.Errorf("C %v, A %v; want %v, %v", q.C, q.A[0], wantC, wantA)
	}
}
