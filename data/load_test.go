package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestParseCSV(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		opt     LoadOptions
		x       []float64 // row-major
		rows    int
		y       []int
		classes []string
	}{
		{
			name: "string labels last", in: "a,b,label\n1,2,cat\n3,4,dog\n5,6,cat\n",
			x: []float64{1, 2, 3, 4, 5, 6}, rows: 3, y: []int{0, 1, 0}, classes: []string{"cat", "dog"},
		},
		{
			name: "numeric labels sorted numerically", in: "a,label\n1,10\n2,9\n3,10.0\n4,+2\n",
			x: []float64{1, 2, 3, 4}, rows: 4, y: []int{2, 1, 2, 0}, classes: []string{"2", "9", "10"},
		},
		{
			name: "label column by name", in: "y,a,b\nx,1,2\nz,3,4\n", opt: LoadOptions{LabelCol: "y"},
			x: []float64{1, 2, 3, 4}, rows: 2, y: []int{0, 1}, classes: []string{"x", "z"},
		},
		{
			name: "label column by index", in: "a,y,b\n1,p,2\n3,q,4\n", opt: LoadOptions{LabelCol: "1"},
			x: []float64{1, 2, 3, 4}, rows: 2, y: []int{0, 1}, classes: []string{"p", "q"},
		},
		{
			name: "negative index", in: "a,y,b\n1,p,2\n3,q,4\n", opt: LoadOptions{LabelCol: "-2"},
			x: []float64{1, 2, 3, 4}, rows: 2, y: []int{0, 1}, classes: []string{"p", "q"},
		},
		{
			name: "no header, CRLF, BOM-free, spaces, quotes", in: "1, 2.5e1 ,\"a\"\r\n-3,4,b\r\n", opt: LoadOptions{NoHeader: true},
			x: []float64{1, 25, -3, 4}, rows: 2, y: []int{0, 1}, classes: []string{"a", "b"},
		},
		{
			name: "BOM in header", in: "\ufeffa,label\n7,1\n",
			x: []float64{7}, rows: 1, y: []int{0}, classes: []string{"1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ParseCSV(strings.NewReader(tc.in), "t.csv", tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(d.X, mat.NewDense(tc.rows, len(tc.x)/tc.rows, tc.x)) {
				t.Errorf("X = %v, want %v", mat.Formatted(d.X), tc.x)
			}
			if !equalInts(d.Y, tc.y) || !equalStrings(d.Classes, tc.classes) {
				t.Errorf("Y = %v classes %q, want %v %q", d.Y, d.Classes, tc.y, tc.classes)
			}
			if err := d.Validate(); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestParseCSVErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		opt      LoadOptions
		want     string // substring of the error
	}{
		{"empty", "", LoadOptions{}, "t.csv: empty file"},
		{"header only", "a,b\n", LoadOptions{}, "no data rows"},
		{"one column", "a\n1\n", LoadOptions{}, "need at least one feature"},
		{"ragged short", "a,b,c\n1,2,3\n4,5\n", LoadOptions{}, "t.csv:3:3: ragged row: 2 fields, the header has 3"},
		{"ragged long", "a,b\n1,2\n3,4,5\n", LoadOptions{}, "t.csv:3:3: ragged row: 3 fields"},
		{"NaN", "a,b,y\n1,2,x\n1,NaN,x\n", LoadOptions{}, `t.csv:3:2 (column "b"): NaN is not allowed`},
		{"Inf", "a,b,y\n1,2,x\n1,2,x\n-inf,2,x\n", LoadOptions{}, `t.csv:4:1 (column "a"): infinite value "-inf"`},
		{"overflow", "a,y\n1e999,x\n", LoadOptions{}, `t.csv:2:1 (column "a"): value "1e999" overflows`},
		{"garbage", "a,y\n1,x\nabc,x\n", LoadOptions{}, `t.csv:3:1 (column "a"): invalid number "abc"`},
		{"missing", "a,b,y\n1,,x\n", LoadOptions{}, `t.csv:2:2 (column "b"): missing value`},
		{"question mark", "a,b,y\n1,?,x\n", LoadOptions{}, `t.csv:2:2 (column "b"): missing value "?"`},
		{"missing label", "a,y\n1,\n", LoadOptions{}, `t.csv:2:2 (column "y"): missing label`},
		{"bad label col", "a,y\n1,x\n", LoadOptions{LabelCol: "zz"}, `no column named "zz"`},
		{"label col out of range", "a,y\n1,x\n", LoadOptions{LabelCol: "5"}, "label column 5 outside the 2 columns"},
		{"bad quote", "a,y\n1,\"x\n", LoadOptions{}, "t.csv:2:6: malformed CSV"},
		{"too big", "a,b,y\n1,2,x\n3,4,x\n", LoadOptions{MaxElements: 3}, "t.csv:3: more than 3 values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCSV(strings.NewReader(tc.in), "t.csv", tc.opt)
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			if !errors.Is(err, ErrFormat) {
				t.Errorf("error %v does not wrap ErrFormat", err)
			}
		})
	}
}

