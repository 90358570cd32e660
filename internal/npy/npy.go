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
// order) from r.
func Read(r io.Reader) (*mat.Dense, error) {
	var m mat.Dense
	if err := npy.Read(r, &m); err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	return &m, nil
}

// ReadFile reads the 2-D float64 .npy array at path.
func ReadFile(path string) (*mat.Dense, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	defer f.Close()
	m, err := Read(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}
