package data

import (
	"bytes"
	"testing"
)

// fuzzLimit keeps fuzzed headers from allocating large matrices.
var fuzzOpt = LoadOptions{MaxElements: 1 << 16}

// checkParsed asserts the invariants of every successful parse.
func checkParsed(t *testing.T, d *Dataset, err error) {
	t.Helper()
	if err != nil {
		if d != nil {
			t.Fatalf("non-nil data set with error %v", err)
		}
		return
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	if d.Len() == 0 || d.Dim() == 0 {
		t.Fatalf("empty data set %d×%d accepted", d.Len(), d.Dim())
	}
	used := make([]bool, len(d.Classes))
	for _, y := range d.Y {
		used[y] = true
	}
	for c, u := range used {
		if !u {
			t.Fatalf("class %d (%q) has no points", c, d.Classes[c])
		}
	}
	for c := 1; c < len(d.Classes); c++ {
		if d.Classes[c] == d.Classes[c-1] {
			t.Fatalf("duplicate class %q", d.Classes[c])
		}
	}
}

func FuzzCSV(f *testing.F) {
	for _, s := range []string{
		"a,b,label\n1,2,x\n3,4,y\n",
		"a,label\n1,10\n2,9\n3,10.0\n",
		"\ufeffa,b,y\r\n1,\"2\",x\r\n",
		"a,b\n1,NaN\n",
		"a,b,c\n1,2\n",
		"",
		"a,b\n",
	} {
		f.Add([]byte(s), "", false)
	}
	f.Add([]byte("y,a\nx,1\n"), "y", false)
	f.Add([]byte("1,2,3\n4,5,6\n"), "0", true)
	f.Fuzz(func(t *testing.T, in []byte, labelCol string, noHeader bool) {
		opt := fuzzOpt
		opt.LabelCol, opt.NoHeader = labelCol, noHeader
		d, err := ParseCSV(bytes.NewReader(in), "f.csv", opt)
		checkParsed(t, d, err)
	})
}

func FuzzLIBSVM(f *testing.F) {
	for _, s := range []string{
		"+1 1:0.5 3:-2\n-1 2:4\n",
		"# c\n1 qid:2 1:1 # x\n\n2 5:1e-3\n",
		"1 1:1 1:2\n",
		"1 0:1\n",
		"a 1:nan\n",
		"1\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		d, err := ParseLIBSVM(bytes.NewReader(in), "f.svm", fuzzOpt)
		checkParsed(t, d, err)
	})
}

func FuzzIDX(f *testing.F) {
	f.Add(idxFile(idxUint8, []int{2, 2, 1}, []float64{1, 2, 3, 4}), idxFile(idxUint8, []int{2}, []float64{3, 1}))
	f.Add(idxFile(idxFloat32, []int{1, 3}, []float64{1.5, -2, 0}), idxFile(idxInt32, []int{1}, []float64{-7}))
	f.Add(gz(idxFile(idxInt16, []int{2}, []float64{-3, 4})), gz(idxFile(idxInt8, []int{2}, []float64{-1, 1})))
	f.Add([]byte{0, 0, 8, 1, 0, 0, 0, 2, 1}, []byte{0, 0, 8, 1, 0, 0, 0, 2, 0, 1})
	f.Add([]byte{}, []byte{0, 0, 8})
	f.Fuzz(func(t *testing.T, im, lb []byte) {
		d, err := ParseIDX(bytes.NewReader(im), bytes.NewReader(lb), "f", fuzzOpt)
		checkParsed(t, d, err)
	})
}
