package parpack_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/psdlearn/psdlearn/arpack"
	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/mpi/mpitest"
	"github.com/psdlearn/psdlearn/parpack"
	"gonum.org/v1/gonum/mat"
)

// split divides n rows over p ranks, the first n mod p ranks one row more.
func split(n, p int) []int {
	c := make([]int, p)
	for r := range c {
		c[r] = n / p
		if r < n%p {
			c[r]++
		}
	}
	return c
}

func offset(counts []int, rank int) int {
	lo := 0
	for _, c := range counts[:rank] {
		lo += c
	}
	return lo
}

// pathRows sets y to rows [lo, lo+len(y)) of T·x, T = tridiag(−1, 2, −1) of
// order len(x) (the path graph's Laplacian with Dirichlet ends).
func pathRows(y, x []float64, lo int) {
	n := len(x)
	for i := range y {
		g := lo + i
		s := 2 * x[g]
		if g > 0 {
			s -= x[g-1]
		}
		if g < n-1 {
			s -= x[g+1]
		}
		y[i] = s
	}
}

// pathEig returns the j-th smallest eigenvalue (j = 1…n) of T of order n.
func pathEig(n, j int) float64 { return 2 - 2*math.Cos(math.Pi*float64(j)/float64(n+1)) }

// pathOp returns T as a row-distributed operator: through Gathered, or as
// an OperatorFunc that gathers x itself.
func pathOp(c mpi.Comm, counts []int, gathered bool) parpack.Operator {
	n := 0
	for _, k := range counts {
		n += k
	}
	lo := offset(counts, c.Rank())
	if gathered {
		return parpack.Gathered(c, counts, func(y, x []float64) { pathRows(y, x, lo) })
	}
	full := make([]float64, n)
	return parpack.OperatorFunc(func(y, x []float64) error {
		if err := c.Allgatherv(x, full, counts); err != nil {
			return err
		}
		pathRows(y, full, lo)
		return nil
	})
}

// checkPath checks res, this rank's share of a solve of T (order n) for k
// eigenpairs at one end, against the analytic eigenvalues (1e-10 relative),
// and the residuals ‖Tv − λv‖ ≤ 1e-10·‖T‖ (‖T‖ < 4), computed over the
// ranks. It returns the whole eigenvectors (gathered), column-major.
func checkPath(t *testing.T, c mpi.Comm, counts []int, res parpack.Result, k int, which parpack.Which) []float64 {
	t.Helper()
	n := 0
	for _, m := range counts {
		n += m
	}
	if len(res.Values) != k {
		t.Fatalf("rank %d: %d values, want %d", c.Rank(), len(res.Values), k)
	}
	for j, got := range res.Values {
		idx := j + 1
		if which == parpack.LargestAlgebraic {
			idx = n - k + 1 + j
		}
		want := pathEig(n, idx)
		if e := math.Abs(got-want) / want; !(e <= 1e-10) {
			t.Errorf("rank %d: λ[%d] = %.17g, want %.17g (relative error %.2g)", c.Rank(), j, got, want, e)
		}
	}
	lo, loc := offset(counts, c.Rank()), counts[c.Rank()]
	if r, cc := res.Vectors.Dims(); r != loc || cc != k {
		t.Fatalf("rank %d: vectors %d×%d, want %d×%d", c.Rank(), r, cc, loc, k)
	}
	all := make([]float64, n*k)
	full := make([]float64, n)
	col := make([]float64, loc)
	y := make([]float64, loc)
	for j := 0; j < k; j++ {
		mat.Col(col, j, res.Vectors)
		if err := c.Allgatherv(col, full, counts); err != nil {
			t.Fatal(err)
		}
		copy(all[j*n:], full)
		pathRows(y, full, lo)
		var ss float64
		for i := range y {
			d := y[i] - res.Values[j]*col[i]
			ss += d * d
		}
		ss, err := c.AllreduceSumScalar(ss)
		if err != nil {
			t.Fatal(err)
		}
		if r := math.Sqrt(ss); !(r <= 1e-10*4) {
			t.Errorf("rank %d: residual of pair %d is %.3g", c.Rank(), j, r)
		}
	}
	return all
}

