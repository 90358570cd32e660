package data

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// endlessReader returns the same byte forever.
type endlessReader byte

func (e endlessReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(e)
	}
	return len(p), nil
}

// TestLabelsValidated checks that a label that is not one — a missing-value
// marker, a control character, invalid UTF-8, one longer than
// MaxLabelBytes — is an error naming the line (and for CSV the column),
// wrapping ErrLabel, in CSV and LIBSVM alike.
func TestLabelsValidated(t *testing.T) {
	rows := func(label string) (string, string) {
		return "a,b,y\n1,2,x\n3,4," + label + "\n5,6,x\n", "x 1:1 2:2\n" + label + " 1:3 2:4\nx 1:5\n"
	}
	for _, tc := range []struct{ label, want string }{
		{"NaN", `"NaN" marks a missing value`},
		{"NA", `"NA" marks a missing value`},
		{"?", `"?" marks a missing value`},
		{"a\x07b", "control character U+0007"},
		{"caf\xe9", "not valid UTF-8"},
		{strings.Repeat("L", 300), "a label of 300 bytes"},
		{strings.Repeat("L", 5<<20), "a label of 5242880 bytes"},
	} {
		csvIn, svmIn := rows(tc.label)
		_, err := ParseCSV(strings.NewReader(csvIn), "t.csv", LoadOptions{})
		if !errors.Is(err, ErrLabel) || !strings.Contains(err.Error(), "t.csv:3:3 (column \"y\")") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CSV label %.20q: %v", tc.label, err)
		}
		_, err = ParseLIBSVM(strings.NewReader(svmIn), "t.svm", LoadOptions{})
		if !errors.Is(err, ErrLabel) || !strings.Contains(err.Error(), "t.svm:2:1") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LIBSVM label %.20q: %v", tc.label, err)
		}
		if err != nil && len(err.Error()) > 200 {
			t.Errorf("label %.20q: an error of %d bytes", tc.label, len(err.Error()))
		}
	}
	// A NUL byte is refused by the reader (binary data), on its line.
	_, err := ParseCSV(strings.NewReader("a,y\n1,x\n2,0\x00\x00\n"), "n.csv", LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "n.csv:3: a NUL byte") {
		t.Errorf("NUL label: %v", err)
	}
	// An empty CSV label.
	if _, err := ParseCSV(strings.NewReader("a,y\n1,x\n2,\n"), "e.csv", LoadOptions{}); !errors.Is(err, ErrLabel) || !strings.Contains(err.Error(), "e.csv:3:2") {
		t.Errorf("empty label: %v", err)
	}
}

// TestLineCap reads endless lines (/dev/zero-like input, a stream without
// newlines) through every text loader: each stops at the line cap with an
// error naming line 1 and wrapping ErrLimit, or at the first NUL byte as
// binary data.
func TestLineCap(t *testing.T) {
	const lineCap = 1 << 20
	for _, tc := range []struct {
		name  string
		r     io.Reader
		parse func(io.Reader, string, LoadOptions) (*Dataset, error)
		want  string
		limit bool
	}{
		{"csv endless field", endlessReader('1'), ParseCSV, "line 1 is longer than 1048576 bytes", true},
		{"csv endless fields", io.MultiReader(strings.NewReader("a,b\n"), endlessReader(',')), ParseCSV, "line 2 is longer", true},
		{"libsvm endless token", io.MultiReader(strings.NewReader("1 "), endlessReader('1')), ParseLIBSVM, "line 1 is longer", true},
		{"csv zeros", endlessReader(0), ParseCSV, "a NUL byte at byte 0: this is binary data", false},
		{"libsvm zeros", endlessReader(0), ParseLIBSVM, "a NUL byte at byte 0", false},
	} {
		_, err := tc.parse(tc.r, "in", LoadOptions{MaxLineBytes: lineCap})
		if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, ErrLimit) != tc.limit || !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v, want %q (limit %v)", tc.name, err, tc.want, tc.limit)
		}
	}
}

// TestLoadExplains checks the errors about files that are not text in the
// user's terms: CR-only line endings, UTF-16, gzip data that is truncated
// or followed by something else.
func TestLoadExplains(t *testing.T) {
	dir := t.TempDir()
	gz := func(s string) []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write([]byte(s))
		w.Close()
		return b.Bytes()
	}
	good := "a,b,y\n1,2,x\n3,4,y\n5,6,x\n"
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"cr.csv", []byte(strings.ReplaceAll(good, "\n", "\r")), "carriage return (\\r) alone"},
		{"utf16.csv", append([]byte{0xff, 0xfe}, []byte("a\x00,\x00b\x00")...), "UTF-16"},
		{"trunc.csv.gz", gz(good)[:20], "the gzip data ends early"},
		{"trailing.csv.gz", append(gz(good), "garbage"...), "followed by bytes that are not gzip"},
	} {
		p := filepath.Join(dir, tc.name)
		if err := os.WriteFile(p, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(p, LoadOptions{})
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a ParseError with %q", tc.name, err, tc.want)
		}
	}
}

// TestSubnormalData checks that data whose every value is subnormal is
// refused as a matter of scale, not as identical points.
func TestSubnormalData(t *testing.T) {
	x := mat.NewDense(3, 2, []float64{1e-315, 2e-315, 3e-316, 4e-315, 5e-316, 6e-316})
	_, err := RMSDeviation(x)
	if !errors.Is(err, ErrScale) || errors.Is(err, ErrNoSpread) || !strings.Contains(err.Error(), "subnormal") {
		t.Errorf("subnormal data: %v", err)
	}
	// The smallest normal magnitudes still work.
	if s, err := RMSDeviation(mat.NewDense(2, 1, []float64{0x1p-1022, 0x1p-1021})); err != nil || !(s > 0) {
		t.Errorf("normal tiny data: %v, %v", s, err)
	}
}

// TestSharedAndMissing checks the counts the protocol warnings are made of.
func TestSharedAndMissing(t *testing.T) {
	ref := &Dataset{X: mat.NewDense(3, 2, []float64{1, 2, 3, 4, 5, 6}), Y: []int{0, 0, 1}, Classes: []string{"a", "b", "c"}}
	other := &Dataset{X: mat.NewDense(4, 2, []float64{1, 2, 3, 4.0000001, 5, 6, math.Copysign(0, -1), 0}), Y: []int{0, 2, 2, 1}, Classes: ref.Classes}
	if got := SharedRows(ref, other); got != 2 {
		t.Errorf("SharedRows = %d, want 2", got)
	}
	if got := SharedRows(ref, ref); got != 3 {
		t.Errorf("SharedRows(ref, ref) = %d, want 3", got)
	}
	classes, rows := MissingClasses(ref, other)
	if len(classes) != 1 || classes[0] != "c" || rows != 2 {
		t.Errorf("MissingClasses = %v, %d; want [c], 2", classes, rows)
	}
}
