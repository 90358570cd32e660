package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/psdlearn/psdlearn/internal/input"
	"github.com/psdlearn/psdlearn/limits"
	"github.com/psdlearn/psdlearn/preprocess"
	"gonum.org/v1/gonum/mat"
)

// Format and Version identify model files: every file starts with
// {"format": "psdlearn-model", "version": 3, …}. Save writes Version; Load
// reads it and the versions before it (MinVersion on), and rejects newer
// ones. Version 2 added the provenance; a version 1 file is read as a model
// without one. Version 3 added the metric's factor L; a metric without one
// is factored again when it loads. The format is described in doc.go.
const (
	Format     = "psdlearn-model"
	Version    = 3
	MinVersion = 1
)

// Kinds of model.
const (
	KindMetric = "metric"
	KindKernel = "kernel"
)

// Model is the content of a model file: a learned metric or kernel, the
// preprocessing fitted on the training data, and a free-form summary.
//
// The preprocessing is stored explicitly, not composed into M: the metric
// lives in the preprocessed space (standardised and/or PCA-projected), so M
// is the matrix the algorithm learned and Transform(raw) gives the same
// coordinates as training did. Apply it to raw data with Model.Prepare.
type Model struct {
	Kind       string               // KindMetric or KindKernel
	Algo       string               // the algorithm that learned it
	Preprocess *preprocess.Pipeline // nil: the model works on raw features
	Metric     *Metric              // set when Kind == KindMetric
	Kernel     *Kernel              // set when Kind == KindKernel
	Classes    []string             // class names of the training data, if known
	Info       map[string]any       // run summary (options, chosen C, errors, …)
	// Certificate, if non-nil, records whether the solve that learned the
	// model converged (nil in files written before it was recorded).
	Certificate *Certificate
	// Provenance, if non-nil, records the code, the backend, the seed, the
	// split and the data that made the model (nil in version 1 files).
	Provenance *Provenance
}

// Prepare runs the model's preprocessing on raw data x (n×InputDim) and
// returns data in the metric's space; without preprocessing it returns x.
func (m *Model) Prepare(x *mat.Dense) (*mat.Dense, error) {
	if x == nil || x.IsEmpty() {
		return nil, fmt.Errorf("%w: no data", ErrInvalid)
	}
	if _, d := x.Dims(); m.Preprocess != nil && !m.Preprocess.Empty() && d != m.Preprocess.InDim() {
		return nil, fmt.Errorf("%w: data has %d features, the model's preprocessing expects %d", ErrDimension, d, m.Preprocess.InDim())
	}
	z, err := m.Preprocess.Apply(x)
	if err != nil {
		return nil, fmt.Errorf("model: preprocess: %w", err)
	}
	return z, nil
}

// InputDim returns the number of raw features the model expects (metric
// models), or 0 for kernel models.
func (m *Model) InputDim() int {
	if m.Preprocess != nil && !m.Preprocess.Empty() {
		return m.Preprocess.InDim()
	}
	if m.Metric != nil {
		return m.Metric.Dim()
	}
	return 0
}

// Transform maps raw data to the learned space: Prepare, then X·L.
func (m *Model) Transform(x *mat.Dense) (*mat.Dense, error) {
	if m.Metric == nil {
		return nil, fmt.Errorf("%w: a %s model has no feature transform", ErrInvalid, m.Kind)
	}
	z, err := m.Prepare(x)
	if err != nil {
		return nil, err
	}
	return m.Metric.Transform(z)
}

type metricJSON struct {
	Dim int         `json:"dim"`
	M   [][]float64 `json:"m"` // D rows of D numbers
	// L is the factor (version 3): D rows of r numbers.
	L [][]float64 `json:"l,omitempty"`
}

type kernelJSON struct {
	N      int         `json:"n"`
	Rank   int         `json:"rank"`
	Lambda []float64   `json:"lambda"`
	V      [][]float64 `json:"v"` // N rows of r numbers
}

type fileJSON struct {
	Format     string               `json:"format"`
	Version    int                  `json:"version"`
	Kind       string               `json:"kind"`
	Algo       string               `json:"algo,omitempty"`
	Preprocess *preprocess.Pipeline `json:"preprocess,omitempty"`
	Metric     *metricJSON          `json:"metric,omitempty"`
	Kernel     *kernelJSON          `json:"kernel,omitempty"`
	Classes    []string             `json:"classes,omitempty"`
	Info       map[string]any       `json:"info,omitempty"`
	// Certificate is additive: files without it load as before.
	Certificate *Certificate `json:"certificate,omitempty"`
	// Provenance appeared in version 2.
	Provenance *provenanceJSON `json:"provenance,omitempty"`
}

