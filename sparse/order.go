package sparse

import (
	"fmt"
	"slices"
)

// CuthillMcKee returns a Cuthill–McKee ordering of the square matrix a's
// graph (i ~ j when a stores entry (i, j) or (j, i), i ≠ j): perm[k] is
// the row to number k. Each connected part starts from its unvisited row
// of smallest degree, and neighbours are visited by increasing degree, then
// index, so the order depends only on the pattern. Numbered this way, the
// columns a row reads lie near the row, which keeps a sparse product's
// reads of x in cache (constraints.TripletSet.LocalityOrder does the same
// for a pair graph). It returns an error unless a is square with valid
// indices.
func CuthillMcKee(a *CSR) ([]int, error) {
	if a == nil || a.Rows != a.Cols || len(a.Indptr) != a.Rows+1 {
		return nil, fmt.Errorf("%w: CuthillMcKee needs a square CSR matrix", ErrInvalidMatrix)
	}
	n := a.Rows
	// The symmetric pattern without the diagonal.
	ptr := make([]int, n+1)
	for i := 0; i < n; i++ {
		for p := a.Indptr[i]; p < a.Indptr[i+1]; p++ {
			j := a.Ind[p]
			if j < 0 || j >= n {
				return nil, fmt.Errorf("%w: column %d outside [0, %d)", ErrInvalidMatrix, j, n)
			}
			if j != i {
				ptr[i+1]++
				ptr[j+1]++
			}
		}
	}
	for i := 0; i < n; i++ {
		ptr[i+1] += ptr[i]
	}
	adj := make([]int32, ptr[n])
	fill := append([]int(nil), ptr[:n]...)
	for i := 0; i < n; i++ {
		for p := a.Indptr[i]; p < a.Indptr[i+1]; p++ {
			if j := a.Ind[p]; j != i {
				adj[fill[i]] = int32(j)
				fill[i]++
				adj[fill[j]] = int32(i)
				fill[j]++
			}
		}
	}
	// Each neighbour once (a symmetric pattern lists every edge twice).
	for i := 0; i < n; i++ {
		row := adj[ptr[i]:ptr[i+1]]
		slices.Sort(row)
		fill[i] = ptr[i] + len(slices.Compact(row))
	}
	return CuthillMcKeeOrder(ptr[:n], fill, adj), nil
}

// CuthillMcKeeOrder returns the Cuthill–McKee order of the graph on n =
// len(start) vertices whose vertex i has the neighbours
// adj[start[i]:end[i]] (a neighbour listed twice counts twice in the
// degree): perm[k] is the vertex to number k. Each connected part starts
// from its unvisited vertex of smallest degree, and neighbours are visited
// by increasing degree, then index. It sorts each vertex's neighbours in
// place. CuthillMcKee and constraints.TripletSet.LocalityOrder use it.
func CuthillMcKeeOrder(start, end []int, adj []int32) []int {
	n := len(start)
	deg := func(i int32) int { return end[i] - start[i] }
	byDegree := func(x, y int32) int {
		if dx, dy := deg(x), deg(y); dx != dy {
			return dx - dy
		}
		return int(x - y)
	}
	for i := 0; i < n; i++ {
		slices.SortFunc(adj[start[i]:end[i]], byDegree)
	}
	starts := make([]int32, n)
	for i := range starts {
		starts[i] = int32(i)
	}
	slices.SortFunc(starts, byDegree)
	seen := make([]bool, n)
	perm := make([]int, 0, n)
	for _, s0 := range starts {
		if seen[s0] {
			continue
		}
		seen[s0] = true
		perm = append(perm, int(s0))
		for head := len(perm) - 1; head < len(perm); head++ {
			v := perm[head]
			for _, u := range adj[start[v]:end[v]] {
				if !seen[u] {
					seen[u] = true
					perm = append(perm, int(u))
				}
			}
		}
	}
	return perm
}

// PermuteSym returns P·a·Pᵀ for the permutation perm (perm[k] is the row
// of a that becomes row k): entry (i, j) of a moves to (inv[i], inv[j]),
// with each row's columns sorted. perm must be a permutation of the rows.
func PermuteSym(a *CSR, perm []int) (*CSR, error) {
	n := a.Rows
	if a.Cols != n || len(perm) != n {
		return nil, fmt.Errorf("%w: PermuteSym: %d×%d matrix, permutation of %d", ErrInvalidMatrix, a.Rows, a.Cols, len(perm))
	}
	inv := make([]int, n)
	for i := range inv {
		inv[i] = -1
	}
	for k, i := range perm {
		if i < 0 || i >= n || inv[i] >= 0 {
			return nil, fmt.Errorf("%w: PermuteSym: not a permutation (entry %d = %d)", ErrInvalidMatrix, k, i)
		}
		inv[i] = k
	}
	out := &CSR{Rows: n, Cols: n, Indptr: make([]int, n+1), Ind: make([]int, 0, a.NNZ()), Data: make([]float64, 0, a.NNZ())}
	idx := []int(nil)
	for k, i := range perm {
		lo, hi := a.Indptr[i], a.Indptr[i+1]
		idx = idx[:0]
		for p := lo; p < hi; p++ {
			idx = append(idx, p)
		}
		slices.SortFunc(idx, func(p, q int) int { return inv[a.Ind[p]] - inv[a.Ind[q]] })
		for _, p := range idx {
			out.Ind = append(out.Ind, inv[a.Ind[p]])
			out.Data = append(out.Data, a.Data[p])
		}
		out.Indptr[k+1] = len(out.Ind)
	}
	return out, nil
}
