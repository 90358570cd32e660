package constraints

import (
	"fmt"

	"github.com/psdlearn/psdlearn/sparse"
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
	return sparse.CuthillMcKeeOrder(ptr[:n], ptr[1:], adj)
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
	// Renaming the points of a checked set contradicts nothing: the
	// check (a sort of all the triplets) is not repeated.
	return newTripletSet(s.N, ts)
}

// Restrict returns the triplets idx of s (in that order) on the points
// they touch, renumbered in increasing order: rows[k] is the point of s
// that is point k of sub. Per-triplet vectors of sub are indexed like idx.
// Every entry of idx must index a triplet of s.
func (s *TripletSet) Restrict(idx []int) (rows []int, sub *TripletSet, err error) {
	if err := s.Validate(); err != nil {
		return nil, nil, err
	}
	local := make([]int32, s.N)
	for i := range local {
		local[i] = -1
	}
	for k, r := range idx {
		if r < 0 || r >= len(s.Triplets) {
			return nil, nil, fmt.Errorf("%w: restricting to triplet %d (entry %d) of %d", ErrInvalid, r, k, len(s.Triplets))
		}
		t := s.Triplets[r]
		local[t.I], local[t.J], local[t.K] = 0, 0, 0
	}
	for i, v := range local {
		if v == 0 {
			local[i] = int32(len(rows))
			rows = append(rows, i)
		}
	}
	ts := make([]Triplet, len(idx))
	for k, r := range idx {
		t := s.Triplets[r]
		ts[k] = Triplet{I: int(local[t.I]), J: int(local[t.J]), K: int(local[t.K])}
	}
	// A subset of a checked set, its points renamed one to one,
	// contradicts nothing.
	sub, err = newTripletSet(len(rows), ts)
	return rows, sub, err
}
