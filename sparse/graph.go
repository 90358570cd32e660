package sparse

import (
	"fmt"
	"math"
	"sort"

	"github.com/psdlearn/psdlearn/errs"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"
)

// ErrInvalidMatrix is wrapped by errors about malformed sparse input.
var ErrInvalidMatrix = errs.New("sparse: invalid matrix", errs.ErrInvalid)

// Symmetrization says how the directed relation "j is among the k nearest
// neighbours of i" becomes a symmetric similarity S.
type Symmetrization int

const (
	// Union joins i and j when either is a neighbour of the other: S = max(W, Wᵀ).
	Union Symmetrization = iota
	// Mutual joins i and j only when each is a neighbour of the other:
	// S = min(W, Wᵀ), at most k edges per point (SimpleNPKL, §4.1).
	Mutual
	// Average is S = (W + Wᵀ)/2: one-way edges get half weight.
	Average
)

// Weighting selects the weight of a kNN edge.
type Weighting int

const (
	// Binary gives every edge weight 1.
	Binary Weighting = iota
	// Heat gives edge (i, j) the weight exp(−‖x_i − x_j‖² / (2σ²)).
	Heat
)

// GraphOptions configures KNNGraph. The zero value is a binary union graph.
type GraphOptions struct {
	Symmetrize Symmetrization
	Weight     Weighting
	// Sigma is the heat-kernel width; zero selects σ² = the mean squared
	// distance to the k nearest neighbours (over all points).
	Sigma float64
}

// KNNGraph returns the symmetric n×n similarity matrix S of the
// k-nearest-neighbour graph of the rows of x (exact neighbours by squared
// Euclidean distance, see KNN), with no self-loops. It never holds an n×n
// dense matrix: O(n·k) memory beyond x.
func KNNGraph(x *mat.Dense, k int, opt GraphOptions) (*CSR, error) {
	return KNNGraphBLAS(gonum.Implementation{}, x, k, opt)
}

// KNNGraphBLAS is KNNGraph with the distance GEMMs done by impl (see KNNBLAS).
func KNNGraphBLAS(impl blas.Float64, x *mat.Dense, k int, opt GraphOptions) (*CSR, error) {
	if x == nil {
		return nil, fmt.Errorf("sparse: KNNGraph: nil matrix")
	}
	nb, err := KNNBLAS(impl, x, x, k, true)
	if err != nil {
		return nil, fmt.Errorf("sparse: KNNGraph: %w", err)
	}
	n, _ := x.Dims()
	return NeighborGraph(nb, n, opt)
}

// NeighborGraph builds the symmetric similarity matrix from the neighbours of
// n points (nb from KNN with self = true, or any lists of distinct neighbours
// other than the point itself).
func NeighborGraph(nb *Neighbors, n int, opt GraphOptions) (*CSR, error) {
	if nb == nil || nb.K <= 0 || len(nb.Index) != n*nb.K || len(nb.Dist) != n*nb.K {
		return nil, fmt.Errorf("%w: neighbour lists do not match %d points", ErrInvalidMatrix, n)
	}
	var meanDist2 float64
	if opt.Weight == Heat && opt.Sigma == 0 {
		var sum float64
		for _, d := range nb.Dist {
			sum += d
		}
		meanDist2 = sum / float64(len(nb.Dist))
	}
	weight, err := opt.WeightFunc(meanDist2)
	if err != nil {
		return nil, err
	}
	// Directed edges (i → j, w), both orientations, then merge per ordered pair.
	rows := make([][]HalfEdge, n)
	k := nb.K
	for i := 0; i < n; i++ {
		idx, dist := nb.Row(i)
		for t, j := range idx {
			if j < 0 || j >= n || j == i {
				return nil, fmt.Errorf("%w: neighbour %d of point %d is %d", ErrInvalidMatrix, t, i, j)
			}
			w := weight(dist[t])
			rows[i] = append(rows[i], HalfEdge{j, w, true})
			rows[j] = append(rows[j], HalfEdge{i, w, false})
		}
	}
	s := &CSR{Rows: n, Cols: n, Indptr: make([]int, n+1)}
	s.Ind = make([]int, 0, 2*n*k)
	s.Data = make([]float64, 0, 2*n*k)
	for i, r := range rows {
		s.Ind, s.Data = AppendMergedRow(s.Ind, s.Data, r, opt.Symmetrize)
		s.Indptr[i+1] = len(s.Ind)
		rows[i] = nil
	}
	return s, nil
}

