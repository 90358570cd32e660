// Package preprocess holds the fitted preprocessing of psdlearn: feature
// standardisation and a PCA projection, chained in a Pipeline. Fitting them
// needs the numerical engine (package data: FitStandardizer, FitPCA,
// FitPipeline); applying them does not. This package imports only gonum, so
// a program that loads a model and transforms data links no native library.
package preprocess

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/psdlearn/psdlearn/sparse"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"
)

// Standardizer centres every feature and scales it to unit variance with the
// mean and standard deviation of the data it was fitted on — the training
// part only, then applied unchanged to validation and test data.
type Standardizer struct {
	Mean  []float64 `json:"mean"`
	Scale []float64 `json:"scale"` // population standard deviation; 1 for a constant feature
}

// Dim returns the number of features the standardizer expects.
func (s *Standardizer) Dim() int { return len(s.Mean) }

// Apply returns (x − mean) ./ scale in a new matrix.
func (s *Standardizer) Apply(x *mat.Dense) (*mat.Dense, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	n, d := x.Dims()
	if d != len(s.Mean) {
		return nil, fmt.Errorf("data: standardize: data has %d features, the standardizer %d", d, len(s.Mean))
	}
	out := mat.NewDense(n, d, nil)
	raw, o := x.RawMatrix(), out.RawMatrix()
	sparse.ParallelRows(n, n*d, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			src, dst := raw.Data[i*raw.Stride:i*raw.Stride+d], o.Data[i*o.Stride:i*o.Stride+d]
			for j, v := range src {
				dst[j] = centre(v, s.Mean[j], s.Scale[j])
			}
		}
	})
	return out, nil
}

// ApplyFeature returns feature j of a raw row standardised, (v − Mean[j]) /
// Scale[j], computed as Apply computes it: the building block of
// row-at-a-time transforms that write into the caller's buffers. j must lie
// in [0, Dim()).
func (s *Standardizer) ApplyFeature(j int, v float64) float64 {
	return centre(v, s.Mean[j], s.Scale[j])
}

func (s *Standardizer) check() error {
	if s == nil || len(s.Mean) == 0 || len(s.Mean) != len(s.Scale) {
		return fmt.Errorf("data: standardizer: malformed (mean and scale of lengths %d and %d)", len(s.Mean), len(s.Scale))
	}
	for j := range s.Mean {
		if !finite(s.Mean[j]) || !finite(s.Scale[j]) || s.Scale[j] <= 0 {
			return fmt.Errorf("data: standardizer: feature %d has mean %v and scale %v", j, s.Mean[j], s.Scale[j])
		}
	}
	return nil
}

// PCA projects centred data onto its leading principal axes.
type PCA struct {
	Mean       []float64  // D: the training mean
	Components *mat.Dense // D×d: orthonormal principal axes as columns, by descending variance
	Variances  []float64  // d: the variance along each axis (descending)
}

// InDim and OutDim return the input dimension D and the number of components d.
func (p *PCA) InDim() int { r, _ := p.Components.Dims(); return r }

// OutDim returns the number of principal components d.
func (p *PCA) OutDim() int { _, c := p.Components.Dims(); return c }

// Apply returns (x − mean)·Components, an n×d matrix, with gonum's BLAS.
func (p *PCA) Apply(x *mat.Dense) (*mat.Dense, error) {
	return p.ApplyBLAS(nil, x)
}

// ApplyBLAS is Apply with the product done by impl (nil: gonum), one GEMM
// per block of rows on all cores. Each output row depends only on its input
// row, so the result does not depend on the number of cores.
func (p *PCA) ApplyBLAS(impl blas.Float64, x *mat.Dense) (*mat.Dense, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	n, dim := x.Dims()
	if dim != len(p.Mean) {
		return nil, fmt.Errorf("data: pca: data has %d features, the projection expects %d", dim, len(p.Mean))
	}
	if impl == nil {
		impl = gonum.Implementation{}
	}
	d := p.OutDim()
	out := mat.NewDense(n, d, nil)
	if n == 0 {
		return out, nil
	}
	raw, o, c := x.RawMatrix(), out.RawMatrix(), p.Components.RawMatrix()
	const block = 512
	sparse.ParallelRows((n+block-1)/block, n*dim*d, func(blo, bhi int) {
		xc := make([]float64, min(block, n)*dim) // one row needs one row of scratch
		for b := blo; b < bhi; b++ {
			lo, hi := b*block, min((b+1)*block, n)
			for i := lo; i < hi; i++ {
				row := xc[(i-lo)*dim : (i-lo+1)*dim]
				for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+dim] {
					row[j] = v - p.Mean[j]
				}
			}
			impl.Dgemm(blas.NoTrans, blas.NoTrans, hi-lo, d, dim, 1, xc, dim, c.Data, c.Stride, 0, o.Data[lo*o.Stride:], o.Stride)
		}
	})
	return out, nil
}

func (p *PCA) check() error {
	if p == nil || p.Components == nil {
		return fmt.Errorf("data: pca: malformed (no components)")
	}
	r, c := p.Components.Dims()
	if r != len(p.Mean) || c != len(p.Variances) {
		return fmt.Errorf("data: pca: malformed (mean %d, components %d×%d, variances %d)", len(p.Mean), r, c, len(p.Variances))
	}
	for _, v := range p.Mean {
		if !finite(v) {
			return fmt.Errorf("data: pca: non-finite mean")
		}
	}
	for _, v := range p.Components.RawMatrix().Data {
		if !finite(v) {
			return fmt.Errorf("data: pca: non-finite component")
		}
	}
	return checkPCAShape(p)
}

