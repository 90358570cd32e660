package data

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// countingReader counts the bytes read from r.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// bomb returns gzip data that expands to prefix followed by pad zero bytes
// (or copies of line).
func bomb(t *testing.T, prefix []byte, line string, size int) []byte {
	t.Helper()
	var out bytes.Buffer
	w, _ := gzip.NewWriterLevel(&out, gzip.BestSpeed)
	w.Write(prefix)
	chunk := bytes.Repeat([]byte(line), 1<<16/len(line))
	for written := 0; written < size; written += len(chunk) {
		w.Write(chunk)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestIDXHeaderBeforeBody runs the IDX decompression reproducer: a gzip IDX
// file whose header declares 960 bytes and whose body expands to 64 MiB was
// decompressed whole (4.2 GB RSS for the original) before the size check.
// The header is now read first and the body only as far as it declares.
func TestIDXHeaderBeforeBody(t *testing.T) {
	head := idxFile(idxUint8, []int{10, 96}, make([]float64, 960))
	im := bomb(t, head, "\x00", 32<<20)
	lb := idxFile(idxUint8, []int{10}, make([]float64, 10))
	cr := &countingReader{r: bytes.NewReader(im)}
	start := time.Now()
	_, err := ParseIDX(cr, bytes.NewReader(lb), "bomb", LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "trailing bytes") {
		t.Fatalf("error %v, want trailing bytes", err)
	}
	t.Logf("IDX bomb: read %d of %d compressed bytes", cr.n, len(im))
	if cr.n > int64(len(im)/4) {
		t.Errorf("read %d of the %d compressed bytes: the body was read past its declared size", cr.n, len(im))
	}
	t.Logf("took %v", time.Since(start)) // the bound is on the bytes read, above
	// The same through Load, from files.
	dir := t.TempDir()
	ip, lp := filepath.Join(dir, "im.gz"), filepath.Join(dir, "lb")
	if err := os.WriteFile(ip, im, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lp, lb, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load("idx:"+ip+":"+lp, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "trailing bytes") {
		t.Fatalf("Load: error %v, want trailing bytes", err)
	}
	// A header beyond MaxElements is refused before any body byte is read.
	big := idxFile(idxFloat64, []int{1 << 16, 1 << 16}, nil)
	_, err = ParseIDX(bytes.NewReader(big), bytes.NewReader(lb), "big", LoadOptions{MaxElements: 1 << 20})
	if !errors.Is(err, ErrLimit) || !errors.Is(err, ErrFormat) {
		t.Fatalf("error %v, want ErrLimit and ErrFormat", err)
	}
}

// TestDecompressionCap runs the CSV and LIBSVM gzip bombs
// with a decompression cap: each stops with ErrLimit after reading little
// more than the cap, and input of exactly the cap is accepted.
func TestDecompressionCap(t *testing.T) {
	const limit = 1 << 20
	for _, tc := range []struct {
		name, header, line string
		parse              func(io.Reader, string, LoadOptions) (*Dataset, error)
	}{
		{"csv", "a,b,label\n", "0,0,1\n", ParseCSV},
		{"libsvm", "", "1 1:1 2:0.5\n", ParseLIBSVM},
		{"libsvm label-only lines", "", "1\n", ParseLIBSVM},
	} {
		z := bomb(t, []byte(tc.header), tc.line, 32<<20)
		cr := &countingReader{r: bytes.NewReader(z)}
		zr, err := gzip.NewReader(cr)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		d, err := tc.parse(zr, tc.name, LoadOptions{MaxInputBytes: limit})
		if !errors.Is(err, ErrLimit) || d != nil {
			t.Errorf("%s: error %v, want ErrLimit", tc.name, err)
		}
		t.Logf("%s bomb: read %d of %d compressed bytes", tc.name, cr.n, len(z))
		if cr.n > int64(len(z)/4) {
			t.Errorf("%s: read %d compressed bytes for a cap of %d decompressed", tc.name, cr.n, limit)
		}
		t.Logf("%s: took %v", tc.name, time.Since(start)) // the bound is on the bytes read, above
	}
	// Exactly at the cap is fine, one byte more is not.
	in := "a,b,label\n1,2,x\n3,4,y\n"
	for _, c := range []struct {
		max int64
		ok  bool
	}{{int64(len(in)), true}, {int64(len(in) - 1), false}} {
		zr, _ := gzip.NewReader(bytes.NewReader(gz([]byte(in))))
		_, err := ParseCSV(zr, "f", LoadOptions{MaxInputBytes: c.max})
		if (err == nil) != c.ok {
			t.Errorf("cap %d for %d bytes: error %v", c.max, len(in), err)
		}
	}
}

// TestElementCapBoundsRows checks that label-only LIBSVM lines, which hold
// no value, still count against MaxElements (their rows and labels were
// kept without bound).
func TestElementCapBoundsRows(t *testing.T) {
	in := strings.Repeat("1\n", 2000) + "1 1:1\n"
	_, err := ParseLIBSVM(strings.NewReader(in), "f", LoadOptions{MaxElements: 1000})
	if !errors.Is(err, ErrLimit) {
		t.Fatalf("error %v, want ErrLimit", err)
	}
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 1001 {
		t.Errorf("error %v: want it at line 1001, the first row beyond the cap", err)
	}
}

// FuzzGzipCap parses gzip-compressed input under a decompression cap. Under
// the cap, compression must be transparent: the same data set, or an error
// exactly when the plain input gives one. Past the cap, the input must be
// refused with ErrLimit unless an earlier format error stops the parse
// first; it is never accepted. No panic, whatever the bytes.
func FuzzGzipCap(f *testing.F) {
	f.Add([]byte("a,b,label\n1,2,x\n3,4,y\n"), uint8(0), uint16(100))
	f.Add([]byte("a,b,label\n1,2,x\n3,4,y\n"), uint8(0), uint16(10))
	f.Add([]byte("+1 1:0.5 3:-2\n-1 2:4\n"), uint8(1), uint16(1000))
	f.Add([]byte("1\n1\n1\n1 1:1\n"), uint8(1), uint16(4))
	f.Add([]byte("x,y\n1,z\n"), uint8(0), uint16(0))
	f.Fuzz(func(t *testing.T, in []byte, format uint8, limit uint16) {
		max := int64(limit) + 1
		parse := ParseCSV
		if format%2 == 1 {
			parse = ParseLIBSVM
		}
		plain, perr := parse(bytes.NewReader(in), "f", fuzzOpt)
		zr, err := gzip.NewReader(bytes.NewReader(gz(in)))
		if err != nil {
			t.Fatal(err)
		}
		opt := fuzzOpt
		opt.MaxInputBytes = max
		got, gerr := parse(zr, "f", opt)
		checkParsed(t, got, gerr)
		if int64(len(in)) > max {
			if gerr == nil {
				t.Fatalf("%d bytes accepted under a cap of %d", len(in), max)
			}
			return
		}
		if (perr == nil) != (gerr == nil) {
			t.Fatalf("under the cap: plain error %v, gzip error %v", perr, gerr)
		}
		if errors.Is(gerr, ErrLimit) && !errors.Is(perr, ErrLimit) {
			t.Fatalf("under the cap: ErrLimit %v", gerr)
		}
		if perr == nil && (plain.Len() != got.Len() || plain.Dim() != got.Dim() || !slicesEqual(plain.X.RawMatrix().Data, got.X.RawMatrix().Data)) {
			t.Fatal("gzip changed the data set")
		}
	})
}

func slicesEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestMaxFeatures checks that every loader refuses more features than
// LoadOptions.MaxFeatures with ErrLimit, and accepts exactly as many.
func TestMaxFeatures(t *testing.T) {
	lb := idxFile(idxUint8, []int{2}, []float64{0, 1})
	for _, tc := range []struct {
		name  string
		parse func(max int) error
	}{
		{"csv", func(max int) error {
			_, err := ParseCSV(strings.NewReader("a,b,c,l\n1,2,3,x\n4,5,6,y\n"), "f", LoadOptions{MaxFeatures: max})
			return err
		}},
		{"libsvm", func(max int) error {
			_, err := ParseLIBSVM(strings.NewReader("1 1:1 3:2\n2 2:1\n"), "f", LoadOptions{MaxFeatures: max})
			return err
		}},
		{"idx", func(max int) error {
			im := idxFile(idxUint8, []int{2, 3}, []float64{1, 2, 3, 4, 5, 6})
			_, err := ParseIDX(bytes.NewReader(im), bytes.NewReader(lb), "f", LoadOptions{MaxFeatures: max})
			return err
		}},
	} {
		if err := tc.parse(3); err != nil {
			t.Errorf("%s: 3 features with MaxFeatures 3: %v", tc.name, err)
		}
		if err := tc.parse(2); !errors.Is(err, ErrLimit) {
			t.Errorf("%s: 3 features with MaxFeatures 2: error %v, want ErrLimit", tc.name, err)
		}
	}
}
