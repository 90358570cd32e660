package mvu

import (
	"container/heap"
	"math"

	"github.com/psdlearn/psdlearn/engine"
)

// SigmaFloor is the smallest σ MVU chooses by itself: the paper's value for
// its 500-point Swiss roll (in units of the mean squared neighbour distance).
const SigmaFloor = 1e5

// sigmaFraction is the fraction of the estimated top eigenvalue of the
// unfolded Gram matrix that MVU takes as σ when that is above SigmaFloor.
//
// It is calibrated on seeded Swiss rolls (k = 6), where the estimate is
// 7.4e4 at n = 500, 1.2e6 at 2,000, 7.4e6 at 5,000 and 1.1e8 at 20,000.
// σ = 1e5 unrolls n = 500 and 2,000 (|ρ| ≥ 0.998), σ = 1e6 unrolls 5,000 and
// σ = 1e7 unrolls 20,000, i.e. about a tenth of the estimate; σ = 1e5 at
// n = 20,000 did not finish 150 relaxation iterations in 64 minutes. Every
// eigenvalue of the relaxation's X is at most σ (its C + Â is −I plus a
// positive semidefinite Laplacian), so a σ far below the unfolded variance
// forces it to spread that variance over many dimensions, which the sparse
// eigensolver pays for.
const sigmaFraction = 0.1

// autoSigma returns the σ MVU uses when none is given:
// max(SigmaFloor, sigmaFraction·λ̂), where λ̂ estimates the top eigenvalue of
// the unfolded Gram matrix from graph geodesics. A double sweep (Dijkstra
// from point 0, then from the point farthest from it) finds an end of the
// manifold, and λ̂ = Σ_a (d_a − d̄)² is the variance of the geodesic
// distances d_a from that end: exactly the top eigenvalue for points on a
// line, and the variance along the longest geodesic in general. unit are the
// squared edge lengths in the units of the problem.
func autoSigma(n int, edges []engine.Pair, unit []float64) float64 {
	return math.Max(SigmaFloor, sigmaFraction*geodesicVariance(n, edges, unit))
}

// geodesicVariance is λ̂ of autoSigma; the graph must be connected.
func geodesicVariance(n int, edges []engine.Pair, dist2 []float64) float64 {
	g := newGeodesicGraph(n, edges, dist2)
	d := g.distances(0)
	far := 0
	for i, v := range d {
		if v > d[far] {
			far = i
		}
	}
	d = g.distances(far)
	var mean float64
	for _, v := range d {
		mean += v
	}
	mean /= float64(n)
	var s float64
	for _, v := range d {
		s += (v - mean) * (v - mean)
	}
	return s
}

// geodesicGraph is an undirected graph with edge lengths in CSR form.
type geodesicGraph struct {
	start []int     // edges of node a are adj[start[a]:start[a+1]]
	adj   []int     // neighbour
	w     []float64 // edge length
}

func newGeodesicGraph(n int, edges []engine.Pair, dist2 []float64) *geodesicGraph {
	g := &geodesicGraph{start: make([]int, n+1), adj: make([]int, 2*len(edges)), w: make([]float64, 2*len(edges))}
	for _, e := range edges {
		g.start[e.A+1]++
		g.start[e.B+1]++
	}
	for i := 0; i < n; i++ {
		g.start[i+1] += g.start[i]
	}
	next := append([]int(nil), g.start[:n]...)
	for t, e := range edges {
		l := math.Sqrt(dist2[t])
		g.adj[next[e.A]], g.w[next[e.A]] = e.B, l
		next[e.A]++
		g.adj[next[e.B]], g.w[next[e.B]] = e.A, l
		next[e.B]++
	}
	return g
}

// distances returns the shortest-path distances from s (Dijkstra with a
// binary heap; +Inf for unreachable nodes).
func (g *geodesicGraph) distances(s int) []float64 {
	n := len(g.start) - 1
	d := make([]float64, n)
	for i := range d {
		d[i] = math.Inf(1)
	}
	d[s] = 0
	q := &distHeap{{node: s}}
	for q.Len() > 0 {
		it := heap.Pop(q).(distItem)
		if it.d > d[it.node] {
			continue // stale entry
		}
		for j := g.start[it.node]; j < g.start[it.node+1]; j++ {
			v, nd := g.adj[j], it.d+g.w[j]
			if nd < d[v] {
				d[v] = nd
				heap.Push(q, distItem{node: v, d: nd})
			}
		}
	}
	return d
}

type distItem struct {
	node int
	d    float64
}

// distHeap is a min-heap of tentative distances (container/heap).
type distHeap []distItem

func (h distHeap) Len() int           { return len(h) }
func (h distHeap) Less(i, j int) bool { return h[i].d < h[j].d }
func (h distHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *distHeap) Push(x any)        { *h = append(*h, x.(distItem)) }
func (h *distHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}
