// Package npy reads and writes float64 matrices as NumPy .npy files (format
// version 1.0, dtype '<f8', C order, shape (rows, cols)) for the psdlearn
// command. It is a thin wrapper around codeberg.org/sbinet/npyio, a
// maintained implementation of the format, so that files written here open
// with numpy.load and the values keep their exact bits.
package npy

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"codeberg.org/sbinet/npyio/npy"
	"gonum.org/v1/gonum/mat"
)

// Ext is the file name extension that selects the .npy format.
const Ext = ".npy"

// IsNPY reports whether path names a .npy file (by its extension, ignoring
// case).
func IsNPY(path string) bool {
	return strings.HasSuffix(strings.ToLower(path), Ext)
}

// dense returns m as a *mat.Dense with a compact stride (npyio writes the
// raw backing array of a Dense), copying when needed.
func dense(m mat.Matrix) *mat.Dense {
	if d, ok := m.(*mat.Dense); ok {
		if r := d.RawMatrix(); r.Stride == r.Cols {
			return d
		}
	}
	return mat.DenseCopyOf(m)
}

// Write writes m to w as a 2-D float64 .npy array.
func Write(w io.Writer, m mat.Matrix) error {
	if m == nil {
		return fmt.Errorf("npy: nil matrix")
	}
	if r, c := m.Dims(); r == 0 || c == 0 {
		return fmt.Errorf("npy: empty %d×%d matrix", r, c)
	}
	if err := npy.Write(w, dense(m)); err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	return nil
}

// WriteFile writes m to path (created or truncated) as a 2-D float64 .npy
// array.
func WriteFile(path string, m mat.Matrix) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	bw := bufio.NewWriter(f)
	if err := Write(bw, m); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("npy: %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("npy: %s: %w", path, err)
	}
	return nil
}

// Read reads a 2-D float64 .npy array (either byte order, C or Fortran
// order) from r. The header is checked first (Header.Check): the values it
// claims must fit the memory budget (package limits) before any is read.
func Read(r io.Reader) (*mat.Dense, error) {
	return read(bufio.NewReaderSize(r, maxHeader+16), "", -1)
}

// ReadFile reads the 2-D float64 .npy array at path. Besides Read's checks,
// a regular file must hold the bytes its header claims: a header that
// claims more is refused before anything is allocated.
func ReadFile(path string) (*mat.Dense, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	defer f.Close()
	size := int64(-1)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	m, err := read(bufio.NewReaderSize(f, maxHeader+16), path, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// read reads a float64 matrix after checking its header against the
// memory budget and, when size ≥ 0, the file's size.
func read(br *bufio.Reader, what string, size int64) (m *mat.Dense, err error) {
	h, err := ReadHeader(br)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	if !isFloat64(h.Descr) {
		return nil, fmt.Errorf("npy: %s, want float64 ('<f8'; numpy: x.astype(np.float64))", h.describeDtype())
	}
	if len(h.Shape) != 1 && len(h.Shape) != 2 {
		return nil, fmt.Errorf("npy: shape %v: want a 2-D array", h.Shape)
	}
	if err := h.Check(what, size); err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	// npyio is not hardened against malformed input: a panic is a format
	// error of this file.
	defer func() {
		if p := recover(); p != nil {
			m, err = nil, fmt.Errorf("npy: malformed file (%v)", p)
		}
	}()
	var d mat.Dense
	if err := npy.Read(br, &d); err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	return &d, nil
}