func rowsOf(a mat.Matrix) [][]float64 {
	r, c := a.Dims()
	out := make([][]float64, r)
	for i := range out {
		out[i] = make([]float64, c)
		for j := range out[i] {
			out[i][j] = a.At(i, j)
		}
	}
	return out
}

// validate checks the model's consistency.
func (m *Model) validate() error {
	switch m.Kind {
	case KindMetric:
		if m.Metric == nil || m.Kernel != nil {
			return fmt.Errorf("%w: a metric model needs a metric and no kernel", ErrInvalid)
		}
		if m.Preprocess != nil {
			if err := m.Preprocess.Validate(); err != nil {
				return fmt.Errorf("%w: %v", ErrInvalid, err)
			}
			if out := pipelineOutDim(m.Preprocess); out > 0 && out != m.Metric.Dim() {
				return fmt.Errorf("%w: preprocessing yields %d features, the metric is %d-dimensional", ErrInvalid, out, m.Metric.Dim())
			}
		}
	case KindKernel:
		if m.Kernel == nil || m.Metric != nil {
			return fmt.Errorf("%w: a kernel model needs a kernel and no metric", ErrInvalid)
		}
	default:
		return fmt.Errorf("%w: unknown model kind %q (want %q or %q)", ErrInvalid, m.Kind, KindMetric, KindKernel)
	}
	return nil
}

func pipelineOutDim(p *preprocess.Pipeline) int {
	switch {
	case p == nil || p.Empty():
		return 0
	case p.PCA != nil:
		return p.PCA.OutDim()
	default:
		return p.Std.Dim()
	}
}

// Save writes the model as indented JSON. Numbers are written in Go's
// shortest round-trip form, so Load gives back the same bits. A metric
// whose factor L does not reproduce M (fields changed after NewMetric) is
// refused.
func (m *Model) Save(w io.Writer) error {
	if err := m.validate(); err != nil {
		return err
	}
	if m.Metric != nil {
		// The file keeps L as it is: refuse one that is not M's (a Metric
		// changed by hand), as Load would.
		if err := m.Metric.check(); err != nil {
			return err
		}
		if err := m.Metric.checkFactor(); err != nil {
			return fmt.Errorf("model: save: %w", err)
		}
	}
	f := fileJSON{Format: Format, Version: Version, Kind: m.Kind, Algo: m.Algo, Preprocess: m.Preprocess, Classes: m.Classes, Info: sanitize(m.Info), Certificate: m.Certificate, Provenance: m.Provenance.toJSON()}
	if m.Metric != nil {
		f.Metric = &metricJSON{Dim: m.Metric.Dim(), M: rowsOf(m.Metric.M), L: rowsOf(m.Metric.L)}
	}
	if m.Kernel != nil {
		f.Kernel = &kernelJSON{N: m.Kernel.N(), Rank: m.Kernel.Rank(), Lambda: m.Kernel.Lambda, V: rowsOf(m.Kernel.V)}
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("model: encode: %w", err)
	}
	b = append(collapseNumberArrays(b), '\n')
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("model: write: %w", err)
	}
	return nil
}

// sanitize replaces non-finite floats in a summary map by nil (JSON null),
// which encoding/json cannot write.
func sanitize(info map[string]any) map[string]any {
	if info == nil {
		return nil
	}
	out := make(map[string]any, len(info))
	for k, v := range info {
		switch x := v.(type) {
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				out[k] = nil
				continue
			}
		case []float64:
			if x == nil {
				out[k] = nil
				continue
			}
			ys := make([]any, len(x))
			for i, y := range x {
				if math.IsNaN(y) || math.IsInf(y, 0) {
					ys[i] = nil
				} else {
					ys[i] = y
				}
			}
			out[k] = ys
			continue
		}
		out[k] = v
	}
	return out
}

// collapseNumberArrays rewrites every JSON array that holds only numbers
// (one matrix row, one vector) on a single line: "[1, 2.5, -3]".
func collapseNumberArrays(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '"' { // copy a string literal unchanged
			j := i + 1
			for ; j < len(b) && b[j] != '"'; j++ {
				if b[j] == '\\' {
					j++
				}
			}
			j = min(j, len(b)-1)
			out = append(out, b[i:j+1]...)
			i = j
			continue
		}
		if b[i] != '[' {
			out = append(out, b[i])
			continue
		}
		j, numeric := i+1, true
		for ; j < len(b) && b[j] != ']'; j++ {
			switch c := b[j]; {
			case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E', c == ',', c == ' ', c == '\n', c == '\t', c == '\r':
			default:
				numeric = false
			}
			if !numeric {
				break
			}
		}
		if !numeric || j == len(b) {
			out = append(out, b[i])
			continue
		}
		out = append(out, '[')
		for k, f := range bytes.Fields(b[i+1 : j]) {
			if k > 0 {
				out = append(out, ' ')
			}
			out = append(out, f...)
		}
		out = append(out, ']')
		i = j
	}
	return out
}