// oneProcess solves T of order n for k pairs with arpack's solver s.
func oneProcess(t *testing.T, s arpack.Solver, n, k int, which parpack.Which, opt parpack.Options) arpack.Result {
	t.Helper()
	op := arpackPath(n)
	res, err := s.Eigs(context.Background(), op, k, which, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

type arpackPath int

func (a arpackPath) Dim() int             { return int(a) }
func (a arpackPath) Apply(y, x []float64) { pathRows(y, x, 0) }
func (a arpackPath) String() string       { return fmt.Sprintf("T%d", int(a)) }

// sameUpToSign reports the largest difference between the columns of the
// column-major a (n×k) and the eigenvectors b, each column's sign aligned.
func sameUpToSign(a []float64, b *mat.Dense) float64 {
	n, k := b.Dims()
	var worst float64
	for j := 0; j < k; j++ {
		s := 1.0
		if a[j*n]*b.At(0, j) < 0 {
			s = -1
		}
		for i := 0; i < n; i++ {
			worst = math.Max(worst, math.Abs(s*a[j*n+i]-b.At(i, j)))
		}
	}
	return worst
}

var cases = []struct {
	n, k  int
	which parpack.Which
	opt   parpack.Options
}{
	{100, 4, parpack.LargestAlgebraic, parpack.Options{Seed: 1}},
	{60, 3, parpack.SmallestAlgebraic, parpack.Options{NCV: 30, Seed: 2}},
}

// TestGoFake runs the Go solver on the fake communicator with 1, 2 and 3
// ranks (uneven rows): analytic eigenvalues, distributed residuals, and the
// same bits as a one-process arpack.Go solve, whatever P.
func TestGoFake(t *testing.T) {
	for _, tc := range cases {
		want := oneProcess(t, arpack.Go, tc.n, tc.k, tc.which, tc.opt)
		for _, p := range []int{1, 2, 3} {
			for _, gathered := range []bool{true, false} {
				t.Run(fmt.Sprintf("%v/n=%d/P=%d/gathered=%v", tc.which, tc.n, p, gathered), func(t *testing.T) {
					counts := split(tc.n, p)
					errs := mpitest.RunFake(p, func(c mpi.Comm) error {
						res, err := parpack.Go.Eigs(context.Background(), c, pathOp(c, counts, gathered), counts, tc.k, tc.which, tc.opt)
						if err != nil {
							return err
						}
						all := checkPath(t, c, counts, res, tc.k, tc.which)
						for j, v := range res.Values {
							if v != want.Values[j] {
								t.Errorf("rank %d: λ[%d] = %v, one-process arpack.Go %v", c.Rank(), j, v, want.Values[j])
							}
						}
						if d := sameUpToSign(all, want.Vectors); d != 0 {
							t.Errorf("rank %d: eigenvectors differ from arpack.Go's by %.3g", c.Rank(), d)
						}
						return nil
					})
					for r, err := range errs {
						if err != nil {
							t.Errorf("rank %d: %v", r, err)
						}
					}
				})
			}
		}
	}
}

// TestCollectiveStop: when one rank's ctx is cancelled, or one rank's
// operator fails or returns NaN, every rank stops at the same step with an
// error (the others' wraps ErrStopped), and no rank hangs.
func TestCollectiveStop(t *testing.T) {
	const n, p = 50, 3
	counts := split(n, p)
	boom := errors.New("boom")
	for _, mode := range []string{"cancel", "fail", "nan", "cancel-before"} {
		t.Run(mode, func(t *testing.T) {
			errs := mpitest.RunFake(p, func(c mpi.Comm) error {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if mode == "cancel-before" && c.Rank() == 2 {
					cancel()
				}
				inner := pathOp(c, counts, false)
				steps := 0
				op := parpack.OperatorFunc(func(y, x []float64) error {
					err := inner.Apply(y, x)
					steps++
					if steps == 5 && c.Rank() == 1 {
						switch mode {
						case "cancel":
							cancel()
						case "fail":
							return boom
						case "nan":
							y[0] = math.NaN()
						}
					}
					return err
				})
				_, err := parpack.Go.Eigs(ctx, c, op, counts, 3, parpack.LargestAlgebraic, parpack.Options{})
				return err
			})
			origin := 1
			if mode == "cancel-before" {
				origin = 2
			}
			for r, err := range errs {
				if err == nil {
					t.Fatalf("rank %d: no error", r)
				}
				if r != origin && !errors.Is(err, parpack.ErrStopped) {
					t.Errorf("rank %d: %v, want ErrStopped", r, err)
				}
				t.Logf("rank %d: %v", r, err)
			}
			switch mode {
			case "cancel", "cancel-before":
				if !errors.Is(errs[origin], context.Canceled) {
					t.Errorf("rank %d: %v, want context.Canceled", origin, errs[origin])
				}
			case "fail":
				if !errors.Is(errs[origin], boom) {
					t.Errorf("rank 1: %v, want the operator's error", errs[origin])
				}
			case "nan":
				if !errors.Is(errs[origin], parpack.ErrNotFinite) {
					t.Errorf("rank 1: %v, want ErrNotFinite", errs[origin])
				}
			}
		})
	}
}

func TestInvalidArguments(t *testing.T) {
	c := mpi.Single
	op := pathOp(c, []int{10}, true)
	for _, s := range []parpack.Solver{parpack.Go, parpack.Native} {
		if s == nil {
			continue
		}
		for name, f := range map[string]func() error{
			"nil comm": func() error {
				_, err := s.Eigs(context.Background(), nil, op, []int{10}, 2, parpack.LargestAlgebraic, parpack.Options{})
				return err
			},
			"nil op": func() error {
				_, err := s.Eigs(context.Background(), c, nil, []int{10}, 2, parpack.LargestAlgebraic, parpack.Options{})
				return err
			},
			"counts": func() error {
				_, err := s.Eigs(context.Background(), c, op, []int{5, 5}, 2, parpack.LargestAlgebraic, parpack.Options{})
				return err
			},
			"zero rows": func() error {
				_, err := s.Eigs(context.Background(), c, op, []int{0}, 2, parpack.LargestAlgebraic, parpack.Options{})
				return err
			},
			"k": func() error {
				_, err := s.Eigs(context.Background(), c, op, []int{10}, 10, parpack.LargestAlgebraic, parpack.Options{})
				return err
			},
			"ncv": func() error {
				_, err := s.Eigs(context.Background(), c, op, []int{10}, 2, parpack.LargestAlgebraic, parpack.Options{NCV: 11})
				return err
			},
			"tol": func() error {
				_, err := s.Eigs(context.Background(), c, op, []int{10}, 2, parpack.LargestAlgebraic, parpack.Options{Tol: math.NaN()})
				return err
			},
			"start": func() error {
				_, err := s.Eigs(context.Background(), c, op, []int{10}, 2, parpack.LargestAlgebraic, parpack.Options{Start: make([]float64, 10)})
				return err
			},
			"BE k=1": func() error {
				_, err := s.Eigs(context.Background(), c, op, []int{10}, 1, parpack.BothEnds, parpack.Options{})
				return err
			},
		} {
			if err := f(); !errors.Is(err, parpack.ErrInvalidArgument) {
				t.Errorf("%T %s: %v, want ErrInvalidArgument", s, name, err)
			}
		}
	}
	if parpack.For(mpi.Single) != parpack.Go {
		t.Error("For(mpi.Single) is not Go")
	}
}
