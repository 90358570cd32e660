package eval

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/psdlearn/psdlearn/constraints"
	"github.com/psdlearn/psdlearn/engine"
	"github.com/psdlearn/psdlearn/internal/f64"
	"github.com/psdlearn/psdlearn/model"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/mat"
)

// seedStream is the PCG stream constant of k-means' random choices.
const seedStream = 0x6b6d_6561_6e73_0001

// The defaults of KMeansOptions, each defined once.
const (
	// DefaultRestarts is the number of k-means++ starts.
	DefaultRestarts = 10
	// DefaultKMeansIter bounds the Lloyd iterations of one start.
	DefaultKMeansIter = 100
)

// KMeansOptions configures KMeans and KernelKMeans. Zero values mean the defaults.
type KMeansOptions struct {
	Restarts int    // independent k-means++ starts, the lowest inertia wins (0: DefaultRestarts)
	MaxIter  int    // Lloyd iterations per start (0: DefaultKMeansIter)
	Seed     uint64 // fixes every random choice
}

// KMeansResult is a clustering.
type KMeansResult struct {
	Assign  []int      // cluster of each point, in [0, k)
	Centers *mat.Dense // k×d cluster means
	Inertia float64    // Σ_i ‖x_i − c_{Assign[i]}‖²
	Iters   int        // Lloyd iterations of the winning start
}

// KMeans clusters the rows of x into k clusters: k-means++ seeding, then
// Lloyd iterations until no assignment changes (or MaxIter), repeated
// Restarts times from seeded starts; the run of lowest inertia is returned.
// An emptied cluster is re-seeded with the point farthest from its centre.
// Equal distances go to the lower cluster index. ctx is checked between
// iterations; when it is cancelled KMeans returns the best completed start
// (nil if none completed) with an error wrapping ctx.Err().
func KMeans(ctx context.Context, x *mat.Dense, k int, opt KMeansOptions) (*KMeansResult, error) {
	if x == nil {
		return nil, fmt.Errorf("%w: nil data", ErrInvalid)
	}
	n, d := x.Dims()
	if k < 1 || k > n {
		return nil, fmt.Errorf("%w: %d clusters for %d points", ErrInvalid, k, n)
	}
	raw := x.RawMatrix()
	for i := 0; i < n; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+d] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: x[%d,%d] = %v", ErrInvalid, i, j, v)
			}
		}
	}
	if err := engine.CheckDistances("data", x); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	restarts, maxIter := opt.Restarts, opt.MaxIter
	if restarts <= 0 {
		restarts = DefaultRestarts
	}
	if maxIter <= 0 {
		maxIter = DefaultKMeansIter
	}
	rng := rand.New(rand.NewPCG(opt.Seed, seedStream))
	var best *KMeansResult
	for r := 0; r < restarts; r++ {
		res, err := lloyd(ctx, raw.Data, raw.Stride, n, d, k, maxIter, rng)
		if err != nil {
			// Cancelled: the best completed start (nil if none completed).
			return best, fmt.Errorf("eval: k-means: %w", err)
		}
		if best == nil || res.Inertia < best.Inertia {
			best = res
		}
	}
	return best, nil
}

// KernelKMeans clusters the N points of a low-rank kernel K = V diag(λ) Vᵀ:
// kernel k-means in the kernel's feature space is ordinary k-means on the
// rows of V·diag(√λ), whose inner products are K. Cost O(N·k·r) per iteration.
func KernelKMeans(ctx context.Context, kern *model.Kernel, k int, opt KMeansOptions) (*KMeansResult, error) {
	if kern == nil {
		return nil, fmt.Errorf("%w: nil kernel", ErrInvalid)
	}
	return KMeans(ctx, kern.Factor(), k, opt)
}

// sqDist is ‖a − b‖² with four independent accumulators (f64.SqDist): the
// assignment step of Lloyd's iterations is nearly all of k-means' time, and
// a single add chain ran at a quarter of the processor's rate.
func sqDist(a, b []float64) float64 { return f64.SqDist(a, b) }

// boundMargin is the relative margin of lloyd's bound tests.
const boundMargin = 1e-9

