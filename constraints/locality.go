package constraints

import (
	"fmt"
	"slices"
)

// Locality: the products with a triplet set's graph Laplacian (L_W·X, behind
// every weighted Gram Xᵀ L_W X) and the per-pair kernels read two data rows
// per pair. In the order in which data sets arrive, the k nearest neighbours
// and impostors of a point lie anywhere in the matrix, so on Fashion-MNIST
// (50,000 × 164, 65 MB) each product streams the matrix from memory many
// times over. Renumbering the points so that points joined by pairs get
// nearby numbers (Cuthill–McKee) keeps a block of rows and the rows it reads
// within the last-level cache.

// LocalityOrder returns a Cuthill–McKee ordering of the N points of the set
// over its pair graph: perm[k] is the point to number k. Each connected part
// starts from its unvisited point of smallest degree, and neighbours are
// visited by increasing degree, then index, so the order depends only on the
// pairs.
func (s *TripletSet) LocalityOrder() []int {
	n := s.N
	ptr := make([]int, n+1)
	for _, p := range s.Pairs {
		ptr[p.A+1]++
		ptr[p.B+1]++
	}
	for i := 0; i < n; i++ {
		ptr[i+1] += ptr[i]
	}
	adj := make([]int32, ptr[n])
	fill := append([]int(nil), ptr[:n]...)
	for _, p := range s.Pairs {
		adj[fill[p.A]] = int32(p.B)
		fill[p.A]++
		adj[fill[p.B]] = int32(p.A)
		fill[p.B]++
	}
	deg := func(i int32) int { return ptr[i+1] - ptr[i] }
	byDegree := func(a, b int32) int {
		if da, db := deg(a), deg(b); da != db {
			return da - db
		}
		return int(a - b)
	}
	for i := 0; i < n; i++ {
		slices.SortFunc(adj[ptr[i]:ptr[i+1]], byDegree)
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
		head := len(perm)
		perm = append(perm, int(s0))
		for ; head < len(perm); head++ {
			v := perm[head]
			for _, u := range adj[ptr[v]:ptr[v+1]] {
				if !seen[u] {
					seen[u] = true
					perm = append(perm, int(u))
				}
			}
		}
	}
	return perm
}

// Relabel returns the set with point perm[k] renamed k: triplet r of the
// result is triplet r of s with its points renamed, so per-triplet vectors
// (weights, margins, multipliers) mean the same in both. perm must be a
// permutation of 0..N−1.
func (s *TripletSet) Relabel(perm []int) (*TripletSet, error) {
	if len(perm) != s.N {
		return nil, fmt.Errorf("%w: relabelling %d points with a permutation of %d", ErrInvalid, s.N, len(perm))
	}
	inv := make([]int, s.N)
	for i := range inv {
		inv[i] = -1
	}
	for k, p := range perm {
		if p < 0 || p >= s.N || inv[p] >= 0 {
			return nil, fmt.Errorf("%w: relabelling: not a permutation (entry %d = %d)", ErrInvalid, k, p)
		}
		inv[p] = k
	}
	ts := make([]Triplet, len(s.Triplets))
	for r, t := range s.Triplets {
		ts[r] = Triplet{I: inv[t.I], J: inv[t.J], K: inv[t.K]}
	}
	return NewTripletSet(s.N, ts)
}