// SaveFile writes the model to path (created or truncated).
func (m *Model) SaveFile(path string) error {
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	return nil
}

// Load reads a model file of version MinVersion to Version. It rejects
// other formats and versions, unknown fields (a provenance in a version 1
// file among them), a malformed provenance, anything but white space after the JSON object, ragged or non-square matrices, non-symmetric metrics (beyond
// Tolerance), non-finite numbers and matrices that are not PSD within
// Tolerance; the factor L of a metric is recomputed by NewMetric.
func Load(r io.Reader) (*Model, error) {
	b, err := readBounded(r)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f fileJSON
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || isJSONError(err) {
			return nil, fmt.Errorf("%w: not a model file: decode: %w", ErrInvalid, err)
		}
		return nil, fmt.Errorf("model: decode: %w", err) // the reader failed
	}
	for i, c := range f.Classes {
		if err := input.CheckLabel(c); err != nil {
			return nil, fmt.Errorf("%w: class %d: %v", ErrInvalid, i, err)
		}
	}
	if err := checkTrailing(dec); err != nil {
		return nil, err
	}
	if f.Format != Format {
		return nil, fmt.Errorf("%w: format %q, want %q", ErrInvalid, f.Format, Format)
	}
	if f.Version < MinVersion || f.Version > Version {
		hint := ""
		if f.Version > Version {
			hint = " (written by a newer psdlearn?)"
		}
		return nil, fmt.Errorf("%w: unsupported model file version %d%s: this psdlearn reads versions %d to %d", ErrInvalid, f.Version, hint, MinVersion, Version)
	}
	if f.Version < 2 && f.Provenance != nil {
		return nil, fmt.Errorf("%w: a version %d model file has no provenance (it appeared in version 2)", ErrInvalid, f.Version)
	}
	prov, err := f.Provenance.fromJSON()
	if err != nil {
		return nil, err
	}
	m := &Model{Kind: f.Kind, Algo: f.Algo, Preprocess: f.Preprocess, Classes: f.Classes, Info: f.Info, Certificate: f.Certificate, Provenance: prov}
	if f.Version < 3 && f.Metric != nil && f.Metric.L != nil {
		return nil, fmt.Errorf("%w: a version %d model file has no metric factor (it appeared in version 3)", ErrInvalid, f.Version)
	}
	if f.Metric != nil {
		if m.Metric, err = f.Metric.metric(); err != nil {
			return nil, err
		}
	}
	if f.Kernel != nil {
		k := f.Kernel
		if len(k.V) != k.N || k.N == 0 || k.Rank != len(k.Lambda) || k.Rank == 0 {
			return nil, fmt.Errorf("%w: kernel with n=%d rank=%d has %d rows and %d eigenvalues", ErrInvalid, k.N, k.Rank, len(k.V), len(k.Lambda))
		}
		v, err := denseFromRows(k.V, k.Rank, "kernel factor")
		if err != nil {
			return nil, err
		}
		if m.Kernel, err = NewKernel(v, k.Lambda); err != nil {
			return nil, err
		}
	}
	if err := m.validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// MaxFileBytes is the largest model file Load reads (1 GiB), and never more
// than a quarter of the memory budget (package limits); the memory its
// JSON values would take is checked against the budget before they are
// decoded.
const MaxFileBytes = input.DefaultMaxBytes

// maxFileBytes is MaxFileBytes under the memory budget.
func maxFileBytes() int64 {
	n := MaxFileBytes
	if mem, err := limits.MaxMemory(); err == nil && mem != limits.Unlimited {
		n = min(n, max(mem/4, 1<<20))
	}
	return n
}

// jsonValueBytes bounds the memory encoding/json takes per JSON value it
// decodes into a model file's types (an empty array in a map of the
// summary, a number in a row of M), with the growth of the slices; the
// file's bytes are counted on top.
const jsonValueBytes = 64