func TestParseLIBSVM(t *testing.T) {
	in := "# a comment\n+1 1:0.5 3:-2 # trailing\n\n-1 qid:3 2:4\n+1\n1 3:1e-3\n"
	d, err := ParseLIBSVM(strings.NewReader(in), "t.libsvm", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := mat.NewDense(4, 3, []float64{0.5, 0, -2, 0, 4, 0, 0, 0, 0, 0, 0, 1e-3})
	if !mat.Equal(d.X, want) {
		t.Errorf("X = %v", mat.Formatted(d.X))
	}
	if !equalInts(d.Y, []int{1, 0, 1, 1}) || !equalStrings(d.Classes, []string{"-1", "1"}) {
		t.Errorf("Y = %v classes %q", d.Y, d.Classes)
	}
	if d.Name != "t" {
		t.Errorf("name %q", d.Name)
	}
}

func TestParseLIBSVMErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "t.svm: empty file"},
		{"comments only", "# x\n\n", "empty file"},
		{"labels only", "1\n2\n", "no features"},
		{"no label", "1:2 3:4\n", "t.svm:1:1: line starts with"},
		{"no colon", "1 1:2 3\n", "t.svm:1:7: token \"3\": want index:value"},
		{"zero index", "1 0:2\n", "t.svm:1:3: index \"0\""},
		{"bad index", "1 x:2\n", "t.svm:1:3: index \"x\""},
		{"repeat", "1 1:2\n2 2:1 2:3\n", "t.svm:2:7: index 2 repeated"},
		{"nan", "1 1:2\n2 2:nan\n", "t.svm:2:5: index 2: NaN is not allowed"},
		{"inf", "1 1:Inf\n", "t.svm:1:5: index 1: infinite value"},
		{"bad value", "1 1:z\n", "t.svm:1:5: index 1: invalid number \"z\""},
		{"huge index", "1 99999999999:1\n", "exceeds the limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseLIBSVM(strings.NewReader(tc.in), "t.svm", LoadOptions{MaxElements: 1 << 20})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrFormat) {
				t.Errorf("error %v, want one containing %q wrapping ErrFormat", err, tc.want)
			}
		})
	}
}

// idxFile builds an IDX file of the given type and dimensions.
func idxFile(typ byte, dims []int, vals []float64) []byte {
	var b bytes.Buffer
	b.Write([]byte{0, 0, typ, byte(len(dims))})
	for _, d := range dims {
		binary.Write(&b, binary.BigEndian, uint32(d))
	}
	for _, v := range vals {
		switch typ {
		case idxUint8:
			b.WriteByte(byte(v))
		case idxInt8:
			b.WriteByte(byte(int8(v)))
		case idxInt16:
			binary.Write(&b, binary.BigEndian, int16(v))
		case idxInt32:
			binary.Write(&b, binary.BigEndian, int32(v))
		case idxFloat32:
			binary.Write(&b, binary.BigEndian, float32(v))
		case idxFloat64:
			binary.Write(&b, binary.BigEndian, v)
		}
	}
	return b.Bytes()
}