// lloyd runs one seeded k-means++ start.
func lloyd(ctx context.Context, data []float64, stride, n, d, k, maxIter int, rng *rand.Rand) (*KMeansResult, error) {
	row := func(i int) []float64 { return data[i*stride : i*stride+d] }
	centers := make([]float64, k*d)
	center := func(c int) []float64 { return centers[c*d : c*d+d] }
	// k-means++ seeding.
	dist := make([]float64, n)
	first := rng.IntN(n)
	copy(center(0), row(first))
	for i := range dist {
		dist[i] = sqDist(row(i), center(0))
	}
	for c := 1; c < k; c++ {
		var sum float64
		for _, v := range dist {
			sum += v
		}
		pick := -1
		if sum > 0 {
			u := rng.Float64() * sum
			for i, v := range dist {
				u -= v
				if u < 0 && v > 0 {
					pick = i
					break
				}
			}
			if pick < 0 { // rounding: the last point with positive weight
				for i := n - 1; i >= 0; i-- {
					if dist[i] > 0 {
						pick = i
						break
					}
				}
			}
		} else {
			pick = rng.IntN(n) // all points coincide with the centres
		}
		copy(center(c), row(pick))
		for i := range dist {
			dist[i] = min(dist[i], sqDist(row(i), center(c)))
		}
	}
	assign := make([]int, n)
	for i := range assign {
		assign[i] = -1
	}
	counts := make([]int, k)
	// Elkan's bounds (2003): upper[i] ≥ ‖x_i − c_assign[i]‖ and
	// lower[i·k+c] ≤ ‖x_i − c‖ for every centre c. A centre c is skipped
	// for point i when the upper bound is below its lower bound or below
	// half the distance between c and i's centre; a point whose upper
	// bound is below half the distance from its centre to the nearest
	// other one skips them all. The tests have a relative margin of
	// boundMargin, far above the rounding of the bounds, and the centres
	// not skipped are compared by the squared distances Lloyd computes,
	// with Lloyd's rule for ties (the lower index), so the assignments are
	// exactly Lloyd's. stale[i] marks a point whose dist[i] was not
	// recomputed this iteration (the empty-cluster re-seeding needs it).
	upper := make([]float64, n)
	lower := make([]float64, n*k)
	stale := make([]bool, n)
	cc := make([]float64, k*k) // half the distances between the centres
	half := make([]float64, k) // half the distance to the nearest other centre
	move := make([]float64, k) // how far each centre moved at the last update
	old := make([]float64, k*d)
	const keep = 1 - boundMargin
	iters := 0
	for iters < maxIter {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		iters++
		for c := 0; c < k; c++ {
			half[c] = math.Inf(1)
			for c2 := 0; c2 < k; c2++ {
				if c2 != c {
					cc[c*k+c2] = 0.5 * math.Sqrt(sqDist(center(c), center(c2)))
					half[c] = math.Min(half[c], cc[c*k+c2])
				}
			}
		}
		changed := 0
		ch := make([]int, n)
		sparse.ParallelRows(n, n*k*d, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				lb := lower[i*k : i*k+k]
				a := assign[i]
				if a < 0 {
					// First pass: every distance.
					bi, bd := 0, math.Inf(1)
					for c := 0; c < k; c++ {
						v := sqDist(row(i), center(c))
						lb[c] = math.Sqrt(v)
						if v < bd {
							bi, bd = c, v
						}
					}
					assign[i], dist[i], stale[i] = bi, bd, false
					upper[i] = math.Sqrt(bd)
					ch[i] = 1
					continue
				}
				if upper[i] < half[a]*keep {
					stale[i] = true
					continue
				}
				bi, bd := a, -1.0 // bd < 0: the distance to a not computed yet
				for c := 0; c < k; c++ {
					if c == bi {
						continue
					}
					if m := math.Max(lb[c], cc[bi*k+c]) * keep; upper[i] < m {
						continue
					}
					if bd < 0 {
						bd = sqDist(row(i), center(bi))
						lb[bi], upper[i] = math.Sqrt(bd), math.Sqrt(bd)
						if m := math.Max(lb[c], cc[bi*k+c]) * keep; upper[i] < m {
							continue
						}
					}
					v := sqDist(row(i), center(c))
					lb[c] = math.Sqrt(v)
					if v < bd || (v == bd && c < bi) {
						bi, bd = c, v
						upper[i] = lb[c]
					}
				}
				stale[i] = bd < 0
				if bd >= 0 {
					dist[i] = bd
				}
				if bi != a {
					assign[i] = bi
					ch[i] = 1
				}
			}
		})
		for _, v := range ch {
			changed += v
		}
		// Update the means.
		copy(old, centers)
		clear(centers)
		clear(counts)
		for i := 0; i < n; i++ {
			c := assign[i]
			counts[c]++
			cc := center(c)
			for j, v := range row(i) {
				cc[j] += v
			}
		}
		reseeded := false
		for c := 0; c < k; c++ {
			if counts[c] == 0 {
				if !reseeded {
					// Lloyd's dist: every point's distance to its centre
					// in this iteration.
					for i := 0; i < n; i++ {
						if stale[i] {
							dist[i], stale[i] = sqDist(row(i), old[assign[i]*d:assign[i]*d+d]), false
						}
					}
				}
				// Re-seed an empty cluster with the point farthest from its centre.
				far := 0
				for i := 1; i < n; i++ {
					if dist[i] > dist[far] {
						far = i
					}
				}
				copy(center(c), row(far))
				dist[far] = 0
				reseeded = true
				continue
			}
			cc := center(c)
			for j := range cc {
				cc[j] /= float64(counts[c])
			}
		}
		if changed == 0 && !reseeded {
			break
		}
		// The bounds follow the centres' moves.
		for c := 0; c < k; c++ {
			move[c] = math.Sqrt(sqDist(old[c*d:c*d+d], center(c)))
		}
		for i := 0; i < n; i++ {
			upper[i] += move[assign[i]]
			lb := lower[i*k : i*k+k]
			for c, m := range move {
				lb[c] -= m
			}
		}
	}
	// Final assignment to the final centres and the inertia.
	var inertia float64
	for i := 0; i < n; i++ {
		bi, bd := 0, math.Inf(1)
		for c := 0; c < k; c++ {
			if v := sqDist(row(i), center(c)); v < bd {
				bi, bd = c, v
			}
		}
		assign[i] = bi
		inertia += bd
	}
	return &KMeansResult{Assign: assign, Centers: mat.NewDense(k, d, centers), Inertia: inertia, Iters: iters}, nil
}