// readBounded reads a model file: at most MaxFileBytes, text (a binary
// file is named as such), and only when the values it holds fit the
// memory budget.
func readBounded(r io.Reader) ([]byte, error) {
	in, err := input.NewReader(r, input.Options{Name: "model file", MaxLine: -1, NoGzip: true, MaxBytes: maxFileBytes(),
		BytesOption: "a quarter of the memory limit, at most 1 GiB"})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(in); err != nil {
		var ie *input.Error
		if errors.As(err, &ie) {
			return nil, fmt.Errorf("%w: %s", ErrInvalid, ie.Msg)
		}
		return nil, fmt.Errorf("model: read: %w", err)
	}
	b := buf.Bytes()
	// Every JSON value but the first follows a comma, a colon or an
	// opening bracket: their count bounds the values.
	values := 1
	for _, c := range b {
		switch c {
		case ',', ':', '[', '{':
			values++
		}
	}
	if err := limits.Check(fmt.Sprintf("model: decoding a file of %s with up to %d JSON values", limits.FormatBytes(float64(len(b))), values),
		2*float64(len(b))+jsonValueBytes*float64(values)); err != nil {
		return nil, err
	}
	return b, nil
}

// LoadFile reads the model file at path.
func LoadFile(path string) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	defer f.Close()
	m, err := Load(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// symFromRows builds a symmetric matrix from a full square array, checking
// |a_ij − a_ji| ≤ Tolerance·max|a|.
// metric returns the file's metric: with its factor, checked (checkFactor
// and the form NewMetric gives it) without a decomposition; without one
// (files before version 3), factored by NewMetric.
func (f *metricJSON) metric() (*Metric, error) {
	sym, err := symFromRows(f.M, f.Dim)
	if err != nil {
		return nil, err
	}
	if f.L == nil {
		return NewMetric(sym)
	}
	l, err := factorFromRows(f.L, f.Dim)
	if err != nil {
		return nil, err
	}
	met := &Metric{M: sym, L: l}
	if err := met.checkForm(); err != nil {
		return nil, err
	}
	if err := met.checkFactor(); err != nil {
		return nil, err
	}
	return met, nil
}

// factorFromRows returns the D×r factor of a file: D rows of the same
// length r, 1 ≤ r ≤ D, finite.
func factorFromRows(rows [][]float64, dim int) (*mat.Dense, error) {
	if len(rows) == 0 || len(rows) != dim || len(rows[0]) == 0 || len(rows[0]) > dim {
		r := 0
		if len(rows) > 0 {
			r = len(rows[0])
		}
		return nil, fmt.Errorf("%w: metric factor %d×%d for dim %d, want %d rows of 1 to %d numbers", ErrInvalid, len(rows), r, dim, dim, dim)
	}
	return denseFromRows(rows, len(rows[0]), "metric factor")
}

// denseFromRows returns the rows as a len(rows)×cols matrix, refusing a
// row of another length or a non-finite entry (what names the matrix).
func denseFromRows(rows [][]float64, cols int, what string) (*mat.Dense, error) {
	a := mat.NewDense(len(rows), cols, nil)
	for i, row := range rows {
		if len(row) != cols {
			return nil, fmt.Errorf("%w: %s row %d has %d entries, want %d", ErrInvalid, what, i, len(row), cols)
		}
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: %s entry (%d,%d) = %v", ErrInvalid, what, i, j, v)
			}
		}
		a.SetRow(i, row)
	}
	return a, nil
}

func symFromRows(rows [][]float64, dim int) (*mat.SymDense, error) {
	d := len(rows)
	if d == 0 || d != dim {
		return nil, fmt.Errorf("%w: metric has %d rows, dim %d", ErrInvalid, d, dim)
	}
	big := 0.0
	for i, row := range rows {
		if len(row) != d {
			return nil, fmt.Errorf("%w: metric row %d has %d entries, want %d", ErrInvalid, i, len(row), d)
		}
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: metric entry (%d,%d) = %v", ErrInvalid, i, j, v)
			}
			big = math.Max(big, math.Abs(v))
		}
	}
	s := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			a, b := rows[i][j], rows[j][i]
			if math.Abs(a-b) > Tolerance*big {
				return nil, fmt.Errorf("%w: metric is not symmetric: M[%d][%d] = %v, M[%d][%d] = %v", ErrInvalid, i, j, a, j, i, b)
			}
			s.SetSym(i, j, a/2+b/2) // (a+b)/2 overflows for entries near MaxFloat64
		}
	}
	return s, nil
}

// isJSONError reports whether err is a JSON syntax or type error (the
// content, not the reader, is at fault).
func isJSONError(err error) bool {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	return errors.As(err, &se) || errors.As(err, &te) || strings.HasPrefix(err.Error(), "json: ")
}
