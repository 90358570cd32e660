package model

import (
	"bytes"
	"math"
	"os"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/psdlearn/psdlearn/preprocess"
	"gonum.org/v1/gonum/mat"
)

// TestLoadVersion1File reads a version 1 file committed before version 2
// existed: it loads as a model without provenance, and saving it writes
// the current version with everything else unchanged but the factor L
// (version 3) added after M.
func TestLoadVersion1File(t *testing.T) {
	raw, err := os.ReadFile("testdata/v1-metric.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte(`"version": 1,`)) {
		t.Fatal("testdata/v1-metric.json is not a version 1 file")
	}
	m, err := LoadFile("testdata/v1-metric.json")
	if err != nil {
		t.Fatal(err)
	}
	if m.Provenance != nil || m.Algo != "boostmetric" || m.InputDim() != 2 || m.Certificate == nil || !m.Certificate.Converged ||
		m.Info["split"] != "0.7,0.15,0.15" || !reflect.DeepEqual(m.Classes, []string{"a", "b"}) || m.Metric.M.At(0, 1) != 0.5 {
		t.Errorf("loaded %+v", m)
	}
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		t.Fatal(err)
	}
	// The factor's digits are gonum's rounding: compare the file without
	// them, and the factor read back with the one computed.
	want := strings.Replace(string(raw), `"version": 1,`, `"version": 3,`, 1)
	saved := regexp.MustCompile(`\],\n    "l": \[\n(      \[[^\]]*\],?\n)*    \]\n`).ReplaceAllString(buf.String(), "]\n")
	if saved != want {
		t.Errorf("version 1 file saved as\n%s\nwant, with the factor after m,\n%s", buf.String(), want)
	}
	back, err := Load(&buf)
	if err != nil || !mat.Equal(back.Metric.L, m.Metric.L) {
		t.Errorf("the saved factor read back: %v", err)
	}
}

func provenanceModel(t *testing.T) *Model {
	t.Helper()
	met, err := NewMetric(mat.NewSymDense(2, []float64{2, 0.5, 0.5, 1}))
	if err != nil {
		t.Fatal(err)
	}
	x := mat.NewDense(3, 2, []float64{1, 2, 3, 4, 5, 6})
	p := NewProvenance("go", 7)
	p.Split = "rows:2,1"
	p.Data = DescribeData("builtin:toy", x, []int{0, 1, 0}, []string{"a", "b"})
	p.Test = &DataInfo{Name: "test.csv", Rows: 1, Features: 2}
	return &Model{Kind: KindMetric, Algo: "test", Metric: met, Provenance: p,
		Preprocess: &preprocess.Pipeline{Std: &preprocess.Standardizer{Mean: []float64{1, -2}, Scale: []float64{2, 0.5}}}}
}