// PairSatisfaction is the fraction of the pairs a clustering respects:
// similar pairs in one cluster, dissimilar pairs in two. assign gives the
// cluster of every point the pairs index; NaN for no pair (or nil pairs).
func PairSatisfaction(assign []int, pairs *constraints.Pairs) float64 {
	if pairs == nil || pairs.Len() == 0 {
		return math.NaN()
	}
	ok := 0
	for _, q := range pairs.List {
		if q.A < 0 || q.B < 0 || q.A >= len(assign) || q.B >= len(assign) {
			return math.NaN()
		}
		if (assign[q.A] == assign[q.B]) == q.Same {
			ok++
		}
	}
	return float64(ok) / float64(pairs.Len())
}

// PairwiseAccuracy is the clustering accuracy of the SimpleNPKL paper:
// the fraction of the n(n−1)/2 point pairs on which the prediction agrees
// with the truth about being in the same group,
//
//	Σ_{i>j} 1{[c_i = c_j] = [ĉ_i = ĉ_j]} / (n(n−1)/2),
//
// computed in O(n + groups²) from the contingency table. It does not depend
// on how clusters are numbered. It returns NaN when the lengths differ or
// n < 2.
func PairwiseAccuracy(truth, pred []int) float64 {
	n := len(truth)
	if n != len(pred) || n < 2 {
		return math.NaN()
	}
	pairs := func(c int) float64 { return float64(c) * float64(c-1) / 2 }
	ct, cp := map[int]int{}, map[int]int{}
	both := map[[2]int]int{}
	for i := range truth {
		ct[truth[i]]++
		cp[pred[i]]++
		both[[2]int{truth[i], pred[i]}]++
	}
	var sameT, sameP, sameBoth float64
	for _, c := range ct {
		sameT += pairs(c)
	}
	for _, c := range cp {
		sameP += pairs(c)
	}
	for _, c := range both {
		sameBoth += pairs(c)
	}
	total := pairs(n)
	agree := sameBoth + (total - sameT - sameP + sameBoth)
	return agree / total
}
