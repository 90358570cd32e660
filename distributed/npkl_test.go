package distributed_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn/algos/npkl"
	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/distributed"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/eval"
	"github.com/psdlearn/psdlearn/mpi"
	"github.com/psdlearn/psdlearn/mpi/mpitest"
	"github.com/psdlearn/psdlearn/parpack"
	"github.com/psdlearn/psdlearn/sparse"
)

// rowCounts divides n rows over p ranks, the first n mod p one row more.
func rowCounts(n, p int) []int {
	c := make([]int, p)
	for r := range c {
		c[r] = n / p
		if r < n%p {
			c[r]++
		}
	}
	return c
}

// npklProblem is the paper's iris protocol (k = 5 union graph, Xing pairs
// at ratio 0.7, B = 1, C = 0.5) on a data set.
type npklProblem struct {
	lap   *sparse.CSR
	pairs *constraints.Pairs
	y     []int
	opt   npkl.Options
}

func newNPKLProblem(t *testing.T, name string) npklProblem {
	t.Helper()
	x, y := load(t, name)
	lap, err := npkl.Laplacian(x, 5, sparse.GraphOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pairs, err := constraints.XingPairs(y, 0.7, 1)
	if err != nil {
		t.Fatal(err)
	}
	return npklProblem{lap: lap, pairs: pairs, y: y, opt: npkl.Options{Loss: npkl.Linear, B: 1, C: 0.5, Seed: 1}}
}

// oneProcessNPKL runs npkl.Learn on the named backend and clusters.
func oneProcessNPKL(t *testing.T, pr npklProblem, backend string) (*npkl.Result, []int) {
	t.Helper()
	b, err := engine.Get(backend)
	if err != nil {
		t.Fatal(err)
	}
	o := pr.opt
	o.Backend = b
	res, err := npkl.Learn(context.Background(), pr.lap, pr.pairs, o)
	if err != nil {
		t.Fatal(err)
	}
	km, err := eval.KMeans(context.Background(), res.Factor(), numLabels(pr.y), eval.KMeansOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return res, km.Assign
}

func numLabels(y []int) int {
	seen := map[int]bool{}
	for _, v := range y {
		seen[v] = true
	}
	return len(seen)
}

// distNPKL runs distributed.SimpleNPKL on comm with solver and checks this rank's
// result against the one-process one: eigenvalues of K to tol relative,
// the same coverage, and the same clustering (kernel k-means, seed 1, on
// the gathered kernel: the partitions must agree on every pair of points).
func distNPKL(t *testing.T, c mpi.Comm, pr npklProblem, solver parpack.Solver, want *npkl.Result, wantAssign []int, tol float64) (*distributed.NPKLResult, error) {
	counts := rowCounts(pr.lap.Rows, c.Size())
	lo := 0
	for _, k := range counts[:c.Rank()] {
		lo += k
	}
	return distNPKLRows(t, c, pr, distributed.RowBlock(pr.lap, lo, lo+counts[c.Rank()]), counts, solver, want, wantAssign, tol)
}

// distNPKLRows is distNPKL on this rank's rows of the Laplacian, however
// they were built.
func distNPKLRows(t *testing.T, c mpi.Comm, pr npklProblem, rows *sparse.CSR, counts []int, solver parpack.Solver, want *npkl.Result, wantAssign []int, tol float64) (*distributed.NPKLResult, error) {
	got, err := distributed.SimpleNPKL(context.Background(), c, rows, counts, pr.pairs, pr.opt, solver)
	if err != nil {
		return nil, err
	}
	wv := want.Lambda
	if len(got.Values) != len(wv) || got.Covered != want.Covered {
		t.Errorf("rank %d: rank %d (covered %v), one process %d (%v)", c.Rank(), len(got.Values), got.Covered, len(wv), want.Covered)
		return got, nil
	}
	for j, v := range got.Values {
		if e := math.Abs(v-wv[j]) / wv[j]; !(e <= tol) {
			t.Errorf("rank %d: λ[%d] = %.17g, one process %.17g (relative %.2g)", c.Rank(), j, v, wv[j], e)
		}
	}
	last := want.History[len(want.History)-1]
	if e := math.Abs(got.Objective-last.Objective) / math.Abs(last.Objective); !(e <= tol) {
		t.Errorf("rank %d: objective %.17g, one process %.17g", c.Rank(), got.Objective, last.Objective)
	}
	// Every iteration's record and the final α (the squared hinge's dual).
	// The iterations are bounded, not equated: a stopping test within
	// rounding of its threshold may fire one iteration apart.
	if got.Iterations != len(got.History) || len(got.History) < len(want.History)-1 || len(got.History) > len(want.History)+1 {
		t.Errorf("rank %d: %d iterations (%d records), one process %d", c.Rank(), got.Iterations, len(got.History), len(want.History))
	} else {
		rel := func(a, b float64) float64 {
			return math.Abs(a-b) / math.Max(1e-300, math.Max(math.Abs(a), math.Abs(b)))
		}
		for i, g := range got.History[:min(len(got.History), len(want.History))] {
			w := want.History[i]
			if g.Rank != w.Rank || g.Eigenpairs != w.Eigenpairs || !(rel(g.Objective, w.Objective) <= tol) || !(rel(g.Primal, w.Primal) <= tol) ||
				!(math.Abs(g.AlphaChange-w.AlphaChange) <= tol*math.Max(1, w.AlphaChange)) {
				t.Errorf("rank %d: iteration %d: rank %d/%d pairs, objective %.17g, primal %.17g, α change %.17g; one process %d/%d, %.17g, %.17g, %.17g",
					c.Rank(), g.T, g.Rank, g.Eigenpairs, g.Objective, g.Primal, g.AlphaChange, w.Rank, w.Eigenpairs, w.Objective, w.Primal, w.AlphaChange)
			}
		}
	}
	var worst float64
	for i, a := range got.Alpha {
		worst = math.Max(worst, math.Abs(a-want.Alpha[i])/math.Max(1, math.Abs(want.Alpha[i])))
	}
	if len(got.Alpha) != len(want.Alpha) || !(worst <= tol) {
		t.Errorf("rank %d: α differs from the one-process one by %.3g (relative)", c.Rank(), worst)
	}
	kern, err := got.Kernel(c, counts)
	if err != nil {
		return nil, err
	}
	km, err := eval.KernelKMeans(context.Background(), kern, numLabels(pr.y), eval.KMeansOptions{Seed: 1})
	if err != nil {
		return nil, err
	}
	if a := eval.PairwiseAccuracy(wantAssign, km.Assign); a != 1 {
		t.Errorf("rank %d: clustering agrees with the one-process one on %.4f of the pairs", c.Rank(), a)
	}
	return got, nil
}

// TestSimpleNPKLFake runs distributed.SimpleNPKL with parpack.Go on 1, 2 and 3
// fake ranks on iris and wine, with the linear loss and with 4 iterations
// of the squared hinge: the kernel's eigenvalues, every iteration's
// objectives and the final α are those of npkl.Learn on the go backend
// (the same bits), and kernel k-means on the kernel gives the same
// clusters.
func TestSimpleNPKLFake(t *testing.T) {
	for _, tc := range []struct {
		name string
		loss npkl.Loss
	}{{"iris", npkl.Linear}, {"wine", npkl.Linear}, {"iris", npkl.SquaredHinge}, {"wine", npkl.SquaredHinge}} {
		name := tc.name
		pr := newNPKLProblem(t, name)
		pr.opt.Loss, pr.opt.Iters = tc.loss, 4
		want, wantAssign := oneProcessNPKL(t, pr, "go")
		for _, p := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("%s/%v/P=%d", name, tc.loss, p), func(t *testing.T) {
				errs := runRanks(p, func(c mpi.Comm) error {
					got, err := distNPKL(t, c, pr, parpack.Go, want, wantAssign, 0)
					if err == nil && c.Rank() == 0 {
						t.Logf("rank %d of K, %d eigenpairs, %d operator products", len(got.Values), got.Eigenpairs, got.OpApplies)
					}
					return err
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

// npklChildEnv turns TestSimpleNPKLMPIChild on in the ranks TestMpirunSimpleNPKL starts.
const npklChildEnv = "PSDLEARN_DIST_NPKL_CHILD"

// TestSimpleNPKLMPIChild is each rank's body in TestMpirunSimpleNPKL:
// PARPACK (parpack.For the world) against npkl.Learn on the native backend
// (arpack-ng), to 1e-9 relative, and the same clusters, on iris and wine
// with the linear loss and on wine with 4 squared-hinge iterations.
func TestSimpleNPKLMPIChild(t *testing.T) {
	if os.Getenv(npklChildEnv) == "" {
		t.Skip("run by TestMpirunSimpleNPKL under mpirun")
	}
	c, err := mpi.Open()
	if err != nil {
		t.Fatal(err)
	}
	if parpack.For(c) != parpack.Native {
		t.Error("parpack.For(world) is not PARPACK")
	}
	for _, tc := range []struct {
		name string
		loss npkl.Loss
	}{{"iris", npkl.Linear}, {"wine", npkl.Linear}, {"wine", npkl.SquaredHinge}} {
		name := tc.name
		pr := newNPKLProblem(t, name)
		pr.opt.Loss, pr.opt.Iters = tc.loss, 4
		want, wantAssign := oneProcessNPKL(t, pr, "native")
		start := time.Now()
		got, err := distNPKL(t, c, pr, nil, want, wantAssign, 1e-9)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		fmt.Printf("npklchild: rank %d of %d: %s %v: rank %d, %d eigenpairs, %d products, %v\n",
			c.Rank(), c.Size(), name, tc.loss, len(got.Values), got.Eigenpairs, got.OpApplies, time.Since(start).Round(time.Millisecond))
	}
	fmt.Printf("npklchild: rank %d of %d: done, failed=%v\n", c.Rank(), c.Size(), t.Failed())
	if err := mpi.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestMpirunSimpleNPKL runs TestSimpleNPKLMPIChild under mpirun -np 2 and
// -np 3 (uneven rows: iris 150 = 50·3 is even for 3 ranks, wine's 178 is
// not). Skipped without -tags mpi or without mpirun.
func TestMpirunSimpleNPKL(t *testing.T) {
	if !mpi.HaveNative {
		t.Skip("built without MPI (go test -tags mpi runs this test)")
	}
	if os.Getenv(npklChildEnv) != "" {
		t.Skip("in an mpirun child")
	}
	done := regexp.MustCompile(`npklchild: rank (\d+) of (\d+): done, failed=(\w+)`)
	for _, np := range []int{2, 3} {
		t.Run(fmt.Sprintf("np=%d", np), func(t *testing.T) {
			out, took, err := mpitest.Mpirun(t, mpitest.Job{
				NP:      np,
				Options: []string{"-x", npklChildEnv + "=1"},
				Args:    []string{os.Args[0], "-test.run=^TestSimpleNPKLMPIChild$", "-test.count=1", "-test.v"},
			})
			var lines []string
			for _, l := range strings.Split(out, "\n") {
				if strings.Contains(l, "npklchild:") {
					lines = append(lines, l)
				}
			}
			t.Logf("mpirun -np %d: %v\n%s", np, took.Round(time.Millisecond), strings.Join(lines, "\n"))
			if err != nil {
				t.Fatalf("mpirun: %v\n%s", err, out)
			}
			ok := map[string]bool{}
			for _, m := range done.FindAllStringSubmatch(out, -1) {
				if m[2] != fmt.Sprint(np) || m[3] != "false" {
					t.Errorf("rank %s: %s", m[1], m[0])
				}
				ok[m[1]] = true
			}
			if len(ok) != np || strings.Contains(out, "--- FAIL") {
				t.Errorf("%d of %d ranks done:\n%s", len(ok), np, out)
			}
		})
	}
}