type pcaJSON struct {
	Mean       []float64   `json:"mean"`
	Components [][]float64 `json:"components"` // D rows of d entries
	Variances  []float64   `json:"variances"`
}

// MarshalJSON encodes the projection with the components as D rows of d numbers.
func (p *PCA) MarshalJSON() ([]byte, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	r, _ := p.Components.Dims()
	rows := make([][]float64, r)
	for i := range rows {
		rows[i] = p.Components.RawRowView(i)
	}
	return json.Marshal(pcaJSON{Mean: p.Mean, Components: rows, Variances: p.Variances})
}

// UnmarshalJSON decodes and validates the form written by MarshalJSON.
func (p *PCA) UnmarshalJSON(b []byte) error {
	var j pcaJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if len(j.Components) == 0 || len(j.Components) != len(j.Mean) {
		return fmt.Errorf("data: pca: %d component rows for %d features", len(j.Components), len(j.Mean))
	}
	d := len(j.Components[0])
	if d == 0 || d != len(j.Variances) {
		return fmt.Errorf("data: pca: %d components, %d variances", d, len(j.Variances))
	}
	c := mat.NewDense(len(j.Components), d, nil)
	for i, row := range j.Components {
		if len(row) != d {
			return fmt.Errorf("data: pca: ragged component row %d", i)
		}
		c.SetRow(i, row)
	}
	q := PCA{Mean: j.Mean, Components: c, Variances: j.Variances}
	if err := q.check(); err != nil {
		return err
	}
	*p = q
	return nil
}

// Pipeline is the preprocessing of psdlearn train: optional standardisation,
// then optional PCA, both fitted on the training part. A nil or empty
// Pipeline is the identity. It is stored in model files so that eval and
// transform apply it to raw data.
type Pipeline struct {
	Std *Standardizer `json:"standardize,omitempty"`
	PCA *PCA          `json:"pca,omitempty"`
}

// Empty reports whether the pipeline does nothing.
func (p *Pipeline) Empty() bool { return p == nil || (p.Std == nil && p.PCA == nil) }

// InDim returns the input dimension the pipeline expects (0 when empty).
func (p *Pipeline) InDim() int {
	switch {
	case p.Empty():
		return 0
	case p.Std != nil:
		return p.Std.Dim()
	default:
		return p.PCA.InDim()
	}
}

// Validate checks the parts and that their dimensions fit together.
func (p *Pipeline) Validate() error {
	if p.Empty() {
		return nil
	}
	if p.Std != nil {
		if err := p.Std.check(); err != nil {
			return err
		}
	}
	if p.PCA != nil {
		if err := p.PCA.check(); err != nil {
			return err
		}
		if p.Std != nil && p.Std.Dim() != p.PCA.InDim() {
			return fmt.Errorf("data: pipeline: standardizer has %d features, PCA expects %d", p.Std.Dim(), p.PCA.InDim())
		}
	}
	return nil
}

// Apply runs the pipeline on x. An empty pipeline returns x itself.
func (p *Pipeline) Apply(x *mat.Dense) (*mat.Dense, error) {
	return p.ApplyBLAS(nil, x)
}

// ApplyBLAS is Apply with the PCA product done by impl (nil: gonum's BLAS),
// for example a backend's BLAS during training.
func (p *Pipeline) ApplyBLAS(impl blas.Float64, x *mat.Dense) (*mat.Dense, error) {
	if p.Empty() {
		return x, nil
	}
	cur := x
	var err error
	if p.Std != nil {
		if cur, err = p.Std.Apply(cur); err != nil {
			return nil, err
		}
	}
	if p.PCA != nil {
		if cur, err = p.PCA.ApplyBLAS(impl, cur); err != nil {
			return nil, err
		}
	}
	return cur, nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// centre returns (v − mean)/scale without overflowing in v − mean when the
// quotient is finite.
func centre(v, mean, scale float64) float64 {
	if r := (v - mean) / scale; r-r == 0 { // finite(r), cheap enough to inline
		return r
	}
	return v/scale - mean/scale
}

// orthoTol bounds |CᵀC − I| for the components of a PCA read from a file;
// FitPCA's are orthonormal to about 1e-14.
const orthoTol = 1e-6

// checkPCAShape checks the properties a PCA must have beyond finiteness:
// variances finite and non-negative, components orthonormal columns.
func checkPCAShape(p *PCA) error {
	for i, v := range p.Variances {
		if !finite(v) || v < 0 {
			return fmt.Errorf("data: pca: variance %d is %v, want a finite value ≥ 0", i, v)
		}
	}
	c := p.Components
	r, k := c.Dims()
	for a := 0; a < k; a++ {
		for b := a; b < k; b++ {
			dot := 0.0
			for i := 0; i < r; i++ {
				dot += c.At(i, a) * c.At(i, b)
			}
			want := 0.0
			if a == b {
				want = 1
			}
			if !(math.Abs(dot-want) <= orthoTol) {
				return fmt.Errorf("data: pca: components are not orthonormal: column %d · column %d = %v, want %v", a, b, dot, want)
			}
		}
	}
	return nil
}