func TestProvenanceRoundTrip(t *testing.T) {
	m := provenanceModel(t)
	p := m.Provenance
	if p.Module == "" || p.GoVersion != runtime.Version() || p.Created.IsZero() || p.Created.Location() != time.UTC || p.Created.Nanosecond() != 0 {
		t.Errorf("NewProvenance: %+v", p)
	}
	if p.Data.Rows != 3 || p.Data.Features != 2 || len(p.Data.SHA256) != 64 {
		t.Errorf("DescribeData: %+v", p.Data)
	}
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"version": 3,`, `"provenance": {`, `"module": "` + p.Module + `"`, `"go": "` + runtime.Version() + `"`,
		`"backend": "go"`, `"seed": 7`, `"split": "rows:2,1"`, `"name": "builtin:toy"`, `"sha256": "` + p.Data.SHA256 + `"`,
		`"created": "` + p.Created.Format(time.RFC3339) + `"`} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("saved file lacks %s:\n%s", s, buf.String())
		}
	}
	got, err := Load(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Provenance, p) {
		t.Errorf("provenance after save/load\n%+v\nwant\n%+v", got.Provenance, p)
	}

	// No creation time: two saves give the same bytes, and no "created".
	m.Provenance.Created = time.Time{}
	var a, b bytes.Buffer
	if err := m.Save(&a); err != nil {
		t.Fatal(err)
	}
	again, err := Load(bytes.NewReader(a.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := again.Save(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) || strings.Contains(a.String(), "created") || !again.Provenance.Created.IsZero() {
		t.Errorf("a file without creation time is not reproducible:\n%s\n%s", a.String(), b.String())
	}
	// The largest seed survives.
	m.Provenance.Seed = math.MaxUint64
	a.Reset()
	if err := m.Save(&a); err != nil {
		t.Fatal(err)
	}
	if got, err := Load(&a); err != nil || got.Provenance.Seed != math.MaxUint64 {
		t.Errorf("seed 2⁶⁴−1: %v, %v", got, err)
	}
}

func TestProvenanceRejects(t *testing.T) {
	const body = `"kind":"metric","metric":{"dim":1,"m":[[1]]}`
	file := func(version, prov string) string {
		return `{"format":"psdlearn-model","version":` + version + `,` + body + `,"provenance":` + prov + `}`
	}
	hash := strings.Repeat("ab", 32)
	if _, err := Load(strings.NewReader(file("2", `{"module":"devel","go":"go1.26","seed":1,"data":{"name":"x","rows":2,"features":1,"sha256":"`+hash+`"},"created":"2026-11-24T05:00:00Z"}`))); err != nil {
		t.Fatalf("valid provenance: %v", err)
	}
	for _, tc := range []struct{ name, file, want string }{
		{"in version 1", file("1", `{"module":"devel","go":"go1.26","seed":1}`), "a version 1 model file has no provenance"},
		{"unknown field", file("2", `{"module":"devel","go":"go1.26","seed":1,"user":"me"}`), "unknown field"},
		{"negative seed", file("2", `{"module":"devel","go":"go1.26","seed":-1}`), "decode"},
		{"a map", file("2", `[]`), "decode"},
		{"negative rows", file("2", `{"module":"devel","go":"go1.26","seed":1,"data":{"name":"x","rows":-2,"features":1}}`), "-2 rows"},
		{"short hash", file("2", `{"module":"devel","go":"go1.26","seed":1,"data":{"name":"x","rows":2,"features":1,"sha256":"abc"}}`), "64 lower-case hex"},
		{"upper-case hash", file("2", `{"module":"devel","go":"go1.26","seed":1,"test":{"name":"x","rows":2,"features":1,"sha256":"`+strings.ToUpper(hash)+`"}}`), "provenance test sha256"},
		{"bad time", file("2", `{"module":"devel","go":"go1.26","seed":1,"created":"yesterday"}`), "not an RFC 3339 time"},
	} {
		_, err := Load(strings.NewReader(tc.file))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestDataSHA256(t *testing.T) {
	x := mat.NewDense(2, 2, []float64{1, 2, 3, 4})
	base := DataSHA256(x, []int{0, 1}, []string{"a", "b"})
	// Pinned: the hash is part of the file format (eval compares it with
	// the hash of the data it is given, whichever version wrote the file);
	// the value was checked against Python's hashlib.
	const want = "5eb0da938becd062b0838bf6ac50573b5c95e1336684fab8e79428263205277b"
	if base != want {
		t.Fatalf("hash %q, want %q", base, want)
	}
	same := DataSHA256(mat.NewDense(2, 2, []float64{1, 2, 3, 4}), []int{1, 0}, []string{"b", "a"})
	if same != base {
		t.Error("re-indexing the classes changed the hash")
	}
	for name, h := range map[string]string{
		"entry":      DataSHA256(mat.NewDense(2, 2, []float64{1, 2, 3, 5}), []int{0, 1}, []string{"a", "b"}),
		"class name": DataSHA256(x, []int{0, 1}, []string{"a", "c"}),
		"shape":      DataSHA256(mat.NewDense(1, 4, []float64{1, 2, 3, 4}), []int{0}, []string{"a", "b"}),
		"row order":  DataSHA256(mat.NewDense(2, 2, []float64{3, 4, 1, 2}), []int{1, 0}, []string{"a", "b"}),
		"labels":     DataSHA256(mat.NewDense(2, 2, []float64{1, 2, 3, 4}), []int{1, 1}, []string{"a", "b"}),
		"no labels":  DataSHA256(x, nil, nil),
	} {
		if h == base {
			t.Errorf("%s: the hash did not change", name)
		}
	}
	// The bits count: −0 is not 0.
	if DataSHA256(mat.NewDense(1, 1, []float64{0}), nil, nil) == DataSHA256(mat.NewDense(1, 1, []float64{math.Copysign(0, -1)}), nil, nil) {
		t.Error("0 and −0 hash alike")
	}
	if DataSHA256(x.Slice(0, 2, 0, 2), []int{0, 1}, []string{"a", "b"}) != base {
		t.Error("a view of the same matrix hashes differently")
	}
	// A column slice (raw rows with a stride) and a matrix without raw rows
	// hash like a copy.
	wide := mat.NewDense(2, 3, []float64{1, 2, 9, 3, 4, 9})
	if DataSHA256(wide.Slice(0, 2, 0, 2), []int{0, 1}, []string{"a", "b"}) != base || DataSHA256(struct{ mat.Matrix }{x}, []int{0, 1}, []string{"a", "b"}) != base {
		t.Error("a strided view or a non-raw matrix hashes differently")
	}
}

// TestFormatDocExample loads the version 2 example of docs/model-format.md,
// so that the documentation shows a file Load accepts.
func TestFormatDocExample(t *testing.T) {
	doc, err := os.ReadFile("../docs/model-format.md")
	if err != nil {
		t.Skip(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```json\n")
	example, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("no JSON example in docs/model-format.md")
	}
	m, err := Load(strings.NewReader(example))
	if err != nil {
		t.Fatal(err)
	}
	p := m.Provenance
	if p == nil || p.Seed != 7 || p.Split != "0.7,0.15,0.15" || p.Data.Rows != 150 || p.Created.Format(time.RFC3339) != "2026-11-24T05:20:54Z" {
		t.Errorf("provenance %+v", p)
	}
}
