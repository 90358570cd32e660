package sparse

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"
)

// Neighbors holds the k nearest reference rows of each query row, in row-major
// nq×K arrays: Index[i*K+t] is the t-th nearest reference row of query i and
// Dist[i*K+t] its squared Euclidean distance. Neighbours are sorted by
// ascending distance, ties broken by the lower reference index.
type Neighbors struct {
	K     int
	Index []int
	Dist  []float64
}

// Row returns the indices and squared distances of the neighbours of query i.
func (nb *Neighbors) Row(i int) ([]int, []float64) {
	return nb.Index[i*nb.K : (i+1)*nb.K], nb.Dist[i*nb.K : (i+1)*nb.K]
}

// Edges returns the distinct undirected pairs {i, j} of a self-search's
// neighbour lists (query i, neighbour j), as a[t] < b[t] sorted by (a, b),
// with their squared distances: the k-nearest-neighbour graph's edges.
func (nb *Neighbors) Edges() (a, b []int, dist2 []float64) {
	type edge struct {
		a, b int
		d    float64
	}
	n := len(nb.Index) / max(nb.K, 1)
	seen := make(map[[2]int]bool, len(nb.Index))
	var es []edge
	for i := 0; i < n; i++ {
		idx, dist := nb.Row(i)
		for t, j := range idx {
			key := [2]int{min(i, j), max(i, j)}
			if !seen[key] {
				seen[key] = true
				es = append(es, edge{key[0], key[1], dist[t]})
			}
		}
	}
	slices.SortFunc(es, func(x, y edge) int {
		if x.a != y.a {
			return x.a - y.a
		}
		return x.b - y.b
	})
	a, b, dist2 = make([]int, len(es)), make([]int, len(es)), make([]float64, len(es))
	for t, e := range es {
		a[t], b[t], dist2[t] = e.a, e.b, e.d
	}
	return a, b, dist2
}

const (
	knnQueryBlock = 256 // queries per block (Fashion-MNIST's 164-D search: 15% faster than 128)
	knnRefBlock   = 512 // reference rows per GEMM panel (the float32 product, 512 KiB, stays in L2)
	knnSlack      = 8   // extra candidates re-ranked by exact distances
)

// KNN finds the k nearest rows of ref for every row of q by squared Euclidean
// distance. With self true, q and ref must be the same matrix and a point is
// never its own neighbour. Distances are screened block by block with level-3
// BLAS (‖q‖² + ‖r‖² − 2 q·r) so no nq×nref matrix is ever held, and the best
// k + 8 candidates of each query are re-ranked by exactly computed distances.
// It uses gonum's BLAS; see KNNBLAS to choose another implementation.
func KNN(q, ref *mat.Dense, k int, self bool) (*Neighbors, error) {
	return KNNBLAS(gonum.Implementation{}, q, ref, k, self)
}

// KNNBLAS is KNN with the GEMMs done by impl. Query blocks run on parallel
// goroutines. For data of low intrinsic dimension (at most 32 columns, at
// least 2,048 reference rows) it answers from a k-d tree instead when a pilot
// of 64 queries shows the tree costs less than the screen (kdtree.go). For
// data with many columns whose variance is concentrated in a few of them
// (principal components, a learned metric's embedding), a plain search
// screens on those few first when a pilot shows it costs less
// (knnprefix.go). The result is the same, bit for bit, whichever way.
func KNNBLAS(impl blas.Float64, q, ref *mat.Dense, k int, self bool) (*Neighbors, error) {
	return knnBLAS(impl, q, ref, k, self, true)
}

// knnBLAS is KNNBLAS; with fast false it runs the plain screen only, never
// the k-d tree or the prefix screen (tests compare the strategies).
func knnBLAS(impl blas.Float64, q, ref *mat.Dense, k int, self, fast bool) (*Neighbors, error) {
	if q == nil || ref == nil {
		return nil, fmt.Errorf("sparse: KNN: nil matrix")
	}
	nq, d := q.Dims()
	nr, dr := ref.Dims()
	if d != dr {
		return nil, fmt.Errorf("sparse: KNN: queries have %d columns, references %d", d, dr)
	}
	if self && (q != ref) {
		return nil, fmt.Errorf("sparse: KNN: self=true needs q and ref to be the same matrix")
	}
	avail := nr
	if self {
		avail--
	}
	if k <= 0 || k > avail {
		return nil, fmt.Errorf("sparse: KNN: k = %d outside [1, %d] for %d reference points", k, avail, nr)
	}
	if nq == 0 {
		return &Neighbors{K: k}, nil
	}
	qr, rr := q.RawMatrix(), ref.RawMatrix()
	if err := checkFiniteRows("query", qr.Data, qr.Stride, nq, d); err != nil {
		return nil, err
	}
	if !self {
		if err := checkFiniteRows("reference", rr.Data, rr.Stride, nr, d); err != nil {
			return nil, err
		}
	}
	out := &Neighbors{K: k, Index: make([]int, nq*k), Dist: make([]float64, nq*k)}
	if fast && tryKDTree(qr, rr, nq, nr, d, k, self, out) {
		return out, nil
	}
	plan := &searchPlan{self: self, kOther: k}
	res := &screenResult{other: out}
	if fast && tryPrefixScreen(impl, qr, rr, nq, nr, d, plan, res) {
		return out, nil
	}
	if !screen32(impl, qr, rr, nq, nr, d, plan, res) {
		screen64(impl, qr, rr, nq, nr, d, plan, res)
	}
	return out, nil
}

func rowSqNorms(r blas64.General, n, d int) []float64 {
	out := make([]float64, n)
	for i := 0; i < n; i++ {
		var s float64
		for _, v := range r.Data[i*r.Stride : i*r.Stride+d] {
			s += v * v
		}
		out[i] = s
	}
	return out
}

// cand2 is a candidate neighbour; candList keeps the worst candidate by
// (dist, idx) first (see push and replaceTop).
type cand2 struct {
	dist float64
	idx  int
}

func (a cand2) less(b cand2) bool { return a.dist < b.dist || (a.dist == b.dist && a.idx < b.idx) }

// compare orders candidates as less does (a strict total order: indices
// are distinct), for slices.SortFunc: no reflection, unlike sort.Slice.
func (a cand2) compare(b cand2) int {
	switch {
	case a.less(b):
		return -1
	case b.less(a):
		return 1
	}
	return 0
}

type candList []cand2
