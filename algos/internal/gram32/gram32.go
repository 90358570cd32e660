// Package gram32 computes weighted Gram matrices Xᵀ L_W X in single
// precision, for the evaluations whose rounding the certificates do not
// see: BoostMetric's mixed-precision pricing and FrobMetric's loose solves.
//
// The data are copied once, centred, to float32: L_W annihilates constant
// columns (its rows sum to zero), so Xᵀ L_W X = (X − 1μᵀ)ᵀ L_W (X − 1μᵀ), and
// an offset common to all rows, which float32 would keep at the expense of
// the differences between rows, drops out before the rounding. Pair
// differences, and so the quadratic forms of embeddings of the copy, do not
// see the offset either. The product is one SGEMM per fixed chunk of rows,
// the chunks summed in double in their order, so the result does not depend
// on GOMAXPROCS.
package gram32

import (
	"math"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/internal/chunked"
	"github.com/psdlearn/psdlearn/internal/f32"
	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// ChunkRows is the number of rows from which a product is split into
// chunked.Chunks row chunks.
const ChunkRows = 4096

// Data is a centred single-precision copy of an n×d matrix with the
// scratch of its Gram products. A Data is not safe for concurrent use.
type Data struct {
	// S32 is the single-precision BLAS.
	S32 blas.Float32
	// X is X − 1μᵀ rounded to float32, n×d row-major.
	X    []float32
	N, D int
	y    []float32 // L_W·X
	part [][]float32
}

// New returns the centred single-precision copy of x, or nil when impl has
// no SGEMM or an entry of the centred copy overflows float32. It needs
// 2·n·d float32 values (the copy and L_W·X).
func New(impl blas.Float64, x *mat.Dense) *Data {
	s32, ok := impl.(blas.Float32)
	if !ok {
		return nil
	}
	n, d := x.Dims()
	raw := x.RawMatrix()
	mean := data.ColumnMeans(x)
	x32 := make([]float32, n*d)
	for i := 0; i < n; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+d] {
			f := f32.Round(v - mean[j])
			if math.IsInf(float64(f), 0) {
				return nil
			}
			x32[i*d+j] = f
		}
	}
	return &Data{S32: s32, X: x32, N: n, D: d, y: make([]float32, n*d)}
}

// WeightedGram writes the upper triangle of Xᵀ L_W X into dst (d×d), for
// the pair weights of g (on the n points of the copy).
func (s *Data) WeightedGram(dst *mat.SymDense, g *sparse.PairGraph) {
	d := s.D
	g.LaplacianMulDense32(s.y, s.X, d)
	b := chunked.Bounds(s.N, ChunkRows)
	for len(s.part) < len(b)-1 {
		s.part = append(s.part, make([]float32, d*d))
	}
	chunked.For(s.N, ChunkRows, func(c, lo, hi int) {
		s.S32.Sgemm(blas.Trans, blas.NoTrans, d, d, hi-lo, 1, s.X[lo*d:], d, s.y[lo*d:], d, 0, s.part[c], d)
	})
	raw := dst.RawSymmetric()
	for i := 0; i < d; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+d]
		clear(row[i:])
		for c := 0; c+1 < len(b); c++ {
			for j, v := range s.part[c][i*d+i : i*d+d] {
				row[i+j] += float64(v)
			}
		}
	}
}

// Embed writes z = X·l (n×r, row-major) for the d×r row-major factor l,
// in single precision over the same row chunks.
func (s *Data) Embed(z, l []float32, r int) {
	d := s.D
	chunked.For(s.N, ChunkRows, func(_, lo, hi int) {
		s.S32.Sgemm(blas.NoTrans, blas.NoTrans, hi-lo, r, d, 1, s.X[lo*d:], d, l, r, 0, z[lo*r:], r)
	})
}