// WeightFunc returns the weight of a kNN edge of squared length d2 under
// opt (checking opt's fields): 1 for Binary; exp(−d2/(2σ²)) for Heat, with
// σ² = meanDist2 (the mean squared distance of every point to its k nearest
// neighbours, summed point by point in order) when Sigma is zero.
// NeighborGraph and distributed builders of the same graph share it.
func (opt GraphOptions) WeightFunc(meanDist2 float64) (func(d2 float64) float64, error) {
	if opt.Symmetrize < Union || opt.Symmetrize > Average {
		return nil, fmt.Errorf("%w: unknown symmetrization %d", ErrInvalidMatrix, opt.Symmetrize)
	}
	switch opt.Weight {
	case Binary:
		return func(d2 float64) float64 { return 1 }, nil
	case Heat:
		s2 := opt.Sigma * opt.Sigma
		if opt.Sigma == 0 {
			s2 = meanDist2
		}
		if !(s2 > 0) || math.IsInf(s2, 0) {
			return nil, fmt.Errorf("%w: heat kernel width σ² = %g", ErrInvalidMatrix, s2)
		}
		return func(d2 float64) float64 { return math.Exp(-d2 / (2 * s2)) }, nil
	default:
		return nil, fmt.Errorf("%w: unknown weighting %d", ErrInvalidMatrix, opt.Weight)
	}
}

// HalfEdge is one orientation of a kNN edge seen from point i: J is the
// other point, W the edge's weight, Out whether J is in i's own neighbour
// list (else i is in J's).
type HalfEdge struct {
	J   int
	W   float64
	Out bool
}

// AppendMergedRow appends to (ind, data) the row of the similarity S of a
// point whose half-edges are r (in any order; r is sorted in place): for
// each other point, the weight the symmetrization s gives its half-edges,
// zero weights dropped, columns ascending. This is NeighborGraph's row, so
// a builder holding only some rows' half-edges gets the same entries.
func AppendMergedRow(ind []int, data []float64, r []HalfEdge, sym Symmetrization) ([]int, []float64) {
	sort.SliceStable(r, func(a, b int) bool { return r[a].J < r[b].J })
	for a := 0; a < len(r); {
		b := a
		var wOut, wIn float64
		var hasOut, hasIn bool
		for ; b < len(r) && r[b].J == r[a].J; b++ {
			if r[b].Out {
				wOut, hasOut = r[b].W, true
			} else {
				wIn, hasIn = r[b].W, true
			}
		}
		// The weight of an edge is symmetric in i and j, so wOut == wIn when both exist.
		var w float64
		switch sym {
		case Union:
			w = math.Max(wOut, wIn)
		case Mutual:
			if hasOut && hasIn {
				w = math.Min(wOut, wIn)
			}
		case Average:
			w = (wOut + wIn) / 2
		}
		if w != 0 {
			ind = append(ind, r[a].J)
			data = append(data, w)
		}
		a = b
	}
	return ind, data
}

// Degrees returns the row sums of a.
func Degrees(a *CSR) []float64 {
	d := make([]float64, a.Rows)
	for i := range d {
		var s float64
		for _, v := range a.Data[a.Indptr[i]:a.Indptr[i+1]] {
			s += v
		}
		d[i] = s
	}
	return d
}

// Laplacian returns the combinatorial Laplacian D − S of the symmetric
// similarity s (D = Diag(S·1)); a diagonal entry of s (self-loop) cancels in it.
func Laplacian(s *CSR) (*CSR, error) {
	if err := checkSquareSym(s); err != nil {
		return nil, err
	}
	d := Degrees(s)
	return withDiagonal(s, 0, func(i, j int, v float64) float64 { return -v }, func(i int, sii float64) float64 { return d[i] - sii }), nil
}

