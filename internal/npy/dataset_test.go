package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"codeberg.org/sbinet/npyio/npy"
	"github.com/psdlearn/psdlearn/data"
	"gonum.org/v1/gonum/mat"
)

func init() { data.RegisterScheme(Scheme, LoadDataset) }

func writeNPY(t *testing.T, path string, v any) {
	t.Helper()
	var buf bytes.Buffer
	if err := npy.Write(&buf, v); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLoadDataset: npy:X.npy:LABELS.npy gives the matrix bit for bit and
// labels of every supported dtype, classes ordered as data.Load orders them.
func TestLoadDataset(t *testing.T) {
	dir := t.TempDir()
	x := mat.NewDense(4, 2, []float64{1, 2, 3, 4, 5, 6, 7, -0.5})
	xPath := filepath.Join(dir, "x.npy")
	writeNPY(t, xPath, x)
	for name, labels := range map[string]any{
		"int64":   []int64{10, 2, 10, 2},
		"int32":   []int32{10, 2, 10, 2},
		"float64": []float64{10, 2, 10, 2},
		"uint8":   []uint8{10, 2, 10, 2},
	} {
		yPath := filepath.Join(dir, name+".npy")
		writeNPY(t, yPath, labels)
		d, err := LoadDataset(xPath+":"+yPath, data.LoadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !mat.Equal(d.X, x) || d.Name != "x" {
			t.Errorf("%s: X %v name %q", name, mat.Formatted(d.X), d.Name)
		}
		if strings.Join(d.Classes, ",") != "2,10" || d.Y[0] != 1 || d.Y[1] != 0 {
			t.Errorf("%s: classes %v labels %v", name, d.Classes, d.Y)
		}
	}
	sPath := filepath.Join(dir, "s.npy")
	writeNPY(t, sPath, []string{"pear", "apple", "pear", "fig"})
	if d, err := LoadDataset(xPath+":"+sPath, data.LoadOptions{}); err != nil || strings.Join(d.Classes, ",") != "apple,fig,pear" || d.Y[0] != 2 || d.Y[3] != 1 {
		t.Errorf("string labels: %v %v", d, err)
	}
	// Through data.Load with the scheme registered (init below), without labels.
	d, err := data.Load("npy:"+xPath, data.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 4 || d.Dim() != 2 || d.Classes != nil || len(d.Y) != 4 {
		t.Errorf("unlabelled: %+v", d)
	}
	// A 1-D array is one feature.
	vPath := filepath.Join(dir, "v.npy")
	writeNPY(t, vPath, []float64{1, 2, 3})
	if d, err := LoadDataset(vPath, data.LoadOptions{}); err != nil || d.Len() != 3 || d.Dim() != 1 {
		t.Errorf("1-D: %v %v", d, err)
	}
}

// TestLoadDatasetHostile: malformed or oversized files are format or limit
// errors, never a panic or a huge allocation.
func TestLoadDatasetHostile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.npy")
	writeNPY(t, good, mat.NewDense(2, 2, []float64{1, 2, 3, 4}))
	raw, _ := os.ReadFile(good)
	header := func(major byte, h string) []byte {
		b := []byte("\x93NUMPY")
		b = append(b, major, 0)
		if major == 1 {
			b = binary.LittleEndian.AppendUint16(b, uint16(len(h)))
		} else {
			b = binary.LittleEndian.AppendUint32(b, uint32(len(h)))
		}
		return append(b, h...)
	}
	huge := append([]byte("\x93NUMPY\x02\x00"), 0xff, 0xff, 0xff, 0x7f)
	cases := map[string]struct {
		content []byte
		want    error
	}{
		"empty":       {nil, data.ErrFormat},
		"not npy":     {[]byte("a,b\n1,2\n"), data.ErrFormat},
		"truncated":   {raw[:len(raw)-3], data.ErrFormat},
		"no newline":  {header(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }"), data.ErrFormat},
		"bad dict":    {header(1, "{'shape': (2, 2), 'fortran_order': False, 'descr': '<f8', }\n"), data.ErrFormat},
		"huge header": {huge, data.ErrFormat},
		"huge shape":  {header(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (100000000000, 100000000000), }\n"), data.ErrLimit},
		"int data":    {header(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }\n"), data.ErrFormat},
		"3-D":         {header(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2, 2), }\n"), data.ErrFormat},
		"nan":         {append(header(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1), }\n"), 0, 0, 0, 0, 0, 0, 0xf8, 0x7f), data.ErrFormat},
	}
	for name, tc := range cases {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".npy")
		if err := os.WriteFile(p, tc.content, 0o644); err != nil {
			t.Fatal(err)
		}
		d, err := LoadDataset(p, data.LoadOptions{})
		if err == nil || !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, %v; want an error wrapping %v", name, d, err, tc.want)
		}
	}
	// Labels of the wrong length, and a feature cap.
	y := filepath.Join(dir, "y.npy")
	writeNPY(t, y, []int64{1, 2, 3})
	if _, err := LoadDataset(good+":"+y, data.LoadOptions{}); !errors.Is(err, data.ErrFormat) {
		t.Errorf("3 labels for 2 rows: %v", err)
	}
	if _, err := LoadDataset(good, data.LoadOptions{MaxFeatures: 1}); !errors.Is(err, data.ErrLimit) {
		t.Errorf("feature cap: %v", err)
	}
	if _, err := LoadDataset(good, data.LoadOptions{MaxInputBytes: 10}); !errors.Is(err, data.ErrLimit) {
		t.Errorf("input cap: %v", err)
	}
}