func gz(b []byte) []byte {
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

func TestParseIDX(t *testing.T) {
	pix := []float64{0, 255, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12} // 3 images of 2×2
	labels := []float64{7, 1, 7}
	for _, tc := range []struct {
		name string
		typ  byte
		vals []float64
		zip  bool
	}{
		{"uint8 plain", idxUint8, pix, false},
		{"uint8 gzip", idxUint8, pix, true},
		{"int16", idxInt16, pix, false},
		{"int32", idxInt32, pix, true},
		{"float32", idxFloat32, pix, false},
		{"float64", idxFloat64, pix, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			im, lb := idxFile(tc.typ, []int{3, 2, 2}, tc.vals), idxFile(idxUint8, []int{3}, labels)
			if tc.zip {
				im, lb = gz(im), gz(lb)
			}
			d, err := ParseIDX(bytes.NewReader(im), bytes.NewReader(lb), "mnist", LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(d.X, mat.NewDense(3, 4, pix)) {
				t.Errorf("X = %v", mat.Formatted(d.X))
			}
			if !equalInts(d.Y, []int{1, 0, 1}) || !equalStrings(d.Classes, []string{"1", "7"}) {
				t.Errorf("Y = %v classes %q", d.Y, d.Classes)
			}
		})
	}
}

func TestParseIDXErrors(t *testing.T) {
	good := idxFile(idxUint8, []int{2, 2}, []float64{1, 2, 3, 4})
	lab := idxFile(idxUint8, []int{2}, []float64{0, 1})
	for _, tc := range []struct {
		name   string
		im, lb []byte
		want   string
		maxEl  int
	}{
		{"short", []byte{0, 0}, lab, "shorter than the magic number", 0},
		{"bad magic", append([]byte{1}, good[1:]...), lab, "does not start with 0000", 0},
		{"bad type", []byte{0, 0, 0x42, 1, 0, 0, 0, 0}, lab, "unknown IDX element type 0x42", 0},
		{"zero dims", []byte{0, 0, 8, 0}, lab, "0 dimensions", 0},
		{"truncated header", []byte{0, 0, 8, 2, 0, 0}, lab, "truncated IDX header", 0},
		{"truncated data", good[:len(good)-1], lab, "truncated IDX data", 0},
		{"trailing", append(append([]byte(nil), good...), 9), lab, "trailing bytes", 0},
		{"count mismatch", good, idxFile(idxUint8, []int{3}, []float64{0, 1, 1}), "count mismatch: 2 images", 0},
		{"2-D labels", good, idxFile(idxUint8, []int{2, 1}, []float64{0, 1}), "label file has 2 dimensions", 0},
		{"float labels", good, idxFile(idxFloat32, []int{2}, []float64{0, 1}), "floating-point type", 0},
		{"empty", idxFile(idxUint8, []int{0, 4}, nil), idxFile(idxUint8, []int{0}, nil), "0 images", 0},
		{"no features", idxFile(idxUint8, []int{2, 0}, nil), lab, "0 features", 0},
		{"nan", idxFile(idxFloat64, []int{2, 1}, []float64{1, math.NaN()}), lab, "image 1, feature 0: non-finite", 0},
		{"inf", idxFile(idxFloat32, []int{2, 1}, []float64{math.Inf(1), 1}), lab, "image 0, feature 0: non-finite", 0},
		{"too big", idxFile(idxUint8, []int{1 << 16, 1 << 16}, nil), lab, "exceed the limit", 1 << 20},
		{"bad gzip", []byte{0x1f, 0x8b, 0, 1}, lab, "gzip", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseIDX(bytes.NewReader(tc.im), bytes.NewReader(tc.lb), "m", LoadOptions{MaxElements: tc.maxEl})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestLoadSpecs(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	csvText := []byte("a,b,label\n1,2,x\n3,4,y\n")
	svmText := []byte("1 1:1 2:2\n2 1:3 2:4\n")
	im := idxFile(idxUint8, []int{2, 2}, []float64{1, 2, 3, 4})
	lb := idxFile(idxUint8, []int{2}, []float64{5, 6})
	want := mat.NewDense(2, 2, []float64{1, 2, 3, 4})
	for _, tc := range []struct{ name, spec string }{
		{"csv", write("d.csv", csvText)},
		{"csv gz", write("d.csv.gz", gz(csvText))},
		{"libsvm", write("d.libsvm", svmText)},
		{"svm", write("d.svm", svmText)},
		{"txt gz", write("d.txt.gz", gz(svmText))},
		{"forced csv", "csv:" + write("d.data", csvText)},
		{"forced libsvm", "libsvm:" + write("d.dat", svmText)},
		{"idx", "idx:" + write("im-idx3-ubyte", im) + ":" + write("lb-idx1-ubyte.gz", gz(lb))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Load(tc.spec, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(d.X, want) || !equalInts(d.Y, []int{0, 1}) {
				t.Errorf("X = %v Y = %v", mat.Formatted(d.X), d.Y)
			}
			if d.Name == "" || strings.ContainsAny(d.Name, "./") {
				t.Errorf("name %q", d.Name)
			}
		})
	}
	for _, tc := range []struct{ spec, want string }{
		{"", "empty data spec"},
		{write("d.xlsx", csvText), `unknown data format ".xlsx"`},
		{filepath.Join(dir, "missing.csv"), "no such file"},
		{"idx:onlyone", "want idx:IMAGES:LABELS"},
		{"nosuchscheme:x", `unknown spec scheme "nosuchscheme"`},
	} {
		if _, err := Load(tc.spec, LoadOptions{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%q): error %v, want %q", tc.spec, err, tc.want)
		}
	}
}

func TestRegisterScheme(t *testing.T) {
	RegisterScheme("testmem", func(name string, opt LoadOptions) (*Dataset, error) {
		if name != "one" {
			return nil, errors.New("no such set")
		}
		return &Dataset{Name: "one", X: mat.NewDense(1, 1, []float64{1}), Y: []int{0}, Classes: []string{"a"}}, nil
	})
	if d, err := Load("testmem:one", LoadOptions{}); err != nil || d.Name != "one" {
		t.Errorf("Load(testmem:one) = %v, %v", d, err)
	}
	if _, err := Load("testmem:two", LoadOptions{}); err == nil || !strings.Contains(err.Error(), "testmem:two: no such set") {
		t.Errorf("error %v", err)
	}
	for _, bad := range []string{"idx", "testmem"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterScheme(%q) did not panic", bad)
				}
			}()
			RegisterScheme(bad, nil)
		}()
	}
}

func TestUnifyClasses(t *testing.T) {
	a := &Dataset{Name: "a", X: mat.NewDense(3, 1, nil), Y: []int{0, 1, 1}, Classes: []string{"b", "d"}}
	b := &Dataset{Name: "b", X: mat.NewDense(2, 1, nil), Y: []int{1, 0}, Classes: []string{"a", "b"}}
	if err := UnifyClasses(a, b); err != nil {
		t.Fatal(err)
	}
	if !equalStrings(a.Classes, []string{"a", "b", "d"}) || !equalInts(a.Y, []int{1, 2, 2}) || !equalInts(b.Y, []int{1, 0}) {
		t.Errorf("a %v %q, b %v %q", a.Y, a.Classes, b.Y, b.Classes)
	}
}

func equalInts(a, b []int) bool {
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

func equalStrings(a, b []string) bool {
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

// TestParseCSVHeaderDetection checks HeaderAuto on the reported files: a
// headerless CSV keeps its first row, a header is recognised, and the one
// undecidable case is an error wrapping ErrAmbiguousHeader, never a
// silently lost or invented row.
func TestParseCSVHeaderDetection(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		opt     LoadOptions
		rows    int
		classes []string
		first   float64 // X[0,0]
		err     error   // when non-nil, the error wanted
	}{
		{name: "headerless numeric", in: "1,2,0\n3,4,1\n", rows: 2, classes: []string{"0", "1"}, first: 1},
		{name: "named header", in: "a,b,label\n1,2,0\n3,4,1\n", rows: 2, classes: []string{"0", "1"}, first: 1},
		{name: "pandas index header", in: ",f1,label\n0,5,x\n1,6,y\n", opt: LoadOptions{}, rows: 2, classes: []string{"x", "y"}, first: 0},
		{name: "headerless string labels recurring", in: "1,2,cat\n3,4,dog\n5,6,cat\n", rows: 3, classes: []string{"cat", "dog"}, first: 1},
		{name: "numeric feature names over numeric labels", in: "1,2,label\n3,4,0\n5,6,1\n", rows: 2, classes: []string{"0", "1"}, first: 3},
		{name: "ambiguous", in: "1,2,label\n3,4,x\n5,6,y\n", err: ErrAmbiguousHeader},
		{name: "ambiguous resolved by --header", in: "1,2,label\n3,4,x\n5,6,y\n", opt: LoadOptions{Header: HeaderPresent}, rows: 2, classes: []string{"x", "y"}, first: 3},
		{name: "ambiguous resolved by --no-header", in: "1,2,label\n3,4,x\n5,6,y\n", opt: LoadOptions{Header: HeaderAbsent}, rows: 3, classes: []string{"label", "x", "y"}, first: 1},
		{name: "missing value stays data", in: "1,,0\n3,4,1\n", err: ErrFormat},
		{name: "label by name means a header", in: "y,a\nx,1\nz,2\n", opt: LoadOptions{LabelCol: "y"}, rows: 2, classes: []string{"x", "z"}, first: 1},
		{name: "forced header on numbers", in: "1,2,0\n3,4,1\n", opt: LoadOptions{Header: HeaderPresent}, rows: 1, classes: []string{"1"}, first: 3},
		{name: "no labels, headerless", in: "1,2\n3,4\n", opt: LoadOptions{NoLabels: true}, rows: 2, first: 1},
		{name: "no labels, header", in: "a,b\n1,2\n3,4\n", opt: LoadOptions{NoLabels: true}, rows: 2, first: 1},
		{name: "no labels, one column", in: "7\n8\n", opt: LoadOptions{NoLabels: true}, rows: 2, first: 7},
		{name: "no labels with a label column", in: "1,2\n", opt: LoadOptions{NoLabels: true, LabelCol: "0"}, err: ErrFormat},
		{name: "single ambiguous row is data", in: "1,2,x\n", rows: 1, classes: []string{"x"}, first: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ParseCSV(strings.NewReader(tc.in), "t.csv", tc.opt)
			if tc.err != nil {
				if !errors.Is(err, tc.err) || !errors.Is(err, ErrFormat) {
					t.Fatalf("error %v, want one wrapping %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.Len() != tc.rows || d.X.At(0, 0) != tc.first || !equalStrings(d.Classes, tc.classes) {
				t.Errorf("%d rows, X[0,0] %v, classes %q; want %d, %v, %q", d.Len(), d.X.At(0, 0), d.Classes, tc.rows, tc.first, tc.classes)
			}
			if err := d.Validate(); err != nil {
				t.Error(err)
			}
			if tc.opt.NoLabels && (d.Dim() != len(strings.Split(strings.SplitN(tc.in, "\n", 2)[0], ",")) || d.Classes != nil) {
				t.Errorf("no labels: %d features, classes %q", d.Dim(), d.Classes)
			}
		})
	}
}

// TestLoadStdin reads the spec "-" (and csv:-, libsvm:-, gzip content)
// from LoadOptions.Stdin.
func TestLoadStdin(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("1,2,a\n3,4,a\n"))
	zw.Close()
	for _, tc := range []struct {
		spec, in string
		rows     int
	}{
		{"-", "a,b,y\n1,2,x\n3,4,z\n", 2},
		{"csv:-", "1,2,0\n3,4,1\n5,6,1\n", 3},
		{"libsvm:-", "1 1:2\n0 2:3\n", 2},
		{"-", gz.String(), 2},
	} {
		d, err := Load(tc.spec, LoadOptions{Stdin: strings.NewReader(tc.in)})
		if err != nil {
			t.Errorf("%s: %v", tc.spec, err)
			continue
		}
		if d.Len() != tc.rows || d.Name != "stdin" {
			t.Errorf("%s: %d rows, name %q", tc.spec, d.Len(), d.Name)
		}
	}
	_, err := Load("-", LoadOptions{Stdin: strings.NewReader("a,b\n1,x\n1,")})
	if err == nil || !strings.Contains(err.Error(), "<stdin>:3") {
		t.Errorf("error %v does not name <stdin>:3", err)
	}
	if _, err := Load("idx:-:labels", LoadOptions{}); err == nil || !strings.Contains(err.Error(), "standard input") {
		t.Errorf("idx from stdin: %v", err)
	}
}

// TestLoadIDX checks LoadIDX against its definition: each pair loaded alone,
// the classes unified and the rows stacked in order.
func TestLoadIDX(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pairs := []IDXFiles{
		{write("a-im.gz", gz(idxFile(idxUint8, []int{3, 2, 2}, []float64{0, 255, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}))),
			write("a-lb", idxFile(idxUint8, []int{3}, []float64{7, 1, 7}))},
		{write("b-im", idxFile(idxFloat32, []int{1, 2, 2}, []float64{-1.5, 2, 3, 4})),
			write("b-lb.gz", gz(idxFile(idxInt16, []int{1}, []float64{12})))},
		{write("c-im", idxFile(idxInt16, []int{2, 2, 2}, []float64{-300, 2, 3, 4, 5, 6, 7, 8})),
			write("c-lb", idxFile(idxUint8, []int{2}, []float64{1, 3}))},
	}
	got, err := LoadIDX(LoadOptions{}, pairs...)
	if err != nil {
		t.Fatal(err)
	}
	var alone []*Dataset
	var rows [][]float64
	for _, p := range pairs {
		d, err := Load("idx:"+p.Images+":"+p.Labels, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		alone = append(alone, d)
	}
	if err := UnifyClasses(alone...); err != nil {
		t.Fatal(err)
	}
	var y []int
	for _, d := range alone {
		for i := 0; i < d.Len(); i++ {
			rows = append(rows, d.X.RawRowView(i))
		}
		y = append(y, d.Y...)
	}
	if got.Len() != len(rows) || got.Dim() != 4 {
		t.Fatalf("%d×%d, want %d×4", got.Len(), got.Dim(), len(rows))
	}
	for i, r := range rows {
		if !slices.Equal(got.X.RawRowView(i), r) {
			t.Errorf("row %d = %v, want %v", i, got.X.RawRowView(i), r)
		}
	}
	if !equalInts(got.Y, y) || !equalStrings(got.Classes, alone[0].Classes) || !equalStrings(got.Classes, []string{"1", "3", "7", "12"}) {
		t.Errorf("Y = %v classes %q, want %v %q", got.Y, got.Classes, y, alone[0].Classes)
	}
	if got.Name != "a-im" {
		t.Errorf("name %q", got.Name)
	}

	odd := write("d-im", idxFile(idxUint8, []int{1, 4}, []float64{1, 2, 3, 4}))
	nan := write("e-im", idxFile(idxFloat64, []int{1, 2, 2}, []float64{1, 2, math.NaN(), 4}))
	one := write("one-lb", idxFile(idxUint8, []int{1}, []float64{1}))
	for _, tc := range []struct {
		name  string
		files []IDXFiles
		maxEl int
		want  string
		file  string
		off   int64
	}{
		{"none", nil, 0, "no files", "", 0},
		{"shape", []IDXFiles{pairs[0], {odd, one}}, 0, "images of shape [4], against [2 2]", odd, 8},
		{"nan in the second", []IDXFiles{pairs[0], {nan, one}}, 0, "image 0, feature 2: non-finite", nan, 16 + 8*2},
		{"too many in all", pairs, 20, "in all exceed the limit of 20 values", pairs[2].Images, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadIDX(LoadOptions{MaxElements: tc.maxEl}, tc.files...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			var pe *ParseError
			if tc.file != "" && (!errors.As(err, &pe) || pe.File != tc.file || pe.Offset != tc.off) {
				t.Errorf("error %#v, want file %s offset %d", err, tc.file, tc.off)
			}
		})
	}
}
