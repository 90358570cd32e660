package npy

import (
	"bytes"
	"math"
	"path/filepath"
	"testing"

	"codeberg.org/sbinet/npyio/npy"
	"gonum.org/v1/gonum/mat"
)

// TestRoundTripBitwise writes awkward values (negative zero, subnormals,
// extremes, a non-compact view) and reads them back with the library
// itself, comparing bits.
func TestRoundTripBitwise(t *testing.T) {
	vals := []float64{0, math.Copysign(0, -1), 1.0 / 3, -2.5e-310, math.MaxFloat64, math.SmallestNonzeroFloat64, -7, 1e300}
	big := mat.NewDense(3, 4, append(vals, 9, 10, 11, 12))
	view := big.Slice(0, 3, 1, 3) // stride 4, 3×2
	for name, m := range map[string]mat.Matrix{"dense": big, "view": view, "sym": mat.NewSymDense(2, []float64{1, 2, 2, 5})} {
		path := filepath.Join(t.TempDir(), name+".npy")
		if err := WriteFile(path, m); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		r, c := m.Dims()
		if gr, gc := got.Dims(); gr != r || gc != c {
			t.Fatalf("%s: shape %d×%d, want %d×%d", name, gr, gc, r, c)
		}
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				if math.Float64bits(got.At(i, j)) != math.Float64bits(m.At(i, j)) {
					t.Errorf("%s[%d,%d] = %v, want %v", name, i, j, got.At(i, j), m.At(i, j))
				}
			}
		}
	}
}

// TestHeader checks the file is what numpy.load expects: magic, '<f8', C
// order, shape (rows, cols).
func TestHeader(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6})); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if !bytes.HasPrefix(b, []byte("\x93NUMPY")) {
		t.Fatalf("no .npy magic: %q", b[:10])
	}
	for _, want := range []string{"'descr': '<f8'", "'fortran_order': False", "'shape': (2, 3)"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("header lacks %s: %q", want, b[:80])
		}
	}
	var flat []float64
	if err := npy.Read(bytes.NewReader(b), &flat); err != nil {
		t.Fatal(err)
	}
	if len(flat) != 6 || flat[3] != 4 {
		t.Errorf("row-major data %v", flat)
	}
}

func TestIsNPYAndErrors(t *testing.T) {
	if !IsNPY("a/B.NPY") || IsNPY("x.csv") || IsNPY("npy") {
		t.Error("IsNPY")
	}
	if err := Write(&bytes.Buffer{}, nil); err == nil {
		t.Error("nil matrix written")
	}
	if _, err := Read(bytes.NewReader([]byte("not npy"))); err == nil {
		t.Error("garbage read")
	}
}