// NormalizedLaplacian returns L = I − D^{-1/2} S D^{-1/2} of the symmetric,
// non-negative similarity s (D = Diag(S·1)). For an isolated point (degree 0)
// D^{-1/2} is taken as 0, so its row of L is that of the identity. The
// spectrum of L lies in [0, 2]; the multiplicity of 0 is the number of
// connected components without isolated points. L is exactly symmetric.
func NormalizedLaplacian(s *CSR) (*CSR, error) {
	if err := checkSquareSym(s); err != nil {
		return nil, err
	}
	for p, v := range s.Data {
		if v < 0 {
			return nil, fmt.Errorf("%w: negative similarity %g at position %d", ErrInvalidMatrix, v, p)
		}
	}
	return NormalizedLaplacianRows(s, 0, Degrees(s)), nil
}

// NormalizedLaplacianRows returns rows lo … lo+s.Rows−1 of the normalised
// Laplacian I − D^{-1/2} S D^{-1/2}, given those rows of S (s: s.Rows×n,
// global columns, non-negative, no check) and every point's degree
// (deg[j] = Σ_l S_jl, len n; D^{-1/2} is 0 for degree 0). With lo = 0 and
// the whole of S it is NormalizedLaplacian's matrix; a row block of S and
// the degrees give the same rows, bit for bit.
func NormalizedLaplacianRows(s *CSR, lo int, deg []float64) *CSR {
	dis := make([]float64, len(deg))
	for i, v := range deg {
		if v > 0 {
			dis[i] = 1 / math.Sqrt(v)
		}
	}
	// v·(dis[i]·dis[j]): the product of the scalings is commutative, so L is exactly symmetric.
	return withDiagonal(s, lo,
		func(i, j int, v float64) float64 { return -v * (dis[i] * dis[j]) },
		func(i int, sii float64) float64 { return 1 - sii*(dis[i]*dis[i]) })
}

// withDiagonal returns the matrix with off-diagonal entries off(i, j, s_ij)
// on the pattern of s and the diagonal entries diag(i, s_ii) on every row;
// s holds rows lo … lo+s.Rows−1 (i, j are global: the diagonal of local
// row r is column lo+r).
func withDiagonal(s *CSR, lo int, off func(i, j int, v float64) float64, diag func(i int, sii float64) float64) *CSR {
	n := s.Rows
	out := &CSR{Rows: n, Cols: s.Cols, Indptr: make([]int, n+1)}
	out.Ind = make([]int, 0, s.NNZ()+n)
	out.Data = make([]float64, 0, s.NNZ()+n)
	for r := 0; r < n; r++ {
		i := lo + r
		var sii float64
		placed := false
		for p := s.Indptr[r]; p < s.Indptr[r+1]; p++ {
			j := s.Ind[p]
			if j == i {
				sii = s.Data[p]
				continue
			}
			if j > i && !placed {
				out.Ind = append(out.Ind, i)
				out.Data = append(out.Data, 0) // diagonal filled below
				placed = true
			}
			out.Ind = append(out.Ind, j)
			out.Data = append(out.Data, off(i, j, s.Data[p]))
		}
		if !placed {
			out.Ind = append(out.Ind, i)
			out.Data = append(out.Data, 0)
		}
		out.Indptr[r+1] = len(out.Ind)
		for p := out.Indptr[r]; p < out.Indptr[r+1]; p++ {
			if out.Ind[p] == i {
				out.Data[p] = diag(i, sii)
			}
		}
	}
	return out
}

func checkSquareSym(s *CSR) error {
	if err := validateCSR(s); err != nil {
		return err
	}
	if s.Rows != s.Cols {
		return fmt.Errorf("%w: %d×%d similarity is not square", ErrInvalidMatrix, s.Rows, s.Cols)
	}
	if i, j, ok := isSymmetric(s); !ok {
		return fmt.Errorf("%w: similarity entries (%d,%d) and (%d,%d) differ", ErrNotSymmetric, i, j, j, i)
	}
	return nil
}

