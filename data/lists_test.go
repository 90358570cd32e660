package data

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestParseLabels: the classes of a labels file are ordered as data files'
// classes, blank lines are allowed at the end only, and every refusal names
// the line.
func TestParseLabels(t *testing.T) {
	for _, c := range []struct {
		name, in string
		y        []int
		classes  []string
		err      string // substring of the error; "" for none
	}{
		{"strings", "b\na\nb\n\n\n", []int{1, 0, 1}, []string{"a", "b"}, ""},
		{"numbers sort numerically", "10\n9\n1.0\n1\n", []int{2, 1, 0, 0}, []string{"1", "9", "10"}, ""},
		{"byte-order mark and spaces", "\ufeff a \n b\n", []int{0, 1}, []string{"a", "b"}, ""},
		{"quoted comma", "\"x,y\"\nz\n", []int{0, 1}, []string{"x,y", "z"}, ""},
		{"gap", "a\n\nb\nc\n", nil, nil, "y.txt:2: empty label"},
		{"leading blank", "\na\n", nil, nil, "y.txt:1: empty label"},
		{"empty quoted", "a\n\"\"\n", nil, nil, "y.txt:2: empty label"},
		{"two fields", "a\nb,c\n", nil, nil, "y.txt:2: 2 fields"},
		{"none", "\n\n", nil, nil, "y.txt: no labels"},
		{"bad quoting", "a\n\"b\n", nil, nil, "y.txt:2"},
		{"missing-value marker", "a\nNA\nb\n", nil, nil, "y.txt:2"},
		{"control character", "a\nb\x01c\n", nil, nil, "y.txt:2"},
		{"binary", "a\x00b\n", nil, nil, "y.txt:1"},
	} {
		y, classes, err := ParseLabels(strings.NewReader(c.in), "y.txt", LoadOptions{})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, ErrFormat) {
				t.Errorf("%s: %v, want an ErrFormat error containing %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(y, c.y) || !slices.Equal(classes, c.classes) {
			t.Errorf("%s: %v %v (%v), want %v %v", c.name, y, classes, err, c.y, c.classes)
		}
	}
	if _, _, err := ParseLabels(strings.NewReader(strings.Repeat("a\n", 100)), "y.txt", LoadOptions{MaxInputBytes: 64}); !errors.Is(err, ErrLimit) {
		t.Errorf("input beyond MaxInputBytes: %v, want ErrLimit", err)
	}
	if _, _, err := ParseLabels(strings.NewReader("a\n"+strings.Repeat("b", 100)+"\n"), "y.txt", LoadOptions{MaxLineBytes: 64}); !errors.Is(err, ErrLimit) {
		t.Errorf("a line beyond MaxLineBytes: %v, want ErrLimit", err)
	}
	// A label the loaders refuse is refused here too, as a label error.
	if _, _, err := ParseLabels(strings.NewReader("a\n?\n"), "y.txt", LoadOptions{}); !errors.Is(err, ErrLabel) {
		t.Errorf("label \"?\": %v, want ErrLabel", err)
	}
}

// TestParseIndexPairs: headers, optional y, and one-line errors naming the
// file and line.
func TestParseIndexPairs(t *testing.T) {
	for _, c := range []struct {
		name, in string
		needY    bool
		ij       [][2]int
		y        []int
		err      string
	}{
		{"header i,j", "i,j\n0,1\n2,+3\n", false, [][2]int{{0, 1}, {2, 3}}, nil, ""},
		{"header i,j,y", "I,J,Y\n0,1,1\n2,3,-1\n", true, [][2]int{{0, 1}, {2, 3}}, []int{1, -1}, ""},
		{"no header", "\ufeff0,1,+1\n", true, [][2]int{{0, 1}}, []int{1}, ""},
		{"index too large", "i,j\n0,1\n2,5\n", false, nil, nil, "p.csv:3: j = 5 outside [0, 5): there are 5 rows"},
		{"negative", "0,1\n-1,2\n", false, nil, nil, "p.csv:2: i = -1 outside [0, 5)"},
		{"not an integer", "i,j\n0,1.5\n", false, nil, nil, `p.csv:2: j = "1.5" is not an integer`},
		{"ragged", "i,j,y\n0,1,1\n0\n", false, nil, nil, "p.csv:3: 1 fields, want 3"},
		{"one column", "0\n1\n", false, nil, nil, "p.csv:1: 1 fields: want i,j or i,j,y"},
		{"bad header", "a,b\n0,1\n", false, nil, nil, `p.csv:1: header "a,b": want i,j or i,j,y`},
		{"bad y", "i,j,y\n0,1,0\n", false, nil, nil, `p.csv:2: y = "0": want 1 (similar) or -1 (dissimilar)`},
		{"no y header", "i,j\n0,1\n", true, nil, nil, "p.csv:1: no y column"},
		{"no y", "0,1\n", true, nil, nil, "p.csv:1: 2 fields: want i,j,y"},
		{"empty", "", false, nil, nil, "p.csv: no pairs"},
		{"header only", "i,j\n", false, nil, nil, "p.csv: no pairs"},
	} {
		p, err := ParseIndexPairs(strings.NewReader(c.in), "p.csv", 5, "rows", c.needY, LoadOptions{})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, ErrFormat) {
				t.Errorf("%s: %v, want an ErrFormat error containing %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(p.IJ, c.ij) || !slices.Equal(p.Y, c.y) {
			t.Errorf("%s: %+v (%v), want %v %v", c.name, p, err, c.ij, c.y)
		}
	}
	if _, err := ParseIndexPairs(strings.NewReader(strings.Repeat("0,1\n", 100)), "p.csv", 5, "rows", false, LoadOptions{MaxInputBytes: 64}); !errors.Is(err, ErrLimit) {
		t.Errorf("input beyond MaxInputBytes: %v, want ErrLimit", err)
	}
	if _, err := ParseIndexPairs(strings.NewReader("0,1\n"+strings.Repeat("1", 100)+",2\n"), "p.csv", 5, "rows", false, LoadOptions{MaxLineBytes: 64}); !errors.Is(err, ErrLimit) {
		t.Errorf("a line beyond MaxLineBytes: %v, want ErrLimit", err)
	}
	if _, err := ParseIndexPairs(strings.NewReader("0,1\n\x00\x00\n"), "p.csv", 5, "rows", false, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "binary") {
		t.Errorf("binary input: %v, want a refusal as binary data", err)
	}
}
