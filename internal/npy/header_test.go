package npy

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/limits"
)

// file returns a version 1.0 .npy file with the header dictionary dict and
// the body.
func file(dict string, body []byte) []byte {
	h := dict
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	b := []byte("\x93NUMPY\x01\x00")
	b = binary.LittleEndian.AppendUint16(b, uint16(len(h)))
	return append(append(b, h...), body...)
}

// TestHeaderChecked checks every entry point that reads a .npy file
// (ReadFile for --target, LoadDataset for npy: specs) against headers
// that lie or ask for the impossible: each is refused before anything is
// allocated, in the user's terms.
func TestHeaderChecked(t *testing.T) {
	defer limits.SetMaxMemory(limits.SetMaxMemory(1 << 30))
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	body := make([]byte, 8*16)
	for _, tc := range []struct {
		name, dict string
		want       string
		memory     bool
	}{
		{"lie", "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000), }", "over the limit", true},
		{"lie small", "{'descr': '<f8', 'fortran_order': False, 'shape': (100, 100), }", "the header claims shape [100 100] (78.1 KiB) but the file holds 128 B", false},
		{"object", "{'descr': '|O', 'fortran_order': False, 'shape': (4, 4), }", "dtype object", false},
		{"huge dimension", "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999, 2), }", "is not a dimension", false},
		{"structured", "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (4,), }", "structured dtype", false},
	} {
		p := write(tc.name+".npy", file(tc.dict, body))
		_, err := ReadFile(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, limits.ErrMemory) != tc.memory {
			t.Errorf("ReadFile %s: %v, want %q", tc.name, err, tc.want)
		}
		_, err = LoadDataset(p, data.LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LoadDataset %s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// A good file still reads.
	good := make([]byte, 0, 8*4)
	for i := 0; i < 4; i++ {
		good = binary.LittleEndian.AppendUint64(good, 0x3ff0000000000000) // 1.0
	}
	m, err := ReadFile(write("good.npy", file("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", good)))
	if err != nil || m.At(1, 1) != 1 {
		t.Errorf("good file: %v, %v", m, err)
	}
	// An endless header length or body from a pipe-like reader is bounded.
	if _, err := Read(strings.NewReader("\x93NUMPY\x01\x00\xff\xff" + strings.Repeat(" ", 70000))); err == nil || !strings.Contains(err.Error(), "newline") {
		t.Errorf("header without newline: %v", err)
	}

}