// ConnectedComponents labels the connected components of the graph whose
// edges are the nonzero off-diagonal entries of the square matrix a (taken as
// undirected). Labels are 0..count−1 in order of the lowest point of each component.
func ConnectedComponents(a *CSR) (labels []int, count int) {
	n := a.Rows
	labels = make([]int, n)
	for i := range labels {
		labels[i] = -1
	}
	// Undirected adjacency via union-find, robust to a non-symmetric pattern.
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for i := 0; i < n; i++ {
		for p := a.Indptr[i]; p < a.Indptr[i+1]; p++ {
			if j := a.Ind[p]; j != i && a.Data[p] != 0 {
				ri, rj := find(i), find(j)
				if ri != rj {
					if ri < rj {
						parent[rj] = ri
					} else {
						parent[ri] = rj
					}
				}
			}
		}
	}
	for i := 0; i < n; i++ {
		r := find(i)
		if labels[r] < 0 {
			labels[r] = count
			count++
		}
		labels[i] = labels[r]
	}
	return labels, count
}

// NewCSRFromTriplets builds a rows×cols CSR matrix from coordinate entries
// (i[t], j[t], v[t]); duplicate coordinates are summed, zero sums are kept.
func NewCSRFromTriplets(rows, cols int, i, j []int, v []float64) (*CSR, error) {
	if rows < 0 || cols < 0 {
		return nil, fmt.Errorf("%w: dimensions %d×%d", ErrInvalidMatrix, rows, cols)
	}
	if len(i) != len(j) || len(i) != len(v) {
		return nil, fmt.Errorf("%w: %d rows, %d columns, %d values", ErrInvalidMatrix, len(i), len(j), len(v))
	}
	cnt := make([]int, rows+1)
	for t := range i {
		if i[t] < 0 || i[t] >= rows || j[t] < 0 || j[t] >= cols {
			return nil, fmt.Errorf("%w: entry %d at (%d,%d) outside %d×%d", ErrInvalidMatrix, t, i[t], j[t], rows, cols)
		}
		if math.IsNaN(v[t]) || math.IsInf(v[t], 0) {
			return nil, fmt.Errorf("%w: entry %d is %v", ErrInvalidMatrix, t, v[t])
		}
		cnt[i[t]+1]++
	}
	for r := 0; r < rows; r++ {
		cnt[r+1] += cnt[r]
	}
	ind := make([]int, len(i))
	val := make([]float64, len(i))
	pos := append([]int(nil), cnt[:rows]...)
	for t := range i {
		p := pos[i[t]]
		ind[p], val[p] = j[t], v[t]
		pos[i[t]]++
	}
	out := &CSR{Rows: rows, Cols: cols, Indptr: make([]int, rows+1)}
	out.Ind = make([]int, 0, len(i))
	out.Data = make([]float64, 0, len(i))
	for r := 0; r < rows; r++ {
		lo, hi := cnt[r], cnt[r+1]
		seg := rowSorter{ind[lo:hi], val[lo:hi]}
		sort.Stable(seg)
		for p := lo; p < hi; p++ {
			if p > lo && ind[p] == ind[p-1] {
				out.Data[len(out.Data)-1] += val[p]
				continue
			}
			out.Ind = append(out.Ind, ind[p])
			out.Data = append(out.Data, val[p])
		}
		out.Indptr[r+1] = len(out.Ind)
	}
	return out, nil
}

type rowSorter struct {
	ind []int
	val []float64
}

func (s rowSorter) Len() int           { return len(s.ind) }
func (s rowSorter) Less(a, b int) bool { return s.ind[a] < s.ind[b] }
func (s rowSorter) Swap(a, b int) {
	s.ind[a], s.ind[b] = s.ind[b], s.ind[a]
	s.val[a], s.val[b] = s.val[b], s.val[a]
}
